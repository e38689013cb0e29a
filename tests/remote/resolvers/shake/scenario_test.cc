// The seed's test problems for the SHAKE + annealing resolver. The runs live in tether::tools
// (tether/remote/seed/shake_scenarios.h), shared with tether-seed-pictures; each scenario here
// asserts the physical outcome (clearance, alignment, cyclicity) and writes the seed picture
// of the run into the working directory: shake_hole.png, shake_circle_<n>dof.png,
// shake_corners.png.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "tether/common/units.h"
#include "tether/remote/seed/shake_scenarios.h"

namespace tether::remote::seed {
namespace {

// (1) A 4-link planar robot reaches through a hole in a wall and pulls back out.
TEST(ShakeScenario, FourLinkRobotReachesThroughAHoleWithoutTouchingTheWalls) {
  const ShakeHoleRun run = run_shake_hole();
  std::cout << "hole: min clearance " << run.min_clearance << " m, " << run.path.size()
            << " steps in " << run.elapsed << " s\n";
  EXPECT_TRUE(run.initial_converged);
  ASSERT_EQ(run.placed_steps, static_cast<int>(run.path.size()));
  EXPECT_GT(run.min_clearance, 0.0);
  const auto deepest =
      std::max_element(run.chains.begin(), run.chains.end(),
                       [](const auto& a, const auto& b) { return a.back().x() < b.back().x(); });
  EXPECT_NEAR(deepest->back().x(), 1.6, 1e-12);  // the tool went 0.5 m beyond the wall
  EXPECT_LT(run.chains.back().back().x(), 1.0);  // and came back out
  write_shake_hole_picture(run, "shake_hole.png");
}

// (2) One and two redundant DOF machining part of a circular workpiece periodically.
void expect_cyclic_machining(int links) {
  const ShakeCircleRun run = run_shake_circle(links, 200.0);
  std::cout << "circle " << links - 3 << " redundant DOF: min clearance " << run.min_clearance
            << " m, worst alignment " << run.worst_alignment * kRadToDeg
            << " deg, residual per period [m]";
  for (double x : run.residual) std::cout << " " << x;
  std::cout << ", first cyclic step " << run.first_cyclic_step << ", " << run.period * run.periods
            << " steps in " << run.elapsed << " s\n";
  EXPECT_TRUE(run.initial_converged);
  EXPECT_EQ(run.placed_steps, run.period * run.periods);
  EXPECT_GT(run.min_clearance, 0.0);
  EXPECT_LT(run.worst_alignment * kRadToDeg, 5.0);
  EXPECT_LT(run.residual.back(), 5e-3);
  EXPECT_GT(run.first_cyclic_step, run.period);
  EXPECT_LE(run.first_cyclic_step, run.period * (run.periods - 1));
  write_shake_circle_picture(run, "shake_circle_" + std::to_string(links - 3) + "dof.png");
}

TEST(ShakeScenario, OneRedundantDofMachinesACircularWorkpieceCyclically) {
  expect_cyclic_machining(4);
}
TEST(ShakeScenario, TwoRedundantDofMachineACircularWorkpieceCyclically) {
  expect_cyclic_machining(5);
}
TEST(ShakeScenario, WithoutThePeriodicTermTheTrajectoryIsLessCyclic) {
  const ShakeCircleRun with = run_shake_circle(5, 200.0);
  const ShakeCircleRun without = run_shake_circle(5, 0.0);
  std::cout << "circle 2 redundant DOF, last-period residual with the periodic term "
            << with.residual.back() << " m, without " << without.residual.back() << " m\n";
  EXPECT_LT(with.residual.back(), without.residual.back());
}

// (3) A spatial arm traces the front face of a box workpiece, aligned at its four corners.
TEST(ShakeScenario, SpatialArmStaysAlignedAtTheFourFrontCornersOfABox) {
  const ShakeCornersRun run = run_shake_corners();
  std::cout << "corners: min clearance " << run.min_clearance << " m, alignment at corners [deg]";
  for (double a : run.corner_error) std::cout << " " << a * kRadToDeg;
  std::cout << ", " << run.path.size() << " steps in " << run.elapsed << " s\n";
  EXPECT_TRUE(run.initial_converged);
  ASSERT_EQ(run.placed_steps, static_cast<int>(run.path.size()));
  EXPECT_GT(run.min_clearance, 0.0);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_LT(run.corner_error[c] * kRadToDeg, 5.0) << "corner " << c;
  }
  write_shake_corners_picture(run, "shake_corners.png");
}

}  // namespace
}  // namespace tether::remote::seed

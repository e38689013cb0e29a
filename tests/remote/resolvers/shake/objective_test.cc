#include "tether/remote/resolvers/shake/objective.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace tether::remote::shake {
namespace {

PointChain<2> two_links(double radius = 0.0) {
  return PointChain<2>(
      Eigen::Vector2d::UnitX(),
      {Link{.length = 1.0, .radius = radius}, Link{.length = 1.0, .radius = radius}},
      {{0, 0}, {1, 0}, {2, 0}});
}

TEST(ShakeGeometry, SegmentDistancesToPolygonsCirclesBoxesAndSpheres) {
  const Polygon square{{{1, 1}, {2, 1}, {2, 2}, {1, 2}}};
  EXPECT_NEAR(segment_distance(square, {0, 0}, {3, 0}), 1.0, 1e-12);
  EXPECT_NEAR(segment_distance(square, {0, 0}, {0.5, 0.5}), std::sqrt(0.5), 1e-12);  // corner
  EXPECT_EQ(segment_distance(square, {0, 1.5}, {3, 1.5}), 0.0);      // passes through
  EXPECT_EQ(segment_distance(square, {1.5, 1.5}, {1.6, 1.6}), 0.0);  // inside
  EXPECT_NEAR(segment_distance(Circle{{0, 1}, 0.25}, {-1, 0}, {1, 0}), 0.75, 1e-12);
  const Box box{.centre = {0, 0, 1}, .half_extents = {0.5, 0.5, 0.5}};
  EXPECT_NEAR(segment_distance(box, {-2, 0, -1}, {2, 0, -1}), 1.5, 1e-6);
  EXPECT_NEAR(segment_distance(box, {1, 1, 0}, {2, 2, 0}), std::sqrt(0.5 + 0.25), 1e-6);
  EXPECT_NEAR(segment_distance(box, {-2, 0, 1}, {2, 0, 1}), -0.5, 1e-6);  // through the centre
  EXPECT_NEAR(segment_distance(Sphere{{0, 0, 2}, 0.5}, {0, -1, 0}, {0, 1, 0}), 1.5, 1e-12);
}

TEST(ShakeObjective, ClearanceIsGrownByTheLinkRadius) {
  const auto chain = two_links(0.1);
  const Objective<2> objective(chain, {.circles = {Circle{{1.0, 0.5}, 0.2}}}, {.obstacle = 1.0});
  EXPECT_NEAR(objective.min_clearance(chain.points()), 0.5 - 0.2 - 0.1, 1e-12);
  const double e = objective(chain.points(), History<2>(2, 3));
  EXPECT_NEAR(e, 2.0 / 0.2, 1e-12);  // 1/c for each of the two links
}

TEST(ShakeObjective, AlignmentTermVanishesWhenTheEndLinkPointsIntoTheSurface) {
  const auto chain = two_links();
  ObjectiveWeights w{.alignment_strength = 2.0, .alignment_decay = 0.5};
  const AlignmentFeature<2> facing{{2.0, 0.0}, {-1.0, 0.0}};
  const Objective<2> aligned(chain, {}, w, {facing});
  const History<2> history(2, 3);
  EXPECT_NEAR(aligned(chain.points(), history), 0.0, 1e-12);
  EXPECT_NEAR(aligned.alignment_error(chain.points()), 0.0, 1e-7);
  // Normal along +y, 1 m away: c·exp(−s/b)·(1 − cos 90°).
  const Objective<2> sideways(chain, {}, w, {{{2.0, 1.0}, {0.0, 1.0}}});
  EXPECT_NEAR(sideways(chain.points(), history), 2.0 * std::exp(-1.0 / 0.5), 1e-12);
  EXPECT_NEAR(sideways.alignment_error(chain.points()), std::numbers::pi / 2, 1e-12);
}

TEST(ShakeObjective, JointVelocityIsTheRelativeAngleRateIn2DAnd3D) {
  const auto chain = two_links();
  const Objective<2> objective(chain, {}, {.dt = 0.5, .joint_velocity = 1.0});
  History<2> history(2, 3);
  history.push(chain.points());
  // The whole chain turned rigidly by 0.1 rad: joint 1 moved, joint 2 did not.
  const Eigen::Rotation2Dd turn(0.1);
  const PointChain<2>::Points turned{
      {0, 0}, turn * Eigen::Vector2d(1, 0), turn * Eigen::Vector2d(2, 0)};
  EXPECT_NEAR(objective(turned, history), std::pow(0.1 / 0.5, 2), 1e-12);

  const PointChain<3> chain3(Eigen::Vector3d::UnitZ(), {Link{.length = 1.0}, Link{.length = 1.0}},
                             {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}});
  const Objective<3> objective3(chain3, {}, {.dt = 0.5, .joint_velocity = 1.0});
  History<3> history3(2, 3);
  history3.push(chain3.points());
  const Eigen::AngleAxisd tilt(0.1, Eigen::Vector3d::UnitX());
  const PointChain<3>::Points rigid{
      {0, 0, 0}, tilt * Eigen::Vector3d(0, 0, 1), tilt * Eigen::Vector3d(0, 0, 2)};
  EXPECT_NEAR(objective3(rigid, history3), std::pow(0.1 / 0.5, 2), 1e-12);
}

TEST(ShakeObjective, PeriodicTermRampsInAfterOnePeriod) {
  const auto chain = two_links();
  const Objective<2> objective(chain, {}, {.periodic = 1.0, .period_steps = 3, .ramp_steps = 4});
  History<2> history(3, 3);
  auto moved = chain.points();
  moved[1].y() += 0.1;
  for (int i = 0; i < 2; ++i) history.push(chain.points());
  EXPECT_EQ(objective(moved, history), 0.0);  // less than one period recorded
  history.push(chain.points());
  EXPECT_EQ(objective(moved, history), 0.0);  // ramp starts at 0
  history.push(chain.points());
  history.push(chain.points());
  const double x = 2.0 / 4.0;
  EXPECT_NEAR(objective(moved, history), (3 * x * x - 2 * x * x * x) * 0.01, 1e-12);
  EXPECT_NEAR(objective.cyclicity_residual(moved, history), 0.1, 1e-12);
}

TEST(ShakeObjective, RejectsBadWeightsNamingTheField) {
  const auto chain = two_links();
  try {
    const Objective<2> refused(chain, {}, {.dt = 0.0});
    FAIL() << "dt 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dt 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Objective<2>(chain, {}, {.reference = 1.0}), std::invalid_argument);
  EXPECT_THROW(Objective<2>(chain, {}, {.obstacle = -1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace tether::remote::shake

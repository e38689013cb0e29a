// The configuration-control patent's configuration control on the iiwa7 at the kinematic level: the
// hand holds its pose (ẋ_c head = 0) while a user kinematic function reconfigures the arm, q +=
// q̇·dt at 1 ms. The runs live in tether::tools (tether/remote/seed/configuration_control_
// scenarios.h), shared with tether-seed-pictures; each scenario here asserts the physical
// outcome and writes the seed picture of the run into the working directory
// (configuration_control_<name>.png): the base–shoulder–elbow–wrist–tool chain seen along the
// shoulder→wrist axis and in BASE x–z, coloured by time, and ψ against time.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "arm_fixture.h"
#include "tether/common/arm_angle.h"
#include "tether/common/obstacles.h"
#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"
#include "tether/remote/seed/configuration_control_scenarios.h"

namespace tether::remote {
namespace {

using seed::ConfigurationControlRun;
using testing::ArmFixture;

// Every cycle resolved, and the hand's six rows exactly (configuration control attains the
// whole ẋ_c: p = 1).
void expect_every_cycle_resolved(const ConfigurationControlRun& rec) {
  EXPECT_EQ(rec.failed_steps, 0);
  EXPECT_EQ(rec.min_achieved_fraction, 1.0);
}

JointVector start_posture() {
  JointVector q;
  q << 0.2, 0.7, 0.3, -1.4, -0.2, 0.8, 0.1;
  return q;
}

TEST(ConfigurationControlScenario, ElbowPlaneTurnsToANewAngleWhileTheHandHoldsItsPose) {
  ArmFixture f;
  f.at(start_posture());
  const seed::ElbowPlaneRun elbow = seed::run_elbow_plane();  // ψ + 0.8 rad from start_posture()
  const ConfigurationControlRun& rec = elbow.run;
  EXPECT_NEAR(elbow.psi_start, f.input.arm_angle, 1e-12);
  const double target = wrap_angle(f.input.arm_angle + 0.8);
  EXPECT_NEAR(elbow.target, target, 1e-12);
  f.at(rec.q);
  std::cout << "elbow plane: psi " << elbow.psi_start << " -> " << f.input.arm_angle
            << " rad (target " << target << "), hand drift " << rec.max_position_drift * 1e3
            << " mm, " << rec.max_orientation_drift * 1e3 << " mrad, min joint-limit margin "
            << rec.min_limit_margin << " rad, max |qdot| " << rec.max_speed << " rad/s\n";
  expect_every_cycle_resolved(rec);
  EXPECT_NEAR(wrap_angle(f.input.arm_angle - target), 0.0, 1e-3);
  EXPECT_LT(rec.max_position_drift, 2e-4);
  EXPECT_LT(rec.max_orientation_drift, 4e-4);
  EXPECT_GT(rec.min_limit_margin, 0.0);
  seed::write_elbow_plane_picture(elbow, "configuration_control_elbow_plane.png");
}

TEST(ConfigurationControlScenario, GravityTorqueFunctionLowersTheSumOfSquaredTorques) {
  ArmFixture f;
  // The elbow turned to the side first: G far from its minimum along the self-motion.
  const seed::GravityTorqueRun gravity = seed::run_gravity_torque();
  expect_every_cycle_resolved(gravity.turn);
  EXPECT_GT(gravity.turn.min_limit_margin, 0.0);
  const JointVector& start = gravity.start;
  const ConfigurationControlRun& rec = gravity.run;
  expect_every_cycle_resolved(rec);
  const double reduction = 1.0 - rec.cost.back() / rec.cost.front();
  ConfigurationControlResolver resolver(f.model);
  double phi0 = 0.0, phi = 0.0;
  ASSERT_TRUE(resolver.functions().optimality_condition(KinematicFunctionKind::kGravityTorque,
                                                        start, phi0));
  ASSERT_TRUE(
      resolver.functions().optimality_condition(KinematicFunctionKind::kGravityTorque, rec.q, phi));
  std::cout << "gravity torque: G " << rec.cost.front() << " -> " << rec.cost.back() << " N^2m^2 ("
            << reduction * 100.0 << " % lower), psi " << rec.psi.front() << " -> " << rec.psi.back()
            << " rad, optimality condition " << phi0 << " -> " << phi << ", hand drift "
            << rec.max_position_drift * 1e3 << " mm, " << rec.max_orientation_drift * 1e3
            << " mrad, min joint-limit margin " << rec.min_limit_margin << " rad, max |qdot| "
            << rec.max_speed << " rad/s\n";
  for (std::size_t i = 1; i < rec.cost.size(); ++i) {
    EXPECT_LE(rec.cost[i], rec.cost[i - 1] + 1e-9) << "sample " << i;
  }
  EXPECT_GT(reduction, 0.2);
  // At the end the optimality condition holds: G is stationary along the self-motion.
  EXPECT_LT(std::abs(phi), 1e-2 * std::abs(phi0));
  EXPECT_LE(rec.max_speed, f.model.velocity_limits().minCoeff() * 1.01);
  EXPECT_LT(rec.max_position_drift, 2e-4);
  EXPECT_LT(rec.max_orientation_drift, 4.5e-4);
  EXPECT_GT(rec.min_limit_margin, 0.0);
  seed::write_gravity_torque_picture(gravity, "configuration_control_gravity_torque.png");
}

TEST(ConfigurationControlScenario, ObstacleStopsTheElbowOutsideItsSphereOfInfluence) {
  ArmFixture f;
  f.at(start_posture());
  const double psi0 = f.input.arm_angle;
  // A sphere where the elbow would be at the end of the first scenario's swing; the
  // arm-angle function yields (low weight) where the hand cannot: the constraint takes the
  // self-motion, the hand keeps its pose.
  const seed::ElbowObstacleRun obstacle = seed::run_elbow_obstacle();
  EXPECT_NEAR(obstacle.psi_start, psi0, 1e-12);
  EXPECT_NEAR(obstacle.target, wrap_angle(psi0 + 0.8), 1e-12);
  expect_every_cycle_resolved(obstacle.unobstructed);
  const ConfigurationControlRun& rec = obstacle.run;
  expect_every_cycle_resolved(rec);
  std::cout << "obstacle: psi " << psi0 << " -> " << rec.psi.back() << " rad (free run "
            << obstacle.unobstructed.psi.back() << "), min distance - influence "
            << rec.min_clearance_to_influence * 1e3 << " mm, constraint active " << rec.active_steps
            << " steps, hand drift " << rec.max_position_drift * 1e3 << " mm, "
            << rec.max_orientation_drift * 1e3 << " mrad\n";
  EXPECT_GT(rec.active_steps, 100);
  EXPECT_GE(rec.min_clearance_to_influence, -1e-4);
  EXPECT_LT(std::abs(wrap_angle(rec.psi.back() - psi0)), 0.7);  // stopped short of 0.8
  EXPECT_GT(std::abs(wrap_angle(rec.psi.back() - psi0)), 0.1);  // but did turn
  EXPECT_LT(rec.max_position_drift, 5e-4);
  EXPECT_LT(rec.max_orientation_drift, 5e-4);
  seed::write_elbow_obstacle_picture(obstacle, "configuration_control_obstacle.png");
}

}  // namespace
}  // namespace tether::remote

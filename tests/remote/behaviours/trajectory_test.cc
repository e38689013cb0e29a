#include "tether/remote/behaviours/trajectory/trajectory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tether/common/arm_angle.h"
#include "tether/common/spatial.h"
#include "tether/common/units.h"
#include "tether/remote/behaviours/spring_trajectory/spring_trajectory.h"

namespace tether::remote {
namespace {

BehaviourContext context_at(const Frame& pose, double psi) {
  BehaviourContext c;
  c.motion_pose = pose;
  c.arm_angle = psi;
  return c;
}

Frame random_pose(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return Frame{so3_exp(Vector3(u(rng), u(rng), u(rng))), Vector3(u(rng), u(rng), u(rng))};
}

TrajectoryParameters three_waypoints(std::mt19937& rng, bool relative) {
  TrajectoryParameters p;
  p.enabled = true;
  p.relative = relative;
  for (double t : {0.5, 1.5, 2.0}) {
    p.waypoints.push_back(
        Waypoint{t, random_pose(rng), std::uniform_real_distribution<>(-3, 3)(rng)});
  }
  return p;
}

TEST(Trajectory, StartsAtTheStartPoseAndPassesEveryWaypointAtRest) {
  std::mt19937 rng(7);
  const Frame start = random_pose(rng);
  const auto params = three_waypoints(rng, false);
  Trajectory gen;
  gen.reset(params, context_at(start, 0.2));
  MotionReference ref;
  gen.evaluate(params, 0.0, ref);
  EXPECT_TRUE(ref.pose.p.isApprox(start.p, 1e-12));
  EXPECT_TRUE(ref.pose.R.isApprox(start.R, 1e-12));
  EXPECT_NEAR(ref.arm_angle, 0.2, 1e-12);
  for (const Waypoint& w : params.waypoints) {
    gen.evaluate(params, w.time, ref);
    EXPECT_LT((ref.pose.p - w.pose.p).norm(), 1e-9);
    EXPECT_LT(orientation_error(ref.pose.R, w.pose.R).norm(), 1e-9);
    EXPECT_NEAR(wrap_angle(ref.arm_angle - w.arm_angle), 0.0, 1e-9);
    EXPECT_LT(ref.velocity.norm(), 1e-9);
    EXPECT_LT(ref.acceleration.norm(), 1e-9);
  }
  gen.evaluate(params, 10.0, ref);  // holds the last waypoint
  EXPECT_LT((ref.pose.p - params.waypoints.back().pose.p).norm(), 1e-12);
  EXPECT_EQ(ref.velocity.norm(), 0.0);
}

TEST(Trajectory, VelocityAndAccelerationAreTheDerivativesOfThePose) {
  std::mt19937 rng(11);
  const auto params = three_waypoints(rng, true);
  Trajectory gen;
  gen.reset(params, context_at(random_pose(rng), -0.4));
  const double h = 1e-6;
  for (double t = 0.05; t < 2.0; t += 0.137) {
    MotionReference a, b, c;
    gen.evaluate(params, t - h, a);
    gen.evaluate(params, t, b);
    gen.evaluate(params, t + h, c);
    const Vector3 v = b.pose.R.transpose() * (c.pose.p - a.pose.p) / (2 * h);
    const Vector3 w = so3_log(a.pose.R.transpose() * c.pose.R) / (2 * h);  // body rate
    EXPECT_LT((v - b.velocity.head<3>()).norm(), 1e-5) << t;
    EXPECT_LT((w - b.velocity.segment<3>(3)).norm(), 1e-5) << t;
    EXPECT_NEAR(wrap_angle(c.arm_angle - a.arm_angle) / (2 * h), b.velocity[6], 1e-5) << t;
    const Vector3 acc = b.pose.R.transpose() *
                        (c.pose.R * c.velocity.head<3>() - a.pose.R * a.velocity.head<3>()) /
                        (2 * h);
    EXPECT_LT((acc - b.acceleration.head<3>()).norm(), 1e-3) << t;
    EXPECT_NEAR((c.velocity[6] - a.velocity[6]) / (2 * h), b.acceleration[6], 1e-3) << t;
  }
}

TEST(Trajectory, RelativeWaypointsComposeOnTheStartPose) {
  TrajectoryParameters p;
  p.enabled = true;
  p.relative = true;
  Frame step;
  step.R = so3_exp(Vector3(0.3, 0, 0));
  step.p = Vector3(0.1, 0, 0);
  p.waypoints.push_back(Waypoint{1.0, step, 0.5});
  Frame start{so3_exp(Vector3(0, 0, M_PI / 2)), Vector3(1, 2, 3)};
  Trajectory gen;
  gen.reset(p, context_at(start, 0.1));
  MotionReference ref;
  gen.evaluate(p, 1.0, ref);
  // 0.1 m along the start frame's x, which is BASE y.
  EXPECT_TRUE(ref.pose.p.isApprox(Vector3(1, 2.1, 3), 1e-12));
  EXPECT_TRUE(ref.pose.R.isApprox(start.R * step.R, 1e-12));
  EXPECT_NEAR(ref.arm_angle, 0.6, 1e-12);
}

TEST(Trajectory, ArmAngleTakesTheShortWayAcrossPi) {
  TrajectoryParameters p;
  p.enabled = true;
  p.relative = false;
  p.waypoints.push_back(Waypoint{1.0, Frame{}, -M_PI + 0.1});
  Trajectory gen;
  gen.reset(p, context_at(Frame{}, M_PI - 0.1));
  MotionReference ref;
  gen.evaluate(p, 0.5, ref);
  EXPECT_NEAR(std::abs(ref.arm_angle), M_PI, 1e-9);
  EXPECT_GT(ref.velocity[6], 0.0);
}

TEST(SpringTrajectory, ReferenceIsTheDestinationAtRestWithTheSpringLengths) {
  SpringTrajectoryParameters p;
  p.enabled = true;
  p.relative = true;
  p.destination.R = so3_exp(Vector3(35.0 * kDegToRad, 0, 0));
  p.max_rotation = 0.05;
  p.max_translation = Vector3(0.01, 0.02, 0.03);
  const Frame start{so3_exp(Vector3(0.2, 0.1, 0)), Vector3(0.5, 0, 0.4)};
  SpringTrajectory spring;
  spring.reset(p, context_at(start, 0.0));
  MotionReference ref;
  spring.evaluate(p, ref);
  EXPECT_NEAR(orientation_error(ref.pose.R, start.R).norm(), 35.0 * kDegToRad, 1e-12);
  EXPECT_TRUE(ref.pose.p.isApprox(start.p));
  EXPECT_EQ(ref.velocity.norm(), 0.0);
  EXPECT_EQ(ref.acceleration.norm(), 0.0);
  EXPECT_EQ(ref.max_rotation, 0.05);
  EXPECT_EQ(ref.max_translation, Vector3(0.01, 0.02, 0.03));
}

}  // namespace
}  // namespace tether::remote

#include "tether/remote/behaviours/singularity_avoidance/singularity_avoidance.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "context_fixture.h"
#include "tether/common/dls.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

Frame offset_motion_frame() {
  return Frame{so3_exp(Vector3(0.5, -0.3, 0.8)), Vector3(0.02, 0.01, 0.1)};
}

double radius(const BehaviourContextFixture& fixture) {
  return (fixture.state().wrist - fixture.state().p[0]).norm();
}

SingularityAvoidanceParameters params_with(double r_min, double r_max) {
  SingularityAvoidanceParameters params;
  params.enabled = true;
  params.r_min = r_min;
  params.r_max = r_max;
  params.gain = 1000.0;
  return params;
}

// Nearly stretched iiwa: |P| ≈ 0.96 m of at most 0.99 m (fully stretched, q = 0).
JointVector nearly_stretched() {
  JointVector q;
  q << 0.4, 0.6, -0.2, 0.35, 0.3, -0.5, 0.2;
  return q;
}

// An annulus that random configurations of the arm fall on both sides of (iiwa: |P| up to
// 0.99 m; panda: up to 0.72 m).
std::pair<double, double> annulus_of(const std::string& arm) {
  return arm == "iiwa7" ? std::pair{0.55, 0.85} : std::pair{0.4, 0.68};
}

TEST(SingularityAvoidance, AddsNothingInsideTheAnnulus) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    const auto [r_min, r_max] = annulus_of(name);
    const auto params = params_with(r_min, r_max);
    SingularityAvoidance behaviour;
    behaviour.reset(params, fixture.context());
    int inside = 0, outside = 0;
    for (const JointVector& q : fixture.random_configurations(200, 11)) {
      fixture.set(q);
      BehaviourOutput out;
      behaviour.update(params, fixture.context(), out);
      const double r = radius(fixture);
      if (r >= params.r_min && r <= params.r_max) {
        ++inside;
        EXPECT_EQ(out.force, MotionVector::Zero()) << r;
      } else {
        ++outside;
        EXPECT_GT(out.force.norm(), 0.0) << r;
      }
      EXPECT_EQ(out.velocity, MotionVector::Zero());
    }
    // Both branches must have been exercised for the test to mean anything.
    EXPECT_GT(inside, 20);
    EXPECT_GT(outside, 20);
  }
}

TEST(SingularityAvoidance, PullsTheWristInBeyondRMaxWithTheSpringForce) {
  BehaviourContextFixture fixture(load_default_arm(), offset_motion_frame());
  fixture.set(nearly_stretched());
  const double r = radius(fixture);
  const auto params = params_with(0.2, r - 0.05);
  SingularityAvoidance behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  const Vector3 P_hat = (fixture.state().wrist - fixture.state().p[0]) / r;
  const Vector3 expected_base = -1000.0 * 0.05 * P_hat;  // 50 N towards joint 1
  const Matrix3& R_motion = fixture.context().motion_pose.R;
  EXPECT_LE((out.force.head<3>() - R_motion.transpose() * expected_base).norm(), 1e-9);
  EXPECT_NEAR(out.force.head<3>().norm(), 50.0, 1e-9);
  EXPECT_EQ(out.force.tail<4>(), Eigen::Vector4d::Zero());
}

TEST(SingularityAvoidance, PushesTheWristOutInsideRMinWithTheSpringForce) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    JointVector q;
    q << -0.3, 0.4, 0.2, -1.9, 0.5, 1.5, 0.1;
    fixture.set(q);
    const double r = radius(fixture);
    const auto params = params_with(r + 0.03, 2.0);
    SingularityAvoidance behaviour;
    BehaviourOutput out;
    out.force = MotionVector::Constant(1.0);
    behaviour.update(params, fixture.context(), out);
    const Vector3 P_hat = (fixture.state().wrist - fixture.state().p[0]) / r;
    const Vector3 force_base =
        fixture.context().motion_pose.R * (out.force.head<3>() - Vector3::Constant(1.0));
    EXPECT_LE((force_base - 30.0 * P_hat).norm(), 1e-9);  // 30 N away from joint 1
    EXPECT_EQ(out.force.tail<4>(), Eigen::Vector4d::Constant(1.0));
  }
}

// Fed through the arm the way the impedance law and resolver do (velocity level: the force
// over a damping, resolved by eq. 13), the force must shrink |P| back to r_max, in a rigid
// MOTION frame offset from the wrist, and the motion must keep pose rotation and ψ.
TEST(SingularityAvoidance, ThroughTheResolverBringsAStretchedArmBackToRMax) {
  BehaviourContextFixture fixture(load_default_arm(), offset_motion_frame());
  fixture.set(nearly_stretched());
  const double r0 = radius(fixture);
  const auto params = params_with(0.2, 0.9);
  ASSERT_GT(r0, 0.95);
  const double damping = 350.0;  // N·s/m
  const double dt = 0.005;
  SingularityAvoidance behaviour;
  const Matrix3 R0 = fixture.context().motion_pose.R;
  const double psi0 = fixture.arm_angle().psi;
  double previous = r0;
  for (int step = 0; step < 1200; ++step) {
    BehaviourOutput out;
    behaviour.update(params, fixture.context(), out);
    const MotionVector xdot = out.force / damping;
    JointVector qdot;
    ASSERT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), MotionVector::Ones(),
                                       JointVector::Zero(), xdot, qdot),
              DlsStatus::kOk);
    if (step == 0) {
      // Virtual work: the joint motion's first-order change of |P| has the force's sign.
      const Vector3 P_hat = (fixture.state().wrist - fixture.state().p[0]) / r0;
      Jacobian6 J_wrist;
      point_jacobian(fixture.state(), fixture.model().point_joint(2), fixture.state().wrist,
                     J_wrist);
      EXPECT_LT(P_hat.dot(J_wrist.topRows<3>() * qdot), -0.01);
    }
    fixture.set(fixture.q() + qdot * dt);
    EXPECT_LE(radius(fixture), previous + 1e-12);
    previous = radius(fixture);
  }
  EXPECT_NEAR(radius(fixture), 0.9, 1e-4);
  // Only translation is commanded; the residue is the explicit Euler integration's second
  // order (steps of up to 1 mm here).
  EXPECT_LE(orientation_error(R0, fixture.context().motion_pose.R).norm(), 1e-3);
  EXPECT_NEAR(fixture.arm_angle().psi, psi0, 1e-3);
}

TEST(SingularityAvoidance, DisabledAddsNothingOutsideTheAnnulus) {
  BehaviourContextFixture fixture(load_default_arm());
  fixture.set(nearly_stretched());
  auto params = params_with(0.2, 0.5);
  params.enabled = false;
  SingularityAvoidance behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_EQ(out.force, MotionVector::Zero());
}

}  // namespace
}  // namespace tether::remote

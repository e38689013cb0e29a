#include "tether/remote/behaviours/joint_limit_avoidance/joint_limit_avoidance.h"

#include <gtest/gtest.h>

#include "context_fixture.h"
#include "tether/common/dls.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

// A well-conditioned pose of both arms away from every limit.
JointVector middle_pose() {
  JointVector q;
  q << 0.3, 0.5, -0.4, -1.2, 0.6, 1.2, -0.3;
  return q;
}

Frame offset_motion_frame() {
  return Frame{so3_exp(Vector3(0.2, -0.4, 0.3)), Vector3(0.01, -0.02, 0.12)};
}

JointLimitAvoidanceParameters velocity_params() {
  JointLimitAvoidanceParameters params;
  params.enabled = true;
  params.input = InputKind::kVelocity;
  return params;
}

// Resolves a motion-space velocity exactly (W_t = I, W_v = 0), as the executor's resolver
// does without damping.
JointVector resolve(const CompositeJacobian& J, const MotionVector& xdot) {
  JointVector qdot;
  EXPECT_EQ(weighted_dls<kMotionDim>(J, MotionVector::Ones(), JointVector::Zero(), xdot, qdot),
            DlsStatus::kOk);
  return qdot;
}

TEST(JointLimitAvoidance, AddsNothingAwayFromTheLimits) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    const auto params = velocity_params();
    JointLimitAvoidance behaviour;
    behaviour.reset(params, fixture.context());
    // Margin just beyond the zone: every joint is outside its zone.
    for (const JointVector& q : fixture.random_configurations(50, 7, 0.2 + 1e-6)) {
      fixture.set(q);
      BehaviourOutput out;
      behaviour.update(params, fixture.context(), out);
      EXPECT_EQ(out.velocity, MotionVector::Zero());
      EXPECT_EQ(out.force, MotionVector::Zero());
      EXPECT_EQ(out.joint_weight, 0.0);
    }
  }
}

TEST(JointLimitAvoidance, DrivesAJointAwayFromTheLimitItApproaches) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    const auto params = velocity_params();
    JointLimitAvoidance behaviour;
    for (int i = 0; i < kArmDof; ++i) {
      for (const bool lower : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "joint " << i << (lower ? " lower" : " upper"));
        JointVector q = middle_pose();
        q[i] = lower ? fixture.model().lower_limits()[i] + 0.05
                     : fixture.model().upper_limits()[i] - 0.05;
        fixture.set(q);
        BehaviourOutput out;
        behaviour.update(params, fixture.context(), out);
        // What the arm does with this reference velocity: only joint i moves, inwards.
        JointVector qdot = resolve(fixture.jacobian(), out.velocity);
        if (lower) {
          EXPECT_GT(qdot[i], 0.1);
        } else {
          EXPECT_LT(qdot[i], -0.1);
        }
        qdot[i] = 0.0;
        EXPECT_LE(qdot.cwiseAbs().maxCoeff(), 1e-9);
      }
    }
  }
}

TEST(JointLimitAvoidance, RepellingSpeedFollowsTheShiftedReciprocalLaw) {
  BehaviourContextFixture fixture(load_default_arm(), offset_motion_frame());
  auto params = velocity_params();
  params.zone = JointVector::Constant(0.3);
  params.gain = JointVector::LinSpaced(0.01, 0.07);
  JointLimitAvoidance behaviour;
  const JointVector lower = fixture.model().lower_limits();
  const JointVector upper = fixture.model().upper_limits();
  for (const double d : {0.29, 0.2, 0.1, 0.03, 0.005}) {
    JointVector q = middle_pose();
    q[1] = lower[1] + d;  // k(1/d − 1/zone), upwards
    q[5] = upper[5] - d;  // the same, downwards
    fixture.set(q);
    BehaviourOutput out;
    behaviour.update(params, fixture.context(), out);
    JointVector expected = JointVector::Zero();
    expected[1] = params.gain[1] * (1.0 / d - 1.0 / 0.3);
    expected[5] = -params.gain[5] * (1.0 / d - 1.0 / 0.3);
    EXPECT_LE((behaviour.joint_velocity() - expected).norm(), 1e-12 * expected.norm()) << d;
    const MotionVector xdot = fixture.jacobian() * expected;
    EXPECT_LE((out.velocity - xdot).norm(), 1e-12 * xdot.norm()) << d;
  }
}

TEST(JointLimitAvoidance, StartsFromZeroAtTheZoneEdge) {
  BehaviourContextFixture fixture(load_panda_arm());
  const auto params = velocity_params();  // zone 0.2 rad, k 0.02 rad²/s
  JointLimitAvoidance behaviour;
  for (const double d : {0.2 + 1e-9, 0.2 - 1e-9, 0.2 - 1e-6}) {
    JointVector q = middle_pose();
    q[3] = fixture.model().upper_limits()[3] - d;
    fixture.set(q);
    BehaviourOutput out;
    behaviour.update(params, fixture.context(), out);
    // |q̇| = k (zone − d) / (d zone) ≤ 0.02 · 1e-6 / 0.04 = 5e-7 rad/s.
    EXPECT_LE(behaviour.joint_velocity().cwiseAbs().maxCoeff(), 0.02 * 1.1e-6 / 0.04) << d;
    EXPECT_LE(out.velocity.norm(), 1e-6) << d;
  }
}

TEST(JointLimitAvoidance, StaysFiniteAtAndBeyondALimit) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = velocity_params();
  JointLimitAvoidance behaviour;
  const double saturated = 0.02 * (1.0 / JointLimitAvoidance::kMinDistance - 1.0 / 0.2);
  for (const double beyond : {0.0, 0.01, 1.0}) {
    JointVector q = middle_pose();
    q[0] = fixture.model().lower_limits()[0] - beyond;
    fixture.set(q);
    BehaviourOutput out;
    behaviour.update(params, fixture.context(), out);
    EXPECT_DOUBLE_EQ(behaviour.joint_velocity()[0], saturated) << beyond;
    EXPECT_TRUE(out.velocity.allFinite());
  }
}

TEST(JointLimitAvoidance, OverlappingZonesBalanceAtMidRange) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = velocity_params();
  const JointVector lower = fixture.model().lower_limits();
  const JointVector upper = fixture.model().upper_limits();
  params.zone = upper - lower;  // each zone covers the whole range
  JointVector q = 0.5 * (lower + upper);
  fixture.set(q);
  BehaviourOutput out;
  JointLimitAvoidance behaviour;
  behaviour.update(params, fixture.context(), out);
  EXPECT_LE(behaviour.joint_velocity().cwiseAbs().maxCoeff(), 1e-15);
  q[2] += 0.5;  // nearer the upper limit: pushed down
  fixture.set(q);
  behaviour.update(params, fixture.context(), out);
  EXPECT_LT(behaviour.joint_velocity()[2], 0.0);
}

TEST(JointLimitAvoidance, ForceInputIsTheDampingTimesTheVelocityAndAddsToTheOutput) {
  BehaviourContextFixture fixture(load_panda_arm(), offset_motion_frame());
  auto params = velocity_params();
  params.input = InputKind::kForce;
  params.damping << 300, 310, 320, 40, 50, 60, 7;
  JointVector q = middle_pose();
  q[0] = fixture.model().lower_limits()[0] + 0.04;
  q[6] = fixture.model().upper_limits()[6] - 0.1;
  fixture.set(q);
  JointLimitAvoidance behaviour;
  BehaviourOutput out;
  out.force = MotionVector::Constant(1.0);
  out.velocity = MotionVector::Constant(2.0);
  out.joint_weight = 3.0;
  behaviour.update(params, fixture.context(), out);
  const MotionVector xdot = fixture.jacobian() * behaviour.joint_velocity();
  EXPECT_GT(xdot.norm(), 0.01);
  EXPECT_LE((out.force - (MotionVector::Constant(1.0) + params.damping.cwiseProduct(xdot))).norm(),
            1e-12 * params.damping.cwiseProduct(xdot).norm());
  EXPECT_EQ(out.velocity, MotionVector::Constant(2.0));
  EXPECT_EQ(out.joint_weight, 3.0);
}

TEST(JointLimitAvoidance, DisabledAddsNothingEvenAtALimit) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = velocity_params();
  params.enabled = false;
  JointVector q = middle_pose();
  q[3] = fixture.model().lower_limits()[3];
  fixture.set(q);
  JointLimitAvoidance behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_EQ(out.velocity, MotionVector::Zero());
  EXPECT_EQ(out.force, MotionVector::Zero());
}

}  // namespace
}  // namespace tether::remote

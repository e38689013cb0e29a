#include "tether/remote/behaviours/manipulability/manipulability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "context_fixture.h"
#include "tether/common/dls.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

Frame offset_motion_frame() {
  return Frame{so3_exp(Vector3(-0.4, 0.7, 0.2)), Vector3(0.03, -0.01, 0.14)};
}

// w straight from its definition.
double manipulability_of(const CompositeJacobian& J) {
  const Jacobian6 J6 = J.topRows<6>();
  return std::sqrt((J6 * J6.transpose()).determinant());
}

ManipulabilityParameters velocity_params() {
  ManipulabilityParameters params;
  params.enabled = true;
  params.gain = 1.0;  // |ψ̇| ≈ 0.01-0.1 rad/s on random poses of the shipped arms
  return params;
}

TEST(Manipulability, GradientMatchesCentralDifferencesOnBothArms) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    int checked = 0;
    for (const JointVector& q : fixture.random_configurations(100, 23, 1e-3)) {
      fixture.set(q);
      double w = 0.0;
      RowJacobian gradient;
      ASSERT_TRUE(manipulability_gradient(fixture.jacobian().topRows<6>(), w, gradient));
      // Cholesky product against Eigen's LU determinant: round-off of an ill-scaled A.
      EXPECT_NEAR(w, manipulability_of(fixture.jacobian()), 1e-9 * w);
      const double h = 1e-5;
      RowJacobian numeric;
      for (int k = 0; k < kArmDof; ++k) {
        JointVector dq = JointVector::Zero();
        dq[k] = h;
        fixture.set(q + dq);
        const double plus = manipulability_of(fixture.jacobian());
        fixture.set(q - dq);
        const double minus = manipulability_of(fixture.jacobian());
        numeric[k] = (plus - minus) / (2 * h);
      }
      EXPECT_LE((gradient - numeric).norm(), 1e-6 * gradient.norm()) << q.transpose();
      ++checked;
    }
    EXPECT_EQ(checked, 100);
  }
}

// w does not depend on the MOTION frame's axes or origin on the last link.
TEST(Manipulability, IsTheSameForEveryMotionFrame) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture a(arm);
    BehaviourContextFixture b(arm, offset_motion_frame());
    for (const JointVector& q : a.random_configurations(20, 29)) {
      a.set(q);
      b.set(q);
      double wa = 0.0, wb = 0.0;
      RowJacobian ga, gb;
      ASSERT_TRUE(manipulability_gradient(a.jacobian().topRows<6>(), wa, ga));
      ASSERT_TRUE(manipulability_gradient(b.jacobian().topRows<6>(), wb, gb));
      EXPECT_NEAR(wa, wb, 1e-12 * wa);
      EXPECT_LE((ga - gb).norm(), 1e-10 * ga.norm());
    }
  }
}

// Moves the arm along its self-motion by `dpsi` [rad] at the pose it has, with a Newton
// correction so the MOTION pose stays put while ψ changes.
void self_motion_step(BehaviourContextFixture& fixture, const Frame& pose, double psi_target) {
  for (int iteration = 0; iteration < 3; ++iteration) {
    const Frame& now = fixture.context().motion_pose;
    MotionVector error;
    error.head<3>() = now.R.transpose() * (pose.p - now.p);
    error.segment<3>(3) = now.R.transpose() * orientation_error(pose.R, now.R);
    error[6] = wrap_angle(psi_target - fixture.arm_angle().psi);
    JointVector dq;
    ASSERT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), MotionVector::Ones(),
                                       JointVector::Zero(), error, dq),
              DlsStatus::kOk);
    fixture.set(fixture.q() + dq);
  }
}

TEST(Manipulability, AStepAlongTheOutputRaisesManipulabilityAtConstantPose) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    const auto params = velocity_params();
    Manipulability behaviour;
    behaviour.reset(params, fixture.context());
    int raised = 0;
    for (const JointVector& q : fixture.random_configurations(100, 31, 0.1)) {
      fixture.set(q);
      BehaviourOutput out;
      behaviour.update(params, fixture.context(), out);
      if (!behaviour.valid() || std::abs(out.velocity[6]) < 1e-4) continue;
      EXPECT_EQ(out.velocity.head<6>(), Vector6::Zero());
      EXPECT_DOUBLE_EQ(out.velocity[6], behaviour.arm_angle_rate());
      const double w0 = manipulability_of(fixture.jacobian());
      const Frame pose0 = fixture.context().motion_pose;
      JointVector qdot;
      ASSERT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), MotionVector::Ones(),
                                         JointVector::Zero(), out.velocity, qdot),
                DlsStatus::kOk);
      const double dt = 1e-4 / qdot.norm();  // a joint step of 1e-4 rad
      fixture.set(q - qdot * dt);
      const double w_before = manipulability_of(fixture.jacobian());
      fixture.set(q + qdot * dt);
      const double w_after = manipulability_of(fixture.jacobian());
      EXPECT_GT(w_after, w0);
      // First order: Δw = ∂w/∂ψ · ψ̇ dt = k (∂w/∂ψ)² dt > 0 (central, so w's curvature drops).
      const double expected = params.gain * std::pow(behaviour.gradient_along_arm_angle(), 2) * dt;
      EXPECT_NEAR(0.5 * (w_after - w_before), expected, 1e-3 * expected);
      // The pose moves at second order only: far less than a joint step of this size would.
      EXPECT_LE((fixture.context().motion_pose.p - pose0.p).norm(), 1e-3 * qdot.norm() * dt);
      ++raised;
    }
    EXPECT_GT(raised, 80);
  }
}

// Traces the whole self-motion loop of a pose, sampling w alone (no gradient), and finds
// its maximum by a parabola through the best samples; there the behaviour must command
// (almost) nothing, and on either side it must point at the maximum.
TEST(Manipulability, VanishesAtTheManipulabilityMaximumAlongTheSelfMotion) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm, offset_motion_frame());
    JointVector q;
    q << 0.1, 0.7, 0.2, -1.4, 0.3, 1.0, -0.2;
    fixture.set(q);
    const Frame pose = fixture.context().motion_pose;
    const double psi0 = fixture.arm_angle().psi;
    const auto params = velocity_params();
    Manipulability behaviour;

    const int samples = 360;
    const double step = 2.0 * std::numbers::pi / samples;
    std::vector<double> w(samples), rate(samples);
    std::vector<JointVector> configurations(samples);
    for (int n = 0; n < samples; ++n) {
      self_motion_step(fixture, pose, psi0 + n * step);
      configurations[static_cast<std::size_t>(n)] = fixture.q();
      w[static_cast<std::size_t>(n)] = manipulability_of(fixture.jacobian());
      BehaviourOutput out;
      behaviour.update(params, fixture.context(), out);
      ASSERT_TRUE(behaviour.valid()) << n;
      rate[static_cast<std::size_t>(n)] = out.velocity[6];
    }
    int best = 0;
    for (int n = 1; n < samples; ++n) {
      if (w[static_cast<std::size_t>(n)] > w[static_cast<std::size_t>(best)]) best = n;
    }
    auto at = [&](int n) { return static_cast<std::size_t>((n + samples) % samples); };
    const double before = w[at(best - 1)], here = w[at(best)], after = w[at(best + 1)];
    const double offset = 0.5 * (before - after) / (before - 2.0 * here + after);  // samples
    ASSERT_LE(std::abs(offset), 0.5);
    fixture.set(configurations[at(best)]);
    self_motion_step(fixture, pose, psi0 + (best + offset) * step);

    BehaviourOutput out;
    behaviour.update(params, fixture.context(), out);
    double largest = 0.0;
    for (const double r : rate) largest = std::max(largest, std::abs(r));
    ASSERT_GT(largest, 1e-3);
    EXPECT_LE(std::abs(out.velocity[6]), 1e-3 * largest);
    // Uphill on both sides: ψ̇ > 0 below the maximum, < 0 above it.
    EXPECT_GT(rate[at(best - 3)], 0.0);
    EXPECT_LT(rate[at(best + 3)], 0.0);
  }
}

TEST(Manipulability, ForceInputIsTheDampingTimesTheArmAngleRateOnRowSix) {
  BehaviourContextFixture fixture(load_panda_arm(), offset_motion_frame());
  JointVector q;
  q << 0.1, 0.7, 0.2, -1.4, 0.3, 1.0, -0.2;
  fixture.set(q);
  auto params = velocity_params();
  params.input = InputKind::kForce;
  params.damping = 12.0;
  Manipulability behaviour;
  BehaviourOutput out;
  out.force[6] = 1.0;
  behaviour.update(params, fixture.context(), out);
  ASSERT_TRUE(behaviour.valid());
  EXPECT_GT(std::abs(behaviour.arm_angle_rate()), 1e-5);
  EXPECT_DOUBLE_EQ(out.force[6], 1.0 + 12.0 * behaviour.arm_angle_rate());
  EXPECT_EQ(out.force.head<6>(), Vector6::Zero());
  EXPECT_EQ(out.velocity, MotionVector::Zero());
}

// With the reference vector V along S→W, ψ is undefined (its Jacobian row is zero) though
// the pose Jacobian has full rank: no self-motion, no output. Likewise at the stretched iiwa
// (q = 0), where the pose Jacobian itself loses rank.
TEST(Manipulability, AddsNothingWhereTheSelfMotionIsUndefined) {
  JointVector q;
  q << 0.1, 0.7, 0.2, -1.4, 0.3, 1.0, -0.2;
  const ArmModel arm = load_default_arm();
  Vector3 shoulder_to_wrist;
  {
    BehaviourContextFixture probe(arm);
    probe.set(q);
    shoulder_to_wrist = probe.state().wrist - probe.state().shoulder;
  }
  BehaviourContextFixture along(arm, Frame::Identity(), shoulder_to_wrist);
  along.set(q);
  ASSERT_EQ(along.arm_angle().status, ArmAngleStatus::kReferenceAlongShoulderWrist);
  double w = 0.0;
  RowJacobian gradient;
  ASSERT_TRUE(manipulability_gradient(along.jacobian().topRows<6>(), w, gradient));

  BehaviourContextFixture stretched(arm);
  stretched.set(JointVector::Zero());
  for (BehaviourContextFixture* fixture : {&along, &stretched}) {
    const auto params = velocity_params();
    Manipulability behaviour;
    BehaviourOutput out;
    behaviour.update(params, fixture->context(), out);
    EXPECT_FALSE(behaviour.valid());
    EXPECT_EQ(out.velocity, MotionVector::Zero());
    EXPECT_EQ(out.force, MotionVector::Zero());
  }
}

TEST(Manipulability, DisabledAddsNothing) {
  BehaviourContextFixture fixture(load_default_arm());
  JointVector q;
  q << 0.1, 0.7, 0.2, -1.4, 0.3, 1.0, -0.2;
  fixture.set(q);
  auto params = velocity_params();
  params.enabled = false;
  Manipulability behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_EQ(out.velocity, MotionVector::Zero());
}

}  // namespace
}  // namespace tether::remote

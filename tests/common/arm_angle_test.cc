#include "tether/common/arm_angle.h"

#include <gtest/gtest.h>

#include <numbers>

#include "test_arms.h"

namespace tether {
namespace {

using testing::random_configurations;
using testing::shipped_arms;

TEST(ArmAngle, JacobianMatchesCentralDifferencesOnBothArms) {
  for (const auto& shipped : shipped_arms()) {
    SCOPED_TRACE(shipped.name);
    const KinematicModel model(testing::load(shipped));
    for (const Vector3& reference : {Vector3(0, 0, 1), Vector3(1, 0.5, 0.2)}) {
      const ArmAngleModel arm_angle(reference);
      KinematicState state;
      ArmAngle psi;
      int checked = 0;
      for (const JointVector& q : random_configurations(model, 300, 99, 1e-3)) {
        forward_kinematics(model, q, state);
        arm_angle.compute(model, state, psi);
        if (psi.status != ArmAngleStatus::kOk) continue;
        // Stay away from the algorithmic singularities, where ψ changes arbitrarily fast.
        const Vector3 w = state.wrist - state.shoulder;
        const Vector3 e = state.elbow - state.shoulder;
        if (w.normalized().cross(e).norm() < 0.05 ||
            w.normalized().cross(reference.normalized()).norm() < 0.05) {
          continue;
        }
        const double h = 1e-6;
        for (int i = 0; i < kArmDof; ++i) {
          JointVector dq = JointVector::Zero();
          dq[i] = h;
          double plus = 0, minus = 0;
          forward_kinematics(model, q + dq, state);
          ASSERT_EQ(arm_angle.angle(state, plus), ArmAngleStatus::kOk);
          forward_kinematics(model, q - dq, state);
          ASSERT_EQ(arm_angle.angle(state, minus), ArmAngleStatus::kOk);
          const double numeric = wrap_angle(plus - minus) / (2 * h);
          EXPECT_NEAR(psi.jacobian[i], numeric, 1e-6) << "joint " << i << " q " << q.transpose();
        }
        ++checked;
      }
      EXPECT_GT(checked, 200);
    }
  }
}

TEST(ArmAngle, JointOneTurnsTheArmPlaneAboutTheVerticalReference) {
  // With a vertical reference and S on joint 1's axis, joint 1 rotates S, E, W and the
  // reference together: ψ must not change.
  const KinematicModel model(testing::load(shipped_arms()[0]));
  const ArmAngleModel arm_angle;
  KinematicState state;
  JointVector q;
  q << 0.0, 0.6, 0.4, -1.1, 0.3, 0.8, 0.0;
  forward_kinematics(model, q, state);
  double psi0 = 0;
  ASSERT_EQ(arm_angle.angle(state, psi0), ArmAngleStatus::kOk);
  q[0] = 1.2;
  forward_kinematics(model, q, state);
  double psi1 = 0;
  ASSERT_EQ(arm_angle.angle(state, psi1), ArmAngleStatus::kOk);
  EXPECT_NEAR(psi0, psi1, 1e-12);
}

TEST(ArmAngle, JointThreeOfAnSrsArmChangesOnlyTheArmAngle) {
  // iiwa joint 3 turns about the S–E line: for an S-R-S arm that is (close to) the
  // self-motion, so the elbow swings while S and W stay.
  const KinematicModel model(testing::load(shipped_arms()[0]));
  const ArmAngleModel arm_angle;
  KinematicState state;
  ArmAngle psi;
  JointVector q;
  q << 0.0, 0.6, 0.0, -1.1, 0.0, 0.8, 0.0;
  forward_kinematics(model, q, state);
  arm_angle.compute(model, state, psi);
  ASSERT_EQ(psi.status, ArmAngleStatus::kOk);
  EXPECT_NEAR(psi.psi, 0.0, 1e-12) << "elbow in the vertical plane through S and W";
  const Vector3 wrist = state.wrist;
  q[2] = 0.5;
  forward_kinematics(model, q, state);
  double psi_turned = 0;
  ASSERT_EQ(arm_angle.angle(state, psi_turned), ArmAngleStatus::kOk);
  EXPECT_GT(std::abs(psi_turned), 0.1);
  EXPECT_LE((state.wrist - wrist).norm(), 0.5) << "sanity: the wrist stays near";
}

TEST(ArmAngle, ReportsTheStretchedArmAsUndefinedWithAZeroJacobian) {
  const KinematicModel model(testing::load(shipped_arms()[0]));
  const ArmAngleModel arm_angle(Vector3(1, 0, 0));
  KinematicState state;
  ArmAngle psi;
  forward_kinematics(model, JointVector::Zero(), state);
  arm_angle.compute(model, state, psi);
  EXPECT_EQ(psi.status, ArmAngleStatus::kElbowOnShoulderWristLine);
  EXPECT_TRUE(psi.jacobian.isZero());
}

TEST(ArmAngle, ReportsAShoulderWristLineAlongTheReference) {
  // Panda at q = 0: S and W on the vertical axis, elbow offset by a4 = 0.0825 m.
  const KinematicModel model(testing::load(shipped_arms()[1]));
  const ArmAngleModel arm_angle;
  KinematicState state;
  ArmAngle psi;
  forward_kinematics(model, JointVector::Zero(), state);
  arm_angle.compute(model, state, psi);
  EXPECT_EQ(psi.status, ArmAngleStatus::kReferenceAlongShoulderWrist);
}

TEST(ArmAngle, WrapsToMinusPiExclusivePiInclusive) {
  EXPECT_DOUBLE_EQ(wrap_angle(std::numbers::pi), std::numbers::pi);
  EXPECT_DOUBLE_EQ(wrap_angle(-std::numbers::pi), std::numbers::pi);
  EXPECT_NEAR(wrap_angle(3 * std::numbers::pi / 2), -std::numbers::pi / 2, 1e-15);
  EXPECT_NEAR(wrap_angle(-7.0), -7.0 + 2 * std::numbers::pi, 1e-15);
}

}  // namespace
}  // namespace tether

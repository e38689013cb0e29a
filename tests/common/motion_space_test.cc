#include "tether/common/motion_space.h"

#include <gtest/gtest.h>

#include "test_arms.h"
#include "tether/common/spatial.h"

namespace tether {
namespace {

using testing::random_configurations;
using testing::shipped_arms;

// The composite Jacobian must predict the motion-space displacement: translation of the
// MOTION origin, rotation vector of the MOTION frame, change of ψ.
TEST(MotionSpace, CompositeJacobianPredictsMotionFrameAndArmAngleRates) {
  Frame tool_T_motion;
  tool_T_motion.R = so3_exp(Vector3(0.3, -0.2, 0.5));
  tool_T_motion.p = Vector3(0.02, -0.05, 0.15);
  for (const auto& shipped : shipped_arms()) {
    SCOPED_TRACE(shipped.name);
    const KinematicModel model(testing::load(shipped));
    const ArmAngleModel arm_angle;
    KinematicState state;
    CompositeJacobian J;
    ArmAngle psi;
    int checked = 0;
    for (const JointVector& q : random_configurations(model, 100, 5, 1e-3)) {
      forward_kinematics(model, q, state);
      composite_jacobian(model, state, arm_angle, tool_T_motion, J, psi);
      if (psi.status != ArmAngleStatus::kOk ||
          (state.wrist - state.shoulder).normalized().cross(state.elbow - state.shoulder).norm() <
              0.05) {
        continue;
      }
      const double h = 1e-6;
      for (int i = 0; i < kArmDof; ++i) {
        JointVector dq = JointVector::Zero();
        dq[i] = h;
        forward_kinematics(model, q + dq, state);
        const Frame plus = motion_frame_pose(state, tool_T_motion);
        double psi_plus = 0;
        arm_angle.angle(state, psi_plus);
        forward_kinematics(model, q - dq, state);
        const Frame minus = motion_frame_pose(state, tool_T_motion);
        double psi_minus = 0;
        arm_angle.angle(state, psi_minus);
        MotionVector numeric;
        numeric.head<3>() = (plus.p - minus.p) / (2 * h);
        numeric.segment<3>(3) = orientation_error(plus.R, minus.R) / (2 * h);
        numeric[6] = wrap_angle(psi_plus - psi_minus) / (2 * h);
        EXPECT_LE((J.col(i) - numeric).cwiseAbs().maxCoeff(), 1e-6) << "joint " << i;
      }
      ++checked;
    }
    EXPECT_GT(checked, 60);
  }
}

TEST(MotionSpace, ExpressInFrameRotatesTranslationAndRotationRowsOnly) {
  const KinematicModel model(testing::load(shipped_arms()[0]));
  KinematicState state;
  CompositeJacobian J, K;
  ArmAngle psi;
  JointVector q;
  q << 0.2, 0.5, -0.3, -1.0, 0.4, 0.7, -0.2;
  forward_kinematics(model, q, state);
  composite_jacobian(model, state, ArmAngleModel(), Frame::Identity(), J, psi);
  K = J;
  const Matrix3 R = so3_exp(Vector3(0.1, 0.7, -0.4));
  express_in_frame(R, K);
  EXPECT_LE((K.topRows<3>() - R.transpose() * J.topRows<3>()).norm(), 1e-14);
  EXPECT_LE((K.middleRows<3>(3) - R.transpose() * J.middleRows<3>(3)).norm(), 1e-14);
  EXPECT_EQ(K.row(6), J.row(6));
}

}  // namespace
}  // namespace tether

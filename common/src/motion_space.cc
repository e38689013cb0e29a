#include "tether/common/motion_space.h"

namespace tether {

Frame motion_frame_pose(const KinematicState& state, const Frame& tool_T_motion) {
  return state.tool * tool_T_motion;
}

void composite_jacobian(const KinematicModel& model, const KinematicState& state,
                        const ArmAngleModel& arm_angle, const Frame& tool_T_motion,
                        Eigen::Ref<CompositeJacobian> jacobian, ArmAngle& psi) {
  const Vector3 r = state.tool * tool_T_motion.p;
  point_jacobian(state, kArmDof - 1, r, jacobian.topRows<6>());
  arm_angle.compute(model, state, psi);
  jacobian.row(6) = psi.jacobian;
}

void express_in_frame(const Matrix3& R_base_frame, Eigen::Ref<CompositeJacobian> jacobian) {
  jacobian.topRows<3>() = R_base_frame.transpose() * jacobian.topRows<3>();
  jacobian.middleRows<3>(3) = R_base_frame.transpose() * jacobian.middleRows<3>(3);
}

}  // namespace tether

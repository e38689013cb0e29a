#pragma once

// The 7-D motion space of the extended-task-space patent: pose of the MOTION frame plus the arm
// angle ψ.
//
// The MOTION frame is rigidly attached to the tool (pose `tool_T_motion` in the tool
// frame); its origin is the velocity reference point r of eq. 11.
//
// Composite Jacobian row order (this differs from the seed's eq. 10, which lists the
// angular rows first, so that rows match x and the wrench (force, torque)):
//   rows 0-2  J_v : linear velocity of the MOTION origin, BASE coordinates [m/s per rad/s]
//   rows 3-5  J_ω : angular velocity of the MOTION frame, BASE coordinates
//   row  6    J_ψ : arm-angle rate (eq. 12)

#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/types.h"

namespace tether {

// Pose of the MOTION frame in the BASE frame.
Frame motion_frame_pose(const KinematicState& state, const Frame& tool_T_motion);

// Fills the composite 7×7 Jacobian and the arm angle in one pass over the state.
void composite_jacobian(const KinematicModel& model, const KinematicState& state,
                        const ArmAngleModel& arm_angle, const Frame& tool_T_motion,
                        Eigen::Ref<CompositeJacobian> jacobian, ArmAngle& psi);

// Re-expresses the translational and rotational rows of a composite Jacobian (or any
// motion-space vector with the same row order) in a frame rotated by R_base_frame:
// rows become R_base_frameᵀ · rows. Row 6 is frame independent.
void express_in_frame(const Matrix3& R_base_frame, Eigen::Ref<CompositeJacobian> jacobian);

}  // namespace tether

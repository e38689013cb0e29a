#pragma once

// The position-type input of the impedance law (the extended-task-space patent, eq. 3-6): x_r, ẋ_r,
// ẍ_r, plus the spring-length limits of the spring trajectory.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether::remote {

struct MotionReference {
  Frame pose;              // x_r: MOTION frame pose in BASE
  double arm_angle = 0.0;  // ψ_r [rad]
  // ẋ_r, ẍ_r in the axes of `pose` (translation [m/s], rotation [rad/s], ψ [rad/s]).
  MotionVector velocity = MotionVector::Zero();
  MotionVector acceleration = MotionVector::Zero();
  // Largest spring (x_c − x_r) the stiffness term sees, per MOTION axis / equivalent angle /
  // arm angle; +inf = unlimited.
  Vector3 max_translation = Vector3::Constant(kUnbounded);
  double max_rotation = kUnbounded;
  double max_arm_angle = kUnbounded;
};

// Holds `pose` and ψ: the reference when no trajectory behaviour is enabled.
void hold_reference(const Frame& pose, double arm_angle, MotionReference& reference) noexcept;

// A trajectory's pose and ψ: relative ones are composed onto the task's start (start_T_pose,
// start ψ + angle), absolute ones are BASE poses and ψ as given.
inline Frame pose_from_start(bool relative, const Frame& start, const Frame& pose) {
  return relative ? start * pose : pose;
}
inline double arm_angle_from_start(bool relative, double start, double angle) {
  return relative ? start + angle : angle;
}

// x_c ⊖ x_r in the axes of the commanded MOTION pose: (R_cᵀ(p_c − p_r), R_cᵀ log(R_c R_rᵀ),
// wrap(ψ_c − ψ_r)), each part limited to the reference's spring lengths (translation per
// axis, rotation by its equivalent angle, ψ by magnitude).
MotionVector motion_error(const Frame& commanded_pose, double commanded_arm_angle,
                          const MotionReference& reference);

}  // namespace tether::remote

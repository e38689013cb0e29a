#pragma once

// Parameters of the joint limit avoidance behaviour (the member `joint_limit_avoidance` of
// TaskParameters and message tether.v1.JointLimitAvoidanceParameters) and their validation. Frames,
// units and sign conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Joint-limit avoidance (eq. 18-19). Within `zone` of a limit, q̇_i = k_i (1/d_i − 1/zone_i)
// away from it, d_i the distance to the limit (the seed's k_i/(q_i − q_lim) shifted so the
// push starts from zero at the zone edge). Mapped to MOTION by J.
struct JointLimitAvoidanceParameters {
  bool enabled = false;
  JointVector zone = JointVector::Constant(0.2);   // [rad]
  JointVector gain = JointVector::Constant(0.02);  // k_i [rad²/s]
  InputKind input = InputKind::kForce;
  MotionVector damping = MotionVector::Constant(350.0);  // B_j, for kForce
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const JointLimitAvoidanceParameters& parameters, TaskChecker& check);

}  // namespace tether

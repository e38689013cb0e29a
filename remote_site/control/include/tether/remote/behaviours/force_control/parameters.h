#pragma once

// Parameters of the force control behaviour (the member `force_control` of TaskParameters and
// message tether.v1.ForceControlParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Force control (eq. 15-17): F_r, the wrench the robot should apply, MOTION frame.
struct ForceControlParameters {
  bool enabled = false;
  Vector6 reference_wrench = Vector6::Zero();  // [N, N·m]
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const ForceControlParameters& parameters, TaskChecker& check);

}  // namespace tether

#pragma once

// Parameters of the spring trajectory behaviour (the member `spring_trajectory` of TaskParameters
// and message tether.v1.SpringTrajectoryParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Spring trajectory: x_r = destination, ẋ_r = ẍ_r = 0, and the spring (x_c − x_r) limited
// per component to a maximum length so the motion neither jumps nor crawls.
struct SpringTrajectoryParameters {
  bool enabled = false;
  bool relative = true;    // destination is start_T_destination (see TrajectoryParameters)
  Frame destination;       // MOTION frame pose
  double arm_angle = 0.0;  // [rad] destination ψ (added to the start ψ if relative)
  Vector3 max_translation = Vector3::Constant(kUnbounded);  // [m] per MOTION axis
  double max_rotation = kUnbounded;                         // [rad] equivalent angle
  double max_arm_angle = kUnbounded;                        // [rad]
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const SpringTrajectoryParameters& parameters, TaskChecker& check);

}  // namespace tether

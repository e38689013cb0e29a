#pragma once

// Parameters of the trajectory behaviour (the member `trajectory` of TaskParameters and message
// tether.v1.TrajectoryParameters) and their validation. Frames, units and sign conventions as in
// tether/remote/task/task_parameters.h.

#include <vector>

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// A waypoint of the MOTION frame: pose in BASE (or relative to the start pose) and ψ.
struct Waypoint {
  double time = 0.0;       // [s] since the task started; strictly increasing
  Frame pose;              // MOTION frame pose
  double arm_angle = 0.0;  // [rad]
};

// Timed waypoints, quintic blends between consecutive ones (rest at each waypoint).
struct TrajectoryParameters {
  bool enabled = false;
  // Relative: each pose is start_T_waypoint, composed onto the MOTION pose at task start,
  // and arm_angle is added to the start arm angle. Absolute: BASE pose and ψ.
  bool relative = true;
  std::vector<Waypoint> waypoints;
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const TrajectoryParameters& parameters, TaskChecker& check);

}  // namespace tether

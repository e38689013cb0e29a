#pragma once

// Parameters of the singularity avoidance behaviour (the member `singularity_avoidance` of
// TaskParameters and message tether.v1.SingularityAvoidanceParameters) and their validation.
// Frames, units and sign conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Singularity avoidance (eq. 20-21): P = the wrist point (tether_wrist) relative to the
// joint-1 frame origin, as the seed's "joint-7 frame relative to joint-1 frame". Outside
// [r_min, r_max] a force K_s·(violation) along ±P̂ pushes back, rotated into MOTION axes.
struct SingularityAvoidanceParameters {
  bool enabled = false;
  double r_min = 0.2;    // [m]
  double r_max = 1.1;    // [m]
  double gain = 1000.0;  // K_s [N/m]
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const SingularityAvoidanceParameters& parameters, TaskChecker& check);

}  // namespace tether

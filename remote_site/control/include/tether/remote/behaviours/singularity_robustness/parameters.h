#pragma once

// Parameters of the singularity robustness behaviour (the member `singularity_robustness` of
// TaskParameters and message tether.v1.SingularityRobustnessParameters) and their validation.
// Frames, units and sign conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Singularity robustness (eq. 22-23): W_v = K_rob·(violation)·I inside the singular regions.
struct SingularityRobustnessParameters {
  bool enabled = false;
  double r_min = 0.2;  // [m]
  double r_max = 1.1;  // [m]
  double gain = 1.0;   // K_rob [1/m]
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const SingularityRobustnessParameters& parameters, TaskChecker& check);

}  // namespace tether

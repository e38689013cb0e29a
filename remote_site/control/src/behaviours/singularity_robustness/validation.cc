// Validation of the singularity robustness section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/singularity_robustness/parameters.h"

namespace tether {

void validate(const SingularityRobustnessParameters& parameters, TaskChecker& check) {
  check.singularity_region("singularity_robustness", parameters.r_min, parameters.r_max,
                           parameters.gain);
}

}  // namespace tether

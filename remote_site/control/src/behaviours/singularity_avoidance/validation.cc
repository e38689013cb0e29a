// Validation of the singularity avoidance section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/singularity_avoidance/parameters.h"

namespace tether {

void validate(const SingularityAvoidanceParameters& parameters, TaskChecker& check) {
  check.singularity_region("singularity_avoidance", parameters.r_min, parameters.r_max,
                           parameters.gain);
}

}  // namespace tether

// Validation of the force control section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/force_control/parameters.h"

namespace tether {

void validate(const ForceControlParameters& parameters, TaskChecker& check) {
  const Vector6& w = parameters.reference_wrench;
  check.finite(FieldPath("force_control.reference_wrench.force"), Vector3(w.head<3>()));
  check.finite(FieldPath("force_control.reference_wrench.torque"), Vector3(w.tail<3>()));
}

}  // namespace tether

// Validation of the manipulability section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/manipulability/parameters.h"

namespace tether {

void validate(const ManipulabilityParameters& parameters, TaskChecker& check) {
  const ManipulabilityParameters& m = parameters;
  check.in_spec("manipulability.gain", m.gain);
  const bool damping_ok = check.in_spec("manipulability.damping", m.damping);
  if (damping_ok && m.enabled && m.input == InputKind::kForce && m.damping == 0.0) {
    check.reject("manipulability.damping", m.damping,
                 "must be > 0 when manipulability.input is INPUT_KIND_FORCE (the force is "
                 "damping·ψ̇)");
  }
}

}  // namespace tether

// Validation of the proximity section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/proximity/parameters.h"

namespace tether {

void validate(const ProximityParameters& parameters, TaskChecker& check) {
  const ProximityParameters& p = parameters;
  check.in_spec("proximity.reference_distance_m", p.reference_distance);
  check.in_spec("proximity.distance_gain", p.distance_gain);
  check.in_spec("proximity.tilt_gain", p.tilt_gain);
  check.frame("proximity.tool_T_sensor", p.tool_T_sensor);
  check.behaviour_damping("proximity", p.enabled, p.input, p.damping);
}

}  // namespace tether

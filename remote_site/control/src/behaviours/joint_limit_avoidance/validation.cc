// Validation of the joint limit avoidance section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/joint_limit_avoidance/parameters.h"

namespace tether {

void validate(const JointLimitAvoidanceParameters& parameters, TaskChecker& check) {
  const JointLimitAvoidanceParameters& j = parameters;
  for (int i = 0; i < kArmDof; ++i) {
    const FieldPath zone = FieldPath("joint_limit_avoidance.zone").joint(i);
    if (check.in_spec(zone, j.zone[i]) && j.enabled) {
      check.joint_range_fraction(zone, i, j.zone[i], true, "must be");
    }
    check.in_spec(FieldPath("joint_limit_avoidance.gain").joint(i), j.gain[i]);
  }
  check.behaviour_damping("joint_limit_avoidance", j.enabled, j.input, j.damping);
}

}  // namespace tether

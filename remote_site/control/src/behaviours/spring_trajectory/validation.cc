// Validation of the spring trajectory section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/spring_trajectory/parameters.h"

namespace tether {

void validate(const SpringTrajectoryParameters& parameters, TaskChecker& check) {
  const SpringTrajectoryParameters& s = parameters;
  check.frame("spring_trajectory.destination", s.destination);
  check.finite("spring_trajectory.arm_angle_rad", s.arm_angle);
  for (int i = 0; i < 3; ++i) {
    check.in_spec(FieldPath("spring_trajectory.max_translation").component(i),
                  s.max_translation[i]);
  }
  check.in_spec("spring_trajectory.max_rotation_rad", s.max_rotation);
  check.in_spec("spring_trajectory.max_arm_angle_rad", s.max_arm_angle);
}

}  // namespace tether

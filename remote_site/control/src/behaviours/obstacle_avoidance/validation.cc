// Validation of the obstacle avoidance section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/common/obstacles.h"
#include "tether/remote/behaviours/obstacle_avoidance/parameters.h"

namespace tether {

void validate(const ObstacleAvoidanceParameters& parameters, TaskChecker& check) {
  const ObstacleAvoidanceParameters& o = parameters;
  if (o.obstacles.size() > kMaxObstacles) {
    check.add("obstacle_avoidance.obstacles", ": " + std::to_string(o.obstacles.size()) +
                                                  " obstacles: at most " +
                                                  std::to_string(kMaxObstacles) + " are supported");
  }
  for (std::size_t k = 0; k < o.obstacles.size(); ++k) {
    const FieldPath path = FieldPath("obstacle_avoidance.obstacles").element(static_cast<int>(k));
    check.finite(path.field("centre"), o.obstacles[k].centre);
    check.in_spec(path.field("radius_m"), o.obstacles[k].radius);
    check.in_spec(path.field("influence_m"), o.obstacles[k].influence);
  }
  for (int i = 0; i < kArmDof; ++i) {
    check.in_spec(FieldPath("obstacle_avoidance.link_radius").joint(i), o.link_radius[i]);
  }
  check.in_spec("obstacle_avoidance.recovery", o.recovery);
  check.in_spec("obstacle_avoidance.behaviour_gain", o.behaviour_gain);
  if (o.enabled && o.obstacles.empty()) {
    check.add("obstacle_avoidance.obstacles",
              ": none, but obstacle_avoidance.enabled is true: give at least one obstacle or "
              "disable it");
  }
  if (o.enabled && !o.constrain_resolver && o.behaviour_gain == 0.0) {
    check.add("obstacle_avoidance.behaviour_gain",
              " = 0 while obstacle_avoidance.constrain_resolver is false: obstacle avoidance is "
              "enabled but would do nothing; constrain the resolver or give the behaviour a gain");
  }
}

}  // namespace tether

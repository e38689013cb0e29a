// Validation of the trajectory section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/trajectory/parameters.h"

namespace tether {

void validate(const TrajectoryParameters& parameters, TaskChecker& check) {
  const TrajectoryParameters& t = parameters;
  double previous = 0.0;
  bool previous_ok = false;
  for (std::size_t j = 0; j < t.waypoints.size(); ++j) {
    const Waypoint& w = t.waypoints[j];
    const FieldPath waypoints("trajectory.waypoints");
    const FieldPath path = waypoints.element(static_cast<int>(j));
    const bool time_ok =
        check.in_spec(path.field("time_s"), w.time, " (time since the task started)");
    if (time_ok && previous_ok && w.time <= previous) {
      check.reject(path.field("time_s"), w.time,
                   "must be > " +
                       waypoints.element(static_cast<int>(j - 1)).field("time_s").to_string() +
                       " = " + check.number(previous) + " (times strictly increasing)");
    }
    previous = w.time;
    previous_ok = time_ok;
    check.frame(path.field("pose"), w.pose);
    check.finite(path.field("arm_angle_rad"), w.arm_angle);
  }
  if (t.enabled && t.waypoints.empty()) {
    check.add("trajectory.waypoints",
              ": empty, but trajectory.enabled is true: give at least one waypoint");
  }
}

}  // namespace tether

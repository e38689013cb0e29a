// Validation of the visual-tracking section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include "tether/remote/behaviours/visual_tracking/parameters.h"

namespace tether {

void validate(const VisualTrackingParameters& parameters, TaskChecker& check) {
  const VisualTrackingParameters& p = parameters;
  check.frame("visual_tracking.tool_T_camera", p.tool_T_camera);
  if (check.finite("visual_tracking.reference_position", p.reference_position) &&
      !(p.reference_position.z() > 0.0)) {
    check.reject("visual_tracking.reference_position.z", p.reference_position.z(),
                 "must be > 0 m: the target is wanted in front of the camera (C's z axis is "
                 "the optical axis, out of the lens)");
  }
  check.in_spec("visual_tracking.gain", p.gain);
  check.in_spec("visual_tracking.velocity_filter_hz", p.velocity_filter_hz,
                " (0 = no feed-forward of the target's velocity)");
  check.in_spec("visual_tracking.max_speed_mps", p.max_speed);
  check.in_spec("visual_tracking.lost_timeout_s", p.lost_timeout);
  check.behaviour_damping("visual_tracking", p.enabled, p.input, p.damping);
}

}  // namespace tether

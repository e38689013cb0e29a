// Validation of the teleoperation section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/teleoperation/parameters.h"

namespace tether {

void validate(const TeleoperationParameters& parameters, TaskChecker& check) {
  const TeleoperationParameters& t = parameters;
  const bool gain_ok = check.motion_vector_non_negative("teleoperation.gain", t.gain);
  if (gain_ok && t.enabled && (t.gain.array() == 0.0).all()) {
    check.add("teleoperation.gain",
              " = 0 on every row, but teleoperation.enabled is true: the operator could drive no "
              "direction; give the directions to drive a gain > 0");
  }
  check.frame("teleoperation.tool_T_teleop", t.tool_T_teleop);
  check.rotation("teleoperation.teleop_R_handle", t.teleop_R_handle);
  check.rotation("teleoperation.world_R_hc_base", t.world_R_hc_base);
  check.rotation("teleoperation.screen_R_hc_base", t.screen_R_hc_base);
  check.rotation("teleoperation.world_R_eye", t.world_R_eye);
  const double s = t.stall_timeout;
  if (!(std::isfinite(s) && s > 0.0 && s <= kMaxStallTimeout)) {
    check.reject("teleoperation.stall_timeout_s", s,
                 "must be in (0, " + check.number(kMaxStallTimeout) +
                     "] s (longer, a lost hand controller would keep driving the arm)");
  }
}

}  // namespace tether

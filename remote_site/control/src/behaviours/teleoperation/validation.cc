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
  const double playout = t.max_playout_delay;
  if (!(std::isfinite(playout) && playout >= 0.0 && playout <= kMaxPlayoutDelay)) {
    check.reject("teleoperation.max_playout_delay_s", playout,
                 "must be in [0, " + check.number(kMaxPlayoutDelay) + "] s");
  }
  if (t.reflection == ReflectionMethod::kWave) {
    check.positive("teleoperation.reflection.wave_impedance_translation",
                   t.wave_impedance.translation);
    check.positive("teleoperation.reflection.wave_impedance_rotation", t.wave_impedance.rotation);
    const double f = t.wave_impedance.filter_hz;
    if (!(std::isfinite(f) && f >= 0.0 && f <= 1000.0)) {
      check.reject("teleoperation.reflection.wave_filter_hz", f,
                   "must be in [0, 1000] Hz (0: none)");
    }
  }
  const double tau = t.drift.time_constant;
  if (!(std::isfinite(tau) && tau > 0.0 && tau <= 100.0)) {
    check.reject("teleoperation.reflection.drift_time_constant_s", tau, "must be in (0, 100] s");
  }
  const double share = t.drift.energy_share;
  if (!(std::isfinite(share) && share > 0.0 && share <= 1.0)) {
    check.reject("teleoperation.reflection.drift_energy_share", share, "must be in (0, 1]");
  }
  check.non_negative("teleoperation.reflection.drift_max_speed_m_s", t.drift.max_speed_translation);
  check.non_negative("teleoperation.reflection.drift_max_speed_rad_s", t.drift.max_speed_rotation);
}

}  // namespace tether

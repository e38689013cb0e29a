// Validation of the teleoperation section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/teleoperation/parameters.h"

namespace tether {

void validate(const TeleoperationParameters& parameters, TaskChecker& check) {
  const TeleoperationParameters& t = parameters;
  const bool gain_ok = check.motion_vector_in_spec("teleoperation.gain", t.gain);
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
  check.in_spec("teleoperation.stall_timeout_s", t.stall_timeout,
                " (longer, a lost hand controller would keep driving the arm)");
  check.in_spec("teleoperation.max_playout_delay_s", t.max_playout_delay);
  if (t.reflection == ReflectionMethod::kWave) {
    check.in_spec("teleoperation.reflection.wave_impedance_translation",
                  t.wave_impedance.translation);
    check.in_spec("teleoperation.reflection.wave_impedance_rotation", t.wave_impedance.rotation);
    check.in_spec("teleoperation.reflection.wave_filter_hz", t.wave_impedance.filter_hz,
                  " (0: none)");
  }
  check.in_spec("teleoperation.reflection.drift_time_constant_s", t.drift.time_constant);
  check.in_spec("teleoperation.reflection.drift_energy_share", t.drift.energy_share);
  check.in_spec("teleoperation.reflection.drift_max_speed_m_s", t.drift.max_speed_translation);
  check.in_spec("teleoperation.reflection.drift_max_speed_rad_s", t.drift.max_speed_rotation);
}

}  // namespace tether

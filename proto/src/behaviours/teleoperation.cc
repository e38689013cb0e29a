// The teleoperation behaviour's section of a task: tether.v1.TeleoperationParameters
// (tether/v1/behaviours/teleoperation.proto) <-> tether::TeleoperationParameters. Its mode
// converts in task_io.cc (to_teleop_mode), which the teleoperation stream shares.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/v1/behaviours/teleoperation.pb.h"

namespace tether::proto {

using detail::finite;
using detail::write_frame_if_not_identity;
using detail::write_rotation_if_not_identity;

void read_parameters(const v1::TeleoperationParameters& m, TeleoperationParameters& p) {
  p = {};
  p.enabled = m.enabled();
  p.mode = to_teleop_mode(m.mode(), "teleoperation.mode");
  if (m.has_gain()) p.gain = to_motion_vector(m.gain(), "teleoperation.gain");
  if (m.has_tool_t_teleop()) {
    p.tool_T_teleop = to_frame(m.tool_t_teleop(), "teleoperation.tool_T_teleop");
  }
  if (m.has_teleop_r_handle()) {
    p.teleop_R_handle = to_rotation(m.teleop_r_handle(), "teleoperation.teleop_R_handle");
  }
  if (m.has_world_r_hc_base()) {
    p.world_R_hc_base = to_rotation(m.world_r_hc_base(), "teleoperation.world_R_hc_base");
  }
  if (m.has_screen_r_hc_base()) {
    p.screen_R_hc_base = to_rotation(m.screen_r_hc_base(), "teleoperation.screen_R_hc_base");
  }
  if (m.has_world_r_eye()) {
    p.world_R_eye = to_rotation(m.world_r_eye(), "teleoperation.world_R_eye");
  }
  p.eye_time_ns = m.eye_time_ns();
  if (m.has_stall_timeout_s()) {
    p.stall_timeout = finite(m.stall_timeout_s(), "teleoperation.stall_timeout_s");
  }
  if (m.has_max_playout_delay_s()) {
    p.max_playout_delay = finite(m.max_playout_delay_s(), "teleoperation.max_playout_delay_s");
  }
  p.hold_all_when_disabled = m.hold_all_when_disabled();
  if (m.has_reflection()) {
    const v1::ReflectionParameters& r = m.reflection();
    p.reflection = to_reflection_method(r.method(), "teleoperation.reflection.method");
    if (r.has_wave_impedance_translation()) {
      p.wave_impedance.translation = finite(r.wave_impedance_translation(),
                                            "teleoperation.reflection.wave_impedance_translation");
    }
    if (r.has_wave_impedance_rotation()) {
      p.wave_impedance.rotation =
          finite(r.wave_impedance_rotation(), "teleoperation.reflection.wave_impedance_rotation");
    }
    if (r.has_wave_filter_hz()) {
      p.wave_impedance.filter_hz =
          finite(r.wave_filter_hz(), "teleoperation.reflection.wave_filter_hz");
    }
    p.reflect_all_axes = r.all_axes();
    if (r.has_drift_time_constant_s()) {
      p.drift.time_constant =
          finite(r.drift_time_constant_s(), "teleoperation.reflection.drift_time_constant_s");
    }
    if (r.has_drift_energy_share()) {
      p.drift.energy_share =
          finite(r.drift_energy_share(), "teleoperation.reflection.drift_energy_share");
    }
    if (r.has_drift_max_speed_m_s()) {
      p.drift.max_speed_translation =
          finite(r.drift_max_speed_m_s(), "teleoperation.reflection.drift_max_speed_m_s");
    }
    if (r.has_drift_max_speed_rad_s()) {
      p.drift.max_speed_rotation =
          finite(r.drift_max_speed_rad_s(), "teleoperation.reflection.drift_max_speed_rad_s");
    }
  }
}

void write_parameters(const TeleoperationParameters& p, v1::TaskParameters& out) {
  const TeleoperationParameters d;
  const auto m = [&out] { return out.mutable_teleoperation(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.mode != d.mode) {
    m()->set_mode(from_teleop_mode(p.mode));
  }
  if (p.gain != d.gain) from_motion_vector(p.gain, m()->mutable_gain());
  write_frame_if_not_identity(p.tool_T_teleop, [&m] { return m()->mutable_tool_t_teleop(); });
  write_rotation_if_not_identity(p.teleop_R_handle,
                                 [&m] { return m()->mutable_teleop_r_handle(); });
  write_rotation_if_not_identity(p.world_R_hc_base,
                                 [&m] { return m()->mutable_world_r_hc_base(); });
  write_rotation_if_not_identity(p.screen_R_hc_base,
                                 [&m] { return m()->mutable_screen_r_hc_base(); });
  write_rotation_if_not_identity(p.world_R_eye, [&m] { return m()->mutable_world_r_eye(); });
  if (p.eye_time_ns != d.eye_time_ns) m()->set_eye_time_ns(p.eye_time_ns);
  if (p.stall_timeout != d.stall_timeout) m()->set_stall_timeout_s(p.stall_timeout);
  if (p.max_playout_delay != d.max_playout_delay) {
    m()->set_max_playout_delay_s(p.max_playout_delay);
  }
  if (p.hold_all_when_disabled) m()->set_hold_all_when_disabled(true);
  const auto r = [&m] { return m()->mutable_reflection(); };
  if (p.reflection != d.reflection) r()->set_method(from_reflection_method(p.reflection));
  if (p.wave_impedance.translation != d.wave_impedance.translation) {
    r()->set_wave_impedance_translation(p.wave_impedance.translation);
  }
  if (p.wave_impedance.rotation != d.wave_impedance.rotation) {
    r()->set_wave_impedance_rotation(p.wave_impedance.rotation);
  }
  if (p.wave_impedance.filter_hz != d.wave_impedance.filter_hz) {
    r()->set_wave_filter_hz(p.wave_impedance.filter_hz);
  }
  if (p.reflect_all_axes) r()->set_all_axes(true);
  if (p.drift.time_constant != d.drift.time_constant) {
    r()->set_drift_time_constant_s(p.drift.time_constant);
  }
  if (p.drift.energy_share != d.drift.energy_share) {
    r()->set_drift_energy_share(p.drift.energy_share);
  }
  if (p.drift.max_speed_translation != d.drift.max_speed_translation) {
    r()->set_drift_max_speed_m_s(p.drift.max_speed_translation);
  }
  if (p.drift.max_speed_rotation != d.drift.max_speed_rotation) {
    r()->set_drift_max_speed_rad_s(p.drift.max_speed_rotation);
  }
}

}  // namespace tether::proto

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
  if (m.has_stall_timeout_s()) {
    p.stall_timeout = finite(m.stall_timeout_s(), "teleoperation.stall_timeout_s");
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
  if (p.stall_timeout != d.stall_timeout) m()->set_stall_timeout_s(p.stall_timeout);
}

}  // namespace tether::proto

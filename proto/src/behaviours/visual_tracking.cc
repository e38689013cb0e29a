// The visual-tracking behaviour's section of a task: tether.v1.VisualTrackingParameters
// (tether/v1/behaviours/visual_tracking.proto) <-> tether::VisualTrackingParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/visual_tracking.pb.h"

namespace tether::proto {

using detail::finite;
using detail::from_input;
using detail::to_input;
using detail::write_frame_if_not_identity;

void read_parameters(const v1::VisualTrackingParameters& m, VisualTrackingParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_tool_t_camera()) {
    p.tool_T_camera = to_frame(m.tool_t_camera(), "visual_tracking.tool_T_camera");
  }
  if (m.has_reference_position()) {
    p.reference_position = to_vector3(m.reference_position(), "visual_tracking.reference_position");
  }
  if (m.has_gain()) p.gain = finite(m.gain(), "visual_tracking.gain");
  if (m.has_velocity_filter_hz()) {
    p.velocity_filter_hz = finite(m.velocity_filter_hz(), "visual_tracking.velocity_filter_hz");
  }
  if (m.has_max_speed_mps()) {
    p.max_speed = finite(m.max_speed_mps(), "visual_tracking.max_speed_mps");
  }
  if (m.has_lost_timeout_s()) {
    p.lost_timeout = finite(m.lost_timeout_s(), "visual_tracking.lost_timeout_s");
  }
  p.input = to_input(m.input(), p.input, "visual_tracking.input");
  if (m.has_damping()) p.damping = to_motion_vector(m.damping(), "visual_tracking.damping");
}

void write_parameters(const VisualTrackingParameters& p, v1::TaskParameters& out) {
  const VisualTrackingParameters d;
  const auto m = [&out] { return out.mutable_visual_tracking(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  write_frame_if_not_identity(p.tool_T_camera, [&m] { return m()->mutable_tool_t_camera(); });
  if (p.reference_position != d.reference_position) {
    from_vector3(p.reference_position, m()->mutable_reference_position());
  }
  if (p.gain != d.gain) m()->set_gain(p.gain);
  if (p.velocity_filter_hz != d.velocity_filter_hz) {
    m()->set_velocity_filter_hz(p.velocity_filter_hz);
  }
  if (p.max_speed != d.max_speed) m()->set_max_speed_mps(p.max_speed);
  if (p.lost_timeout != d.lost_timeout) m()->set_lost_timeout_s(p.lost_timeout);
  if (p.input != d.input) m()->set_input(from_input(p.input));
  if (p.damping != d.damping) from_motion_vector(p.damping, m()->mutable_damping());
}

}  // namespace tether::proto

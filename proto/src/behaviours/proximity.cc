// The proximity behaviour's section of a task: tether.v1.ProximityParameters
// (tether/v1/behaviours/proximity.proto) <-> tether::ProximityParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/proximity.pb.h"

namespace tether::proto {

using detail::finite;
using detail::from_input;
using detail::to_input;
using detail::write_frame_if_not_identity;

void read_parameters(const v1::ProximityParameters& m, ProximityParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_reference_distance_m()) {
    p.reference_distance = finite(m.reference_distance_m(), "proximity.reference_distance_m");
  }
  if (m.has_distance_gain()) {
    p.distance_gain = finite(m.distance_gain(), "proximity.distance_gain");
  }
  if (m.has_tilt_gain()) p.tilt_gain = finite(m.tilt_gain(), "proximity.tilt_gain");
  if (m.has_tool_t_sensor()) {
    p.tool_T_sensor = to_frame(m.tool_t_sensor(), "proximity.tool_T_sensor");
  }
  p.input = to_input(m.input(), p.input, "proximity.input");
  if (m.has_damping()) p.damping = to_motion_vector(m.damping(), "proximity.damping");
}

void write_parameters(const ProximityParameters& p, v1::TaskParameters& out) {
  const ProximityParameters d;
  const auto m = [&out] { return out.mutable_proximity(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.reference_distance != d.reference_distance) {
    m()->set_reference_distance_m(p.reference_distance);
  }
  if (p.distance_gain != d.distance_gain) m()->set_distance_gain(p.distance_gain);
  if (p.tilt_gain != d.tilt_gain) m()->set_tilt_gain(p.tilt_gain);
  write_frame_if_not_identity(p.tool_T_sensor, [&m] { return m()->mutable_tool_t_sensor(); });
  if (p.input != d.input) m()->set_input(from_input(p.input));
  if (p.damping != d.damping) from_motion_vector(p.damping, m()->mutable_damping());
}

}  // namespace tether::proto

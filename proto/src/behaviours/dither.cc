// The dither behaviour's section of a task: tether.v1.DitherParameters
// (tether/v1/behaviours/dither.proto) <-> tether::DitherParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/dither.pb.h"

namespace tether::proto {

using detail::finite;
using detail::from_input;
using detail::to_input;
using detail::write_frame_if_not_identity;

void read_parameters(const v1::DitherParameters& m, DitherParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_amplitude()) p.amplitude = to_twist(m.amplitude(), "dither.amplitude");
  if (m.has_period_s()) p.period = finite(m.period_s(), "dither.period_s");
  if (m.has_motion_t_dither()) {
    p.motion_T_dither = to_frame(m.motion_t_dither(), "dither.motion_T_dither");
  }
  p.input = to_input(m.input(), p.input, "dither.input");
  if (m.has_damping()) p.damping = to_motion_vector(m.damping(), "dither.damping");
}

void write_parameters(const DitherParameters& p, v1::TaskParameters& out) {
  const DitherParameters d;
  const auto m = [&out] { return out.mutable_dither(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.amplitude != d.amplitude) from_twist(p.amplitude, m()->mutable_amplitude());
  if (p.period != d.period) m()->set_period_s(p.period);
  write_frame_if_not_identity(p.motion_T_dither, [&m] { return m()->mutable_motion_t_dither(); });
  if (p.input != d.input) m()->set_input(from_input(p.input));
  if (p.damping != d.damping) from_motion_vector(p.damping, m()->mutable_damping());
}

}  // namespace tether::proto

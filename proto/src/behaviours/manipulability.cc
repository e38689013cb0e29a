// The manipulability behaviour's section of a task: tether.v1.ManipulabilityParameters
// (tether/v1/behaviours/manipulability.proto) <-> tether::ManipulabilityParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/v1/behaviours/manipulability.pb.h"

namespace tether::proto {

using detail::finite;
using detail::from_input;
using detail::to_input;

void read_parameters(const v1::ManipulabilityParameters& m, ManipulabilityParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_gain()) p.gain = finite(m.gain(), "manipulability.gain");
  p.input = to_input(m.input(), p.input, "manipulability.input");
  if (m.has_damping()) p.damping = finite(m.damping(), "manipulability.damping");
}

void write_parameters(const ManipulabilityParameters& p, v1::TaskParameters& out) {
  const ManipulabilityParameters d;
  const auto m = [&out] { return out.mutable_manipulability(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.gain != d.gain) m()->set_gain(p.gain);
  if (p.input != d.input) m()->set_input(from_input(p.input));
  if (p.damping != d.damping) m()->set_damping(p.damping);
}

}  // namespace tether::proto

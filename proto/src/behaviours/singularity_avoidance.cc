// The singularity avoidance behaviour's section of a task:
// tether.v1.SingularityAvoidanceParameters (tether/v1/behaviours/singularity_avoidance.proto)
// <-> tether::SingularityAvoidanceParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/v1/behaviours/singularity_avoidance.pb.h"

namespace tether::proto {

using detail::finite;

void read_parameters(const v1::SingularityAvoidanceParameters& m,
                     SingularityAvoidanceParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_r_min_m()) p.r_min = finite(m.r_min_m(), "singularity_avoidance.r_min_m");
  if (m.has_r_max_m()) p.r_max = finite(m.r_max_m(), "singularity_avoidance.r_max_m");
  if (m.has_gain()) p.gain = finite(m.gain(), "singularity_avoidance.gain");
}

void write_parameters(const SingularityAvoidanceParameters& p, v1::TaskParameters& out) {
  const SingularityAvoidanceParameters d;
  const auto m = [&out] { return out.mutable_singularity_avoidance(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.r_min != d.r_min) m()->set_r_min_m(p.r_min);
  if (p.r_max != d.r_max) m()->set_r_max_m(p.r_max);
  if (p.gain != d.gain) m()->set_gain(p.gain);
}

}  // namespace tether::proto

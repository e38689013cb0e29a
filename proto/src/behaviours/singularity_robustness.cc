// The singularity robustness behaviour's section of a task:
// tether.v1.SingularityRobustnessParameters (tether/v1/behaviours/singularity_robustness.proto)
// <-> tether::SingularityRobustnessParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/v1/behaviours/singularity_robustness.pb.h"

namespace tether::proto {

using detail::finite;

void read_parameters(const v1::SingularityRobustnessParameters& m,
                     SingularityRobustnessParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_r_min_m()) p.r_min = finite(m.r_min_m(), "singularity_robustness.r_min_m");
  if (m.has_r_max_m()) p.r_max = finite(m.r_max_m(), "singularity_robustness.r_max_m");
  if (m.has_gain()) p.gain = finite(m.gain(), "singularity_robustness.gain");
}

void write_parameters(const SingularityRobustnessParameters& p, v1::TaskParameters& out) {
  const SingularityRobustnessParameters d;
  const auto m = [&out] { return out.mutable_singularity_robustness(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.r_min != d.r_min) m()->set_r_min_m(p.r_min);
  if (p.r_max != d.r_max) m()->set_r_max_m(p.r_max);
  if (p.gain != d.gain) m()->set_gain(p.gain);
}

}  // namespace tether::proto

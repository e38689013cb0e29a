// The force control behaviour's section of a task: tether.v1.ForceControlParameters
// (tether/v1/behaviours/force_control.proto) <-> tether::ForceControlParameters.

#include "behaviours/behaviour_conversions.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/force_control.pb.h"

namespace tether::proto {

void read_parameters(const v1::ForceControlParameters& m, ForceControlParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_reference_wrench()) {
    p.reference_wrench = to_wrench(m.reference_wrench(), "force_control.reference_wrench");
  }
}

void write_parameters(const ForceControlParameters& p, v1::TaskParameters& out) {
  const ForceControlParameters d;
  if (p.enabled != d.enabled) out.mutable_force_control()->set_enabled(p.enabled);
  if (p.reference_wrench != d.reference_wrench) {
    from_wrench(p.reference_wrench, out.mutable_force_control()->mutable_reference_wrench());
  }
}

}  // namespace tether::proto

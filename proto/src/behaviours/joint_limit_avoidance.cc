// The joint-limit avoidance behaviour's section of a task:
// tether.v1.JointLimitAvoidanceParameters (tether/v1/behaviours/joint_limit_avoidance.proto)
// <-> tether::JointLimitAvoidanceParameters.

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/v1/behaviours/joint_limit_avoidance.pb.h"

namespace tether::proto {

using detail::from_input;
using detail::to_input;

void read_parameters(const v1::JointLimitAvoidanceParameters& m, JointLimitAvoidanceParameters& p) {
  p = {};
  p.enabled = m.enabled();
  if (m.has_zone()) p.zone = to_joint_vector(m.zone(), "joint_limit_avoidance.zone");
  if (m.has_gain()) p.gain = to_joint_vector(m.gain(), "joint_limit_avoidance.gain");
  p.input = to_input(m.input(), p.input, "joint_limit_avoidance.input");
  if (m.has_damping()) {
    p.damping = to_motion_vector(m.damping(), "joint_limit_avoidance.damping");
  }
}

void write_parameters(const JointLimitAvoidanceParameters& p, v1::TaskParameters& out) {
  const JointLimitAvoidanceParameters d;
  const auto m = [&out] { return out.mutable_joint_limit_avoidance(); };
  if (p.enabled != d.enabled) m()->set_enabled(p.enabled);
  if (p.zone != d.zone) from_joint_vector(p.zone, m()->mutable_zone());
  if (p.gain != d.gain) from_joint_vector(p.gain, m()->mutable_gain());
  if (p.input != d.input) m()->set_input(from_input(p.input));
  if (p.damping != d.damping) from_motion_vector(p.damping, m()->mutable_damping());
}

}  // namespace tether::proto

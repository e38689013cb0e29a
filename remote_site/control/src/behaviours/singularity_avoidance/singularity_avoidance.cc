#include "tether/remote/behaviours/singularity_avoidance/singularity_avoidance.h"

namespace tether::remote {

Vector3 singularity_avoidance_force(const SingularityAvoidanceParameters& params,
                                    const Vector3& wrist_from_joint1) noexcept {
  const double radius = wrist_from_joint1.norm();
  // P̂ is undefined at the joint-1 origin; no arm can put its wrist there.
  if (!(radius > 0.0)) return Vector3::Zero();
  const Vector3 direction = wrist_from_joint1 / radius;
  if (radius > params.r_max) return -params.gain * (radius - params.r_max) * direction;
  if (radius < params.r_min) return params.gain * (params.r_min - radius) * direction;
  return Vector3::Zero();
}

void SingularityAvoidance::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  force_.setZero();
}

void SingularityAvoidance::update(const Params& params, const BehaviourContext& context,
                                  BehaviourOutput& out) noexcept {
  if (!params.enabled) {
    force_.setZero();
    return;
  }
  force_.noalias() =
      context.motion_pose.R.transpose() *
      singularity_avoidance_force(params, wrist_from_first_joint(*context.kinematics));
  out.force.head<3>() += force_;
}

}  // namespace tether::remote

#include "tether/remote/behaviours/singularity_robustness/singularity_robustness.h"

#include "tether/remote/behaviours/singularity_avoidance/singularity_avoidance.h"

namespace tether::remote {

double singularity_robustness_weight(const SingularityRobustnessParameters& params,
                                     const Vector3& wrist_from_joint1) noexcept {
  return params.gain * singular_region_depth(wrist_from_joint1.norm(), params.r_min, params.r_max);
}

void SingularityRobustness::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  weight_ = 0.0;
}

void SingularityRobustness::update(const Params& params, const BehaviourContext& context,
                                   BehaviourOutput& out) noexcept {
  if (!params.enabled) {
    weight_ = 0.0;
    return;
  }
  weight_ = singularity_robustness_weight(params, wrist_from_first_joint(*context.kinematics));
  out.joint_weight += weight_;
}

}  // namespace tether::remote

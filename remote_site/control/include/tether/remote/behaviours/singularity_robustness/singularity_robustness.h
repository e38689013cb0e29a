#pragma once

// Singularity robustness (the extended-task-space patent, eq. 22-23): damping of the joint-velocity
// solve that is switched on only inside the singular regions, so the resolver stays bounded there
// without a tracking error anywhere else.
//
// With P = wrist − joint-1 origin (singularity_avoidance.h):
//   W_v += K_rob (|P| − r_max)   for |P| > r_max
//   W_v += K_rob (r_min − |P|)   for |P| < r_min
//   W_v += 0                     otherwise
// added to every diagonal entry of W_v (BehaviourOutput::joint_weight) of eq. 13, whose
// normal matrix is Jᵀ W_t J + W_v. K_rob [1/m] makes the weight unitless, like W_t.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/singularity_robustness/parameters.h"

namespace tether::remote {

// The weight above (≥ 0).
double singularity_robustness_weight(const SingularityRobustnessParameters& params,
                                     const Vector3& wrist_from_joint1) noexcept;

class SingularityRobustness {
 public:
  using Params = SingularityRobustnessParameters;

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled. Needs context.kinematics.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  double weight() const { return weight_; }  // last weight, for logs

 private:
  double weight_ = 0.0;
};

}  // namespace tether::remote

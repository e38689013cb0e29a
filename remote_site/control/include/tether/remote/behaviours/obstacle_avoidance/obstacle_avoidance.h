#pragma once

// Obstacle avoidance as a behaviour of the impedance architecture (seeds 003 and 004).
// Every critical point inside its sphere of influence (common/obstacles.h) is pushed away
// from its obstacle by
//   f_k = gain · (influence_k − d_k) · n_k          [N], BASE axes, at the critical point,
// a spring that is zero at the sphere and grows inside it. The executor composes these
// forces into the motion space by virtual work: with v_k = J_p,k q̇ and q̇ = J⁻¹ ẋ (J the
// square composite Jacobian), Σ f_kᵀ v_k = F_xᵀ ẋ gives
//   F_x = J⁻ᵀ Σ J_p,kᵀ f_k                          [N | N·m | N·m], MOTION axes and ψ,
// the motion-space force whose work equals that of the point forces. For a point on the
// forearm it is mostly a torque on ψ, so the impedance law swings the elbow away while the
// hand's stiffness holds the pose, as the resolver constraint does, but softly, through the
// impedance. Where J is singular the behaviour contributes nothing that cycle.

#include <span>

#include "tether/common/obstacles.h"
#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/obstacle_avoidance/parameters.h"

namespace tether::remote {

class ObstacleAvoidance {
 public:
  using Params = ObstacleAvoidanceParameters;
  void reset(const Params& params, const BehaviourContext& context);
  // Pushes this cycle's critical points (context.critical_points).
  void update(const Params& params, const BehaviourContext& context,
              BehaviourOutput& out) noexcept {
    update(params, context, context.critical_points, out);
  }
  void update(const Params& params, const BehaviourContext& context,
              std::span<const CriticalPoint> points, BehaviourOutput& out) noexcept;
  // This cycle's motion-space force.
  const MotionVector& force() const { return force_; }

 private:
  MotionVector force_ = MotionVector::Zero();
};

}  // namespace tether::remote

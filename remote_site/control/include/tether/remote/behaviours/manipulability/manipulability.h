#pragma once

// Manipulability: uses the arm's redundancy (the self-motion, ψ) to climb the
// manipulability w = √det(J₆ J₆ᵀ) of the 6-D MOTION Jacobian, away from singular poses,
// without disturbing the MOTION pose.
//
//   w          = √det(J₆ J₆ᵀ), J₆ rows 0-5 of the context's composite Jacobian
//   q̇_self     = J⁻¹ e_ψ: the joint motion that changes ψ at unit rate at constant pose
//                (J the 7×7 composite Jacobian, e_ψ the unit ψ row)
//   ∂w/∂ψ      = ∇_q w · q̇_self
//   ψ̇          = k ∂w/∂ψ                 (ManipulabilityParameters::gain)
// The output is the motion-space velocity (0, …, 0, ψ̇) as a reference velocity, or the
// arm-angle torque damping · ψ̇ on row 6 (InputKind::kForce).
//
// w is the same in any axes and about any point of the last link: rotating the rows
// (R_motion) or moving the reference point (v' = v + ω × r) multiplies J₆ by a 6×6 matrix of
// determinant 1. So J₆ may be given in MOTION axes about the MOTION origin, as here.
// Nothing is produced where the gradient or the self-motion is undefined: J₆ rank deficient
// (a kinematic singularity, where w = 0 is not differentiable) or the composite J singular
// (ψ degenerate: arm stretched, or S→W along the reference vector).

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/manipulability/parameters.h"

namespace tether::remote {

// w and ∇_q w [w per rad] of a geometric Jacobian J₆ = [J_v; J_ω] of a point fixed on the
// last link (any axes, any such point; see the .cc for the derivation). Returns false, with w
// and the gradient zero, when J₆ J₆ᵀ is numerically singular (a Cholesky pivot below 1e-14
// of its largest diagonal entry, cond(J₆) ≳ 1e7).
bool manipulability_gradient(const Jacobian6& jacobian, double& w, RowJacobian& gradient) noexcept;

class Manipulability {
 public:
  using Params = ManipulabilityParameters;

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled or when w or the self-motion is undefined (see above).
  // Needs context.jacobian.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  // Last values, for logs: w, ∂w/∂ψ, ψ̇ [rad/s]; valid() false when nothing was produced.
  double manipulability() const { return w_; }
  double gradient_along_arm_angle() const { return dw_dpsi_; }
  double arm_angle_rate() const { return psi_rate_; }
  bool valid() const { return valid_; }

 private:
  void clear_state();

  double w_ = 0.0;
  double dw_dpsi_ = 0.0;
  double psi_rate_ = 0.0;
  bool valid_ = false;
};

}  // namespace tether::remote

#pragma once

// Joint-limit avoidance (the extended-task-space patent, eq. 18-19): a repelling joint velocity
// near each joint's travel limits, mapped to the motion space through the composite Jacobian so it
// resists commands (typically teleoperation) that would drive a joint into its limit.
//
// For joint i with distances d_lo = q_i − lower_i and d_hi = upper_i − q_i [rad]:
//   q̇_i = +k_i (1/d_lo − 1/zone_i)   while d_lo < zone_i   (pushes q_i up, away from lower)
//       − k_i (1/d_hi − 1/zone_i)    while d_hi < zone_i   (pushes q_i down, away from upper)
// the seed's k_i/(q_i − q_lim,i) shifted by k_i/zone_i so the push starts from zero at the
// zone edge (continuous, no jolt on entering the zone). Both terms are summed, so the field
// stays continuous when a joint's two zones overlap; with disjoint zones only the nearer
// limit contributes. d is clamped to kMinDistance, so the push stays finite at and beyond a
// limit. A zone ≤ 0 (or non-finite) disables the joint.
//
// ẋ = J q̇, with J the context's composite Jacobian (MOTION axes about the MOTION origin,
// row 6 = ∂ψ/∂q): the motion-space velocity the repelling joint motion would produce. It
// enters as a reference velocity or, by default, as the force B_j ⊙ ẋ (InputKind).
// The joints are the commanded ones q_c, the same the Jacobian is computed at (the servos
// track them; they are what a command would drive into the limit).

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/joint_limit_avoidance/parameters.h"

namespace tether::remote {

// The repelling joint velocity above [rad/s].
JointVector joint_limit_repulsion(const JointLimitAvoidanceParameters& params, const JointVector& q,
                                  const JointVector& lower, const JointVector& upper) noexcept;

class JointLimitAvoidance {
 public:
  using Params = JointLimitAvoidanceParameters;
  static constexpr double kMinDistance = 1e-4;  // [rad] smallest d used in 1/d

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled. Needs context.model, joints and jacobian.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  // Last repelling joint velocity and its motion-space image, for logs [rad/s | m/s, rad/s].
  const JointVector& joint_velocity() const { return qdot_; }
  const MotionVector& motion_velocity() const { return xdot_; }

 private:
  JointVector qdot_ = JointVector::Zero();
  MotionVector xdot_ = MotionVector::Zero();
};

}  // namespace tether::remote

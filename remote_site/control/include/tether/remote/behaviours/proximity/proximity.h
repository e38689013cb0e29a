#pragma once

// Proximity (the extended-task-space patent, eq. 24-26): hold a range/tilt sensor at a reference
// distance from a surface and aligned with it.
//
// The reading (ArmState::proximity) is in the sensor frame L (tool_T_sensor): L's z axis
// points from the surface to the sensor, the beam travels along −z, d_a is the distance
// along the beam and n the unit surface normal in L axes, pointing at the sensor. Then
//   tilt: k θ = the rotation taking L's z onto n (θ = ∠(z, n) ∈ [0, π), k = z × n / |z × n|)
//   ω_L = k_θ θ k                   (eq. 24) turns L's z towards n
//   v_L = (0, 0, k_d (d_r − d_a))   (eq. 25) backs away (+z) when too close, d_a < d_r
// The L twist (v_L, ω_L) (eq. 26) is that of the rigid tool, so it is re-expressed at the
// MOTION origin in MOTION axes with motion_T_L = tool_T_motion⁻¹ · tool_T_sensor:
//   ω_M = R ω_L,   v_M = R v_L + p × ω_M
// Row 6 (ψ) is 0. It enters as a reference velocity (default) or as the force B ⊙ ẋ.
// No valid reading (or no ArmState) produces nothing. A normal pointing away from the
// sensor (θ → π, the rotation axis undefined) produces the distance term only.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/proximity/parameters.h"

namespace tether::remote {

// (v_L, ω_L) above, L axes at the L origin [m/s, rad/s]. Zero for an invalid reading.
Vector6 proximity_sensor_twist(const ProximityParameters& params,
                               const ProximityReading& reading) noexcept;

class Proximity {
 public:
  using Params = ProximityParameters;

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled or without a valid reading. Needs context.arm and
  // tool_T_motion.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  const MotionVector& velocity() const { return xdot_; }  // last ẋ, MOTION axes, for logs

 private:
  MotionVector xdot_ = MotionVector::Zero();
};

}  // namespace tether::remote

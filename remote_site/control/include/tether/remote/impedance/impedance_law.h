#pragma once

// The 7-D motion-space impedance law of the extended-task-space patent,
//   M (ẍ_c − ẍ_r) + B (ẋ_c − ẋ_r) + K (x_c − x_r) = ΣF                       (eq. 1)
// discretised either at acceleration level (eq. 7-9) or at velocity level (eq. 27-31).
// All vectors are in MOTION axes, rows (translation, rotation, arm angle); the diagonals
// M, B, K and their units are in task_parameters.h. ΣF is the sum of force-type behaviour
// outputs: (F_r − F_a) + F_t + F_jl + F_s + …, a wrench the robot should apply.
//
// The law produces the commanded motion-space velocity ẋ_c[n+1]; position x_c[n+1] is that
// velocity integrated by the resolver (the arm is commanded joint positions), so x_c is
// always the pose of the commanded joints and never drifts from them.

#include "tether/common/types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

struct ImpedanceState {
  MotionVector velocity = MotionVector::Zero();  // ẋ_c[n]
  // Velocity level only: the summed perturbation velocity ẋ_p[n−1] of eq. 31.
  MotionVector perturbation = MotionVector::Zero();
};

struct ImpedanceInput {
  MotionVector error = MotionVector::Zero();                   // x_c[n] − x_r[n+1]
  MotionVector reference_velocity = MotionVector::Zero();      // ẋ_r[n+1]
  MotionVector reference_acceleration = MotionVector::Zero();  // ẍ_r[n+1]
  MotionVector force = MotionVector::Zero();                   // ΣF[n]
};

// Advances the state by one period dt [s] and returns ẋ_c[n+1] (also stored in
// state.velocity).
//
// Acceleration level (eq. 7-8):
//   ẍ_c = ẍ_r + M⁻¹ (ΣF − B (ẋ_c[n] − ẋ_r) − K e),   ẋ_c[n+1] = ẋ_c[n] + ẍ_c Δt
// Velocity level (eq. 27-31): ẋ_c = ẋ_r + ẋ_p with the perturbation
//   ẋ_p = B⁻¹ (ΣF − K e) + ẋ_M,   ẋ_M = −B⁻¹ M (ẋ_p[n] − ẋ_p[n−1]) / Δt.
// ẋ_M depends on ẋ_p[n] itself; solving that implicitly gives
//   ẋ_p[n] = (B Δt u + M ẋ_p[n−1]) / (B Δt + M),   u = B⁻¹ (ΣF − K e),
// a first-order lag with time constant M/B that is stable for every Δt (the explicit
// reading with ẋ_p[n−1] on the right would need Δt > M/B).
const MotionVector& impedance_update(const ImpedanceParameters& parameters, double dt,
                                     const ImpedanceInput& input, ImpedanceState& state) noexcept;

}  // namespace tether::remote

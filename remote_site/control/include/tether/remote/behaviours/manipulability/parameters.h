#pragma once

// Parameters of the manipulability behaviour (the member `manipulability` of TaskParameters and
// message tether.v1.ManipulabilityParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Manipulability: drives ψ (the self-motion) up the gradient of w = √det(J Jᵀ) of the
// 6-D MOTION Jacobian, ψ̇ = k ∂w/∂ψ at constant pose.
struct ManipulabilityParameters {
  bool enabled = false;
  double gain = 1.0;  // k [rad/s per unit of ∂w/∂ψ]
  InputKind input = InputKind::kVelocity;
  double damping = 10.0;  // [N·m·s/rad], for kForce
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const ManipulabilityParameters& parameters, TaskChecker& check);

}  // namespace tether

#pragma once

// Types shared by the parameters of several behaviours and the task (task_parameters.h).

#include <limits>

namespace tether {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// How a velocity-producing behaviour enters the impedance law: as a velocity added to the
// reference (a term of ẋ_r, eq. 6) or as a force B·ẋ through its own damping (eq. 1).
enum class InputKind { kVelocity, kForce };

}  // namespace tether

#pragma once

// Unit conversions for what operators read and type: tether computes in SI units and
// radians and shows angles in degrees. Defined once for both sites.

#include <numbers>

namespace tether {

inline constexpr double kRadToDeg = 180.0 / std::numbers::pi;  // [deg/rad]
inline constexpr double kDegToRad = std::numbers::pi / 180.0;  // [rad/deg]

}  // namespace tether

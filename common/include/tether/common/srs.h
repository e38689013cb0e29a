#pragma once

// Is an arm spherical–revolute–spherical (S-R-S)? Resolvers that work on the shoulder–
// elbow–wrist point chain (the SHAKE patent's SHAKE resolver) need it: the shoulder point S must
// stay fixed in BASE (it lies on the axes of joints 1, 2 and 3), the wrist point W must lie on the
// axes of joints 5, 6 and 7 (so it is fixed in the tool frame), the elbow point E on the axis
// of joint 4, and the upper-arm |E − S| and forearm |W − E| lengths must be constant.
//
// Checked numerically on a fixed, seeded set of configurations spread over the joint limits
// (the same set every call), at the model's own S/E/W points. Set-up code: allocates.

#include <string>

#include "tether/common/kinematics.h"

namespace tether {

// Empty when the arm is S-R-S within `tolerance` [m]; otherwise one line naming the first
// property that fails, the configuration and the deviation, e.g.
//   "wrist point is 0.088 m off the axis of joint 7 at q = (…)".
std::string srs_violation(const KinematicModel& model, double tolerance = 1e-9);

}  // namespace tether

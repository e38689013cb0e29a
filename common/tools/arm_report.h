#pragma once

#include <ostream>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/types.h"

namespace tether::tools {

// Prints, for each configuration: the tool pose, the shoulder/elbow/wrist points, the arm
// angle, the composite 7×7 Jacobian and its conditioning. Used by `tether-arm`, so an
// integrator can check that a URDF and its arm-angle markers describe their arm.
void print_arm_report(const ArmModel& arm, const std::vector<JointVector>& configurations,
                      const Vector3& reference_plane, std::ostream& out);

// A few well-conditioned configurations inside the arm's limits (not the stretched
// zero configuration, where the arm angle is undefined).
std::vector<JointVector> demo_configurations(const ArmModel& arm);

}  // namespace tether::tools

#pragma once

// Shared fixtures for the kinematics tests: both shipped arms and seeded random
// configurations inside their limits.

#include <random>
#include <string>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"

namespace tether::testing {

struct ShippedArm {
  std::string name;
  std::string urdf;
  std::string base;
  std::string tool;
};

inline std::vector<ShippedArm> shipped_arms() {
  return {{"iiwa7", data_path("arms/iiwa7.urdf"), "iiwa_link_0", "iiwa_flange"},
          {"panda", data_path("arms/panda.urdf"), "panda_link0", "panda_flange"}};
}

inline ArmModel load(const ShippedArm& arm) {
  UrdfLoadOptions options;
  options.base_link = arm.base;
  options.tool_link = arm.tool;
  return load_arm_from_urdf(arm.urdf, options);
}

// Uniform in the joint limits, with a margin so finite differences stay inside them.
inline std::vector<JointVector> random_configurations(const KinematicModel& model, int count,
                                                      unsigned seed, double margin = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<JointVector> out;
  for (int n = 0; n < count; ++n) {
    JointVector q;
    for (int i = 0; i < kArmDof; ++i) {
      const double lo = model.lower_limits()[i] + margin;
      const double hi = model.upper_limits()[i] - margin;
      q[i] = lo + (hi - lo) * unit(rng);
    }
    out.push_back(q);
  }
  return out;
}

}  // namespace tether::testing

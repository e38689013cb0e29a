#pragma once

// The spheres-of-influence patent's pass: the hand slides 0.55 m sideways in 4 s past two
// obstacle spheres placed beside the forearm's unconstrained path (the resolver comparison's
// obstacle pass, DLS with obstacle avoidance, run by the executor on the simulated iiwa7).
// Each link's critical distance is recorded against the sphere of influence: the constraint
// takes over when it reaches the radius, and the link goes no closer.

#include <array>
#include <string>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/obstacles.h"
#include "tether/common/types.h"

namespace tether::remote::seed {

struct SpherePassRun {
  bool completed = false;  // ran to the end without a breach
  std::string breach;
  double link_radius = 0.0;                              // [m] capsule radius of every link
  std::vector<SphereObstacle> obstacles;                 // BASE
  std::vector<double> times;                             // [s] every cycle
  std::vector<std::array<Vector3, kArmDof + 1>> joints;  // joint origins and the tool, BASE [m]
  std::vector<JointVector> critical_distance;            // per link: least over the obstacles [m]
  JointVector least = JointVector::Constant(1e9);        // per link over the run [m]
  // Per obstacle, its closest approach over the run: the critical point (link, point on
  // the link's axis, distance) and when.
  std::vector<CriticalPoint> closest;
  std::vector<double> closest_time;  // [s]
  double tracking_error = 0.0;       // max |x_c − x_r| translation [m]
};

SpherePassRun run_sphere_pass(const ArmModel& arm);
void write_sphere_pass_picture(const SpherePassRun& run, const std::string& path);

}  // namespace tether::remote::seed

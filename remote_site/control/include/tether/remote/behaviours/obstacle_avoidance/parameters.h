#pragma once

// Parameters of the obstacle avoidance behaviour (the member `obstacle_avoidance` of TaskParameters
// and message tether.v1.ObstacleAvoidanceParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include <vector>

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Obstacle avoidance with spheres of influence (the spheres-of-influence patent). The links are
// capsules; each link's critical point and distance to each obstacle are found every cycle
// (common/obstacles.h).
struct ObstacleSphereParameters {
  Vector3 centre = Vector3::Zero();  // WORLD [m]
  double radius = 0.0;               // the obstacle's own extent [m]
  double influence = 0.1;            // radius of the sphere of influence beyond it [m]
};

struct ObstacleAvoidanceParameters {
  bool enabled = false;
  std::vector<ObstacleSphereParameters> obstacles;        // at most 8
  JointVector link_radius = JointVector::Constant(0.06);  // capsule radius per link [m]
  // In the resolver: once a critical distance reaches its radius of influence, the critical
  // point may not approach further (an inequality constraint) while the motion-space task
  // keeps what the remaining redundancy allows.
  bool constrain_resolver = true;
  double recovery = 2.0;  // [1/s] push-back of a point already inside; 0 only stops it
  // As a behaviour of the impedance law: inside the sphere of influence a force
  // gain·(influence − d) along the obstacle→point normal acts at the critical point, mapped
  // into MOTION space by virtual work. 0 = off.
  double behaviour_gain = 0.0;  // [N/m]
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const ObstacleAvoidanceParameters& parameters, TaskChecker& check);

}  // namespace tether

#pragma once

// A task with every behaviour of the extended-task-space patent (and the spheres-of-influence
// patent's obstacle avoidance) enabled at once (the spring trajectory is the trajectory generator's
// alternative, so the timed trajectory stands for both), used by the allocation test and the
// control-cycle benchmark.

#include "tether/common/spatial.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote::testing {

inline TaskParameters all_behaviours_task() {
  TaskParameters t;
  t.name = "all_behaviours";
  t.period = 0.001;
  t.wrench_sensor.tool_mass = 0.8;
  t.wrench_sensor.filter_cutoff = 50.0;
  t.trajectory.enabled = true;
  for (int i = 1; i <= 4; ++i) {
    Frame p;
    p.p = Vector3(0.02 * i, -0.01 * i, 0.015 * i);
    p.R = so3_exp(Vector3(0.02 * i, 0.0, -0.03 * i));
    t.trajectory.waypoints.push_back(Waypoint{2.4 * i, p, 0.05 * i});
  }
  t.teleoperation.enabled = true;
  t.teleoperation.mode = TeleopMode::kWorld;
  t.teleoperation.gain.setConstant(20.0);
  t.teleoperation.stall_timeout = 1.0;
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 0, 0, 0, 0, 0, 0;
  t.impedance.stiffness << 0, 0, 0, 0, 0, 0, 0;
  t.joint_limit_avoidance.enabled = true;
  t.singularity_avoidance.enabled = true;
  t.singularity_robustness.enabled = true;
  t.dither.enabled = true;
  t.dither.amplitude << 0.002, 0, 0, 0, 0, 0.01;
  t.dither.period = 0.05;
  t.proximity.enabled = true;
  t.proximity.reference_distance = 0.15;
  t.manipulability.enabled = true;
  t.manipulability.gain = 0.5;
  t.visual_tracking.enabled = true;
  t.visual_tracking.lost_timeout = 100.0;  // the fake arm's camera sees one image only
  // The spheres-of-influence patent both ways: constraints in the resolver and the repulsive
  // behaviour.
  t.obstacle_avoidance.enabled = true;
  t.obstacle_avoidance.obstacles.push_back({Vector3(0.35, 0.25, 0.6), 0.05, 0.1});
  t.obstacle_avoidance.obstacles.push_back({Vector3(0.5, -0.3, 0.35), 0.05, 0.1});
  t.obstacle_avoidance.behaviour_gain = 200.0;
  return t;
}

}  // namespace tether::remote::testing

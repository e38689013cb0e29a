#pragma once

// Shared helpers of the simulated-arm tests: the shipped arms, running the lock-step loop,
// and the joint path that follows the door handle.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote::testing {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDeg = kPi / 180.0;

struct NamedArm {
  std::string name;
  ArmModel model;
};

inline std::vector<NamedArm> shipped_arms() {
  return {{"iiwa7", load_default_arm()}, {"panda", load_panda_arm()}};
}

// Runs the 1 kHz lock-step loop read → write → advance for `duration` seconds from the arm's
// current time; `command(t, state)` gives the joint command for the cycle at time t.
inline ArmState run(SimulatedArm& arm, double duration,
                    const std::function<JointCommand(double, const ArmState&)>& command,
                    const std::function<void(const ArmState&)>& observe = {}) {
  constexpr double kPeriod = 0.001;
  ArmState state;
  const double start = arm.time();
  const int cycles = static_cast<int>(std::lround(duration / kPeriod));
  for (int n = 0; n < cycles; ++n) {
    EXPECT_EQ(arm.read(state), ArmStatus::kOk);
    if (observe) observe(state);
    const double t = start + (n + 1) * kPeriod;
    EXPECT_EQ(arm.write(command(t, state)), ArmStatus::kOk);
    arm.advance_to(t);
  }
  arm.read(state);
  return state;
}

inline JointCommand hold(const JointVector& q) {
  JointCommand command;
  command.position = q;
  return command;
}

// Arm angle of configuration q (vertical reference).
inline double arm_angle(const KinematicModel& model, const JointVector& q) {
  KinematicState state;
  forward_kinematics(model, q, state);
  double psi = 0.0;
  ArmAngleModel().angle(state, psi);
  return psi;
}

// TOOL pose with the door opened by `angle` from the initial TOOL pose `start`, for a hinge
// at `tool_T_hinge` (rotation about the HINGE X axis).
inline Frame door_arc_pose(const Frame& start, const Frame& tool_T_hinge, double angle) {
  const Frame hinge = start * tool_T_hinge;
  const Matrix3 R = so3_exp(hinge.R.col(0) * angle);
  return Frame{R, hinge.p - R * hinge.p} * start;
}

// Joint configurations along the door arc, every `step` from 0 to `end` [rad], at the
// initial arm angle; fails the test if a pose cannot be solved.
inline std::vector<JointVector> door_arc_joints(const ArmModel& arm, const JointVector& q0,
                                                const Frame& tool_T_hinge, double end,
                                                double step) {
  const KinematicModel model(arm);
  KinematicState state;
  forward_kinematics(model, q0, state);
  const Frame start = state.tool;
  const double psi = arm_angle(model, q0);
  std::vector<JointVector> path;
  JointVector q = q0;
  const int count = static_cast<int>(std::lround(end / step));
  for (int k = 0; k <= count; ++k) {
    const bool ok = solve_tool_pose(model, door_arc_pose(start, tool_T_hinge, k * step), psi, q);
    EXPECT_TRUE(ok) << "no joint solution at door angle " << k * step / kDeg << "°";
    path.push_back(q);
  }
  return path;
}

}  // namespace tether::remote::testing

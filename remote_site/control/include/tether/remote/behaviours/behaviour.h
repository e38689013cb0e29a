#pragma once

// What every behaviour sees and produces in one control cycle (the extended-task-space patent).
// Behaviours are small classes with preallocated state, one folder each (behaviours/list.h):
//   void reset(const Params&, const BehaviourContext&)   at task start (may not allocate)
//   void update(const Params&, const BehaviourContext&, BehaviourOutput&) noexcept
// The executor walks the list and calls `update` of every enabled behaviour each cycle, in
// the list's order. `update` adds its contribution to the output; it never clears it. A
// behaviour that produces the reference (a trajectory) overwrites `reference`, which the
// executor fills with the pose held since the task start before the walk. Parameters are read
// from the current task on every call, so a task replaced between cycles takes effect on
// the next one ("reprogrammable each sample interval").

#include <cstdint>
#include <span>

#include "tether/common/arm_model.h"
#include "tether/common/kinematics.h"
#include "tether/common/obstacles.h"
#include "tether/common/types.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/impedance/motion_reference.h"
#include "tether/remote/task/parameter_types.h"

namespace tether::remote {

struct BehaviourContext {
  double time = 0.0;           // [s] the task's time: since it started, less any time it was held
  double elapsed = 0.0;        // [s] since the task started, never held (stall clocks)
  std::int64_t steady_ns = 0;  // CLOCK_MONOTONIC of this cycle [ns] (0 in simulated time)
  double dt = 0.001;           // [s] control period
  const KinematicModel* model = nullptr;
  // Kinematics of the commanded joints q_c (the arm's servos track them).
  const JointVector* joints = nullptr;
  const KinematicState* kinematics = nullptr;
  // Composite Jacobian of the commanded joints with rows 0-5 in MOTION axes (MOTION
  // origin velocity and angular velocity) and row 6 = ∂ψ/∂q.
  const CompositeJacobian* jacobian = nullptr;
  Frame motion_pose;       // MOTION frame in BASE, commanded joints
  double arm_angle = 0.0;  // ψ [rad], commanded joints
  Frame tool_T_motion;
  Frame world_T_base;             // BASE in the remote WORLD frame
  const ArmState* arm = nullptr;  // latest measurement
  // Compensated, filtered wrench the robot applies, about the MOTION origin in MOTION axes.
  Vector6 measured_wrench = Vector6::Zero();
  // This cycle's critical points of the links to the task's obstacles, at the commanded
  // joints (common/obstacles.h); empty without obstacle avoidance.
  std::span<const CriticalPoint> critical_points;
};

struct BehaviourOutput {
  MotionVector force = MotionVector::Zero();     // ΣF terms [N, N·m, N·m], MOTION axes
  MotionVector velocity = MotionVector::Zero();  // ẋ_r terms (eq. 6) [m/s, rad/s, rad/s]
  double joint_weight = 0.0;                     // added to every W_v diagonal entry
  // x_r, ẋ_r, ẍ_r for the next sample (eq. 7); the executor sets it to hold the start pose
  // before the behaviours run, and `clear` leaves it alone.
  MotionReference reference;
  void clear() {
    force.setZero();
    velocity.setZero();
    joint_weight = 0.0;
  }
};

// Adds a velocity-producing behaviour's output where its InputKind says: to the reference
// velocity, or through its damping diagonal as a force.
inline void add_velocity_input(InputKind input, const MotionVector& damping,
                               const MotionVector& velocity, BehaviourOutput& out) {
  if (input == InputKind::kVelocity) {
    out.velocity += velocity;
  } else {
    out.force += damping.cwiseProduct(velocity);
  }
}

}  // namespace tether::remote

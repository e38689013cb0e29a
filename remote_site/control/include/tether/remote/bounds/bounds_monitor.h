#pragma once

// Bounded behaviour execution (the extended-task-space patent): the merged behaviour is checked
// every cycle against the bounds given with the task; leaving them stops the arm
// (controlled_stop.h). Besides the seed's deviation, force and proximity bounds the monitor also
// guards the joint-limit margin, loop overruns, a stalled teleoperation stream, the arm's own
// status and any non-finite number in the cycle (fail safe on every path). The causes, their names
// and units are the shared vocabulary (tether/common/vocabulary.h).

#include <string>

#include "tether/common/types.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

// What stopped the arm: cause, the measured value and the bound it crossed, in the units
// of the cause; `index` is the joint for kJointLimitMargin, −1 otherwise.
struct BreachEvent {
  BreachCause cause = BreachCause::kNone;
  double value = 0.0;
  double bound = 0.0;
  double time = 0.0;  // [s] since the task started
  int index = -1;
  explicit operator bool() const { return cause != BreachCause::kNone; }
};

// Formats "force 93.2 N exceeds the bound 80 N at t = 1.234 s" (allocates: not for the loop).
std::string describe(const BreachEvent& event);

// Everything the monitor looks at in one cycle.
struct BoundsInput {
  double time = 0.0;
  Frame actual_pose;  // MOTION pose from the measured joints, BASE
  double actual_arm_angle = 0.0;
  bool arm_angle_valid = true;
  Frame reference_pose;  // x_r (with the integrated velocity inputs)
  double reference_arm_angle = 0.0;
  Vector6 wrench = Vector6::Zero();  // compensated, MOTION origin and axes
  const ProximityReading* proximity = nullptr;
  const JointVector* measured_joints = nullptr;
  const JointVector* lower = nullptr;
  const JointVector* upper = nullptr;
};

// Returns the first breached bound in the order of BreachCause, or kNone. Allocation-free.
BreachEvent check_bounds(const BoundsParameters& bounds, const BoundsInput& input) noexcept;

// The subset of bounds that can be re-checked after a stop (those not tied to the stopped
// task's reference): force, torque, proximity window, joint-limit margin. A reset is
// refused while one of them is still breached.
BreachEvent check_persistent_bounds(const BoundsParameters& bounds,
                                    const BoundsInput& input) noexcept;

}  // namespace tether::remote

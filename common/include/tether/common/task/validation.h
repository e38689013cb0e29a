#pragma once

// Validation of a task parameter set (task_parameters.h) against the arm that will run it.
// Every set is validated before the executor applies it; nothing here runs in the control
// cycle.
//
// Each problem is reported with its field path (FieldPath, field_path.h): the field as the
// file/wire schema tether.v1.TaskParameters (proto/tether/v1/task.proto) spells it, the
// same spelling task files, SetParameter and the console use, so an operator can find it
// in the task file and set it:
//   * motion-space vectors by component: `impedance.mass.rotation.x`,
//     `impedance.mass.arm_angle`;
//   * joint vectors by element, base to tip from 0: `joint_limit_avoidance.zone.values[2]`;
//   * 3-vectors, twists and wrenches by component: `force_control.reference_wrench.torque.x`,
//     `tool_T_motion.position.y`, `dither.amplitude.angular.z`;
//   * repeated messages are indexed: `trajectory.waypoints[3].time_s`.
// The message starts with the path, then the offending value and what is allowed:
//   "impedance.mass.translation.z = -1: must be finite and > 0".
// Validation knows nothing of files: when the task was read from one, the reader places
// each issue at its field (placed(), used by tether::proto::load_valid_task_file), and the
// path and the message then start with "file:line:column: ".
// Rules that relate several fields (combinations of behaviours, stability of the discrete
// impedance for the chosen period) name the field to change and explain why.
//
// Every value is checked for sign and finiteness whether or not its behaviour is enabled
// (a disabled behaviour may be enabled by the next set); rules that tie a behaviour to the
// period or to the arm (dither period, joint-limit zone) and combination rules apply only
// when it is enabled. Disabled numeric bounds are +infinity (kUnbounded); NaN is never
// accepted.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/task/field_path.h"
#include "tether/common/task/task_parameters.h"

namespace tether {

struct ValidationIssue {
  std::string field;    // path without its position, e.g. "trajectory.waypoints[3].time_s"
  std::string message;  // starts with path.to_string(); value, allowed range and reason
  FieldPath path;       // the field; placed in its file by the reader that knows it
};

// `issue` at `position` in the file its task was read from: path and message start with it.
ValidationIssue placed(ValidationIssue issue, SourcePosition position);

// A task that failed validation; what() lists every issue, one per line.
class TaskValidationError : public std::invalid_argument {
 public:
  TaskValidationError(const std::string& task_name, std::vector<ValidationIssue> issues);
  const std::vector<ValidationIssue>& issues() const { return issues_; }

 private:
  std::vector<ValidationIssue> issues_;
};

// Limits the validator enforces (besides those that come from the arm).
inline constexpr double kMinTaskPeriod = 1e-4;       // [s]
inline constexpr double kMaxTaskPeriod = 0.1;        // [s]
inline constexpr double kMaxStallTimeout = 1.0;      // [s]
inline constexpr double kMaxStopTime = 5.0;          // [s]
inline constexpr double kFrameTolerance = 1e-6;      // orthonormality, det and frame equality
inline constexpr double kMinReferenceLength = 1e-6;  // arm-angle reference vector [m]
// Resolver sizes that are allocated once, when the executor is built.
inline constexpr std::size_t kMaxKinematicFunctions = 8;  // configuration control
inline constexpr int kMaxShakeTrials = 256;               // SHAKE trial moves per cycle
inline constexpr int kMaxShakePeriodSteps = 16384;        // periodic ring buffer [periods]
inline constexpr int kMaxOptimalityFunctions = 3;         // gravity torque, JLA, manipulability

// Spectral radius of one motion-space axis of the discrete impedance update with no input
// (period dt [s], mass m, damping b, stiffness k of that axis), i.e. how much the error
// state can grow per cycle; < 1 means it decays.
//   kAcceleration (eq. 7-9, semi-implicit Euler, state (v, x)):
//     A = [[1 − dt·b/m, −dt·k/m], [dt·(1 − dt·b/m), 1 − dt²·k/m]].
//     With k = 0 the position is a free integrator (eigenvalue 1, as in the continuous law:
//     an axis without stiffness stays where it is pushed); the radius returned is then that
//     of the velocity, |1 − dt·b/m|.
//   kVelocity (eq. 27-31): the stiffness term alone, x ← (1 − dt·k/b)·x, radius
//     |1 − dt·k/b|.
double impedance_spectral_radius(Formulation formulation, double dt, double m, double b, double k);

// Every problem found, in schema order; empty when the task is valid.
std::vector<ValidationIssue> validate_task(const TaskParameters& task, const KinematicModel& model);

// Throws TaskValidationError listing every problem unless validate_task finds none.
void require_valid_task(const TaskParameters& task, const KinematicModel& model);

}  // namespace tether

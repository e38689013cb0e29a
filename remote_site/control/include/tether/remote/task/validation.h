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

#include <array>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/task/field_path.h"
#include "tether/remote/task/schema.h"
#include "tether/remote/task/task_parameters.h"

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

// Limits the validator enforces besides the fields' declared ranges (schema.h) and those
// that come from the arm.
inline constexpr double kFrameTolerance = 1e-6;      // orthonormality, det and frame equality
inline constexpr double kMinReferenceLength = 1e-6;  // arm-angle reference vector [m]
// A task's name: it names the stored file and every log, audit and telemetry line, so it is
// short and safe in a path: 1 to kMaxTaskNameLength of A-Z a-z 0-9 _ - . (not "." or "..").
inline constexpr std::size_t kMaxTaskNameLength = 64;
bool valid_task_name(std::string_view name);
// Resolver sizes that are allocated once, when the executor is built.
inline constexpr std::size_t kMaxKinematicFunctions = 8;  // configuration control
inline constexpr int kMaxShakeTrials = 256;               // SHAKE trial moves per cycle
inline constexpr int kMaxShakePeriodSteps = 16384;        // periodic ring buffer [periods]
inline constexpr int kMaxOptimalityFunctions = 3;         // gravity torque, JLA, manipulability

// What a section's validate() reports to: collects issues against one task and arm. Each check
// reports what it found and returns whether the value is usable by later rules that combine it
// with others (so one bad number is reported once); `ok` answers the same afterwards for any
// field. Every behaviour's folder checks its own section with these (behaviours/list.h).
class TaskChecker {
 public:
  TaskChecker(const TaskParameters& task, const KinematicModel& model)
      : task_(task), model_(model) {
    for (int i = 0; i < kArmDof; ++i) {
      half_range_[i] = 0.5 * (model.upper_limits()[i] - model.lower_limits()[i]);
    }
  }

  const TaskParameters& task() const { return task_; }
  const KinematicModel& model() const { return model_; }
  // Whether period_s was valid (rules that scale with the period are skipped otherwise).
  bool period_ok() const { return period_ok_; }
  // True when no issue was reported at `path` or inside it.
  bool ok(const FieldPath& path) const {
    const std::string prefix = path.to_string();
    for (const ValidationIssue& issue : issues_) {
      const std::string_view f = issue.field;
      if (f.substr(0, prefix.size()) != prefix) continue;
      if (f.size() == prefix.size() || f[prefix.size()] == '.' || f[prefix.size()] == '[') {
        return false;
      }
    }
    return true;
  }

  // Numbers as messages print them: up to 10 significant digits.
  static std::string number(double v) {
    std::ostringstream out;
    out.precision(10);
    out << v;
    return out.str();
  }
  static std::string triple(const Vector3& v) {
    return "(" + number(v.x()) + ", " + number(v.y()) + ", " + number(v.z()) + ")";
  }

  // `text` follows the path directly, e.g. " = -1: must be finite and > 0".
  void add(const FieldPath& path, const std::string& text) {
    const std::string field = path.to_string();
    issues_.push_back(ValidationIssue{field, field + text, path});
  }
  void reject(const FieldPath& path, double value, const std::string& rule) {
    add(path, " = " + number(value) + ": " + rule);
  }

  bool finite(const FieldPath& path, double v) {
    if (std::isfinite(v)) return true;
    reject(path, v, "must be finite");
    return false;
  }
  // `v`, one number of the field at `path` (a component or element of it, where it has
  // several), against the field's declared rule: its (tether.v1.spec) option in the .proto
  // files, compiled in as schema.h's table. `why` follows the rule in the message. A field
  // that declares no rule is a defect of the schema, not of the task: std::logic_error.
  bool in_spec(const FieldPath& path, double v, const std::string& why = "") {
    const FieldRule& rule = rule_of(path);
    if (rule.allows(v)) return true;
    reject(path, v, rule.requirement() + why);
    return false;
  }
  // A count: the same rule, printed as a whole number.
  bool in_spec(const FieldPath& path, int v) {
    const FieldRule& rule = rule_of(path);
    if (rule.allows(static_cast<double>(v))) return true;
    add(path, " = " + std::to_string(v) + ": " + rule.requirement(true));
    return false;
  }
  static const FieldRule& rule_of(const FieldPath& path) {
    const std::string spelt = path.to_string();
    const FieldRule* rule = find_field_rule(spelt);
    if (rule == nullptr) {
      throw std::logic_error("task validation: the field " + spelt +
                             " has no (tether.v1.spec) rule in proto/tether/v1/");
    }
    return *rule;
  }
  bool finite(const FieldPath& path, const Vector3& v) {
    bool ok = true;
    for (int i = 0; i < 3; ++i) ok = finite(path.component(i), v[i]) && ok;
    return ok;
  }
  bool rotation(const FieldPath& path, const Matrix3& R) {
    if (!R.allFinite()) {
      add(path, ": has non-finite entries: must be a proper rotation");
      return false;
    }
    const double orthogonality = (R * R.transpose() - Matrix3::Identity()).cwiseAbs().maxCoeff();
    const double det = R.determinant();
    if (orthogonality <= kFrameTolerance && std::abs(det - 1.0) <= kFrameTolerance) return true;
    add(path, ": max |R·Rᵀ − I| = " + number(orthogonality) + ", det = " + number(det) +
                  ": must be a proper rotation (orthonormal with det +1, within 1e-6)");
    return false;
  }
  bool frame(const FieldPath& path, const Frame& f) {
    const bool r = rotation(path.field("rotation"), f.R);
    const bool p = finite(path.field("position"), f.p);
    return r && p;
  }
  bool motion_vector_in_spec(const FieldPath& path, const MotionVector& v) {
    bool ok = true;
    for (int i = 0; i < kMotionDim; ++i) ok = in_spec(path.motion_row(i), v[i]) && ok;
    return ok;
  }
  // Damping of a velocity-producing behaviour: used as B·ẋ when its input is a force.
  void behaviour_damping(const FieldPath& section, bool enabled, InputKind input,
                         const MotionVector& damping) {
    const bool ok = motion_vector_in_spec(section.field("damping"), damping);
    if (ok && enabled && input == InputKind::kForce && (damping.array() == 0.0).all()) {
      add(section.field("damping"),
          " = 0 on every row, but " + section.field("input").to_string() +
              " is INPUT_KIND_FORCE: the behaviour's force B·ẋ would be zero; give the "
              "rows it should drive a damping > 0");
    }
  }
  bool joint_range_fraction(const FieldPath& path, int joint, double v, bool closed,
                            const std::string& rule) {
    const double half = half_range_[joint];
    const bool inside = closed ? v <= half : v < half;
    if (inside) return true;
    const auto& j = model_.arm().joints[static_cast<std::size_t>(joint)];
    reject(path, v,
           rule + (closed ? " ≤ " : " < ") + number(half) + " rad, half the range [" +
               number(model_.lower_limits()[joint]) + ", " + number(model_.upper_limits()[joint]) +
               "] rad of joint " + std::to_string(joint + 1) + " ('" + j.name + "') of arm '" +
               model_.arm().name + "'");
    return false;
  }
  // A radial window [r_min, r_max] of the wrist point (singularity avoidance, robustness).
  void singularity_region(const FieldPath& section, double r_min, double r_max, double gain) {
    const bool min_ok = in_spec(section.field("r_min_m"), r_min);
    const bool max_ok = in_spec(section.field("r_max_m"), r_max);
    if (min_ok && max_ok && r_min >= r_max) {
      reject(section.field("r_min_m"), r_min,
             "must be < " + section.field("r_max_m").to_string() + " = " + number(r_max) +
                 " (the regular region [r_min, r_max] must not be empty)");
    }
    in_spec(section.field("gain"), gain);
  }

 protected:
  const TaskParameters& task_;
  const KinematicModel& model_;
  JointVector half_range_;
  std::vector<ValidationIssue> issues_;
  bool period_ok_ = false;
};

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

#include "tether/remote/task/validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "tether/common/obstacles.h"
#include "tether/common/srs.h"

namespace tether {
namespace {

// Paths named in messages about other fields.
std::string motion_row(const char* vector, int row) {
  return FieldPath(vector).motion_row(row).to_string();
}
std::string joint(const char* vector, int i) { return FieldPath(vector).joint(i).to_string(); }

bool is_translation(int axis) { return axis < 3; }
const char* mass_unit(int axis) { return is_translation(axis) ? "kg" : "kg·m²"; }
const char* damping_unit(int axis) { return is_translation(axis) ? "N·s/m" : "N·m·s/rad"; }
const char* stiffness_unit(int axis) { return is_translation(axis) ? "N/m" : "N·m/rad"; }

const char* to_string(InputKind input) {
  return input == InputKind::kForce ? "INPUT_KIND_FORCE" : "INPUT_KIND_VELOCITY";
}

// The task's own sections and the rules relating sections; each behaviour's section is
// checked by its own validate() (behaviours/<field>/), walked in the order of the list.
class Checker : public TaskChecker {
 public:
  using TaskChecker::TaskChecker;

  std::vector<ValidationIssue> run() {
    check_name();
    check_task_frames();
    check_impedance();
    check_resolver();
    check_wrench_sensor();
#define TETHER_VALIDATE_BEHAVIOUR(field, Name, ENUM, label) validate(task_.field, *this);
    TETHER_BEHAVIOURS(TETHER_VALIDATE_BEHAVIOUR)
#undef TETHER_VALIDATE_BEHAVIOUR
    check_bounds();
    check_combinations();
    return std::move(issues_);
  }

 private:
  // An unnamed task (a file previewed before upload) is fine; the store names it.
  void check_name() {
    const std::string& name = task_.name;
    if (name.empty() || valid_task_name(name)) return;
    // Quote at most the first 32 characters: the name may be huge, the message must not be.
    const std::string shown = name.size() > 32 ? name.substr(0, 32) + "..." : name;
    add("name", " = '" + shown + "' (" + std::to_string(name.size()) +
                    " characters): must be 1 to " + std::to_string(kMaxTaskNameLength) +
                    " of A-Z a-z 0-9 _ - . (not '.' or '..')");
  }

  void check_task_frames() {
    const double dt = task_.period;
    period_ok_ = in_spec("period_s", dt);
    frame("world_T_base", task_.world_T_base);
    frame("tool_T_motion", task_.tool_T_motion);
    const Vector3& v = task_.arm_angle_reference;
    if (finite("arm_angle_reference", v) && v.norm() < kMinReferenceLength) {
      add("arm_angle_reference",
          " = " + triple(v) + ": must have length ≥ " + number(kMinReferenceLength) +
              " (it spans the arm angle's reference plane with the shoulder→wrist axis)");
    }
  }

  void check_impedance() {
    const ImpedanceParameters& imp = task_.impedance;
    for (int i = 0; i < kMotionDim; ++i) {
      const bool m = in_spec(FieldPath("impedance.mass").motion_row(i), imp.mass[i]);
      const bool b =
          in_spec(FieldPath("impedance.damping").motion_row(i), imp.damping[i],
                  " (B⁻¹ is used by the velocity formulation, and B > 0 keeps axes without "
                  "stiffness from drifting)");
      const bool k = in_spec(FieldPath("impedance.stiffness").motion_row(i), imp.stiffness[i]);
      if (m && b && k && period_ok_) check_stability(i);
    }
  }

  void check_stability(int i) {
    const ImpedanceParameters& imp = task_.impedance;
    const double dt = task_.period;
    const double m = imp.mass[i];
    const double b = imp.damping[i];
    const double k = imp.stiffness[i];
    const double rho = impedance_spectral_radius(imp.formulation, dt, m, b, k);
    const std::string axis = FieldPath().motion_row(i).to_string();
    const std::string params = "mass " + number(m) + " " + mass_unit(i) + ", damping " + number(b) +
                               " " + damping_unit(i) + ", stiffness " + number(k) + " " +
                               stiffness_unit(i);
    if (imp.formulation == Formulation::kVelocity) {
      // The stiffness perturbation velocity B⁻¹K(x_r − x_c), integrated over one period,
      // moves x_c by dt·k/b of the error: at 1 the error is cancelled in one cycle, beyond 1
      // it overshoots and changes sign every cycle (ringing at the sampling frequency, which
      // the continuous law b·ẋ + k·x = 0 never does), and from 2 on it grows. The inertia
      // term ẋ_M only slows this down, so dt·k/b < 1 is required on every axis.
      const double ratio = dt * k / b;
      if (ratio < 1.0) return;
      add(FieldPath("impedance.stiffness").motion_row(i),
          " = " + number(k) + ": the velocity-level impedance update (eq. 27-31) on axis " + axis +
              " has dt·k/b = " + number(ratio) + " ≥ 1 at period_s = " + number(dt) +
              " (spectral radius |1 − dt·k/b| = " + number(rho) + "): the position error would " +
              (ratio < 2.0 ? "change sign every cycle" : "grow") +
              "; must be < 1, so the largest stable stiffness is < " + number(b / dt) + " " +
              stiffness_unit(i) + " (b/dt), or raise " + motion_row("impedance.damping", i) +
              " above " + number(dt * k) + " " + damping_unit(i) + ", or shorten period_s");
      return;
    }
    // Semi-implicit Euler on m·v̇ = −b·v − k·x: with β = dt·b/m and κ = dt²·k/m the
    // characteristic polynomial is z² − (2 − β − κ)·z + (1 − β), and the Jury conditions
    // reduce to κ > 0 and 4 − 2β − κ > 0, i.e. 4m > dt·(dt·k + 2b). With k = 0 the position
    // is a free integrator and only the velocity must decay: |1 − β| < 1, the same formula.
    if (4.0 * m > dt * (dt * k + 2.0 * b)) return;
    const double k_max = (4.0 * m - 2.0 * dt * b) / (dt * dt);
    const double b_max = (4.0 * m - dt * dt * k) / (2.0 * dt);
    const double m_min = dt * (dt * k + 2.0 * b) / 4.0;
    FieldPath field;
    std::string value;
    std::string remedy;
    const std::string shorter = ", or shorten period_s";
    if (k > 0.0 && k_max > 0.0) {
      field = FieldPath("impedance.stiffness").motion_row(i);
      value = number(k);
      remedy = "the largest stable stiffness is < " + number(k_max) + " " + stiffness_unit(i) +
               ", or raise " + motion_row("impedance.mass", i) + " above " + number(m_min) + " " +
               mass_unit(i) + shorter;
    } else if (b_max > 0.0) {
      field = FieldPath("impedance.damping").motion_row(i);
      value = number(b);
      remedy = "the largest stable damping is < " + number(b_max) + " " + damping_unit(i) +
               ", or raise " + motion_row("impedance.mass", i) + " above " + number(m_min) + " " +
               mass_unit(i) + shorter;
    } else {
      field = FieldPath("impedance.mass").motion_row(i);
      value = number(m);
      remedy = "the smallest stable mass is > " + number(m_min) + " " + mass_unit(i) + shorter;
    }
    add(field, " = " + value + ": the acceleration-level impedance update (eq. 7-9) on axis " +
                   axis + " is unstable at period_s = " + number(dt) + " with " + params +
                   ": spectral radius " + number(rho) + " ≥ 1 (needs 4·m > dt·(dt·k + 2·b)); " +
                   remedy);
  }

  void check_resolver() {
    const ResolverParameters& r = task_.resolver;
    const bool tw = motion_vector_in_spec("resolver.task_weights", r.task_weights);
    bool jw = true;
    for (int i = 0; i < kArmDof; ++i) {
      jw = in_spec(FieldPath("resolver.joint_weights").joint(i), r.joint_weights[i]) && jw;
    }
    check_configuration_control();
    check_optimality_count();
    check_constrained_optimisation();
    check_shake();
    check_shake_arm();
    if (!tw) return;
    if ((r.task_weights.array() == 0.0).all()) {
      add("resolver.task_weights",
          " = 0 on every row: at least one row needs a weight > 0, or no motion is commanded");
      return;
    }
    if (jw && (r.joint_weights.array() == 0.0).all()) {
      for (int i = 0; i < kMotionDim; ++i) {
        if (r.task_weights[i] != 0.0) continue;
        add(FieldPath("resolver.task_weights").motion_row(i),
            " = 0 while every resolver.joint_weights is 0: Jᵀ·W_t·J (eq. 13) then has rank < 7 "
            "in every configuration and the resolver would command no motion; give this row a "
            "weight > 0 or the joints weights > 0");
        break;
      }
    }
  }

  void check_configuration_control() {
    const ConfigurationControlParameters& c = task_.resolver.configuration_control;
    const FieldPath section("resolver.configuration_control.functions");
    if (c.functions.size() > kMaxKinematicFunctions) {
      add(section, ": " + std::to_string(c.functions.size()) + " functions: at most " +
                       std::to_string(kMaxKinematicFunctions) + " are supported");
    }
    if (task_.resolver.kind == ResolverKind::kConfigurationControl && c.functions.empty()) {
      add(section,
          ": none, but resolver.kind is RESOLVER_KIND_CONFIGURATION_CONTROL: the "
          "arm has one redundant degree of freedom, so give at least one kinematic "
          "function (e.g. KINEMATIC_FUNCTION_KIND_ARM_ANGLE)");
    }
    for (std::size_t k = 0; k < c.functions.size(); ++k) {
      const KinematicFunctionParameters& f = c.functions[k];
      const FieldPath path = section.element(static_cast<int>(k));
      in_spec(path.field("weight"), f.weight);
      in_spec(path.field("gain"), f.gain);
      // A joint index, read only by the kinds that name a joint.
      if (f.kind == KinematicFunctionKind::kArmPoint ||
          f.kind == KinematicFunctionKind::kJointLock) {
        in_spec(path.field("joint"), f.joint);
      }
      finite(path.field("offset"), f.offset);
      finite(path.field("target"), f.target);
      for (int i = 0; i < 3; ++i) {
        const double a = f.axes[i];
        if (in_spec(path.field("axes").component(i), a) && a != 0.0 && a != 1.0) {
          reject(path.field("axes").component(i), a, "must be 0 (free) or 1 (controlled)");
        }
      }
      for (int i = 0; i < kArmDof; ++i) finite(path.field("desired").joint(i), f.desired[i]);
      double previous = -kUnbounded;
      for (std::size_t j = 0; j < f.weights.size(); ++j) {
        const FieldPath kp = path.field("weights").element(static_cast<int>(j));
        const double t = f.weights[j].time;
        if (finite(kp.field("time_s"), t) && !(t > previous)) {
          reject(kp.field("time_s"), t,
                 "must be greater than the previous knot's " + number(previous) +
                     " s (knots strictly increasing in time)");
        }
        previous = t;
        for (int i = 0; i < kArmDof; ++i) {
          in_spec(kp.field("weights").joint(i), f.weights[j].weights[i]);
        }
      }
    }
  }

  void check_optimality_count() {
    const ConfigurationControlParameters& c = task_.resolver.configuration_control;
    std::size_t optimality = 0;
    for (const KinematicFunctionParameters& f : c.functions) {
      optimality += f.kind == KinematicFunctionKind::kGravityTorque ||
                    f.kind == KinematicFunctionKind::kJointLimitAvoidance ||
                    f.kind == KinematicFunctionKind::kManipulability;
    }
    if (optimality > kMaxOptimalityFunctions) {
      add("resolver.configuration_control.functions",
          ": " + std::to_string(optimality) +
              " gravity-torque, joint-limit-avoidance and manipulability functions: at most " +
              std::to_string(kMaxOptimalityFunctions) +
              " (each costs 15 forward-kinematics evaluations per cycle)");
    }
  }

  void check_shake_arm() {
    if (task_.resolver.kind != ResolverKind::kShake) return;
    const std::string problem = srs_violation(model_);
    if (!problem.empty()) {
      add("resolver.kind", " = RESOLVER_KIND_SHAKE on arm '" + model_.arm().name +
                               "', which is not a spherical-revolute-spherical arm: " + problem +
                               "; SHAKE recovers joint angles from the shoulder-elbow-wrist "
                               "chain, so choose another resolver for this arm");
    }
  }

  void check_constrained_optimisation() {
    const ConstrainedOptimisationParameters& c = task_.resolver.constrained_optimisation;
    const FieldPath section("resolver.constrained_optimisation");
    for (int i = 0; i < kArmDof; ++i) {
      const bool a = in_spec(section.field("alpha").joint(i), c.alpha[i]);
      const bool b = in_spec(section.field("beta").joint(i), c.beta[i]);
      const bool g = in_spec(section.field("gamma").joint(i), c.gamma[i]);
      if (a && b && g && !(c.alpha[i] + c.beta[i] + c.gamma[i] > 0.0)) {
        add(section.field("alpha").joint(i),
            " = 0 with beta and gamma also 0 for this joint: at least one must be > 0, or the "
            "quadratic has no unique minimum in that joint");
      }
      finite(section.field("q_ref").joint(i), c.q_ref[i]);
    }
    in_spec(section.field("max_translation_m"), c.max_translation);
    in_spec(section.field("max_rotation_rad"), c.max_rotation);
    in_spec(section.field("max_arm_angle_rad"), c.max_arm_angle);
    in_spec(section.field("weight_p"), c.weight_p);
    in_spec(section.field("tolerance_rad"), c.tolerance);
    in_spec(section.field("feasibility_tolerance"), c.feasibility_tolerance);
    in_spec(section.field("max_iterations"), c.max_iterations);
    in_spec(section.field("warn_below_p"), c.warn_below_p);
  }

  void check_shake() {
    const ShakeParameters& s = task_.resolver.shake;
    const FieldPath section("resolver.shake");
    in_spec(section.field("trials"), s.trials);
    in_spec(section.field("step_m"), s.step);
    in_spec(section.field("temperature"), s.temperature);
    in_spec(section.field("shake_tolerance_m"), s.shake_tolerance);
    in_spec(section.field("shake_iterations"), s.shake_iterations);
    in_spec(section.field("obstacle_weight"), s.obstacle_weight);
    in_spec(section.field("velocity_weight"), s.velocity_weight);
    in_spec(section.field("acceleration_weight"), s.acceleration_weight);
    in_spec(section.field("reference_weight"), s.reference_weight);
    for (int i = 0; i < kArmDof; ++i) {
      finite(section.field("q_reference").joint(i), s.q_reference[i]);
    }
    in_spec(section.field("arm_angle_weight"), s.arm_angle_weight);
    const bool period_ok = in_spec(section.field("period_s"), s.period);
    in_spec(section.field("periodic_weight"), s.periodic_weight);
    in_spec(section.field("periodic_ramp_s"), s.periodic_ramp);
    if (period_ok && period_ok_ && s.period > 0.0 &&
        s.period / task_.period > static_cast<double>(kMaxShakePeriodSteps)) {
      reject(section.field("period_s"), s.period,
             "must be ≤ " + number(kMaxShakePeriodSteps * task_.period) + " s (" +
                 std::to_string(kMaxShakePeriodSteps) +
                 " control periods: the ring buffer of one period is allocated up front)");
    }
  }

  void check_wrench_sensor() {
    const WrenchSensorParameters& w = task_.wrench_sensor;
    in_spec("wrench_sensor.tool_mass_kg", w.tool_mass);
    finite("wrench_sensor.tool_center_of_mass", w.tool_center_of_mass);
    const double fc = w.filter_cutoff;
    if (!in_spec("wrench_sensor.filter_cutoff_hz", fc) || !period_ok_) return;
    const double nyquist = 0.5 / task_.period;
    if (!(fc < nyquist)) {
      reject("wrench_sensor.filter_cutoff_hz", fc,
             "must be in [0, " + number(nyquist) +
                 ") Hz (0 = off; below the Nyquist frequency "
                 "0.5/period_s of the control loop)");
    }
  }

  void check_bounds() {
    const BoundsParameters& b = task_.bounds;
    in_spec("bounds.max_translation_deviation_m", b.max_translation_deviation);
    in_spec("bounds.max_rotation_deviation_rad", b.max_rotation_deviation);
    in_spec("bounds.max_arm_angle_deviation_rad", b.max_arm_angle_deviation);
    max_force_ok_ = in_spec("bounds.max_force_n", b.max_force);
    max_torque_ok_ = in_spec("bounds.max_torque_nm", b.max_torque);
    const bool min_ok = in_spec("bounds.min_proximity_distance_m", b.min_proximity_distance);
    const bool max_ok = in_spec("bounds.max_proximity_distance_m", b.max_proximity_distance);
    proximity_window_ok_ = min_ok && max_ok;
    if (proximity_window_ok_ && b.min_proximity_distance >= b.max_proximity_distance) {
      proximity_window_ok_ = false;
      reject("bounds.min_proximity_distance_m", b.min_proximity_distance,
             "must be < bounds.max_proximity_distance_m = " + number(b.max_proximity_distance) +
                 " (the allowed window must not be empty)");
    }
    for (int i = 0; i < kArmDof; ++i) {
      const FieldPath margin = FieldPath("bounds.joint_limit_margin").joint(i);
      margin_ok_[i] = in_spec(margin, b.joint_limit_margin[i]) &&
                      joint_range_fraction(margin, i, b.joint_limit_margin[i], false, "must be");
    }
    in_spec("bounds.max_consecutive_overruns", b.max_consecutive_overruns);
    const double st = b.stop_time;
    if (in_spec("bounds.stop_time_s", st) && period_ok_ && st < task_.period) {
      reject("bounds.stop_time_s", st,
             "must be ≥ period_s = " + number(task_.period) + " s (a ramp takes a cycle)");
    }
  }

  // Rules relating sections: behaviour combinations whose result is undefined or unsafe.
  void check_combinations() {
    const TaskParameters& t = task_;
    if (t.trajectory.enabled && t.spring_trajectory.enabled) {
      add("spring_trajectory.enabled",
          " = true while trajectory.enabled is true: both generate the reference x_r, "
          "ẋ_r, ẍ_r and their combination is undefined; enable one of them");
    }

    if (t.force_control.enabled && ok("force_control.reference_wrench")) {
      const Vector6& w = t.force_control.reference_wrench;
      for (int i = 0; i < 6; ++i) {
        const double k = t.impedance.stiffness[i];
        if (w[i] == 0.0 || k == 0.0 || !std::isfinite(k)) continue;
        add(FieldPath("force_control.reference_wrench").wrench_row(i),
            " = " + number(w[i]) + " with " + motion_row("impedance.stiffness", i) + " = " +
                number(k) +
                ": exact force tracking (seed eq. 15-17) needs stiffness 0 on that axis; with "
                "K > 0 the force settles at F_r − K·(x_c − x_r) and the stiffness fights the "
                "force set point; set " +
                motion_row("impedance.stiffness", i) + " to 0");
      }
      const double f = w.head<3>().norm();
      const double tau = w.tail<3>().norm();
      if (max_force_ok_ && f >= t.bounds.max_force) {
        add("force_control.reference_wrench.force",
            " = " + triple(w.head<3>()) + " (|f| = " + number(f) +
                " N): must be < bounds.max_force_n = " + number(t.bounds.max_force) +
                " N, or the bound stops the task when it reaches its set point");
      }
      if (max_torque_ok_ && tau >= t.bounds.max_torque) {
        add("force_control.reference_wrench.torque",
            " = " + triple(w.tail<3>()) + " (|τ| = " + number(tau) +
                " N·m): must be < bounds.max_torque_nm = " + number(t.bounds.max_torque) +
                " N·m, or the bound stops the task when it reaches its set point");
      }
    }

    const ProximityParameters& p = t.proximity;
    if (p.enabled && p.input == InputKind::kForce && ok("proximity.tool_T_sensor")) {
      const Frame& l = p.tool_T_sensor;
      const Frame& motion = t.tool_T_motion;
      const double dr = (l.R - motion.R).cwiseAbs().maxCoeff();
      const double dp = (l.p - motion.p).cwiseAbs().maxCoeff();
      if (dr > kFrameTolerance || dp > kFrameTolerance) {
        add("proximity.tool_T_sensor",
            ": differs from tool_T_motion (max |ΔR| = " + number(dr) + ", max |Δp| = " +
                number(dp) + " m) while proximity.input is " + to_string(p.input) +
                ": as a force-based behaviour the sensor frame L and the MOTION frame must be "
                "the same (the extended-task-space patent), within 1e-6; use INPUT_KIND_VELOCITY "
                "for a separate "
                "sensor frame");
      }
    }

    const BoundsParameters& b = t.bounds;
    const bool window_set = b.min_proximity_distance > 0.0 || b.max_proximity_distance < kUnbounded;
    if (window_set && proximity_window_ok_ && !p.enabled) {
      const bool min_set = b.min_proximity_distance > 0.0;
      add(min_set ? "bounds.min_proximity_distance_m" : "bounds.max_proximity_distance_m",
          " = " + number(min_set ? b.min_proximity_distance : b.max_proximity_distance) +
              ": proximity distance bounds need proximity.enabled (the window is defined "
              "around the proximity behaviour's sensor reading); enable proximity or remove "
              "the bound");
    }
    if (window_set && proximity_window_ok_ && p.enabled && ok("proximity.reference_distance_m") &&
        !(p.reference_distance > b.min_proximity_distance &&
          p.reference_distance < b.max_proximity_distance)) {
      reject("proximity.reference_distance_m", p.reference_distance,
             "must lie inside the bounds window (" + number(b.min_proximity_distance) + ", " +
                 number(b.max_proximity_distance) +
                 ") m, or the bounds stop the task at its own set point");
    }

    if (t.joint_limit_avoidance.enabled) {
      for (int i = 0; i < kArmDof; ++i) {
        const double zone = t.joint_limit_avoidance.zone[i];
        const double margin = b.joint_limit_margin[i];
        if (!ok(FieldPath("joint_limit_avoidance.zone").joint(i)) || !margin_ok_[i] ||
            margin == 0.0 || zone > margin)
          continue;
        reject(FieldPath("joint_limit_avoidance.zone").joint(i), zone,
               "must be > " + joint("bounds.joint_limit_margin", i) + " = " + number(margin) +
                   " rad, or the bound stops the arm before the avoidance pushes it back");
      }
    }
  }

  bool max_force_ok_ = false;
  bool max_torque_ok_ = false;
  bool proximity_window_ok_ = false;
  std::array<bool, kArmDof> margin_ok_{};
};

std::string summary(const std::string& task_name, const std::vector<ValidationIssue>& issues) {
  std::string out = "task " +
                    (task_name.empty() ? std::string("(unnamed)") : "'" + task_name + "'") +
                    " is invalid (" + std::to_string(issues.size()) +
                    (issues.size() == 1 ? " problem):" : " problems):");
  for (const ValidationIssue& issue : issues) out += "\n  " + issue.message;
  return out;
}

}  // namespace

bool valid_task_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxTaskNameLength || name == "." || name == "..") {
    return false;
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

ValidationIssue placed(ValidationIssue issue, SourcePosition position) {
  // The message starts with the path as it is now; only that prefix changes.
  const std::string rest = issue.message.substr(issue.path.to_string().size());
  issue.path = issue.path.at(std::move(position));
  issue.message = issue.path.to_string() + rest;
  return issue;
}

TaskValidationError::TaskValidationError(const std::string& task_name,
                                         std::vector<ValidationIssue> issues)
    : std::invalid_argument(summary(task_name, issues)), issues_(std::move(issues)) {}

double impedance_spectral_radius(Formulation formulation, double dt, double m, double b, double k) {
  if (formulation == Formulation::kVelocity) return std::abs(1.0 - dt * k / b);
  const double beta = dt * b / m;
  if (k == 0.0) return std::abs(1.0 - beta);
  // Eigenvalues of A: z² − T·z + D with T = 2 − β − κ, D = 1 − β.
  const double trace = 2.0 - beta - dt * dt * k / m;
  const double det = 1.0 - beta;
  const double discriminant = trace * trace - 4.0 * det;
  if (discriminant < 0.0) return std::sqrt(det);  // complex pair: |z|² = det
  const double root = std::sqrt(discriminant);
  return std::max(std::abs(0.5 * (trace + root)), std::abs(0.5 * (trace - root)));
}

std::vector<ValidationIssue> validate_task(const TaskParameters& task,
                                           const KinematicModel& model) {
  return Checker(task, model).run();
}

void require_valid_task(const TaskParameters& task, const KinematicModel& model) {
  std::vector<ValidationIssue> issues = validate_task(task, model);
  if (!issues.empty()) throw TaskValidationError(task.name, std::move(issues));
}

}  // namespace tether

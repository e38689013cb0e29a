#include "tether/common/task/validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "tether/common/obstacles.h"
#include "tether/common/srs.h"

namespace tether {
namespace {

std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

std::string triple(const Vector3& v) {
  return "(" + number(v.x()) + ", " + number(v.y()) + ", " + number(v.z()) + ")";
}

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

// Collects issues; each check reports what it found and returns whether the value is usable
// by later rules that combine it with others (so one bad number is reported once).
class Checker {
 public:
  Checker(const TaskParameters& task, const KinematicModel& model) : task_(task), model_(model) {
    for (int i = 0; i < kArmDof; ++i) {
      half_range_[i] = 0.5 * (model.upper_limits()[i] - model.lower_limits()[i]);
    }
  }

  std::vector<ValidationIssue> run() {
    check_task_frames();
    check_impedance();
    check_resolver();
    check_wrench_sensor();
    check_trajectory();
    check_spring_trajectory();
    check_teleoperation();
    check_force_control();
    check_joint_limit_avoidance();
    check_singularity("singularity_avoidance", task_.singularity_avoidance.r_min,
                      task_.singularity_avoidance.r_max, task_.singularity_avoidance.gain);
    check_singularity("singularity_robustness", task_.singularity_robustness.r_min,
                      task_.singularity_robustness.r_max, task_.singularity_robustness.gain);
    check_dither();
    check_proximity();
    check_manipulability();
    check_obstacle_avoidance();
    check_bounds();
    check_combinations();
    return std::move(issues_);
  }

 private:
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
  bool positive(const FieldPath& path, double v, const std::string& why = "") {
    if (std::isfinite(v) && v > 0.0) return true;
    reject(path, v, "must be finite and > 0" + why);
    return false;
  }
  bool non_negative(const FieldPath& path, double v, const std::string& why = "") {
    if (std::isfinite(v) && v >= 0.0) return true;
    reject(path, v, "must be finite and ≥ 0" + why);
    return false;
  }
  // A bound: +infinity (absent in the file) disables it.
  bool bound(const FieldPath& path, double v, const char* unit) {
    if (!std::isnan(v) && v > 0.0) return true;
    reject(path, v, std::string("must be > 0 ") + unit + " (leave it out for no bound)");
    return false;
  }
  void count_in_range(const FieldPath& path, int v, int lo, int hi) {
    if (v >= lo && v <= hi) return;
    add(path, " = " + std::to_string(v) + ": must be in [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
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
  bool motion_vector_non_negative(const FieldPath& path, const MotionVector& v) {
    bool ok = true;
    for (int i = 0; i < kMotionDim; ++i) ok = non_negative(path.motion_row(i), v[i]) && ok;
    return ok;
  }
  // Damping of a velocity-producing behaviour: used as B·ẋ when its input is a force.
  void behaviour_damping(const FieldPath& section, bool enabled, InputKind input,
                         const MotionVector& damping) {
    const bool ok = motion_vector_non_negative(section.field("damping"), damping);
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

  void check_task_frames() {
    const double dt = task_.period;
    if (std::isfinite(dt) && dt >= kMinTaskPeriod && dt <= kMaxTaskPeriod) {
      period_ok_ = true;
    } else {
      reject("period_s", dt,
             "must be in [" + number(kMinTaskPeriod) + ", " + number(kMaxTaskPeriod) + "] s");
    }
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
      const bool m = positive(FieldPath("impedance.mass").motion_row(i), imp.mass[i]);
      const bool b =
          positive(FieldPath("impedance.damping").motion_row(i), imp.damping[i],
                   " (B⁻¹ is used by the velocity formulation, and B > 0 keeps axes without "
                   "stiffness from drifting)");
      const bool k = non_negative(FieldPath("impedance.stiffness").motion_row(i), imp.stiffness[i]);
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
    const bool tw = motion_vector_non_negative("resolver.task_weights", r.task_weights);
    bool jw = true;
    for (int i = 0; i < kArmDof; ++i) {
      jw = non_negative(FieldPath("resolver.joint_weights").joint(i), r.joint_weights[i]) && jw;
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
      non_negative(path.field("weight"), f.weight);
      non_negative(path.field("gain"), f.gain);
      if ((f.kind == KinematicFunctionKind::kArmPoint ||
           f.kind == KinematicFunctionKind::kJointLock) &&
          (f.joint < 0 || f.joint >= kArmDof)) {
        add(path.field("joint"), " = " + std::to_string(f.joint) +
                                     ": must be a joint index in [0, " +
                                     std::to_string(kArmDof - 1) + "]");
      }
      finite(path.field("offset"), f.offset);
      finite(path.field("target"), f.target);
      for (int i = 0; i < 3; ++i) {
        const double a = f.axes[i];
        if (a != 0.0 && a != 1.0) {
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
          non_negative(kp.field("weights").joint(i), f.weights[j].weights[i]);
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
      const bool a = non_negative(section.field("alpha").joint(i), c.alpha[i]);
      const bool b = non_negative(section.field("beta").joint(i), c.beta[i]);
      const bool g = non_negative(section.field("gamma").joint(i), c.gamma[i]);
      if (a && b && g && !(c.alpha[i] + c.beta[i] + c.gamma[i] > 0.0)) {
        add(section.field("alpha").joint(i),
            " = 0 with beta and gamma also 0 for this joint: at least one must be > 0, or the "
            "quadratic has no unique minimum in that joint");
      }
      finite(section.field("q_ref").joint(i), c.q_ref[i]);
    }
    positive(section.field("max_translation_m"), c.max_translation);
    positive(section.field("max_rotation_rad"), c.max_rotation);
    positive(section.field("max_arm_angle_rad"), c.max_arm_angle);
    positive(section.field("weight_p"), c.weight_p);
    positive(section.field("tolerance_rad"), c.tolerance);
    positive(section.field("feasibility_tolerance"), c.feasibility_tolerance);
    count_in_range(section.field("max_iterations"), c.max_iterations, 1, 1000);
    if (!(c.warn_below_p >= 0.0 && c.warn_below_p <= 1.0)) {
      reject(section.field("warn_below_p"), c.warn_below_p, "must be in [0, 1]");
    }
  }

  void check_shake() {
    const ShakeParameters& s = task_.resolver.shake;
    const FieldPath section("resolver.shake");
    count_in_range(section.field("trials"), s.trials, 1, kMaxShakeTrials);
    positive(section.field("step_m"), s.step);
    non_negative(section.field("temperature"), s.temperature);
    positive(section.field("shake_tolerance_m"), s.shake_tolerance);
    count_in_range(section.field("shake_iterations"), s.shake_iterations, 1, 1000);
    non_negative(section.field("obstacle_weight"), s.obstacle_weight);
    non_negative(section.field("velocity_weight"), s.velocity_weight);
    non_negative(section.field("acceleration_weight"), s.acceleration_weight);
    non_negative(section.field("reference_weight"), s.reference_weight);
    for (int i = 0; i < kArmDof; ++i) {
      finite(section.field("q_reference").joint(i), s.q_reference[i]);
    }
    non_negative(section.field("arm_angle_weight"), s.arm_angle_weight);
    const bool period_ok = non_negative(section.field("period_s"), s.period);
    non_negative(section.field("periodic_weight"), s.periodic_weight);
    positive(section.field("periodic_ramp_s"), s.periodic_ramp);
    if (period_ok && period_ok_ && s.period > 0.0 &&
        s.period / task_.period > static_cast<double>(kMaxShakePeriodSteps)) {
      reject(section.field("period_s"), s.period,
             "must be ≤ " + number(kMaxShakePeriodSteps * task_.period) + " s (" +
                 std::to_string(kMaxShakePeriodSteps) +
                 " control periods: the ring buffer of one period is allocated up front)");
    }
  }

  void check_obstacle_avoidance() {
    const ObstacleAvoidanceParameters& o = task_.obstacle_avoidance;
    if (o.obstacles.size() > kMaxObstacles) {
      add("obstacle_avoidance.obstacles", ": " + std::to_string(o.obstacles.size()) +
                                              " obstacles: at most " +
                                              std::to_string(kMaxObstacles) + " are supported");
    }
    for (std::size_t k = 0; k < o.obstacles.size(); ++k) {
      const FieldPath path = FieldPath("obstacle_avoidance.obstacles").element(static_cast<int>(k));
      finite(path.field("centre"), o.obstacles[k].centre);
      non_negative(path.field("radius_m"), o.obstacles[k].radius);
      positive(path.field("influence_m"), o.obstacles[k].influence);
    }
    for (int i = 0; i < kArmDof; ++i) {
      non_negative(FieldPath("obstacle_avoidance.link_radius").joint(i), o.link_radius[i]);
    }
    non_negative("obstacle_avoidance.recovery", o.recovery);
    non_negative("obstacle_avoidance.behaviour_gain", o.behaviour_gain);
    if (o.enabled && o.obstacles.empty()) {
      add("obstacle_avoidance.obstacles",
          ": none, but obstacle_avoidance.enabled is true: give at least one obstacle or "
          "disable it");
    }
    if (o.enabled && !o.constrain_resolver && o.behaviour_gain == 0.0) {
      add("obstacle_avoidance.behaviour_gain",
          " = 0 while obstacle_avoidance.constrain_resolver is false: obstacle avoidance is "
          "enabled but would do nothing; constrain the resolver or give the behaviour a gain");
    }
  }

  void check_wrench_sensor() {
    const WrenchSensorParameters& w = task_.wrench_sensor;
    non_negative("wrench_sensor.tool_mass_kg", w.tool_mass);
    finite("wrench_sensor.tool_center_of_mass", w.tool_center_of_mass);
    const double fc = w.filter_cutoff;
    if (!period_ok_) {
      non_negative("wrench_sensor.filter_cutoff_hz", fc);
      return;
    }
    const double nyquist = 0.5 / task_.period;
    if (!(std::isfinite(fc) && fc >= 0.0 && fc < nyquist)) {
      reject("wrench_sensor.filter_cutoff_hz", fc,
             "must be in [0, " + number(nyquist) +
                 ") Hz (0 = off; below the Nyquist frequency "
                 "0.5/period_s of the control loop)");
    }
  }

  void check_trajectory() {
    const TrajectoryParameters& t = task_.trajectory;
    double previous = 0.0;
    bool previous_ok = false;
    for (std::size_t j = 0; j < t.waypoints.size(); ++j) {
      const Waypoint& w = t.waypoints[j];
      const FieldPath waypoints("trajectory.waypoints");
      const FieldPath path = waypoints.element(static_cast<int>(j));
      const bool time_ok = finite(path.field("time_s"), w.time);
      if (time_ok && j == 0 && w.time < 0.0) {
        reject(path.field("time_s"), w.time, "must be ≥ 0 s (time since the task started)");
      }
      if (time_ok && previous_ok && w.time <= previous) {
        reject(path.field("time_s"), w.time,
               "must be > " +
                   waypoints.element(static_cast<int>(j - 1)).field("time_s").to_string() + " = " +
                   number(previous) + " (times strictly increasing)");
      }
      previous = w.time;
      previous_ok = time_ok;
      frame(path.field("pose"), w.pose);
      finite(path.field("arm_angle_rad"), w.arm_angle);
    }
    if (t.enabled && t.waypoints.empty()) {
      add("trajectory.waypoints",
          ": empty, but trajectory.enabled is true: give at least one waypoint");
    }
  }

  void check_spring_trajectory() {
    const SpringTrajectoryParameters& s = task_.spring_trajectory;
    frame("spring_trajectory.destination", s.destination);
    finite("spring_trajectory.arm_angle_rad", s.arm_angle);
    for (int i = 0; i < 3; ++i) {
      bound(FieldPath("spring_trajectory.max_translation").component(i), s.max_translation[i], "m");
    }
    bound("spring_trajectory.max_rotation_rad", s.max_rotation, "rad");
    bound("spring_trajectory.max_arm_angle_rad", s.max_arm_angle, "rad");
  }

  void check_teleoperation() {
    const TeleoperationParameters& t = task_.teleoperation;
    const bool gain_ok = motion_vector_non_negative("teleoperation.gain", t.gain);
    if (gain_ok && t.enabled && (t.gain.array() == 0.0).all()) {
      add("teleoperation.gain",
          " = 0 on every row, but teleoperation.enabled is true: the operator could drive no "
          "direction; give the directions to drive a gain > 0");
    }
    frame("teleoperation.tool_T_teleop", t.tool_T_teleop);
    rotation("teleoperation.teleop_R_handle", t.teleop_R_handle);
    rotation("teleoperation.world_R_hc_base", t.world_R_hc_base);
    rotation("teleoperation.screen_R_hc_base", t.screen_R_hc_base);
    rotation("teleoperation.world_R_eye", t.world_R_eye);
    const double s = t.stall_timeout;
    if (!(std::isfinite(s) && s > 0.0 && s <= kMaxStallTimeout)) {
      reject("teleoperation.stall_timeout_s", s,
             "must be in (0, " + number(kMaxStallTimeout) +
                 "] s (longer, a lost hand controller would keep driving the arm)");
    }
  }

  void check_force_control() {
    const Vector6& w = task_.force_control.reference_wrench;
    force_ok_ = finite(FieldPath("force_control.reference_wrench.force"), Vector3(w.head<3>()));
    force_ok_ = finite(FieldPath("force_control.reference_wrench.torque"), Vector3(w.tail<3>())) &&
                force_ok_;
  }

  void check_joint_limit_avoidance() {
    const JointLimitAvoidanceParameters& j = task_.joint_limit_avoidance;
    for (int i = 0; i < kArmDof; ++i) {
      const FieldPath zone = FieldPath("joint_limit_avoidance.zone").joint(i);
      zone_ok_[i] = positive(zone, j.zone[i]) &&
                    (!j.enabled || joint_range_fraction(zone, i, j.zone[i], true, "must be"));
      non_negative(FieldPath("joint_limit_avoidance.gain").joint(i), j.gain[i]);
    }
    behaviour_damping("joint_limit_avoidance", j.enabled, j.input, j.damping);
  }

  void check_singularity(const FieldPath& section, double r_min, double r_max, double gain) {
    const bool min_ok = non_negative(section.field("r_min_m"), r_min);
    const bool max_ok = positive(section.field("r_max_m"), r_max);
    if (min_ok && max_ok && r_min >= r_max) {
      reject(section.field("r_min_m"), r_min,
             "must be < " + section.field("r_max_m").to_string() + " = " + number(r_max) +
                 " (the regular region [r_min, r_max] must not be empty)");
    }
    non_negative(section.field("gain"), gain);
  }

  void check_dither() {
    const DitherParameters& d = task_.dither;
    for (int i = 0; i < 6; ++i) {
      non_negative(FieldPath("dither.amplitude").twist_row(i), d.amplitude[i],
                   " (peak speed; the wave's phase is fixed)");
    }
    if (period_ok_ && d.enabled) {
      const double min = 2.0 * task_.period;
      if (!(std::isfinite(d.period) && d.period > min)) {
        reject("dither.period_s", d.period,
               "must be finite and > " + number(min) +
                   " s (2·period_s: a triangle wave needs more than two samples per period)");
      }
    } else {
      positive("dither.period_s", d.period);
    }
    frame("dither.motion_T_dither", d.motion_T_dither);
    behaviour_damping("dither", d.enabled, d.input, d.damping);
  }

  void check_proximity() {
    const ProximityParameters& p = task_.proximity;
    reference_distance_ok_ = positive("proximity.reference_distance_m", p.reference_distance);
    non_negative("proximity.distance_gain", p.distance_gain);
    non_negative("proximity.tilt_gain", p.tilt_gain);
    sensor_frame_ok_ = frame("proximity.tool_T_sensor", p.tool_T_sensor);
    behaviour_damping("proximity", p.enabled, p.input, p.damping);
  }

  void check_manipulability() {
    const ManipulabilityParameters& m = task_.manipulability;
    non_negative("manipulability.gain", m.gain);
    const bool damping_ok = non_negative("manipulability.damping", m.damping);
    if (damping_ok && m.enabled && m.input == InputKind::kForce && m.damping == 0.0) {
      reject("manipulability.damping", m.damping,
             "must be > 0 when manipulability.input is INPUT_KIND_FORCE (the force is "
             "damping·ψ̇)");
    }
  }

  void check_bounds() {
    const BoundsParameters& b = task_.bounds;
    bound("bounds.max_translation_deviation_m", b.max_translation_deviation, "m");
    bound("bounds.max_rotation_deviation_rad", b.max_rotation_deviation, "rad");
    bound("bounds.max_arm_angle_deviation_rad", b.max_arm_angle_deviation, "rad");
    max_force_ok_ = bound("bounds.max_force_n", b.max_force, "N");
    max_torque_ok_ = bound("bounds.max_torque_nm", b.max_torque, "N·m");
    const bool min_ok = non_negative("bounds.min_proximity_distance_m", b.min_proximity_distance);
    const bool max_ok = bound("bounds.max_proximity_distance_m", b.max_proximity_distance, "m");
    proximity_window_ok_ = min_ok && max_ok;
    if (proximity_window_ok_ && b.min_proximity_distance >= b.max_proximity_distance) {
      proximity_window_ok_ = false;
      reject("bounds.min_proximity_distance_m", b.min_proximity_distance,
             "must be < bounds.max_proximity_distance_m = " + number(b.max_proximity_distance) +
                 " (the allowed window must not be empty)");
    }
    for (int i = 0; i < kArmDof; ++i) {
      const FieldPath margin = FieldPath("bounds.joint_limit_margin").joint(i);
      margin_ok_[i] = non_negative(margin, b.joint_limit_margin[i]) &&
                      joint_range_fraction(margin, i, b.joint_limit_margin[i], false, "must be");
    }
    if (b.max_consecutive_overruns < 1) {
      add("bounds.max_consecutive_overruns",
          " = " + std::to_string(b.max_consecutive_overruns) + ": must be ≥ 1");
    }
    const double st = b.stop_time;
    const double min = period_ok_ ? task_.period : 0.0;
    if (!(std::isfinite(st) && st > 0.0 && st >= min && st <= kMaxStopTime)) {
      reject("bounds.stop_time_s", st,
             "must be in (0, " + number(kMaxStopTime) + "] s" +
                 (period_ok_ ? " and ≥ period_s = " + number(min) + " s (a ramp takes a cycle)"
                             : std::string()));
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

    if (t.force_control.enabled && force_ok_) {
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
    if (p.enabled && p.input == InputKind::kForce && sensor_frame_ok_) {
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
    if (window_set && proximity_window_ok_ && p.enabled && reference_distance_ok_ &&
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
        if (!zone_ok_[i] || !margin_ok_[i] || margin == 0.0 || zone > margin) continue;
        reject(FieldPath("joint_limit_avoidance.zone").joint(i), zone,
               "must be > " + joint("bounds.joint_limit_margin", i) + " = " + number(margin) +
                   " rad, or the bound stops the arm before the avoidance pushes it back");
      }
    }
  }

  const TaskParameters& task_;
  const KinematicModel& model_;
  JointVector half_range_;
  std::vector<ValidationIssue> issues_;
  bool period_ok_ = false;
  bool force_ok_ = false;
  bool max_force_ok_ = false;
  bool max_torque_ok_ = false;
  bool proximity_window_ok_ = false;
  bool reference_distance_ok_ = false;
  bool sensor_frame_ok_ = false;
  std::array<bool, kArmDof> zone_ok_{};
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

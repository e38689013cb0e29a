#include "tether/proto/task_io.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "behaviours/behaviour_conversions.h"
#include "conversion_helpers.h"
#include "tether/proto/convert.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/behaviours/teleoperation.pb.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {
TeleopMode to_teleop_mode(v1::TeleopMode m, const std::string& path) {
  switch (m) {
    case v1::TELEOP_MODE_UNSPECIFIED:
      return TeleoperationParameters{}.mode;
    case v1::TELEOP_MODE_TOOL:
      return TeleopMode::kTool;
    case v1::TELEOP_MODE_WORLD:
      return TeleopMode::kWorld;
    case v1::TELEOP_MODE_CAMERA:
      return TeleopMode::kCamera;
    default:
      break;
  }
  throw ConversionError(path, " = " + std::to_string(static_cast<int>(m)) +
                                  ": unknown value; use TELEOP_MODE_TOOL, TELEOP_MODE_WORLD or "
                                  "TELEOP_MODE_CAMERA");
}

v1::TeleopMode from_teleop_mode(TeleopMode mode) {
  switch (mode) {
    case TeleopMode::kTool:
      return v1::TELEOP_MODE_TOOL;
    case TeleopMode::kWorld:
      return v1::TELEOP_MODE_WORLD;
    case TeleopMode::kCamera:
      return v1::TELEOP_MODE_CAMERA;
  }
  return v1::TELEOP_MODE_UNSPECIFIED;
}

ReflectionMethod to_reflection_method(v1::ReflectionMethod m, const std::string& path) {
  switch (m) {
    case v1::REFLECTION_METHOD_NONE:
      return ReflectionMethod::kNone;
    // Safe by default on any path: a task that does not choose gets the passivity channel,
    // which keeps both ports passive whatever the link's delay and loss; the plain channel
    // (REFLECTION_METHOD_NONE) generates energy through a delay and must be asked for.
    case v1::REFLECTION_METHOD_UNSPECIFIED:
    case v1::REFLECTION_METHOD_PASSIVITY:
      return ReflectionMethod::kPassivity;
    case v1::REFLECTION_METHOD_WAVE:
      return ReflectionMethod::kWave;
    default:
      break;
  }
  throw ConversionError(path, " = " + std::to_string(static_cast<int>(m)) +
                                  ": unknown value; use REFLECTION_METHOD_NONE, "
                                  "REFLECTION_METHOD_PASSIVITY or REFLECTION_METHOD_WAVE");
}

v1::ReflectionMethod from_reflection_method(ReflectionMethod method) {
  switch (method) {
    case ReflectionMethod::kNone:
      return v1::REFLECTION_METHOD_NONE;
    case ReflectionMethod::kPassivity:
      return v1::REFLECTION_METHOD_PASSIVITY;
    case ReflectionMethod::kWave:
      return v1::REFLECTION_METHOD_WAVE;
  }
  return v1::REFLECTION_METHOD_UNSPECIFIED;
}

ResolverKind to_resolver_kind(v1::ResolverKind k, const std::string& path) {
  switch (k) {
    case v1::RESOLVER_KIND_UNSPECIFIED:
    case v1::RESOLVER_KIND_DLS:
      return ResolverKind::kDls;
    case v1::RESOLVER_KIND_CONFIGURATION_CONTROL:
      return ResolverKind::kConfigurationControl;
    case v1::RESOLVER_KIND_CONSTRAINED_OPTIMISATION:
      return ResolverKind::kConstrainedOptimisation;
    case v1::RESOLVER_KIND_SHAKE:
      return ResolverKind::kShake;
    default:
      break;
  }
  throw ConversionError(path, " = " + std::to_string(static_cast<int>(k)) +
                                  ": unknown value; use RESOLVER_KIND_DLS, _CONFIGURATION_CONTROL, "
                                  "_CONSTRAINED_OPTIMISATION or _SHAKE");
}

v1::ResolverKind from_resolver_kind(ResolverKind k) {
  switch (k) {
    case ResolverKind::kDls:
      return v1::RESOLVER_KIND_DLS;
    case ResolverKind::kConfigurationControl:
      return v1::RESOLVER_KIND_CONFIGURATION_CONTROL;
    case ResolverKind::kConstrainedOptimisation:
      return v1::RESOLVER_KIND_CONSTRAINED_OPTIMISATION;
    case ResolverKind::kShake:
      return v1::RESOLVER_KIND_SHAKE;
  }
  return v1::RESOLVER_KIND_UNSPECIFIED;
}

namespace {

using detail::finite;
using detail::limit;
using detail::write_frame_if_not_identity;

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// ---- message -> domain ------------------------------------------------------------------

Formulation to_formulation(v1::Formulation f, const std::string& path) {
  switch (f) {
    case v1::FORMULATION_UNSPECIFIED:
      return ImpedanceParameters{}.formulation;
    case v1::FORMULATION_ACCELERATION:
      return Formulation::kAcceleration;
    case v1::FORMULATION_VELOCITY:
      return Formulation::kVelocity;
    default:
      break;
  }
  throw ConversionError(
      path, " = " + std::to_string(static_cast<int>(f)) +
                ": unknown value; use FORMULATION_ACCELERATION or FORMULATION_VELOCITY");
}

ImpedanceParameters to_impedance(const v1::ImpedanceParameters& m) {
  ImpedanceParameters p;
  p.formulation = to_formulation(m.formulation(), "impedance.formulation");
  if (m.has_mass()) p.mass = to_motion_vector(m.mass(), "impedance.mass");
  if (m.has_damping()) p.damping = to_motion_vector(m.damping(), "impedance.damping");
  if (m.has_stiffness()) p.stiffness = to_motion_vector(m.stiffness(), "impedance.stiffness");
  return p;
}

KinematicFunctionKind to_function_kind(v1::KinematicFunctionKind k, const std::string& path) {
  using K = KinematicFunctionKind;
  switch (k) {
    case v1::KINEMATIC_FUNCTION_KIND_ARM_ANGLE:
      return K::kArmAngle;
    case v1::KINEMATIC_FUNCTION_KIND_GRAVITY_TORQUE:
      return K::kGravityTorque;
    case v1::KINEMATIC_FUNCTION_KIND_ARM_POINT:
      return K::kArmPoint;
    case v1::KINEMATIC_FUNCTION_KIND_JOINT_VELOCITY:
      return K::kJointVelocity;
    case v1::KINEMATIC_FUNCTION_KIND_JOINT_ANGLE:
      return K::kJointAngle;
    case v1::KINEMATIC_FUNCTION_KIND_JOINT_LOCK:
      return K::kJointLock;
    case v1::KINEMATIC_FUNCTION_KIND_JOINT_LIMIT_AVOIDANCE:
      return K::kJointLimitAvoidance;
    case v1::KINEMATIC_FUNCTION_KIND_MANIPULABILITY:
      return K::kManipulability;
    default:
      break;
  }
  throw ConversionError(path, " = " + std::to_string(static_cast<int>(k)) +
                                  ": must name a function (KINEMATIC_FUNCTION_KIND_ARM_ANGLE, "
                                  "_GRAVITY_TORQUE, _ARM_POINT, _JOINT_VELOCITY, _JOINT_ANGLE, "
                                  "_JOINT_LOCK, _JOINT_LIMIT_AVOIDANCE or _MANIPULABILITY)");
}

v1::KinematicFunctionKind from_function_kind(KinematicFunctionKind k) {
  using K = KinematicFunctionKind;
  switch (k) {
    case K::kArmAngle:
      return v1::KINEMATIC_FUNCTION_KIND_ARM_ANGLE;
    case K::kGravityTorque:
      return v1::KINEMATIC_FUNCTION_KIND_GRAVITY_TORQUE;
    case K::kArmPoint:
      return v1::KINEMATIC_FUNCTION_KIND_ARM_POINT;
    case K::kJointVelocity:
      return v1::KINEMATIC_FUNCTION_KIND_JOINT_VELOCITY;
    case K::kJointAngle:
      return v1::KINEMATIC_FUNCTION_KIND_JOINT_ANGLE;
    case K::kJointLock:
      return v1::KINEMATIC_FUNCTION_KIND_JOINT_LOCK;
    case K::kJointLimitAvoidance:
      return v1::KINEMATIC_FUNCTION_KIND_JOINT_LIMIT_AVOIDANCE;
    case K::kManipulability:
      return v1::KINEMATIC_FUNCTION_KIND_MANIPULABILITY;
  }
  return v1::KINEMATIC_FUNCTION_KIND_UNSPECIFIED;
}

ConfigurationControlParameters to_configuration_control(
    const v1::ConfigurationControlParameters& m) {
  ConfigurationControlParameters p;
  for (int k = 0; k < m.functions_size(); ++k) {
    const std::string path =
        FieldPath("resolver.configuration_control.functions").element(k).to_string();
    const v1::KinematicFunction& f = m.functions(k);
    KinematicFunctionParameters out;
    out.kind = to_function_kind(f.kind(), path + ".kind");
    if (f.has_weight()) out.weight = finite(f.weight(), path + ".weight");
    if (f.has_gain()) out.gain = finite(f.gain(), path + ".gain");
    if (f.has_joint()) out.joint = f.joint();
    if (f.has_offset()) out.offset = to_vector3(f.offset(), path + ".offset");
    if (f.has_target()) out.target = to_vector3(f.target(), path + ".target");
    if (f.has_axes()) out.axes = to_vector3(f.axes(), path + ".axes");
    if (f.has_desired()) out.desired = to_joint_vector(f.desired(), path + ".desired");
    for (int i = 0; i < f.weights_size(); ++i) {
      const std::string kp = FieldPath(path).field("weights").element(i).to_string();
      JointWeightKnot knot;
      knot.time = finite(f.weights(i).time_s(), kp + ".time_s");
      if (f.weights(i).has_weights()) {
        knot.weights = to_joint_vector(f.weights(i).weights(), kp + ".weights");
      }
      out.weights.push_back(knot);
    }
    p.functions.push_back(out);
  }
  return p;
}

ConstrainedOptimisationParameters to_constrained_optimisation(
    const v1::ConstrainedOptimisationParameters& m) {
  const std::string path = "resolver.constrained_optimisation";
  ConstrainedOptimisationParameters p;
  if (m.has_alpha()) p.alpha = to_joint_vector(m.alpha(), path + ".alpha");
  if (m.has_beta()) p.beta = to_joint_vector(m.beta(), path + ".beta");
  if (m.has_gamma()) p.gamma = to_joint_vector(m.gamma(), path + ".gamma");
  if (m.has_q_ref()) p.q_ref = to_joint_vector(m.q_ref(), path + ".q_ref");
  if (m.has_max_translation_m()) {
    p.max_translation = finite(m.max_translation_m(), path + ".max_translation_m");
  }
  if (m.has_max_rotation_rad()) {
    p.max_rotation = finite(m.max_rotation_rad(), path + ".max_rotation_rad");
  }
  if (m.has_max_arm_angle_rad()) {
    p.max_arm_angle = finite(m.max_arm_angle_rad(), path + ".max_arm_angle_rad");
  }
  if (m.has_track_arm_angle()) p.track_arm_angle = m.track_arm_angle();
  switch (m.mode()) {
    case v1::CONSTRAINED_OPTIMISATION_MODE_UNSPECIFIED:
    case v1::CONSTRAINED_OPTIMISATION_MODE_LEXICOGRAPHIC:
      p.mode = ConstrainedOptimisationParameters::Mode::kLexicographic;
      break;
    case v1::CONSTRAINED_OPTIMISATION_MODE_WEIGHTED:
      p.mode = ConstrainedOptimisationParameters::Mode::kWeighted;
      break;
    default:
      throw ConversionError(path + ".mode",
                            " = " + std::to_string(static_cast<int>(m.mode())) +
                                ": unknown value; use CONSTRAINED_OPTIMISATION_MODE_LEXICOGRAPHIC "
                                "or _WEIGHTED");
  }
  if (m.has_weight_p()) p.weight_p = finite(m.weight_p(), path + ".weight_p");
  if (m.has_tolerance_rad()) p.tolerance = finite(m.tolerance_rad(), path + ".tolerance_rad");
  if (m.has_feasibility_tolerance()) {
    p.feasibility_tolerance = finite(m.feasibility_tolerance(), path + ".feasibility_tolerance");
  }
  if (m.has_max_iterations()) p.max_iterations = m.max_iterations();
  if (m.has_warn_below_p()) p.warn_below_p = finite(m.warn_below_p(), path + ".warn_below_p");
  return p;
}

ShakeParameters to_shake(const v1::ShakeParameters& m) {
  const std::string path = "resolver.shake";
  ShakeParameters p;
  if (m.has_seed()) p.seed = m.seed();
  if (m.has_trials()) p.trials = m.trials();
  if (m.has_step_m()) p.step = finite(m.step_m(), path + ".step_m");
  p.temperature = finite(m.temperature(), path + ".temperature");
  if (m.has_shake_tolerance_m()) {
    p.shake_tolerance = finite(m.shake_tolerance_m(), path + ".shake_tolerance_m");
  }
  if (m.has_shake_iterations()) p.shake_iterations = m.shake_iterations();
  if (m.has_obstacle_weight()) {
    p.obstacle_weight = finite(m.obstacle_weight(), path + ".obstacle_weight");
  }
  if (m.has_velocity_weight()) {
    p.velocity_weight = finite(m.velocity_weight(), path + ".velocity_weight");
  }
  p.acceleration_weight = finite(m.acceleration_weight(), path + ".acceleration_weight");
  p.reference_weight = finite(m.reference_weight(), path + ".reference_weight");
  if (m.has_q_reference()) p.q_reference = to_joint_vector(m.q_reference(), path + ".q_reference");
  if (m.has_arm_angle_weight()) {
    p.arm_angle_weight = finite(m.arm_angle_weight(), path + ".arm_angle_weight");
  }
  p.period = finite(m.period_s(), path + ".period_s");
  p.periodic_weight = finite(m.periodic_weight(), path + ".periodic_weight");
  if (m.has_periodic_ramp_s()) {
    p.periodic_ramp = finite(m.periodic_ramp_s(), path + ".periodic_ramp_s");
  }
  return p;
}

ResolverParameters to_resolver(const v1::ResolverParameters& m) {
  ResolverParameters p;
  if (m.has_task_weights()) {
    p.task_weights = to_motion_vector(m.task_weights(), "resolver.task_weights");
  }
  if (m.has_joint_weights()) {
    p.joint_weights = to_joint_vector(m.joint_weights(), "resolver.joint_weights");
  }
  p.kind = to_resolver_kind(m.kind(), "resolver.kind");
  p.configuration_control = to_configuration_control(m.configuration_control());
  p.constrained_optimisation = to_constrained_optimisation(m.constrained_optimisation());
  p.shake = to_shake(m.shake());
  return p;
}

WrenchSensorParameters to_wrench_sensor(const v1::WrenchSensorParameters& m) {
  WrenchSensorParameters p;
  p.tool_mass = finite(m.tool_mass_kg(), "wrench_sensor.tool_mass_kg");
  if (m.has_tool_center_of_mass()) {
    p.tool_center_of_mass =
        to_vector3(m.tool_center_of_mass(), "wrench_sensor.tool_center_of_mass");
  }
  p.filter_cutoff = finite(m.filter_cutoff_hz(), "wrench_sensor.filter_cutoff_hz");
  p.zero_on_start = m.zero_on_start();
  return p;
}

BoundsParameters to_bounds(const v1::BoundsParameters& m) {
  BoundsParameters p;
  if (m.has_max_translation_deviation_m()) {
    p.max_translation_deviation =
        limit(m.max_translation_deviation_m(), "bounds.max_translation_deviation_m");
  }
  if (m.has_max_rotation_deviation_rad()) {
    p.max_rotation_deviation =
        limit(m.max_rotation_deviation_rad(), "bounds.max_rotation_deviation_rad");
  }
  if (m.has_max_arm_angle_deviation_rad()) {
    p.max_arm_angle_deviation =
        limit(m.max_arm_angle_deviation_rad(), "bounds.max_arm_angle_deviation_rad");
  }
  if (m.has_max_force_n()) p.max_force = limit(m.max_force_n(), "bounds.max_force_n");
  if (m.has_max_torque_nm()) p.max_torque = limit(m.max_torque_nm(), "bounds.max_torque_nm");
  p.min_proximity_distance =
      finite(m.min_proximity_distance_m(), "bounds.min_proximity_distance_m");
  if (m.has_max_proximity_distance_m()) {
    p.max_proximity_distance =
        limit(m.max_proximity_distance_m(), "bounds.max_proximity_distance_m");
  }
  if (m.has_joint_limit_margin()) {
    p.joint_limit_margin = to_joint_vector(m.joint_limit_margin(), "bounds.joint_limit_margin");
  }
  if (m.has_max_consecutive_overruns()) p.max_consecutive_overruns = m.max_consecutive_overruns();
  if (m.has_stop_time_s()) p.stop_time = finite(m.stop_time_s(), "bounds.stop_time_s");
  return p;
}

// ---- domain -> message ------------------------------------------------------------------
// Only values that differ from the domain defaults are written. NaN differs from every
// default, so it is written too, and rejected when read back.

void write_impedance(const ImpedanceParameters& p, v1::TaskParameters* out) {
  const ImpedanceParameters d;
  if (p.formulation == d.formulation && p.mass == d.mass && p.damping == d.damping &&
      p.stiffness == d.stiffness) {
    return;
  }
  auto* m = out->mutable_impedance();
  if (p.formulation != d.formulation) {
    m->set_formulation(p.formulation == Formulation::kVelocity ? v1::FORMULATION_VELOCITY
                                                               : v1::FORMULATION_ACCELERATION);
  }
  if (p.mass != d.mass) from_motion_vector(p.mass, m->mutable_mass());
  if (p.damping != d.damping) from_motion_vector(p.damping, m->mutable_damping());
  if (p.stiffness != d.stiffness) from_motion_vector(p.stiffness, m->mutable_stiffness());
}

void write_configuration_control(const ConfigurationControlParameters& p,
                                 v1::ResolverParameters* out) {
  const KinematicFunctionParameters d;
  for (const KinematicFunctionParameters& f : p.functions) {
    v1::KinematicFunction* m = out->mutable_configuration_control()->add_functions();
    m->set_kind(from_function_kind(f.kind));
    if (f.weight != d.weight) m->set_weight(f.weight);
    if (f.gain != d.gain) m->set_gain(f.gain);
    if (f.joint != d.joint) m->set_joint(f.joint);
    if (f.offset != d.offset) from_vector3(f.offset, m->mutable_offset());
    if (f.target != d.target) from_vector3(f.target, m->mutable_target());
    if (f.axes != d.axes) from_vector3(f.axes, m->mutable_axes());
    if (f.desired != d.desired) from_joint_vector(f.desired, m->mutable_desired());
    for (const JointWeightKnot& knot : f.weights) {
      v1::JointWeightKnot* k = m->add_weights();
      k->set_time_s(knot.time);
      from_joint_vector(knot.weights, k->mutable_weights());
    }
  }
}

void write_constrained_optimisation(const ConstrainedOptimisationParameters& p,
                                    v1::ResolverParameters* out) {
  const ConstrainedOptimisationParameters d;
  const auto m = [out] { return out->mutable_constrained_optimisation(); };
  if (p.alpha != d.alpha) from_joint_vector(p.alpha, m()->mutable_alpha());
  if (p.beta != d.beta) from_joint_vector(p.beta, m()->mutable_beta());
  if (p.gamma != d.gamma) from_joint_vector(p.gamma, m()->mutable_gamma());
  if (p.q_ref != d.q_ref) from_joint_vector(p.q_ref, m()->mutable_q_ref());
  if (p.max_translation != d.max_translation) m()->set_max_translation_m(p.max_translation);
  if (p.max_rotation != d.max_rotation) m()->set_max_rotation_rad(p.max_rotation);
  if (p.max_arm_angle != d.max_arm_angle) m()->set_max_arm_angle_rad(p.max_arm_angle);
  if (p.track_arm_angle != d.track_arm_angle) m()->set_track_arm_angle(p.track_arm_angle);
  if (p.mode != d.mode) m()->set_mode(v1::CONSTRAINED_OPTIMISATION_MODE_WEIGHTED);
  if (p.weight_p != d.weight_p) m()->set_weight_p(p.weight_p);
  if (p.tolerance != d.tolerance) m()->set_tolerance_rad(p.tolerance);
  if (p.feasibility_tolerance != d.feasibility_tolerance) {
    m()->set_feasibility_tolerance(p.feasibility_tolerance);
  }
  if (p.max_iterations != d.max_iterations) m()->set_max_iterations(p.max_iterations);
  if (p.warn_below_p != d.warn_below_p) m()->set_warn_below_p(p.warn_below_p);
}

void write_shake(const ShakeParameters& p, v1::ResolverParameters* out) {
  const ShakeParameters d;
  const auto m = [out] { return out->mutable_shake(); };
  if (p.seed != d.seed) m()->set_seed(p.seed);
  if (p.trials != d.trials) m()->set_trials(p.trials);
  if (p.step != d.step) m()->set_step_m(p.step);
  if (p.temperature != d.temperature) m()->set_temperature(p.temperature);
  if (p.shake_tolerance != d.shake_tolerance) m()->set_shake_tolerance_m(p.shake_tolerance);
  if (p.shake_iterations != d.shake_iterations) m()->set_shake_iterations(p.shake_iterations);
  if (p.obstacle_weight != d.obstacle_weight) m()->set_obstacle_weight(p.obstacle_weight);
  if (p.velocity_weight != d.velocity_weight) m()->set_velocity_weight(p.velocity_weight);
  if (p.acceleration_weight != d.acceleration_weight) {
    m()->set_acceleration_weight(p.acceleration_weight);
  }
  if (p.reference_weight != d.reference_weight) m()->set_reference_weight(p.reference_weight);
  if (p.q_reference != d.q_reference) from_joint_vector(p.q_reference, m()->mutable_q_reference());
  if (p.arm_angle_weight != d.arm_angle_weight) m()->set_arm_angle_weight(p.arm_angle_weight);
  if (p.period != d.period) m()->set_period_s(p.period);
  if (p.periodic_weight != d.periodic_weight) m()->set_periodic_weight(p.periodic_weight);
  if (p.periodic_ramp != d.periodic_ramp) m()->set_periodic_ramp_s(p.periodic_ramp);
}

void write_resolver(const ResolverParameters& p, v1::TaskParameters* out) {
  const ResolverParameters d;
  if (p.task_weights != d.task_weights) {
    from_motion_vector(p.task_weights, out->mutable_resolver()->mutable_task_weights());
  }
  if (p.joint_weights != d.joint_weights) {
    from_joint_vector(p.joint_weights, out->mutable_resolver()->mutable_joint_weights());
  }
  if (p.kind != d.kind) out->mutable_resolver()->set_kind(from_resolver_kind(p.kind));
  if (!p.configuration_control.functions.empty()) {
    write_configuration_control(p.configuration_control, out->mutable_resolver());
  }
  // The writers create their sub-messages only for fields that differ from the defaults;
  // the resolver message itself is dropped again if nothing did.
  write_constrained_optimisation(p.constrained_optimisation, out->mutable_resolver());
  write_shake(p.shake, out->mutable_resolver());
  if (out->resolver().ByteSizeLong() == 0) out->clear_resolver();
}

void write_wrench_sensor(const WrenchSensorParameters& p, v1::TaskParameters* out) {
  const WrenchSensorParameters d;
  if (p.tool_mass != d.tool_mass) out->mutable_wrench_sensor()->set_tool_mass_kg(p.tool_mass);
  if (p.tool_center_of_mass != d.tool_center_of_mass) {
    from_vector3(p.tool_center_of_mass,
                 out->mutable_wrench_sensor()->mutable_tool_center_of_mass());
  }
  if (p.filter_cutoff != d.filter_cutoff) {
    out->mutable_wrench_sensor()->set_filter_cutoff_hz(p.filter_cutoff);
  }
  if (p.zero_on_start != d.zero_on_start) {
    out->mutable_wrench_sensor()->set_zero_on_start(p.zero_on_start);
  }
}

void write_bounds(const BoundsParameters& p, v1::TaskParameters* out) {
  const BoundsParameters d;
  const auto m = [out] { return out->mutable_bounds(); };
  if (p.max_translation_deviation != d.max_translation_deviation) {
    m()->set_max_translation_deviation_m(p.max_translation_deviation);
  }
  if (p.max_rotation_deviation != d.max_rotation_deviation) {
    m()->set_max_rotation_deviation_rad(p.max_rotation_deviation);
  }
  if (p.max_arm_angle_deviation != d.max_arm_angle_deviation) {
    m()->set_max_arm_angle_deviation_rad(p.max_arm_angle_deviation);
  }
  if (p.max_force != d.max_force) m()->set_max_force_n(p.max_force);
  if (p.max_torque != d.max_torque) m()->set_max_torque_nm(p.max_torque);
  if (p.min_proximity_distance != d.min_proximity_distance) {
    m()->set_min_proximity_distance_m(p.min_proximity_distance);
  }
  if (p.max_proximity_distance != d.max_proximity_distance) {
    m()->set_max_proximity_distance_m(p.max_proximity_distance);
  }
  if (p.joint_limit_margin != d.joint_limit_margin) {
    from_joint_vector(p.joint_limit_margin, m()->mutable_joint_limit_margin());
  }
  if (p.max_consecutive_overruns != d.max_consecutive_overruns) {
    m()->set_max_consecutive_overruns(p.max_consecutive_overruns);
  }
  if (p.stop_time != d.stop_time) m()->set_stop_time_s(p.stop_time);
}

// ---- where fields sit in files ----------------------------------------------------------

SourcePosition offset_position(std::string_view origin, std::string_view text, std::size_t offset) {
  SourcePosition at{std::string(origin), 1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

// Where `path` sits in a text-format file, from the parser's record of where each field it
// read starts: the field itself or, when the file leaves it out (its default applies), the
// innermost enclosing message the file gives. A repeated field written as a list
// (`values: [...]`) is recorded once, at its name.
std::optional<SourcePosition> text_position(std::string_view origin,
                                            const TextFormat::ParseInfoTree& root,
                                            const FieldPath& path) {
  const Descriptor* descriptor = v1::TaskParameters::descriptor();
  const TextFormat::ParseInfoTree* tree = &root;
  std::optional<SourcePosition> best;
  for (const FieldPath::Segment& segment : path.segments()) {
    const FieldDescriptor* field = descriptor->FindFieldByName(segment.name);
    if (field == nullptr) break;
    const int index = field->is_repeated() ? std::max(segment.index, 0) : -1;
    TextFormat::ParseLocation at = tree->GetLocation(field, index);
    if (at.line < 0 && index > 0) at = tree->GetLocation(field, 0);
    if (at.line < 0) break;
    best = SourcePosition{std::string(origin), at.line + 1, at.column + 1};
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, index);
    if (tree == nullptr) break;
    descriptor = field->message_type();
  }
  return best;
}

// Finds where a field path sits in JSON text that protobuf has read (fully, or up to the
// failing value): the deepest member or element of the path the text gives. It only skips
// strings and nesting to find object members and array elements; protobuf's parser does all
// the reading.
class JsonLocator {
 public:
  explicit JsonLocator(std::string_view s) : s_(s) {}

  std::optional<std::size_t> find(const FieldPath& path) const {
    std::size_t i = skip_space(0);
    std::optional<std::size_t> best;
    for (const FieldPath::Segment& segment : path.segments()) {
      const auto member = find_member(i, segment.name);
      if (!member) break;
      best = member->first;
      i = member->second;
      if (segment.index < 0) continue;
      const auto element = find_element(i, segment.index);
      if (!element) break;
      best = *element;
      i = *element;
    }
    return best;
  }

 private:
  static constexpr std::size_t kEnd = std::string_view::npos;

  char at(std::size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  std::size_t skip_space(std::size_t i) const {
    while (i < s_.size() && std::isspace(static_cast<unsigned char>(s_[i]))) ++i;
    return i;
  }
  // i at an opening quote; returns the index after the closing one.
  std::size_t skip_string(std::size_t i) const {
    for (++i; i < s_.size(); ++i) {
      if (s_[i] == '\\') {
        ++i;
      } else if (s_[i] == '"') {
        return i + 1;
      }
    }
    return kEnd;
  }
  std::size_t skip_value(std::size_t i) const {
    if (at(i) == '"') return skip_string(i);
    if (at(i) == '{' || at(i) == '[') {
      int depth = 0;
      while (i < s_.size()) {
        const char c = s_[i];
        if (c == '"') {
          i = skip_string(i);
          if (i == kEnd) return kEnd;
          continue;
        }
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') {
          if (--depth == 0) return i + 1;
        }
        ++i;
      }
      return kEnd;
    }
    while (i < s_.size() && std::string_view(",}] \t\r\n").find(s_[i]) == kEnd) ++i;
    return i;
  }
  static std::string json_name(const std::string& name) {
    std::string out;
    bool upper = false;
    for (const char c : name) {
      if (c == '_') {
        upper = true;
      } else {
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
      }
    }
    return out;
  }
  // i at '{': (position of the key, position of its value).
  std::optional<std::pair<std::size_t, std::size_t>> find_member(std::size_t i,
                                                                 const std::string& name) const {
    if (at(i) != '{') return std::nullopt;
    const std::string camel = json_name(name);
    i = skip_space(i + 1);
    while (at(i) == '"') {
      const std::size_t key_start = i;
      const std::size_t key_end = skip_string(i);
      if (key_end == kEnd) return std::nullopt;
      const std::string_view key = s_.substr(key_start + 1, key_end - key_start - 2);
      i = skip_space(key_end);
      if (at(i) != ':') return std::nullopt;
      i = skip_space(i + 1);
      if (key == name || key == camel) return std::make_pair(key_start, i);
      i = skip_value(i);
      if (i == kEnd) return std::nullopt;
      i = skip_space(i);
      if (at(i) != ',') return std::nullopt;
      i = skip_space(i + 1);
    }
    return std::nullopt;
  }
  std::optional<std::size_t> find_element(std::size_t i, int index) const {
    if (at(i) != '[') return std::nullopt;
    i = skip_space(i + 1);
    for (int n = 0; i < s_.size() && at(i) != ']'; ++n) {
      if (n == index) return i;
      i = skip_value(i);
      if (i == kEnd) return std::nullopt;
      i = skip_space(i);
      if (at(i) != ',') return std::nullopt;
      i = skip_space(i + 1);
    }
    return std::nullopt;
  }

  std::string_view s_;
};

// protobuf 3.21's JSON parser reports no position, only words: a syntax error quotes up to
// 20 characters around the spot and marks it with a caret on a last line of its own; a field
// error starts with the field's path in parentheses, then names the member it does not know
// if that is the error ("(trajectory.waypoints[1]) posee: Cannot find field.",
// "(period_s): invalid value ..."); an unknown top-level member is "perod_s: Cannot find
// field.". This is the least reading of those words that finds the spot.
std::optional<std::size_t> json_error_offset(std::string_view text, std::string_view message) {
  const std::size_t caret_line = message.rfind('\n');
  if (caret_line != std::string_view::npos &&
      message.substr(caret_line + 1).find('^') != std::string_view::npos) {
    const std::size_t first = message.find('\n');
    if (first == caret_line) return std::nullopt;
    const std::string_view excerpt = message.substr(first + 1, caret_line - first - 1);
    const std::size_t caret = message.size() - caret_line - 2;  // spaces before '^'
    const std::size_t at = text.find(excerpt);
    // An excerpt that occurs twice cannot be placed; say nothing rather than guess.
    if (at == std::string_view::npos || text.find(excerpt, at + 1) != std::string_view::npos) {
      return std::nullopt;
    }
    return at + caret;
  }
  FieldPath path;
  std::string_view rest = message;
  if (rest.starts_with('(')) {
    const std::size_t close = rest.find(')');
    if (close == std::string_view::npos) return std::nullopt;
    const auto parsed = FieldPath::parse(rest.substr(1, close - 1));
    if (!parsed) return std::nullopt;
    path = *parsed;
    rest.remove_prefix(close + 1);
    if (rest.starts_with(' ')) rest.remove_prefix(1);
  }
  const std::size_t unknown = rest.find(": Cannot find field.");
  if (unknown != std::string_view::npos) {
    const auto member = FieldPath::parse(rest.substr(0, unknown));
    if (member && member->segments().size() == 1) {
      path = path.field(member->segments().front().name);
    }
  }
  if (path.empty()) return std::nullopt;
  return JsonLocator(text).find(path);
}

// The text parser's errors at the line and column it reports, each quoting its line with a
// caret under the column.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  TextErrors(std::string_view input, std::string_view origin) : input_(input), origin_(origin) {}

  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    // The parser reports an unknown field, an unknown enum value and a value of the wrong
    // type only after reading the token that follows (the name's ':' or '{', the next
    // line's token); the message quotes the culprit, so point at its last whole-word
    // occurrence before that spot.
    for (const char* pattern : {"named \"", "value of \"", "field \""}) {
      const std::size_t at = message.find(pattern);
      if (at == std::string::npos) continue;
      const std::size_t begin = at + std::strlen(pattern);
      const std::size_t end = message.find('"', begin);
      if (end == std::string::npos) break;
      if (const auto offset = token_before(message.substr(begin, end - begin), line, column)) {
        const SourcePosition token = offset_position(origin_, input_, *offset);
        line = token.line - 1;
        column = token.column - 1;
      }
      break;
    }
    std::string text = message;
    const std::string_view source = source_line(line);
    if (source.find_first_not_of(" \t\r") != std::string_view::npos) {
      text += "\n    ";
      text += source;
      text += "\n    ";
      text += std::string(static_cast<std::size_t>(std::max(column, 0)), ' ');
      text += '^';
    }
    errors_.push_back(
        ConversionError(FieldPath().at(SourcePosition{origin_, line + 1, column + 1}), text));
  }

  // The first error (the parser stops there) with any later ones in its detail.
  ConversionError error() const {
    if (errors_.empty()) return ConversionError(FieldPath().at({origin_}), "not a task");
    std::string detail = errors_.front().detail();
    for (std::size_t i = 1; i < errors_.size(); ++i) {
      detail += '\n' + std::string(errors_[i].what());
    }
    return ConversionError(errors_.front().path(), detail);
  }

 private:
  // Offset of the last whole-word occurrence of `token` before (line, column), 0-based.
  std::optional<std::size_t> token_before(const std::string& token, int line, int column) const {
    std::size_t offset = 0;
    for (int n = 0; n < line && offset != std::string_view::npos; ++n) {
      offset = input_.find('\n', offset);
      if (offset != std::string_view::npos) ++offset;
    }
    if (offset == std::string_view::npos || token.empty()) return std::nullopt;
    offset = std::min(input_.size(), offset + static_cast<std::size_t>(std::max(column, 0)));
    const auto word = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    std::size_t at = input_.substr(0, offset).rfind(token);
    while (at != std::string_view::npos) {
      const std::size_t after = at + token.size();
      if ((at == 0 || !word(input_[at - 1])) && (after >= input_.size() || !word(input_[after]))) {
        return at;
      }
      if (at == 0) break;
      at = input_.substr(0, at).rfind(token);
    }
    return std::nullopt;
  }

  std::string_view source_line(int line) const {
    std::size_t start = 0;
    for (int n = 0; n < line; ++n) {
      start = input_.find('\n', start);
      if (start == std::string_view::npos) return {};
      ++start;
    }
    const std::size_t end = input_.find('\n', start);
    return input_.substr(start, end == std::string_view::npos ? end : end - start);
  }

  std::string_view input_;
  std::string origin_;
  std::vector<ConversionError> errors_;
};

std::string lowercase_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

TaskParameters to_task(const v1::TaskParameters& m) {
  TaskParameters t;
  t.name = m.name();
  if (m.has_period_s()) t.period = finite(m.period_s(), "period_s");
  if (m.has_world_t_base()) t.world_T_base = to_frame(m.world_t_base(), "world_T_base");
  if (m.has_tool_t_motion()) t.tool_T_motion = to_frame(m.tool_t_motion(), "tool_T_motion");
  if (m.has_arm_angle_reference()) {
    t.arm_angle_reference = to_vector3(m.arm_angle_reference(), "arm_angle_reference");
  }
  t.impedance = to_impedance(m.impedance());
  t.resolver = to_resolver(m.resolver());
  t.wrench_sensor = to_wrench_sensor(m.wrench_sensor());
  // Every behaviour's section (behaviours/<field>.cc), in the order of the list.
#define TETHER_READ(field, Name, ENUM, label) read_parameters(m.field(), t.field);
  TETHER_BEHAVIOURS(TETHER_READ)
#undef TETHER_READ
  t.bounds = to_bounds(m.bounds());
  return t;
}

v1::TaskParameters from_task(const TaskParameters& t) {
  v1::TaskParameters m;
  const TaskParameters d;
  m.set_name(t.name);
  if (t.period != d.period) m.set_period_s(t.period);
  write_frame_if_not_identity(t.world_T_base, [&m] { return m.mutable_world_t_base(); });
  write_frame_if_not_identity(t.tool_T_motion, [&m] { return m.mutable_tool_t_motion(); });
  if (t.arm_angle_reference != d.arm_angle_reference) {
    from_vector3(t.arm_angle_reference, m.mutable_arm_angle_reference());
  }
  write_impedance(t.impedance, &m);
  write_resolver(t.resolver, &m);
  write_wrench_sensor(t.wrench_sensor, &m);
  // Every behaviour's section (behaviours/<field>.cc); protobuf writes fields in the order
  // of their numbers whatever the order here.
#define TETHER_WRITE(field, Name, ENUM, label) write_parameters(t.field, m);
  TETHER_BEHAVIOURS(TETHER_WRITE)
#undef TETHER_WRITE
  write_bounds(t.bounds, &m);
  return m;
}

namespace {

enum class Format { kText, kJson };

// Reads a task from `text` (named `origin` in messages) and, given a model, validates it.
// Every error is placed in `origin`: at the field it names where the text gives that field
// (text format: the parser's record; JSON: JsonLocator), else at the file as a whole.
TaskParameters read_task(std::string_view text, std::string_view origin, Format format,
                         const KinematicModel* model) {
  const SourcePosition whole{std::string(origin)};
  if (text.size() > static_cast<std::size_t>(INT_MAX)) {
    throw ConversionError(FieldPath().at(whole), "too large for a task file");
  }
  v1::TaskParameters message;
  TextFormat::ParseInfoTree tree;
  if (format == Format::kText) {
    TextErrors errors(text, origin);
    TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    parser.WriteLocationsTo(&tree);
    google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    if (!parser.Parse(&input, &message)) throw errors.error();
  } else {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;  // a misspelt field must not silently become default
    const auto status = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(text.data(), text.size()), &message, options);
    if (!status.ok()) {
      const std::string what(status.message());
      const auto offset = json_error_offset(text, what);
      throw ConversionError(FieldPath().at(offset ? offset_position(origin, text, *offset) : whole),
                            what);
    }
  }
  const auto locate = [&](const FieldPath& path) {
    std::optional<SourcePosition> at;
    if (format == Format::kText) {
      at = text_position(origin, tree, path);
    } else if (const auto offset = JsonLocator(text).find(path)) {
      at = offset_position(origin, text, *offset);
    }
    return at.value_or(whole);
  };
  TaskParameters task;
  try {
    task = to_task(message);
  } catch (const ConversionError& e) {
    throw e.at(locate(e.path()));
  }
  if (model == nullptr) return task;
  std::vector<ValidationIssue> issues = validate_task(task, *model);
  if (issues.empty()) return task;
  for (ValidationIssue& issue : issues) {
    SourcePosition at = locate(issue.path);
    issue = placed(std::move(issue), std::move(at));
  }
  throw TaskValidationError(task.name, std::move(issues));
}

struct FileContent {
  std::string data;
  Format format;
};

FileContent read_file(const std::string& path) {
  const FieldPath whole = FieldPath().at({path});
  const std::string ext = lowercase_extension(path);
  const bool text = ext == ".textproto" || ext == ".txtpb" || ext == ".pbtxt";
  if (!text && ext != ".json") {
    throw ConversionError(whole, "unknown task file extension '" + ext +
                                     "'; use .textproto, .txtpb or .pbtxt (text format) or .json");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConversionError(whole,
                          std::string("cannot read the task file (") + std::strerror(errno) + ")");
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw ConversionError(whole, "error while reading the task file");
  return FileContent{content.str(), text ? Format::kText : Format::kJson};
}

}  // namespace

TaskParameters parse_task_text(std::string_view text, std::string_view origin) {
  return read_task(text, origin, Format::kText, nullptr);
}

TaskParameters parse_task_json(std::string_view text, std::string_view origin) {
  return read_task(text, origin, Format::kJson, nullptr);
}

TaskParameters load_task_file(const std::string& path) {
  const FileContent file = read_file(path);
  return read_task(file.data, path, file.format, nullptr);
}

TaskParameters load_valid_task_file(const std::string& path, const KinematicModel& model) {
  const FileContent file = read_file(path);
  return read_task(file.data, path, file.format, &model);
}

std::string to_text(const TaskParameters& task) {
  std::string body;
  TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(true);  // rows: [1, 0, 0, ...], values: [...]
  printer.PrintToString(from_task(task), &body);
  return "# proto-file: tether/v1/task.proto\n# proto-message: tether.v1.TaskParameters\n" + body;
}

std::string to_json(const TaskParameters& task) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(from_task(task), &out, options);
  if (!status.ok()) throw ConversionError("to_json: " + std::string(status.message()));
  return out;
}

}  // namespace tether::proto

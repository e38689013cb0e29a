#include "wire.h"

#include <fmt/format.h>

#include <cmath>

#include "tether/common/vocabulary.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"

namespace tether::remote::server {

void to_wire(const BreachEvent& event, v1::Breach* out) {
  out->set_cause(proto::from_breach_cause(event.cause));
  out->set_description(describe(event));
  out->set_value(event.value);
  out->set_bound(event.bound);
  out->set_time_s(event.time);
  out->set_joint(event.index);
}

std::vector<v1::Behaviour> enabled_behaviours(const TaskParameters& task) {
  std::vector<v1::Behaviour> out;
  for (Behaviour b : tether::enabled_behaviours(task)) out.push_back(proto::from_behaviour(b));
  return out;
}

void to_wire(const CycleTelemetry& c, const std::string& task_name,
             const std::vector<v1::Behaviour>& behaviours, double period, v1::Telemetry* out) {
  out->set_cycle(c.cycle);
  out->set_arm_time_s(c.arm_time);
  out->set_task_time_s(c.task_time);
  out->set_state(proto::from_executor_state(c.state));
  out->set_task_id(c.task_id);
  out->set_task_name(task_name);
  proto::from_joint_vector(c.commanded_joints, out->mutable_commanded_joints());
  proto::from_joint_vector(c.measured_joints, out->mutable_measured_joints());
  proto::from_vector3(c.motion_position, out->mutable_motion_position());
  out->set_arm_angle_rad(c.arm_angle);
  proto::from_motion_vector(c.error, out->mutable_error());
  proto::from_motion_vector(c.velocity, out->mutable_velocity());
  proto::from_motion_vector(c.force, out->mutable_force());
  proto::from_wrench(c.wrench, out->mutable_wrench());
  proto::from_wrench(c.wrench_error, out->mutable_wrench_error());
  out->set_joint_weight(c.joint_weight);
  out->clear_behaviours();
  for (v1::Behaviour b : behaviours) out->add_behaviours(b);
  to_wire(c.breach, out->mutable_breach());
  v1::LoopTiming* timing = out->mutable_timing();
  timing->set_period_s(period);
  timing->set_cycles(c.cycle);
  timing->set_overruns(c.overruns);
  timing->set_compute_s(c.compute_time);
  timing->set_wakeup_latency_s(c.wakeup_latency);
  proto::from_teleoperation_counters(c.teleoperation, 0, out->mutable_teleoperation());
  proto::from_channel_energies(c.channel, out->mutable_channel());
  out->clear_aux();
  for (double a : c.aux) out->add_aux(a);
  v1::ResolverTelemetry* r = out->mutable_resolver();
  r->set_kind(proto::from_resolver_kind(c.resolver));
  r->set_status(to_string(c.resolver_status));
  r->set_achieved_fraction(c.achieved_fraction);
  r->set_warn_below(c.warn_below_p);
  r->set_obstacle_clearance_m(c.obstacle_clearance);
  r->set_obstacle_constraints(c.obstacle_constraints);
}

void to_reflection(const CycleTelemetry& c, std::uint64_t sequence_base, v1::ForceReflection* out) {
  out->set_cycle(c.cycle);
  out->set_task_time_s(c.task_time);
  const bool ours = c.teleoperation.last_sequence > sequence_base;
  out->set_applied_sequence(ours ? c.teleoperation.last_sequence - sequence_base : 0);
  out->set_ground_time_ns(ours ? c.teleoperation.last_ground_time_ns : 0);
  out->set_mode(proto::from_teleop_mode(c.teleop_mode));
  const Matrix3& R = c.hand_controller_R_motion;
  Vector6 measured;
  measured << R * c.wrench.head<3>(), R * c.wrench.tail<3>();
  Vector6 error;
  error << R * c.wrench_error.head<3>(), R * c.wrench_error.tail<3>();
  proto::from_wrench(measured, out->mutable_measured());
  proto::from_wrench(error, out->mutable_tracking_error());
  proto::from_wrench(c.reflected_wrench, out->mutable_reflected());
  out->set_state(proto::from_executor_state(c.state));
  to_wire(c.breach, out->mutable_breach());
  proto::from_teleoperation_counters(c.teleoperation, sequence_base, out->mutable_teleoperation());
  out->set_reflection(proto::from_reflection_method(c.reflection));
  out->set_slave_in_j(c.channel.slave.in);
  proto::from_wrench(c.return_wave, out->mutable_return_wave());
  v1::Twist* b = out->mutable_wave_impedance();
  b->mutable_linear()->set_x(c.wave_impedance.translation);
  b->mutable_angular()->set_x(c.wave_impedance.rotation);
  out->set_wave_filter_hz(c.wave_impedance.filter_hz);
  proto::from_channel_energies(c.channel, out->mutable_channel());
  out->set_increment_arrival_ns(ours ? c.teleoperation.last_arrival_ns : 0);
  out->set_remote_time_ns(c.steady_ns);
  if (c.teleop_mode == TeleopMode::kCamera) {
    // The EYE frame the wrenches above were rotated with, so the ground renders them in the
    // view they were computed for.
    v1::EyeFrame* eye = out->mutable_eye();
    proto::from_rotation(c.world_R_eye, eye->mutable_world_r_eye());
    eye->set_time_ns(c.eye_time_ns);
  } else {
    out->clear_eye();  // `out` may be reused
  }
}

namespace {

// Bounds on what an increment may carry for the reflection channel: an energy beyond 1 MJ
// or a wave beyond 1000 √W (a 1 m/s hand motion on a 500 kN·s/m wave impedance) is no
// hand controller's.
constexpr double kMaxChannelEnergy = 1e6;  // [J]
constexpr double kMaxWave = 1e3;           // [√W]

std::string check_vector(const v1::Vector3& v, const char* field, double limit, const char* unit,
                         Vector3& out) {
  out = Vector3(v.x(), v.y(), v.z());
  if (!out.allFinite()) {
    return fmt::format("{} = ({}, {}, {}) is not finite", field, v.x(), v.y(), v.z());
  }
  if (out.norm() > limit) {
    return fmt::format("{} has magnitude {:.4g} {}; allowed 0 … {} {} per increment", field,
                       out.norm(), unit, limit, unit);
  }
  return {};
}

}  // namespace

std::string from_wire(const v1::TeleopIncrement& in, std::uint64_t sequence_base,
                      HandControllerSample& out) {
  if (in.sequence() == 0) return "sequence = 0; sequences start at 1 on each stream";
  // The site numbers increments globally as base + sequence, and the next stream starts
  // from the highest: a sequence near 2^64 would wrap that number (and every later
  // stream's) around to one already applied. 2^48 is 8900 years of 1 kHz increments.
  if (in.sequence() > kMaxSequence || sequence_base > kMaxSequence) {
    return fmt::format("sequence = {}; allowed 1 … {} on a stream", in.sequence(), kMaxSequence);
  }
  Vector3 translation;
  Vector3 rotation;
  if (std::string e = check_vector(in.translation_m(), "translation_m", kMaxIncrementTranslation,
                                   "m", translation);
      !e.empty()) {
    return e;
  }
  if (std::string e =
          check_vector(in.rotation_rad(), "rotation_rad", kMaxIncrementRotation, "rad", rotation);
      !e.empty()) {
    return e;
  }
  if (!std::isfinite(in.arm_angle_rad()) || std::abs(in.arm_angle_rad()) > kMaxIncrementRotation) {
    return fmt::format("arm_angle_rad = {}; allowed −{} … {} rad per increment", in.arm_angle_rad(),
                       kMaxIncrementRotation, kMaxIncrementRotation);
  }
  out.sequence = sequence_base + in.sequence();
  out.increment << translation, rotation;
  out.arm_angle_increment = in.arm_angle_rad();
  out.deadman = in.deadman();
  out.ground_time_ns = in.ground_time_ns();
  for (const auto& [value, field] : {std::pair{in.master_in_j(), "master_in_j"},
                                     std::pair{in.master_observed_j(), "master_observed_j"},
                                     std::pair{in.master_dissipated_j(), "master_dissipated_j"}}) {
    if (!std::isfinite(value) || std::abs(value) > kMaxChannelEnergy) {
      return fmt::format("{} = {}; allowed −{} … {} J", field, value, kMaxChannelEnergy,
                         kMaxChannelEnergy);
    }
  }
  if (in.master_in_j() < 0.0 || in.master_dissipated_j() < 0.0) {
    return fmt::format("master_in_j = {}, master_dissipated_j = {}: cumulative energies are ≥ 0",
                       in.master_in_j(), in.master_dissipated_j());
  }
  out.master_in = in.master_in_j();
  out.master_observed = in.master_observed_j();
  out.master_dissipated = in.master_dissipated_j();
  Vector3 wave_force;
  Vector3 wave_torque;
  if (std::string e = check_vector(in.wave().force(), "wave.force", kMaxWave, "√W", wave_force);
      !e.empty()) {
    return e;
  }
  if (std::string e = check_vector(in.wave().torque(), "wave.torque", kMaxWave, "√W", wave_torque);
      !e.empty()) {
    return e;
  }
  out.wave << wave_force, wave_torque;
  if (in.mode() == v1::TELEOP_MODE_UNSPECIFIED) {
    out.mode.reset();
  } else {
    try {
      out.mode = proto::to_teleop_mode(in.mode(), "mode");
    } catch (const proto::ConversionError& e) {
      return e.what();
    }
  }
  return {};
}

}  // namespace tether::remote::server

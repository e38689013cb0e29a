#include "wire.h"

#include <fmt/format.h>

#include <Eigen/Geometry>
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
  timing->set_sample_unix_ns(c.sample_unix_ns);
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
  const CycleInputs& in = c.inputs;
  v1::CycleInputs* w = out->mutable_inputs();
  w->set_submission(in.submission);
  w->set_restart(in.restart);
  w->set_from_rest(in.from_rest);
  w->set_stop(proto::from_breach_cause(in.stop));
  w->set_reset(in.reset);
  w->set_recovery(in.recovery);
  w->set_recovery_jog(in.recovery_request.kind == RecoveryKind::kJointJog);
  w->set_recovery_joint(in.recovery_request.joint);
  w->set_recovery_distance(in.recovery_request.distance);
  w->set_recovery_speed(in.recovery_request.speed);
  w->set_consecutive_overruns(in.consecutive_overruns);
  proto::from_motion_vector(in.teleop_velocity, w->mutable_teleop_velocity());
  w->set_teleop_enabled(in.teleop_enabled);
  w->set_teleop_stalled(in.teleop_stalled);
  proto::from_joint_vector(in.prior_command, w->mutable_prior_command());
  out->clear_arm_checkpoint();
  for (std::uint32_t k = 0; k < c.checkpoint.size; ++k)
    out->add_arm_checkpoint(c.checkpoint.values[k]);
}

void to_record(const HandControllerSample& sample, v1::RecordedIncrement* out) {
  out->set_sequence(sample.sequence);
  out->set_ground_time_ns(sample.ground_time_ns);
  out->set_arrival_ns(sample.arrival_ns);
  out->set_deadman(sample.deadman);
  out->set_mode(sample.mode ? proto::from_teleop_mode(*sample.mode) : v1::TELEOP_MODE_UNSPECIFIED);
  proto::from_vector3(Vector3(sample.increment.head<3>()), out->mutable_translation_m());
  proto::from_vector3(Vector3(sample.increment.tail<3>()), out->mutable_rotation_rad());
  out->set_arm_angle_rad(sample.arm_angle_increment);
  out->set_plane(sample.plane == DataPlane::kDatagram ? v1::DATA_PLANE_DATAGRAM
                                                      : v1::DATA_PLANE_STREAM);
  out->set_concealed(sample.concealed);
  out->set_end(sample.end);
  out->set_opened(sample.opened);
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

std::string describe(const RecoveryRequest& request, BreachCause target) {
  const bool tool =
      target == BreachCause::kProximityTooClose || target == BreachCause::kProximityTooFar;
  const char* unit = tool ? "m" : "rad";
  // A speed of 0 asks for the site's recovery speed (filled in once the loop takes it).
  const std::string speed =
      request.speed > 0.0 ? fmt::format("{:.3g} {}/s", request.speed,
                                        request.kind == RecoveryKind::kJointJog ? "rad" : unit)
                          : std::string("the recovery speed");
  if (request.kind == RecoveryKind::kJointJog) {
    return fmt::format("joint {} by {:+.4g} rad at {}", request.joint + 1, request.distance, speed);
  }
  return fmt::format("retreat {:.4g} {} at {}", request.distance, unit, speed);
}

std::string refusal_message(const RecoveryStatus& r, ExecutorState state) {
  const std::string target =
      r.target == BreachCause::kNone ? std::string("no bound") : to_string(r.target);
  switch (r.refusal) {
    case RecoveryRefusal::kNone:
      return {};
    case RecoveryRefusal::kNotStopped:
      return fmt::format("nothing to recover from: the executor is {}", to_string(state));
    case RecoveryRefusal::kNotRecoverable:
      return r.target == BreachCause::kNone
                 ? std::string("nothing to recover from: no bound is breached now; reset")
                 : fmt::format(
                       "a {} stop is not left by motion: recovery is for the joint-limit "
                       "margin, the proximity window and a singular resolver",
                       target);
    case RecoveryRefusal::kJointNotInMargin:
      return fmt::format("joint {} is not in its limit margin: jog the joint in breach",
                         r.joint + 1);
    case RecoveryRefusal::kDeepens: {
      const char* wrong = r.request.distance > 0.0 ? "+" : "-";
      const char* right = r.request.distance > 0.0 ? "-" : "+";
      return fmt::format(
          "jogging joint {} {} would deepen the joint-limit margin breach: jog it {}", r.joint + 1,
          wrong, right);
    }
    case RecoveryRefusal::kBadAmount: {
      const bool tool =
          r.target == BreachCause::kProximityTooClose || r.target == BreachCause::kProximityTooFar;
      return fmt::format("distance {:.4g}: a {} must be {} and at most {} {}", r.request.distance,
                         r.request.kind == RecoveryKind::kJointJog ? "jog" : "retreat",
                         r.request.kind == RecoveryKind::kJointJog ? "non-zero" : "> 0",
                         tool ? kMaxRecoveryTool : kMaxRecoveryJoint, tool ? "m" : "rad");
    }
    case RecoveryRefusal::kNoDirection:
      return fmt::format("no direction leaves the {} breach from here (its gradient vanishes)",
                         target);
    case RecoveryRefusal::kJogNotForCause:
      return fmt::format("a {} stop is left by a retreat, not a joint jog", target);
  }
  return "refused";
}

void to_wire(const RecoveryStatus& r, const RecoveryLimits& limits, ExecutorState state,
             v1::RecoveryStatus* out) {
  switch (r.outcome) {
    case RecoveryOutcome::kNone:
      out->set_outcome("none");
      break;
    case RecoveryOutcome::kMoving:
      out->set_outcome("moving");
      break;
    case RecoveryOutcome::kDone:
      out->set_outcome("done");
      break;
    case RecoveryOutcome::kStopped:
      out->set_outcome("stopped");
      break;
    case RecoveryOutcome::kRefused:
      out->set_outcome("refused: " + refusal_message(r, state));
      break;
  }
  if (r.outcome != RecoveryOutcome::kNone) out->set_motion(describe(r.request, r.target));
  out->set_moved(r.moved);
  out->set_remaining(r.remaining);
  out->set_max_joint_speed(limits.joint_speed);
  out->set_max_tool_speed(limits.tool_speed);
}

std::string from_datagram(const datagram::IncrementMessage& message,
                          const datagram::ConcealedSample& sample, std::uint64_t sequence_base,
                          std::uint64_t ground_time_ns, std::int64_t arrival_ns,
                          HandControllerSample& out) {
  if (sample.sequence > kMaxSequence || sequence_base > kMaxSequence) {
    return fmt::format("sequence = {}; allowed 1 … {} on a stream", sample.sequence, kMaxSequence);
  }
  const Vector3 translation(sample.motion[0], sample.motion[1], sample.motion[2]);
  const Vector3 rotation(sample.motion[3], sample.motion[4], sample.motion[5]);
  const double arm_angle = sample.motion[6];
  // A concealed sample carries an even share of the motion of the numbers it covers, never
  // more than the largest of them: a peer within the limits stays within them.
  if (!translation.allFinite() || translation.norm() > kMaxIncrementTranslation) {
    return fmt::format(
        "increment {}: translation has magnitude {:.4g} m; allowed 0 … {} m per "
        "increment",
        sample.sequence, translation.norm(), kMaxIncrementTranslation);
  }
  if (!rotation.allFinite() || rotation.norm() > kMaxIncrementRotation) {
    return fmt::format(
        "increment {}: rotation has magnitude {:.4g} rad; allowed 0 … {} rad per "
        "increment",
        sample.sequence, rotation.norm(), kMaxIncrementRotation);
  }
  if (!std::isfinite(arm_angle) || std::abs(arm_angle) > kMaxIncrementRotation) {
    return fmt::format("increment {}: arm angle {}; allowed −{} … {} rad per increment",
                       sample.sequence, arm_angle, kMaxIncrementRotation, kMaxIncrementRotation);
  }
  switch (message.mode) {
    case 0:
      out.mode.reset();
      break;
    case 1:
      out.mode = TeleopMode::kTool;
      break;
    case 2:
      out.mode = TeleopMode::kWorld;
      break;
    case 3:
      out.mode = TeleopMode::kCamera;
      break;
    default:
      return fmt::format("mode = {}; allowed 0 … 3", message.mode);
  }
  out.sequence = sequence_base + sample.sequence;
  out.increment << translation, rotation;
  out.arm_angle_increment = arm_angle;
  out.deadman = message.deadman;
  out.ground_time_ns = ground_time_ns;
  out.arrival_ns = arrival_ns;
  out.master_in = message.master_in;
  out.master_observed = message.master_observed;
  out.master_dissipated = message.master_dissipated;
  out.wave.setZero();
  if (message.has_wave) {
    for (int i = 0; i < 6; ++i) out.wave[i] = message.wave[static_cast<std::size_t>(i)];
  }
  out.plane = DataPlane::kDatagram;
  out.concealed = sample.concealed;
  return {};
}

void to_datagram(const CycleTelemetry& c, std::uint64_t sequence_base, bool detail,
                 datagram::ReflectionMessage& out) {
  out = datagram::ReflectionMessage{};
  out.cycle = static_cast<std::uint32_t>(c.cycle);
  const bool ours = c.teleoperation.last_sequence > sequence_base;
  out.applied_sequence =
      ours ? static_cast<std::uint32_t>(c.teleoperation.last_sequence - sequence_base) : 0;
  out.skipped = static_cast<std::uint16_t>(c.teleoperation.lost + c.teleoperation.stale);
  out.state = static_cast<std::uint8_t>(proto::from_executor_state(c.state));
  out.mode = static_cast<std::uint8_t>(proto::from_teleop_mode(c.teleop_mode));
  // ReflectionMethod's own value (0 none, 1 passivity, 2 wave), as the ground decodes it.
  out.method = static_cast<std::uint8_t>(c.reflection);
  for (std::size_t i = 0; i < 6; ++i) {
    out.reflected[i] = static_cast<float>(c.reflected_wrench[static_cast<Eigen::Index>(i)]);
  }
  out.slave_in = c.channel.slave.in;
  out.remote_time_ns = c.steady_ns;
  const std::int64_t hold = c.steady_ns - c.teleoperation.last_arrival_ns;
  out.hold_ns = ours && c.teleoperation.last_arrival_ns != 0 && hold >= 0 &&
                        hold < std::int64_t{datagram::ReflectionMessage::kNoHold}
                    ? static_cast<std::uint32_t>(hold)
                    : datagram::ReflectionMessage::kNoHold;
  if (detail) {
    out.has_detail = true;
    const Matrix3& R = c.hand_controller_R_motion;
    Vector6 measured;
    measured << R * c.wrench.head<3>(), R * c.wrench.tail<3>();
    Vector6 error;
    error << R * c.wrench_error.head<3>(), R * c.wrench_error.tail<3>();
    for (std::size_t i = 0; i < 6; ++i) {
      out.measured[i] = static_cast<float>(measured[static_cast<Eigen::Index>(i)]);
      out.tracking_error[i] = static_cast<float>(error[static_cast<Eigen::Index>(i)]);
    }
    out.task_time = static_cast<float>(c.task_time);
    out.slave_observed = static_cast<float>(c.channel.slave.observed);
    out.slave_dissipated = static_cast<float>(c.channel.slave.dissipated);
  }
  if (c.reflection == ReflectionMethod::kWave) {
    out.has_wave = true;
    for (std::size_t i = 0; i < 6; ++i) {
      out.return_wave[i] = static_cast<float>(c.return_wave[static_cast<Eigen::Index>(i)]);
    }
    out.wave_impedance = {static_cast<float>(c.wave_impedance.translation),
                          static_cast<float>(c.wave_impedance.rotation),
                          static_cast<float>(c.wave_impedance.filter_hz)};
  }
  if (c.teleop_mode == TeleopMode::kCamera) {
    out.has_eye = true;
    const Eigen::Quaterniond q(c.world_R_eye);
    out.eye = {static_cast<float>(q.w()), static_cast<float>(q.x()), static_cast<float>(q.y()),
               static_cast<float>(q.z())};
    out.eye_time_ns = c.eye_time_ns;
  }
}

std::string from_wire(const v1::RecoverRequest& in, RecoveryRequest& out) {
  const auto amount = [](const char* field, double value) -> std::string {
    if (!std::isfinite(value)) {
      return fmt::format("RecoverRequest.{} = {}: must be finite", field, value);
    }
    return {};
  };
  switch (in.motion_case()) {
    case v1::RecoverRequest::kJog: {
      const v1::JointJog& jog = in.jog();
      if (jog.joint() < 1 || jog.joint() > kArmDof) {
        return fmt::format("RecoverRequest.jog.joint = {}: must be 1 to {}", jog.joint(), kArmDof);
      }
      if (std::string why = amount("jog.distance", jog.distance()); !why.empty()) return why;
      if (!(jog.speed() >= 0.0) || !std::isfinite(jog.speed())) {
        return fmt::format("RecoverRequest.jog.speed = {}: must be finite and >= 0", jog.speed());
      }
      out = RecoveryRequest{RecoveryKind::kJointJog, jog.joint() - 1, jog.distance(), jog.speed()};
      return {};
    }
    case v1::RecoverRequest::kRetreat: {
      const v1::Retreat& retreat = in.retreat();
      if (std::string why = amount("retreat.distance", retreat.distance()); !why.empty()) {
        return why;
      }
      if (!(retreat.speed() >= 0.0) || !std::isfinite(retreat.speed())) {
        return fmt::format("RecoverRequest.retreat.speed = {}: must be finite and >= 0",
                           retreat.speed());
      }
      out = RecoveryRequest{RecoveryKind::kRetreat, -1, retreat.distance(), retreat.speed()};
      return {};
    }
    case v1::RecoverRequest::MOTION_NOT_SET:
      break;
  }
  return "RecoverRequest.motion: one of jog or retreat is required";
}

}  // namespace tether::remote::server

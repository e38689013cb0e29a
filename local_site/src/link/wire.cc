#include "link/wire.h"

#include <string>

#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"

namespace tether::local::wire {
namespace {

using proto::NonFinite;

// A reply may leave a joint vector out (zeros then); one that is there has all 7 values.
JointVector joints(const v1::JointVector& message, const std::string& path) {
  if (message.values_size() == 0) return JointVector::Zero();
  return proto::to_joint_vector(message, path, NonFinite::kKeep);
}

void behaviours_to_domain(const google::protobuf::RepeatedField<int>& in,
                          std::vector<Behaviour>& out) {
  out.clear();
  out.reserve(static_cast<std::size_t>(in.size()));
  for (int b : in) out.push_back(proto::to_behaviour(static_cast<v1::Behaviour>(b), "behaviours"));
}

}  // namespace

Breach to_domain(const v1::Breach& breach) {
  Breach out;
  out.cause = proto::to_breach_cause(breach.cause(), "breach.cause");
  out.description = breach.description();
  out.value = breach.value();
  out.bound = breach.bound();
  out.time = breach.time_s();
  out.joint = breach.joint();
  // proto3 cannot tell an unset joint (0) from joint 0: only per-joint causes carry one.
  if (out.cause != BreachCause::kJointLimitMargin) out.joint = -1;
  return out;
}

LoopTiming to_domain(const v1::LoopTiming& timing) {
  return {timing.period_s(),  timing.cycles(),           timing.overruns(),
          timing.compute_s(), timing.wakeup_latency_s(), timing.sample_unix_ns()};
}

SiteStatus to_domain(const v1::SiteStatus& status) {
  SiteStatus out;
  out.site = status.site();
  out.arm = status.arm();
  out.arm_link = status.arm_link();
  out.state = proto::to_executor_state(status.state(), "state");
  out.task_id = status.task_id();
  out.task_name = status.task_name();
  out.breach = to_domain(status.breach());
  out.controller = status.controller();
  out.teleoperation = proto::to_teleoperation_counters(status.teleoperation());
  out.timing = to_domain(status.timing());
  out.has_measured_joints = status.measured_joints().values_size() > 0;
  out.measured_joints = joints(status.measured_joints(), "measured_joints");
  out.last_reset = status.last_reset();
  try {
    out.scene = proto::to_scene(status.scene(), "scene");
  } catch (const proto::ConversionError&) {
    // Geometry this client cannot read must not cost it the site's status: the name stays.
    out.scene = SceneDescription{status.scene().name(), {}, {}, {}};
  }
  const v1::RecoveryStatus& r = status.recovery();
  out.recovery = RecoveryStatus{r.outcome().empty() ? std::string("none") : r.outcome(),
                                r.motion(),
                                r.moved(),
                                r.remaining(),
                                r.max_joint_speed(),
                                r.max_tool_speed()};
  return out;
}

TaskSummary to_domain(const v1::TaskSummary& summary) {
  TaskSummary out;
  out.name = summary.name();
  out.revision = summary.revision();
  out.period = summary.period_s();
  behaviours_to_domain(summary.behaviours(), out.behaviours);
  return out;
}

TelemetrySample to_domain(const v1::Telemetry& t) {
  TelemetrySample out;
  out.cycle = t.cycle();
  out.arm_time = t.arm_time_s();
  out.task_time = t.task_time_s();
  out.state = proto::to_executor_state(t.state(), "state");
  out.task_id = t.task_id();
  out.task_name = t.task_name();
  out.commanded_joints = joints(t.commanded_joints(), "commanded_joints");
  out.measured_joints = joints(t.measured_joints(), "measured_joints");
  out.motion_position = proto::to_vector3(t.motion_position(), "motion_position", NonFinite::kKeep);
  out.arm_angle = t.arm_angle_rad();
  out.error = proto::to_motion_vector(t.error(), "error", NonFinite::kKeep);
  out.velocity = proto::to_motion_vector(t.velocity(), "velocity", NonFinite::kKeep);
  out.force = proto::to_motion_vector(t.force(), "force", NonFinite::kKeep);
  out.wrench = proto::to_wrench(t.wrench(), "wrench", NonFinite::kKeep);
  out.wrench_error = proto::to_wrench(t.wrench_error(), "wrench_error", NonFinite::kKeep);
  out.joint_weight = t.joint_weight();
  behaviours_to_domain(t.behaviours(), out.behaviours);
  out.breach = to_domain(t.breach());
  out.timing = to_domain(t.timing());
  out.teleoperation = proto::to_teleoperation_counters(t.teleoperation());
  out.channel = proto::to_channel_energies(t.channel());
  out.aux.assign(t.aux().begin(), t.aux().end());
  if (t.has_resolver()) {
    const v1::ResolverTelemetry& r = t.resolver();
    out.resolver.kind = proto::to_resolver_kind(r.kind(), "resolver.kind");
    out.resolver.status = r.status();
    out.resolver.achieved_fraction = r.achieved_fraction();
    out.resolver.warn_below = r.warn_below();
    out.resolver.obstacle_clearance = r.obstacle_clearance_m();
    out.resolver.obstacle_constraints = r.obstacle_constraints();
  }
  return out;
}

void to_wire(const Breach& breach, v1::Breach* out) {
  out->set_cause(proto::from_breach_cause(breach.cause));
  out->set_description(breach.description);
  out->set_value(breach.value);
  out->set_bound(breach.bound);
  out->set_time_s(breach.time);
  out->set_joint(breach.joint);
}

void to_wire(const LoopTiming& timing, v1::LoopTiming* out) {
  out->set_period_s(timing.period);
  out->set_cycles(timing.cycles);
  out->set_overruns(timing.overruns);
  out->set_compute_s(timing.compute_time);
  out->set_wakeup_latency_s(timing.wakeup_latency);
  out->set_sample_unix_ns(timing.sample_unix_ns);
}

void to_wire(const SiteStatus& status, v1::SiteStatus* out) {
  out->set_site(status.site);
  out->set_arm(status.arm);
  out->set_arm_link(status.arm_link);
  out->set_state(proto::from_executor_state(status.state));
  out->set_task_id(status.task_id);
  out->set_task_name(status.task_name);
  to_wire(status.breach, out->mutable_breach());
  out->set_controller(status.controller);
  proto::from_teleoperation_counters(status.teleoperation, 0, out->mutable_teleoperation());
  to_wire(status.timing, out->mutable_timing());
  if (status.has_measured_joints) {
    proto::from_joint_vector(status.measured_joints, out->mutable_measured_joints());
  }
  out->set_last_reset(status.last_reset);
  proto::from_scene(status.scene, out->mutable_scene());
  v1::RecoveryStatus* r = out->mutable_recovery();
  r->set_outcome(status.recovery.outcome);
  r->set_motion(status.recovery.motion);
  r->set_moved(status.recovery.moved);
  r->set_remaining(status.recovery.remaining);
  r->set_max_joint_speed(status.recovery.max_joint_speed);
  r->set_max_tool_speed(status.recovery.max_tool_speed);
}

void to_wire(const TaskSummary& summary, v1::TaskSummary* out) {
  out->set_name(summary.name);
  out->set_revision(summary.revision);
  out->set_period_s(summary.period);
  for (Behaviour b : summary.behaviours) out->add_behaviours(proto::from_behaviour(b));
}

void to_wire(const TelemetrySample& sample, v1::Telemetry* out) {
  out->set_cycle(sample.cycle);
  out->set_arm_time_s(sample.arm_time);
  out->set_task_time_s(sample.task_time);
  out->set_state(proto::from_executor_state(sample.state));
  out->set_task_id(sample.task_id);
  out->set_task_name(sample.task_name);
  proto::from_joint_vector(sample.commanded_joints, out->mutable_commanded_joints());
  proto::from_joint_vector(sample.measured_joints, out->mutable_measured_joints());
  proto::from_vector3(sample.motion_position, out->mutable_motion_position());
  out->set_arm_angle_rad(sample.arm_angle);
  proto::from_motion_vector(sample.error, out->mutable_error());
  proto::from_motion_vector(sample.velocity, out->mutable_velocity());
  proto::from_motion_vector(sample.force, out->mutable_force());
  proto::from_wrench(sample.wrench, out->mutable_wrench());
  proto::from_wrench(sample.wrench_error, out->mutable_wrench_error());
  out->set_joint_weight(sample.joint_weight);
  for (Behaviour b : sample.behaviours) out->add_behaviours(proto::from_behaviour(b));
  to_wire(sample.breach, out->mutable_breach());
  to_wire(sample.timing, out->mutable_timing());
  proto::from_teleoperation_counters(sample.teleoperation, 0, out->mutable_teleoperation());
  proto::from_channel_energies(sample.channel, out->mutable_channel());
  for (double a : sample.aux) out->add_aux(a);
  v1::ResolverTelemetry* r = out->mutable_resolver();
  r->set_kind(proto::from_resolver_kind(sample.resolver.kind));
  r->set_status(sample.resolver.status);
  r->set_achieved_fraction(sample.resolver.achieved_fraction);
  r->set_warn_below(sample.resolver.warn_below);
  r->set_obstacle_clearance_m(sample.resolver.obstacle_clearance);
  r->set_obstacle_constraints(sample.resolver.obstacle_constraints);
}

void to_wire(const OperatorIncrement& increment, std::uint64_t sequence,
             std::int64_t ground_time_ns, v1::TeleopIncrement* out) {
  out->set_sequence(sequence);
  out->set_ground_time_ns(static_cast<std::uint64_t>(ground_time_ns));
  out->set_deadman(increment.deadman && increment.valid);
  out->set_mode(proto::from_teleop_mode(increment.mode));
  proto::from_vector3(increment.increment.head<3>(), out->mutable_translation_m());
  proto::from_vector3(increment.increment.tail<3>(), out->mutable_rotation_rad());
  out->set_arm_angle_rad(increment.arm_angle_increment);
}

void to_wire(const MasterChannel& channel, v1::TeleopIncrement* out) {
  out->set_master_in_j(channel.energies.in);
  out->set_master_observed_j(channel.energies.observed);
  out->set_master_dissipated_j(channel.energies.dissipated);
  if (channel.wave.isZero()) {
    out->clear_wave();
  } else {
    proto::from_wrench(channel.wave, out->mutable_wave());
  }
}

ReflectionSample to_domain(const v1::ForceReflection& in) {
  ReflectionSample out;
  out.cycle = in.cycle();
  out.task_time = in.task_time_s();
  out.applied_sequence = in.applied_sequence();
  out.mode = proto::to_teleop_mode(in.mode(), "mode");
  out.measured = proto::to_wrench(in.measured(), "measured", NonFinite::kKeep);
  out.tracking_error = proto::to_wrench(in.tracking_error(), "tracking_error", NonFinite::kKeep);
  // A remote that does not send it reflects every axis.
  out.reflected = in.has_reflected()
                      ? proto::to_wrench(in.reflected(), "reflected", NonFinite::kKeep)
                      : out.measured;
  if (in.has_eye()) {
    out.has_eye = true;
    out.world_R_eye = proto::to_rotation(in.eye().world_r_eye(), "eye.world_R_eye");
    out.eye_time_ns = in.eye().time_ns();
  }
  out.state = proto::to_executor_state(in.state(), "state");
  out.breach = to_domain(in.breach());
  out.teleoperation = proto::to_teleoperation_counters(in.teleoperation());
  out.reflection = proto::to_reflection_method(in.reflection(), "reflection");
  out.slave_in = in.slave_in_j();
  out.return_wave = proto::to_wrench(in.return_wave(), "return_wave", NonFinite::kKeep);
  out.wave_impedance = WaveImpedance{in.wave_impedance().linear().x(),
                                     in.wave_impedance().angular().x(), in.wave_filter_hz()};
  out.channel = proto::to_channel_energies(in.channel());
  out.increment_arrival_ns = in.increment_arrival_ns();
  out.remote_time_ns = in.remote_time_ns();
  return out;
}

void to_wire(const ReflectionSample& in, v1::ForceReflection* out) {
  out->set_cycle(in.cycle);
  out->set_task_time_s(in.task_time);
  out->set_applied_sequence(in.applied_sequence);
  out->set_mode(proto::from_teleop_mode(in.mode));
  proto::from_wrench(in.measured, out->mutable_measured());
  proto::from_wrench(in.tracking_error, out->mutable_tracking_error());
  proto::from_wrench(in.reflected, out->mutable_reflected());
  if (in.has_eye) {
    proto::from_rotation(in.world_R_eye, out->mutable_eye()->mutable_world_r_eye());
    out->mutable_eye()->set_time_ns(in.eye_time_ns);
  }
  out->set_state(proto::from_executor_state(in.state));
  to_wire(in.breach, out->mutable_breach());
  proto::from_teleoperation_counters(in.teleoperation, 0, out->mutable_teleoperation());
  out->set_reflection(proto::from_reflection_method(in.reflection));
  out->set_slave_in_j(in.slave_in);
  proto::from_wrench(in.return_wave, out->mutable_return_wave());
  out->mutable_wave_impedance()->mutable_linear()->set_x(in.wave_impedance.translation);
  out->mutable_wave_impedance()->mutable_angular()->set_x(in.wave_impedance.rotation);
  out->set_wave_filter_hz(in.wave_impedance.filter_hz);
  proto::from_channel_energies(in.channel, out->mutable_channel());
  out->set_increment_arrival_ns(in.increment_arrival_ns);
  out->set_remote_time_ns(in.remote_time_ns);
}

int wire_mode(TeleopMode mode) { return static_cast<int>(proto::from_teleop_mode(mode)); }

ExecutorState to_executor_state(std::uint8_t number) {
  if (!v1::ExecutorState_IsValid(number)) return ExecutorState::kUnspecified;
  try {
    return proto::to_executor_state(static_cast<v1::ExecutorState>(number), "state");
  } catch (const std::exception&) {
    return ExecutorState::kUnspecified;
  }
}

TeleopMode to_mode(std::uint8_t number, TeleopMode otherwise) {
  if (number == 0 || !v1::TeleopMode_IsValid(number)) return otherwise;
  try {
    return proto::to_teleop_mode(static_cast<v1::TeleopMode>(number), "mode");
  } catch (const std::exception&) {
    return otherwise;
  }
}

}  // namespace tether::local::wire

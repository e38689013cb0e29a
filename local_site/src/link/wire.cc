#include "link/wire.h"

#include <string>

#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"

namespace tether::local::wire {
namespace {

using proto::ConversionError;

JointVector joints(const v1::JointVector& message, const std::string& path) {
  if (message.values_size() == 0) return JointVector::Zero();
  if (message.values_size() != kArmDof) {
    throw ConversionError(path + ".values: " + std::to_string(message.values_size()) +
                          " values, expected " + std::to_string(kArmDof) + " (or none)");
  }
  JointVector q;
  for (int i = 0; i < kArmDof; ++i) q[i] = message.values(i);
  return q;
}

Vector3 vector3(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

MotionVector motion(const v1::MotionVector& m) {
  MotionVector out;
  out << vector3(m.translation()), vector3(m.rotation()), m.arm_angle();
  return out;
}

Vector6 wrench(const v1::Wrench& w) {
  Vector6 out;
  out << vector3(w.force()), vector3(w.torque());
  return out;
}

// The domain enums are numbered like the wire enums; anything beyond the last known value
// comes from a newer schema and is refused rather than guessed.
template <typename Domain>
Domain checked_enum(int value, int last, const char* path) {
  if (value < 0 || value > last) {
    throw ConversionError(std::string(path) + " = " + std::to_string(value) +
                          ": unknown value (this console knows 0.." + std::to_string(last) + ")");
  }
  return static_cast<Domain>(value);
}

void behaviours_to_domain(const google::protobuf::RepeatedField<int>& in,
                          std::vector<Behaviour>& out) {
  out.clear();
  out.reserve(static_cast<std::size_t>(in.size()));
  for (int b : in) out.push_back(checked_enum<Behaviour>(b, v1::Behaviour_MAX, "behaviours"));
}

}  // namespace

SiteState to_domain(v1::ExecutorState state) {
  return checked_enum<SiteState>(state, v1::ExecutorState_MAX, "state");
}
BreachCause to_domain(v1::BreachCause cause) {
  return checked_enum<BreachCause>(cause, v1::BreachCause_MAX, "breach.cause");
}
Behaviour to_domain(v1::Behaviour behaviour) {
  return checked_enum<Behaviour>(behaviour, v1::Behaviour_MAX, "behaviour");
}
v1::ExecutorState to_wire(SiteState state) { return static_cast<v1::ExecutorState>(state); }
v1::BreachCause to_wire(BreachCause cause) { return static_cast<v1::BreachCause>(cause); }
v1::Behaviour to_wire(Behaviour behaviour) { return static_cast<v1::Behaviour>(behaviour); }

Breach to_domain(const v1::Breach& breach) {
  Breach out;
  out.cause = to_domain(breach.cause());
  out.description = breach.description();
  out.value = breach.value();
  out.bound = breach.bound();
  out.time = breach.time_s();
  out.joint = breach.joint();
  // proto3 cannot tell an unset joint (0) from joint 0: only per-joint causes carry one.
  if (out.cause != BreachCause::kJointLimitMargin) out.joint = -1;
  return out;
}

TeleoperationCounters to_domain(const v1::TeleoperationCounters& counters) {
  return {counters.applied(), counters.lost(), counters.duplicates(), counters.last_sequence()};
}

LoopTiming to_domain(const v1::LoopTiming& timing) {
  return {timing.period_s(), timing.cycles(), timing.overruns(), timing.compute_s(),
          timing.wakeup_latency_s()};
}

SiteStatus to_domain(const v1::SiteStatus& status) {
  SiteStatus out;
  out.site = status.site();
  out.arm = status.arm();
  out.arm_link = status.arm_link();
  out.state = to_domain(status.state());
  out.task_id = status.task_id();
  out.task_name = status.task_name();
  out.breach = to_domain(status.breach());
  out.controller = status.controller();
  out.teleoperation = to_domain(status.teleoperation());
  out.timing = to_domain(status.timing());
  out.has_measured_joints = status.measured_joints().values_size() > 0;
  out.measured_joints = joints(status.measured_joints(), "measured_joints");
  out.last_reset = status.last_reset();
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
  out.state = to_domain(t.state());
  out.task_id = t.task_id();
  out.task_name = t.task_name();
  out.commanded_joints = joints(t.commanded_joints(), "commanded_joints");
  out.measured_joints = joints(t.measured_joints(), "measured_joints");
  out.motion_position = vector3(t.motion_position());
  out.arm_angle = t.arm_angle_rad();
  out.error = motion(t.error());
  out.velocity = motion(t.velocity());
  out.force = motion(t.force());
  out.wrench = wrench(t.wrench());
  out.wrench_error = wrench(t.wrench_error());
  out.joint_weight = t.joint_weight();
  behaviours_to_domain(t.behaviours(), out.behaviours);
  out.breach = to_domain(t.breach());
  out.timing = to_domain(t.timing());
  out.teleoperation = to_domain(t.teleoperation());
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
  out->set_cause(to_wire(breach.cause));
  out->set_description(breach.description);
  out->set_value(breach.value);
  out->set_bound(breach.bound);
  out->set_time_s(breach.time);
  out->set_joint(breach.joint);
}

void to_wire(const TeleoperationCounters& counters, v1::TeleoperationCounters* out) {
  out->set_applied(counters.applied);
  out->set_lost(counters.lost);
  out->set_duplicates(counters.duplicates);
  out->set_last_sequence(counters.last_sequence);
}

void to_wire(const LoopTiming& timing, v1::LoopTiming* out) {
  out->set_period_s(timing.period);
  out->set_cycles(timing.cycles);
  out->set_overruns(timing.overruns);
  out->set_compute_s(timing.compute_time);
  out->set_wakeup_latency_s(timing.wakeup_latency);
}

void to_wire(const SiteStatus& status, v1::SiteStatus* out) {
  out->set_site(status.site);
  out->set_arm(status.arm);
  out->set_arm_link(status.arm_link);
  out->set_state(to_wire(status.state));
  out->set_task_id(status.task_id);
  out->set_task_name(status.task_name);
  to_wire(status.breach, out->mutable_breach());
  out->set_controller(status.controller);
  to_wire(status.teleoperation, out->mutable_teleoperation());
  to_wire(status.timing, out->mutable_timing());
  if (status.has_measured_joints) {
    proto::from_joint_vector(status.measured_joints, out->mutable_measured_joints());
  }
  out->set_last_reset(status.last_reset);
}

void to_wire(const TaskSummary& summary, v1::TaskSummary* out) {
  out->set_name(summary.name);
  out->set_revision(summary.revision);
  out->set_period_s(summary.period);
  for (Behaviour b : summary.behaviours) out->add_behaviours(to_wire(b));
}

void to_wire(const TelemetrySample& sample, v1::Telemetry* out) {
  out->set_cycle(sample.cycle);
  out->set_arm_time_s(sample.arm_time);
  out->set_task_time_s(sample.task_time);
  out->set_state(to_wire(sample.state));
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
  for (Behaviour b : sample.behaviours) out->add_behaviours(to_wire(b));
  to_wire(sample.breach, out->mutable_breach());
  to_wire(sample.timing, out->mutable_timing());
  to_wire(sample.teleoperation, out->mutable_teleoperation());
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

ReflectionSample to_domain(const v1::ForceReflection& in) {
  ReflectionSample out;
  out.cycle = in.cycle();
  out.task_time = in.task_time_s();
  out.applied_sequence = in.applied_sequence();
  out.mode = proto::to_teleop_mode(in.mode(), "mode");
  out.measured = wrench(in.measured());
  out.tracking_error = wrench(in.tracking_error());
  out.state = to_domain(in.state());
  out.breach = to_domain(in.breach());
  out.teleoperation = to_domain(in.teleoperation());
  return out;
}

}  // namespace tether::local::wire

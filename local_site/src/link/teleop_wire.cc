#include "link/teleop_wire.h"

namespace tether::local::wire {

namespace {

v1::TeleopMode to_wire(TeleopMode mode) {
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

TeleopMode from_wire(v1::TeleopMode mode) {
  switch (mode) {
    case v1::TELEOP_MODE_WORLD:
      return TeleopMode::kWorld;
    case v1::TELEOP_MODE_CAMERA:
      return TeleopMode::kCamera;
    default:
      return TeleopMode::kTool;
  }
}

Vector6 from_wire(const v1::Wrench& w) {
  Vector6 out;
  out << w.force().x(), w.force().y(), w.force().z(), w.torque().x(), w.torque().y(),
      w.torque().z();
  return out;
}

}  // namespace

const char* state_name(v1::ExecutorState state) {
  switch (state) {
    case v1::EXECUTOR_STATE_IDLE:
      return "IDLE";
    case v1::EXECUTOR_STATE_RUNNING:
      return "RUNNING";
    case v1::EXECUTOR_STATE_STOPPING:
      return "STOPPING";
    case v1::EXECUTOR_STATE_STOPPED:
      return "STOPPED";
    default:
      return "UNKNOWN";
  }
}

void to_wire(const OperatorIncrement& increment, std::uint64_t sequence,
             std::int64_t ground_time_ns, v1::TeleopIncrement* out) {
  out->set_sequence(sequence);
  out->set_ground_time_ns(static_cast<std::uint64_t>(ground_time_ns));
  out->set_deadman(increment.deadman && increment.valid);
  out->set_mode(to_wire(increment.mode));
  v1::Vector3* t = out->mutable_translation_m();
  t->set_x(increment.increment[0]);
  t->set_y(increment.increment[1]);
  t->set_z(increment.increment[2]);
  v1::Vector3* r = out->mutable_rotation_rad();
  r->set_x(increment.increment[3]);
  r->set_y(increment.increment[4]);
  r->set_z(increment.increment[5]);
  out->set_arm_angle_rad(increment.arm_angle_increment);
}

ReflectionSample from_wire(const v1::ForceReflection& in) {
  ReflectionSample out;
  out.cycle = in.cycle();
  out.task_time = in.task_time_s();
  out.applied_sequence = in.applied_sequence();
  out.mode = from_wire(in.mode());
  out.measured = from_wire(in.measured());
  out.tracking_error = from_wire(in.tracking_error());
  out.state = state_name(in.state());
  if (in.breach().cause() != v1::BREACH_CAUSE_NONE) out.breach = in.breach().description();
  out.applied = in.teleoperation().applied();
  out.lost = in.teleoperation().lost();
  out.duplicates = in.teleoperation().duplicates();
  return out;
}

}  // namespace tether::local::wire

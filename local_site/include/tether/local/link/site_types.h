#pragma once

// What a remote site reports, as plain domain types: the ground station's view of
// tether.v1.RemoteSite (proto/tether/v1/remote_site.proto). Generated protobuf types are
// converted to these in one place (local_site/src/link/wire.cc, which uses tether::proto for
// the geometry and the shared enums) and never leave it.
//
// Units are SI as on the wire: metres, radians, seconds, newtons. Motion-space vectors are
// (translation, rotation vector, arm angle) in MOTION axes; wrenches (force, torque) are the
// ones the robot applies to its environment, about the MOTION origin in MOTION axes.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/common/types.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/behaviours/teleoperation/teleoperation.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

// ExecutorState, BreachCause, Behaviour and ResolverKind with their names are the
// vocabulary both sites share (tether/common/vocabulary.h). A reply that did not say which
// state the executor is in reads ExecutorState::kUnspecified.

struct Breach {
  BreachCause cause = BreachCause::kNone;
  std::string description;  // the remote site's text, with value, bound and units
  double value = 0.0;
  double bound = 0.0;
  double time = 0.0;  // [s] task time
  int joint = -1;     // -1 unless the cause is per joint
  explicit operator bool() const { return cause != BreachCause::kNone; }
  friend bool operator==(const Breach&, const Breach&) = default;
};

// The executor's own counters (teleoperation behaviour); last_ground_time_ns is not on the
// wire and reads 0 here.
using TeleoperationCounters = remote::TeleoperationCounters;

struct LoopTiming {
  double period = 0.0;  // [s]
  std::uint64_t cycles = 0;
  std::uint64_t overruns = 0;
  double compute_time = 0.0;    // [s] the reported cycle: read → command → arm advanced
  double wakeup_latency = 0.0;  // [s] that cycle's lateness against its deadline
  // When the site's loop sampled the cycle (its CLOCK_REALTIME, ns since the Unix epoch; 0:
  // the site did not say). A value's age is the reader's clock less this.
  std::int64_t sample_unix_ns = 0;
  friend bool operator==(const LoopTiming&, const LoopTiming&) = default;
};

// The last recovery motion (Recover) as the site reports it.
struct RecoveryStatus {
  std::string outcome = "none";  // "none", "moving", "done", "stopped", "refused: <why>"
  std::string motion;            // "joint 6 by +0.1 rad at 0.1 rad/s", "retreat 0.01 m ..."
  double moved = 0.0;            // [rad] or [m]
  double remaining = 0.0;        // [rad] or [m]
  double max_joint_speed = 0.0;  // the site's limits [rad/s]
  double max_tool_speed = 0.0;   // [m/s]
  friend bool operator==(const RecoveryStatus&, const RecoveryStatus&) = default;
};

struct SiteStatus {
  std::string site;      // the remote site's name
  std::string arm;       // arm model name
  std::string arm_link;  // "embedded simulation" or the driver's endpoint
  ExecutorState state = ExecutorState::kUnspecified;
  std::uint64_t task_id = 0;  // of the running (or last) task
  std::string task_name;
  Breach breach;           // latched while stopping or stopped
  std::string controller;  // operator holding the control lease; empty when free
  TeleoperationCounters teleoperation;
  LoopTiming timing;
  bool has_measured_joints = false;                   // false when the site sent none
  JointVector measured_joints = JointVector::Zero();  // [rad]
  std::string last_reset;                             // outcome of the last reset
  SceneDescription scene;  // what the arm works in (name empty: the site does not say)
  RecoveryStatus recovery;
  friend bool operator==(const SiteStatus&, const SiteStatus&) = default;
};

// A task parameter set stored on the remote site.
struct TaskSummary {
  std::string name;
  std::uint64_t revision = 0;         // increments on every replace
  double period = 0.0;                // [s] control period
  std::vector<Behaviour> behaviours;  // enabled
  friend bool operator==(const TaskSummary&, const TaskSummary&) = default;
};

struct UploadResult {
  std::string name;
  std::uint64_t revision = 0;
};

// A recovery motion (RemoteSiteClient::recover): a joint jog (joint 1-7, signed distance
// [rad]) or, with joint 0, a retreat along the breached quantity's gradient (distance > 0,
// [m] for a proximity stop, [rad] otherwise). speed 0: the site's recovery speed.
struct RecoveryMotion {
  int joint = 0;
  double distance = 0.0;
  double speed = 0.0;
};

struct ResetResult {
  bool accepted = false;
  std::string message;  // why a reset was refused
};

// The redundancy resolver of the running task in one cycle.
struct ResolverSample {
  ResolverKind kind = ResolverKind::kDls;
  std::string status = "ok";
  double achieved_fraction = 1.0;  // p: fraction of the commanded motion achieved, [0, 1]
  double warn_below = 0.5;         // the task's threshold for warning the operator about p
  double obstacle_clearance = std::numeric_limits<double>::infinity();  // [m]
  int obstacle_constraints = 0;
  friend bool operator==(const ResolverSample&, const ResolverSample&) = default;
};

// One control cycle as streamed by the remote site.
struct TelemetrySample {
  std::uint64_t cycle = 0;
  double arm_time = 0.0;   // [s] the arm's clock
  double task_time = 0.0;  // [s] since the task started
  ExecutorState state = ExecutorState::kUnspecified;
  std::uint64_t task_id = 0;
  std::string task_name;
  JointVector commanded_joints = JointVector::Zero();  // [rad]
  JointVector measured_joints = JointVector::Zero();   // [rad]
  Vector3 motion_position = Vector3::Zero();           // commanded MOTION origin in BASE [m]
  double arm_angle = 0.0;                              // commanded ψ [rad]
  MotionVector error = MotionVector::Zero();           // x_c − x_r
  MotionVector velocity = MotionVector::Zero();        // ẋ_c
  MotionVector force = MotionVector::Zero();           // ΣF of the behaviours
  Vector6 wrench = Vector6::Zero();                    // F_a [N, N·m]
  Vector6 wrench_error = Vector6::Zero();              // F_r − F_a
  double joint_weight = 0.0;                           // W_v from singularity robustness
  std::vector<Behaviour> behaviours;
  Breach breach;
  LoopTiming timing;
  TeleoperationCounters teleoperation;
  remote::ChannelEnergies channel;  // force-reflection channel energies [J]
  std::vector<double> aux;          // arm-specific observations (door angle [rad] in aux[0])
  ResolverSample resolver;
  friend bool operator==(const TelemetrySample&, const TelemetrySample&) = default;
};

}  // namespace tether::local

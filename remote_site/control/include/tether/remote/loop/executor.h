#pragma once

// The fixed-software executor of the extended-task-space patent: one control cycle turns the latest
// arm state and the current task parameter set into the next joint position command.
//
//   measured q, wrench ─┐
//   commanded q_c ──────┼─► kinematics of q_c (MOTION pose x_c, ψ, composite J in MOTION axes)
//                       ├─► every enabled behaviour ─► x_r, ẋ_r, ẍ_r  and  ΣF, reference
//                       │                              velocities, W_v
//                       ├─► impedance law (eq. 7-9 or 27-31) ─► ẋ_c[n+1]
//                       ├─► the task's resolver (DLS of eq. 13 by default, resolvers/)
//                       │     ─► q̇ (velocity/acceleration limited)
//                       ├─► q_c += q̇ Δt (inside the position limits) ─► arm servos
//                       └─► bounds on the measured state ─► controlled stop, latched
//
// A controlled stop ramps the joint velocities of the moment to zero (bounds/controlled_stop.h).
// While it ramps and while the arm holds afterwards, a stop whose cause leaves the kinematics
// and the wrench sensor trustworthy is also compliant: on top of the ramp, the task's own
// impedance law (its M and B) drives a yield Δx with no reference motion and
// ΣF = −F_a beyond a small deadband — force control with F_r = 0 — against a hold stiffness
// of at least kHoldMinStiffness and B/τ_hold. An arm stopped in contact so yields until the contact
// unloads (a contact of stiffness k_env keeps F·K_h/(K_h + k_env) of its force F), while a
// constant load it was not told about (a payload) sags it a bounded Δx = F/K_h instead of
// making it creep; the same task can then start again after a reset. Faults of the arm, its
// sensors or the numbers, and the bounds yielding could push further (joint-limit margin,
// proximity window) or that say the loop is late, stop rigidly on the joint ramp alone. The
// hold stays within the joints' velocity and acceleration limits and never moves a joint on
// into the task's joint-limit margin. (The stiffness floor is halved where the task's M and
// B cannot bear it stably, never below the task's own K.)
//
// The one rule for stops, stalls and teleoperation. Any stop — a breach, a stalled or lost
// teleoperation stream, an invalid increment, an operator STOP, a fault of the arm — latches
// (kStopping, then kStopped) until a reset, and releases the operator's enable. A stop request
// is an edge: a STOP on an arm already stopping, stopped or recovering is acknowledged and changes
// nothing, so one reset is enough whenever the breach no longer persists. Nothing queued
// before the stop is applied after it: the increments that arrive while the arm is stopped
// are taken and dropped unplayed, a task submitted before the reset never starts after it,
// and after the reset motion needs a fresh enable (a switch still held must be released and
// pressed again). A reset is refused, and says which bound, while that breach persists.
//
// Recovery. A stop whose cause motion can undo — the joint-limit margin, the proximity window,
// a singular resolver — can be left under the operator's control: request_recovery() moves
// the stopped arm (kRecovering, still latched) by the asked amount at a bounded speed
// (RecoveryLimits), only in a direction that leaves the breach: the breached joint away from
// its limit (a jog), the tool along the proximity sensor's beam back into the window, or the
// joints up the manipulability gradient (a retreat). Every other bound stays armed (force,
// torque, the proximity window, the other joints' margins) and a breached one stops the
// recovery rigidly; so does a STOP. At the end the arm is kStopped again; a reset succeeds
// once out of the breach. A recovery that would deepen the breach is refused.
//
// Threading: `cycle` and `notify_overruns` belong to the control-loop thread and never
// allocate, lock or throw. `submit`, `request_stop`, `request_reset` and the status readers
// may be called from any other thread; they reach the loop through a lock-free mailbox and
// atomics. Tasks are validated in `submit`, before anything is applied.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "tether/common/arm_angle.h"
#include "tether/common/arm_model.h"
#include "tether/common/kinematics.h"
#include "tether/common/obstacles.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/bounds/bounds_monitor.h"
#include "tether/remote/bounds/controlled_stop.h"
#include "tether/remote/impedance/impedance_law.h"
#include "tether/remote/impedance/motion_reference.h"
#include "tether/remote/loop/mailbox.h"
#include "tether/remote/resolvers/resolver_set.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

// ExecutorState and BreachCause are the shared vocabulary (tether/common/vocabulary.h). The
// executor starts in kIdle and only ever reports kIdle, kRunning, kStopping or kStopped;
// kUnspecified is for messages that did not say.

// One instance of every behaviour of the list (behaviours/list.h), each a member named by its
// field: `trajectory`, `teleoperation`, ... The executor walks the list to reset and update
// them; only teleoperation, whose samples and watchdogs the executor also reads, is named.
struct BehaviourSet {
  explicit BehaviourSet(HandControllerQueue& queue) : teleoperation(queue) {}
#define TETHER_BEHAVIOUR_INSTANCE(field, Name, ENUM, label) Name field;
  TETHER_BEHAVIOURS(TETHER_BEHAVIOUR_INSTANCE)
#undef TETHER_BEHAVIOUR_INSTANCE
};

// The last cycle, for logs, plots and force reflection. Trivially copyable.
// Recovery motion (see the header comment).
enum class RecoveryKind : std::uint8_t {
  kJointJog,  // one joint by a signed angle: only the joint in its limit margin, away from it
  kRetreat,   // along the breached quantity's gradient, by a positive amount
};
struct RecoveryRequest {
  RecoveryKind kind = RecoveryKind::kRetreat;
  int joint = -1;         // kJointJog: 0-based joint index
  double distance = 0.0;  // kJointJog: signed [rad]; kRetreat: > 0, [m] for a proximity stop
                          // (tool motion), [rad] otherwise (joint motion)
  double speed = 0.0;     // [rad/s] or [m/s]; 0 (or above the site's limit): the limit
};
// What one cycle took from outside the loop, beyond the arm's state: with the arm's
// checkpoint (arm_interface.h) at a task's start, enough to run the same cycles again
// offline and land on the same joints (replay, remote_site/tools). Filled by cycle().
struct CycleInputs {
  std::uint64_t submission = 0;           // id of the task set taken this cycle (0: none)
  bool restart = false;                   // it started afresh (false: parameters replaced in place)
  bool from_rest = false;                 // ... with no task running before (the arm not in motion)
  BreachCause stop = BreachCause::kNone;  // a stop request taken this cycle, with its cause
  bool reset = false;                     // a reset request taken
  bool recovery = false;                  // a recovery request taken: recovery_request
  RecoveryRequest recovery_request;
  int consecutive_overruns = 0;  // deadline misses in a row before this cycle
  // Teleoperation: the velocity the behaviour applied this cycle, TELEOP axes after the
  // reflection channel [m/s, rad/s, rad/s] (its force is B_t times it); the operator's
  // enabling switch; and whether the behaviour found its stream stalled. What arrived over
  // the link and when is not needed again: this is what it came to.
  MotionVector teleop_velocity = MotionVector::Zero();
  bool teleop_enabled = false;
  bool teleop_stalled = false;
  // Commanded joints before the cycle [rad]: what a restart from rest holds on to.
  JointVector prior_command = JointVector::Zero();
};

struct CycleTelemetry {
  std::uint64_t cycle = 0;
  double arm_time = 0.0;   // [s]
  double task_time = 0.0;  // [s] since the task started
  ExecutorState state = ExecutorState::kIdle;
  std::uint64_t task_id = 0;
  JointVector commanded_joints = JointVector::Zero();
  JointVector measured_joints = JointVector::Zero();
  Vector3 motion_position = Vector3::Zero();     // commanded MOTION origin, BASE [m]
  double arm_angle = 0.0;                        // commanded ψ [rad]
  MotionVector error = MotionVector::Zero();     // x_c − x_r, MOTION axes (spring-limited)
  MotionVector velocity = MotionVector::Zero();  // ẋ_c, MOTION axes
  MotionVector force = MotionVector::Zero();     // ΣF, MOTION axes
  // Compensated wrench the robot applies, MOTION origin and axes [N, N·m]; and F_r − F_a.
  Vector6 wrench = Vector6::Zero();
  Vector6 wrench_error = Vector6::Zero();
  double joint_weight = 0.0;  // W_v added by singularity robustness
  // The resolver that ran, its status and the fraction of ẋ_c it achieved (the
  // constrained-optimisation patent's p).
  ResolverKind resolver = ResolverKind::kDls;
  ResolverStatus resolver_status = ResolverStatus::kOk;
  double achieved_fraction = 1.0;
  double warn_below_p = 0.5;  // the task's threshold for warning the operator about p
  // Smallest critical distance to any obstacle [m] (+inf without obstacle avoidance), the
  // constraints the resolver enforced this cycle, and the obstacle behaviour's force.
  double obstacle_clearance = kUnbounded;
  int obstacle_constraints = 0;
  std::array<double, 4> aux{};
  BreachEvent breach;  // latched breach while stopping/stopped
  TeleoperationCounters teleoperation;
  TeleopMode teleop_mode = TeleopMode::kTool;  // of the last applied hand-controller sample
  // Rotates a MOTION-axes wrench into the hand-controller axes of teleop_mode (reflection).
  Matrix3 hand_controller_R_motion = Matrix3::Identity();
  // Teleoperation: F_a along the reflected directions, hand-controller axes [N, N·m].
  Vector6 reflected_wrench = Vector6::Zero();
  // Camera mode: the EYE frame (EYE axes in WORLD) and its stamp [ns, the setter's clock]
  // that rotated the reflection above and mapped the cycle's increments.
  Matrix3 world_R_eye = Matrix3::Identity();
  std::uint64_t eye_time_ns = 0;
  // Force reflection through the delayed channel (tether/common/teleop_channel.h): the task's
  // method and wave impedance, both ports' energies [J] and the returning wave w_s in the
  // hand-controller axes of teleop_mode.
  ReflectionMethod reflection = ReflectionMethod::kNone;
  WaveImpedance wave_impedance;
  ChannelEnergies channel;
  Vector6 return_wave = Vector6::Zero();
  std::int64_t steady_ns = 0;  // CLOCK_MONOTONIC of this cycle while running [ns]
  // When this cycle sampled the arm: CLOCK_REALTIME [ns since the Unix epoch], every cycle.
  // What a client reads a value's age from.
  std::int64_t sample_unix_ns = 0;
  // Filled by the control loop: this cycle's compute time and wake-up lateness [s], and
  // the deadline misses so far.
  double compute_time = 0.0;
  double wakeup_latency = 0.0;
  std::uint64_t overruns = 0;
  CycleInputs inputs;
  // Filled by the control loop in a cycle whose inputs.restart is set: the arm's state this
  // cycle read (arm_interface.h), from which a replay restarts the task. Size 0 otherwise.
  ArmCheckpoint checkpoint;
};

enum class ResetOutcome : std::uint8_t { kPending, kAccepted, kRefusedNotStopped, kRefusedBreach };

// The site's recovery speeds: per joint for jogs and gradient retreats, of the tool for a
// proximity retreat. Accelerations are the limit over kRecoveryRampTime.
struct RecoveryLimits {
  double joint_speed = 0.1;  // [rad/s]
  double tool_speed = 0.02;  // [m/s]
};
inline constexpr double kRecoveryRampTime = 0.2;  // [s] from rest to the recovery speed
// The most one request may move: a recovery leaves a breach; it is not a way to drive the arm.
inline constexpr double kMaxRecoveryJoint = 0.5;  // [rad]
inline constexpr double kMaxRecoveryTool = 0.1;   // [m]
enum class RecoveryOutcome : std::uint8_t {
  kNone,     // none asked for yet
  kMoving,   // kRecovering
  kDone,     // moved the whole amount; kStopped again
  kStopped,  // a bound, a fault or a STOP ended it (status().breach says which)
  kRefused,  // not started: see RecoveryRefusal
};
enum class RecoveryRefusal : std::uint8_t {
  kNone,
  kNotStopped,        // the arm is not kStopped
  kNotRecoverable,    // the latched breach is not one motion can undo
  kJointNotInMargin,  // a jog of a joint that is not in its limit margin (index: that joint)
  kDeepens,           // the jog's direction leads further into the breach
  kBadAmount,         // distance zero, not finite, of the wrong sign or above the maximum
  kNoDirection,       // the gradient vanishes here (no way out along it)
  kJogNotForCause,    // a joint jog asked for a proximity or singularity stop
};
struct RecoveryStatus {
  RecoveryOutcome outcome = RecoveryOutcome::kNone;
  RecoveryRefusal refusal = RecoveryRefusal::kNone;
  RecoveryRequest request;                  // as asked (kRefused) or as executed (speed filled in)
  BreachCause target = BreachCause::kNone;  // what it recovers from
  int joint = -1;                           // the breached joint, 0-based (joint-limit stops)
  double moved = 0.0;                       // [rad] or [m] so far
  double remaining = 0.0;                   // [rad] or [m]
  double start_value = 0.0;                 // the breached quantity when it started
  double value = 0.0;                       // and now
};

struct ExecutorStatus {
  ExecutorState state = ExecutorState::kIdle;
  std::uint64_t task_id = 0;
  BreachEvent breach;
  ResetOutcome last_reset = ResetOutcome::kPending;
  BreachEvent reset_refusal;         // the breach that still persisted
  std::uint64_t resets_handled = 0;  // reset requests answered so far
  std::uint64_t overruns = 0;
  TeleoperationCounters teleoperation;
  RecoveryStatus recovery;
  std::uint64_t recoveries_handled = 0;  // recovery requests answered so far
};

class Executor {
 public:
  // `queue` carries hand-controller samples to the teleoperation behaviour; it must outlive
  // the executor.
  Executor(const ArmModel& arm, HandControllerQueue& queue);
  // Frees the task the loop was running: the loop must have stopped (ControlLoop::stop).
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // ---- any thread ----
  // Validates against the arm and hands the task to the loop; returns its id. Throws
  // TaskValidationError listing every problem (nothing applied), or std::logic_error while
  // the executor is stopped and not reset. `restart` = false replaces the parameters of the
  // running task without restarting its clock and behaviours (the extended-task-space patent:
  // reprogrammable each sample); true (or when idle) starts it from the current pose.
  std::uint64_t submit(const TaskParameters& task, bool restart = true);
  // Controlled stop of whatever runs (latched like a breach), reported with `cause`.
  void request_stop(BreachCause cause = BreachCause::kOperatorStop) noexcept;
  // Asks the loop to clear a latched stop; see status().last_reset for the outcome.
  void request_reset() noexcept;
  // Asks the loop for a recovery motion; status().recoveries_handled counts the answer and
  // status().recovery says how it went.
  void request_recovery(const RecoveryRequest& request) noexcept;
  // Replay (remote_site/tools): set-up before the first cycle, the command a restart from
  // rest holds on to (CycleInputs::prior_command); the executor then runs on recorded inputs
  // instead of the clock and the hand-controller queue: before each cycle, replay_inputs()
  // hands it what that cycle took (stops, resets and recoveries are still requested through
  // the calls above, tasks through submit()).
  void seed_command(const JointVector& q) noexcept;
  void replay_inputs(const CycleInputs& inputs) noexcept;
  // Set-up, before the loop runs.
  void set_recovery_limits(const RecoveryLimits& limits) noexcept { recovery_limits_ = limits; }
  const RecoveryLimits& recovery_limits() const noexcept { return recovery_limits_; }
  ExecutorStatus status() const noexcept;
  CycleTelemetry telemetry() const noexcept { return telemetry_snapshot_.load(); }
  const KinematicModel& model() const { return model_; }
  // Frees retired task sets; publishing does it too. Safe from the submitting thread.
  void collect_garbage() { mailbox_.collect(); }

  // ---- control-loop thread ----
  // One cycle: consumes `arm` (with its status) and writes the next command.
  ExecutorState cycle(const ArmState& arm, ArmStatus arm_status, JointCommand& command) noexcept;
  // The loop reports consecutive deadline misses before each cycle.
  void notify_overruns(int consecutive, std::uint64_t total) noexcept;
  // Control period of the current task, or of the last one [s].
  double period() const noexcept { return period_.load(std::memory_order_relaxed); }
  const CycleTelemetry& last_cycle() const { return telemetry_; }

 private:
  struct Submission {
    TaskParameters task;
    bool restart = true;
    std::uint64_t id = 0;
  };

  void start_task(Submission* submission, const ArmState& arm) noexcept;
  void update_kinematics() noexcept;
  void process_wrench(const ArmState& arm) noexcept;
  void run_behaviours() noexcept;
  void begin_stop(const BreachEvent& event) noexcept;
  // One cycle of the compliant hold during a stop (see the header comment); falls back to
  // the rigid stop for good when the arm, its wrench or the numbers cannot be trusted.
  // Reads the measured wrench cycle() took this cycle.
  void comply(const ArmState& arm, ArmStatus arm_status, double dt) noexcept;
  // Places the task's obstacles in BASE (once per task), then update_obstacles().
  void load_obstacles() noexcept;
  // This cycle's critical points at the commanded joints.
  void update_obstacles() noexcept;
  void prepare_resolver_input(const JointVector& joint_weights, const MotionVector& xd) noexcept;
  // Answers a pending reset; the bounds check reads the measured pose and wrench cycle()
  // took this cycle.
  void handle_reset(const ArmState& arm) noexcept;
  void publish_status() noexcept;
  // Recovery: answers a pending request while stopped, and one cycle of the motion.
  void handle_recovery(const ArmState& arm) noexcept;
  void recover(const ArmState& arm, double dt) noexcept;
  // The breached quantity the recovery leaves (joint room [rad], proximity distance [m],
  // manipulability) and the unit joint direction that leaves it; false: no direction.
  bool recovery_direction(const ArmState& arm, JointVector& direction, double& value) noexcept;
  BoundsInput bounds_input(const ArmState& arm) noexcept;

  KinematicModel model_;
  JointVector lower_, upper_, velocity_limit_, acceleration_limit_;

  Mailbox<Submission> mailbox_;
  Submission* current_ = nullptr;
  std::atomic<std::uint64_t> next_id_{1};
  std::uint64_t reset_watermark_ = 0;

  BehaviourSet behaviours_;
  // MOTION pose and ψ at the task start: the reference while no trajectory behaviour runs.
  Frame start_pose_;
  double start_arm_angle_ = 0.0;

  // Resolvers, one of each; the task picks one.
  ResolverSet resolvers_;
  Resolver* resolver_ = nullptr;
  ResolverInput resolver_input_;
  ResolverResult resolver_result_;
  // Obstacles in BASE and this cycle's critical points (the spheres-of-influence patent).
  std::array<SphereObstacle, kMaxObstacles> obstacles_base_{};
  std::size_t obstacle_count_ = 0;
  std::array<CriticalPoint, kMaxCriticalPoints> critical_{};
  std::size_t critical_count_ = 0;

  // Cycle state, preallocated.
  ArmAngleModel arm_angle_model_;
  KinematicState commanded_state_;
  KinematicState measured_state_;
  CompositeJacobian jacobian_ = CompositeJacobian::Zero();
  ArmAngle arm_angle_;
  Frame motion_pose_;
  BehaviourContext context_;
  BehaviourOutput output_;
  ImpedanceState impedance_;
  // Velocity inputs integrated into an offset of x_r (digest, eq. 3-6): BASE translation,
  // BASE rotation applied on the left, arm angle.
  Vector3 offset_position_ = Vector3::Zero();
  Matrix3 offset_rotation_ = Matrix3::Identity();
  double offset_arm_angle_ = 0.0;
  Vector6 wrench_filtered_ = Vector6::Zero();
  Vector6 wrench_bias_ = Vector6::Zero();
  bool wrench_initialised_ = false;
  JointVector q_command_ = JointVector::Zero();
  JointVector qd_command_ = JointVector::Zero();
  bool have_command_ = false;
  double task_time_ = 0.0;          // [s] since the task started
  double behaviour_time_ = 0.0;     // [s] the behaviours' time: paused while the task holds all
  MotionReference held_reference_;  // the last reference the behaviours made
  ControlledStop stop_;
  bool compliant_stop_ = false;
  MotionVector hold_yield_ = MotionVector::Zero();  // Δx the hold has yielded, MOTION axes
  ImpedanceState hold_impedance_;
  JointVector hold_qd_ = JointVector::Zero();  // the hold's last joint velocity
  ImpedanceParameters hold_parameters_;  // the task's M, B; K at least kHoldMinStiffness, B/τ_hold
  ExecutorState state_ = ExecutorState::kIdle;
  BreachEvent breach_;
  int consecutive_overruns_ = 0;
  std::uint64_t total_overruns_ = 0;
  std::uint64_t cycles_ = 0;
  CycleTelemetry telemetry_;

  // Cross-thread.
  std::atomic<double> period_{0.001};
  std::atomic<bool> stop_requested_{false};
  std::atomic<BreachCause> stop_cause_{BreachCause::kOperatorStop};
  std::atomic<bool> reset_requested_{false};
  std::atomic<ExecutorState> published_state_{ExecutorState::kIdle};
  SeqLock<ExecutorStatus> status_snapshot_;
  SeqLock<CycleTelemetry> telemetry_snapshot_;
  std::atomic<bool> recovery_requested_{false};
  SeqLock<RecoveryRequest> recovery_request_;
  RecoveryLimits recovery_limits_;
  RecoveryStatus recovery_;
  std::uint64_t recoveries_handled_ = 0;
  // This cycle's inputs (telemetry_.inputs) and, replaying, the recorded ones.
  CycleInputs inputs_;
  bool replaying_ = false;
  CycleInputs replayed_;
  double recovery_speed_ = 0.0;  // the profile's speed this cycle [rad/s] or [m/s]
  ResetOutcome last_reset_ = ResetOutcome::kPending;
  std::uint64_t resets_handled_ = 0;
  BreachEvent reset_refusal_;
};

}  // namespace tether::remote

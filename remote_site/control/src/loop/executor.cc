#include "tether/remote/loop/executor.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "tether/common/dls.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"
#include "tether/remote/resolvers/configuration_control/kinematic_functions.h"
#include "tether/remote/task/validation.h"

namespace tether::remote {

namespace {

// This cycle's CLOCK_MONOTONIC [ns], the clock the teleoperation stream's arrivals are
// stamped with (a vDSO read: no system call, no allocation).
std::int64_t steady_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// This cycle's CLOCK_REALTIME [ns since the Unix epoch]: a sample's time as another machine
// can read it (also a vDSO read).
std::int64_t unix_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

constexpr double kGravity = 9.81;  // [m/s²], along −z of BASE

}  // namespace

Executor::Executor(const ArmModel& arm, HandControllerQueue& queue)
    : model_(arm), behaviours_(queue), resolvers_(model_), commanded_state_(), measured_state_() {
  lower_ = model_.lower_limits();
  upper_ = model_.upper_limits();
  velocity_limit_ = model_.velocity_limits();
  acceleration_limit_ = model_.acceleration_limits();
  context_.model = &model_;
  context_.joints = &q_command_;
  context_.kinematics = &commanded_state_;
  context_.jacobian = &jacobian_;
  resolver_input_.model = &model_;
  resolver_input_.state = &commanded_state_;
  resolver_input_.jacobian = &jacobian_;
  resolver_ = &resolvers_.select(ResolverKind::kDls);
  status_snapshot_.store(ExecutorStatus{});
}

// The running submission belongs to the loop, which takes it from the mailbox and retires
// it to the mailbox when a newer one replaces it; the last one is freed here.
Executor::~Executor() { delete current_; }

std::uint64_t Executor::submit(const TaskParameters& task, bool restart) {
  require_valid_task(task, model_);
  const ExecutorState state = published_state_.load(std::memory_order_acquire);
  if (state == ExecutorState::kStopping || state == ExecutorState::kStopped) {
    const ExecutorStatus s = status();
    throw std::logic_error("task '" + task.name + "' refused: the executor is " + to_string(state) +
                           " after " + describe(s.breach) + "; reset it first");
  }
  auto submission = std::make_unique<Submission>();
  submission->task = task;
  submission->restart = restart;
  submission->id = next_id_.fetch_add(1);
  const std::uint64_t id = submission->id;
  mailbox_.publish(std::move(submission));
  return id;
}

void Executor::request_stop(BreachCause cause) noexcept {
  stop_cause_.store(cause, std::memory_order_release);
  stop_requested_.store(true, std::memory_order_release);
}

void Executor::request_reset() noexcept { reset_requested_.store(true, std::memory_order_release); }

void Executor::request_recovery(const RecoveryRequest& request) noexcept {
  recovery_request_.store(request);
  recovery_requested_.store(true, std::memory_order_release);
}

ExecutorStatus Executor::status() const noexcept { return status_snapshot_.load(); }

void Executor::seed_command(const JointVector& q) noexcept {
  q_command_ = q;
  qd_command_.setZero();
  have_command_ = true;
}

void Executor::replay_inputs(const CycleInputs& inputs) noexcept {
  replaying_ = true;
  replayed_ = inputs;
  consecutive_overruns_ = inputs.consecutive_overruns;
  behaviours_.teleoperation.replay(inputs.teleop_velocity, inputs.teleop_enabled);
}

void Executor::notify_overruns(int consecutive, std::uint64_t total) noexcept {
  consecutive_overruns_ = consecutive;
  total_overruns_ = total;
}

void Executor::update_kinematics() noexcept {
  const TaskParameters& task = current_->task;
  forward_kinematics(model_, q_command_, commanded_state_);
  composite_jacobian(model_, commanded_state_, arm_angle_model_, task.tool_T_motion, jacobian_,
                     arm_angle_);
  motion_pose_ = motion_frame_pose(commanded_state_, task.tool_T_motion);
  express_in_frame(motion_pose_.R, jacobian_);
  context_.motion_pose = motion_pose_;
  context_.arm_angle = arm_angle_.psi;
  context_.tool_T_motion = task.tool_T_motion;
  context_.world_T_base = task.world_T_base;
}

void Executor::process_wrench(const ArmState& arm) noexcept {
  const TaskParameters& task = current_->task;
  const WrenchSensorParameters& sensor = task.wrench_sensor;
  // The arm reports the tool's weight as part of what the robot applies; remove it with the
  // tool's orientation from the measured joints.
  const Vector3 gravity_tool = measured_state_.tool.R.transpose() * Vector3(0, 0, -kGravity);
  Vector6 wrench = arm.wrench_valid ? arm.wrench : Vector6::Zero();
  const Vector3 weight = sensor.tool_mass * gravity_tool;
  wrench.head<3>() += weight;
  wrench.tail<3>() += sensor.tool_center_of_mass.cross(weight);
  wrench -= wrench_bias_;
  const double dt = task.period;
  if (sensor.filter_cutoff > 0.0 && wrench_initialised_) {
    const double alpha = dt / (dt + 1.0 / (2.0 * M_PI * sensor.filter_cutoff));
    wrench_filtered_ += alpha * (wrench - wrench_filtered_);
  } else {
    wrench_filtered_ = wrench;
  }
  wrench_initialised_ = true;
  context_.measured_wrench = transform_wrench(task.tool_T_motion.inverse(), wrench_filtered_);
}

void Executor::start_task(Submission* submission, const ArmState& arm) noexcept {
  Submission* previous = current_;
  const bool restart =
      submission->restart || state_ != ExecutorState::kRunning || previous == nullptr;
  inputs_.submission = submission->id;
  inputs_.restart = restart;
  inputs_.from_rest = state_ != ExecutorState::kRunning;
  const Frame previous_tool_T_motion =
      previous != nullptr ? previous->task.tool_T_motion : Frame::Identity();
  current_ = submission;
  mailbox_.retire(previous);
  const TaskParameters& task = current_->task;
  period_.store(task.period, std::memory_order_relaxed);
  arm_angle_model_ = ArmAngleModel(task.arm_angle_reference);
  update_kinematics();
  if (!restart) {
    // A replaced set may name another resolver; it starts from the running state.
    load_obstacles();
    Resolver& chosen = resolvers_.select(task.resolver.kind);
    if (&chosen != resolver_) {
      resolver_ = &chosen;
      prepare_resolver_input(task.resolver.joint_weights, impedance_.velocity);
      resolver_->reset(task, resolver_input_);
    }
    return;
  }

  // Keep the commanded velocity continuous across a task change on the moving arm.
  if (state_ == ExecutorState::kRunning) {
    const Frame new_T_old = task.tool_T_motion.inverse() * previous_tool_T_motion;
    impedance_.velocity.head<6>() =
        transform_twist(new_T_old, Vector6(impedance_.velocity.head<6>()));
  } else {
    impedance_.velocity.setZero();
  }
  impedance_.perturbation.setZero();
  task_time_ = 0.0;
  behaviour_time_ = 0.0;
  offset_position_.setZero();
  offset_rotation_.setIdentity();
  offset_arm_angle_ = 0.0;
  context_.time = 0.0;
  context_.elapsed = 0.0;
  context_.steady_ns = steady_now_ns();
  context_.dt = task.period;
  context_.arm = &arm;

  wrench_bias_.setZero();
  wrench_initialised_ = false;
  forward_kinematics(model_, arm.position, measured_state_);
  process_wrench(arm);
  if (task.wrench_sensor.zero_on_start) {
    wrench_bias_ = wrench_filtered_;
    wrench_filtered_.setZero();
    context_.measured_wrench.setZero();
  }

  start_pose_ = motion_pose_;
  start_arm_angle_ = arm_angle_.psi;
#define TETHER_RESET_BEHAVIOUR(field, Name, ENUM, label) \
  behaviours_.field.reset(task.field, context_);
  TETHER_BEHAVIOURS(TETHER_RESET_BEHAVIOUR)
#undef TETHER_RESET_BEHAVIOUR
  load_obstacles();
  resolver_ = &resolvers_.select(task.resolver.kind);
  prepare_resolver_input(task.resolver.joint_weights, MotionVector::Zero());
  resolver_->reset(task, resolver_input_);
  breach_ = BreachEvent{};
  state_ = ExecutorState::kRunning;
}

void Executor::run_behaviours() noexcept {
  const TaskParameters& task = current_->task;
  output_.clear();
  const TeleoperationParameters& teleop = task.teleoperation;
  if (teleop.enabled && teleop.hold_all_when_disabled) {
    behaviours_.teleoperation.receive(teleop, context_);
    if (!behaviours_.teleoperation.operator_enabled()) {
      behaviours_.teleoperation.reflect(teleop, context_.measured_wrench);
      // Everything holds: the last reference stays, at rest, and the task's time pauses so
      // a trajectory resumes where it was.
      output_.reference = held_reference_;
      output_.reference.velocity.setZero();
      output_.reference.acceleration.setZero();
      return;
    }
  }
  // The reference is for the next sample, n+1 (eq. 7); a trajectory behaviour replaces the
  // held start pose.
  hold_reference(start_pose_, start_arm_angle_, output_.reference);
#define TETHER_UPDATE_BEHAVIOUR(field, Name, ENUM, label) \
  if (task.field.enabled) behaviours_.field.update(task.field, context_, output_);
  TETHER_BEHAVIOURS(TETHER_UPDATE_BEHAVIOUR)
#undef TETHER_UPDATE_BEHAVIOUR
  held_reference_ = output_.reference;
  behaviour_time_ += task.period;
}

void Executor::load_obstacles() noexcept {
  const TaskParameters& task = current_->task;
  const ObstacleAvoidanceParameters& o = task.obstacle_avoidance;
  obstacle_count_ = o.enabled ? std::min(o.obstacles.size(), kMaxObstacles) : 0;
  const Frame base_T_world = task.world_T_base.inverse();
  for (std::size_t k = 0; k < obstacle_count_; ++k) {
    obstacles_base_[k].centre = base_T_world * o.obstacles[k].centre;
    obstacles_base_[k].radius = o.obstacles[k].radius;
    obstacles_base_[k].influence = o.obstacles[k].influence;
  }
  update_obstacles();
}

void Executor::update_obstacles() noexcept {
  critical_count_ =
      obstacle_count_ == 0
          ? 0
          : critical_points(
                commanded_state_, current_->task.obstacle_avoidance.link_radius,
                std::span<const SphereObstacle>(obstacles_base_.data(), obstacle_count_),
                critical_);
  context_.critical_points = std::span<const CriticalPoint>(critical_.data(), critical_count_);
}

void Executor::prepare_resolver_input(const JointVector& joint_weights,
                                      const MotionVector& xd) noexcept {
  const TaskParameters& task = current_->task;
  const ObstacleAvoidanceParameters& o = task.obstacle_avoidance;
  ResolverInput& in = resolver_input_;
  in.motion_pose = motion_pose_;
  in.tool_T_motion = task.tool_T_motion;
  in.arm_angle = arm_angle_.psi;
  in.q = q_command_;
  in.qd_previous = qd_command_;
  in.xd = xd;
  in.joint_weights = joint_weights;
  in.time = task_time_;
  in.dt = task.period;
  const bool constrain = o.enabled && o.constrain_resolver;
  in.critical_points = constrain ? std::span<const CriticalPoint>(critical_.data(), critical_count_)
                                 : std::span<const CriticalPoint>();
  in.obstacles = constrain
                     ? std::span<const SphereObstacle>(obstacles_base_.data(), obstacle_count_)
                     : std::span<const SphereObstacle>();
  in.link_radius = o.link_radius;
  in.obstacle_recovery = o.recovery;
}

namespace {

// Stop causes after which the kinematics, the wrench and the numbers are still trusted and
// yielding cannot make the cause worse, so the stop may yield to contact (the executor
// header). The rest stop rigidly: faults of the arm, its sensors or the numbers, and the
// bounds that yielding could push further (joint-limit margin, proximity window) or that
// say the loop itself is late.
bool allows_compliant_stop(BreachCause cause) noexcept {
  switch (cause) {
    case BreachCause::kOperatorStop:
    case BreachCause::kForce:
    case BreachCause::kTorque:
    case BreachCause::kTranslationDeviation:
    case BreachCause::kRotationDeviation:
    case BreachCause::kArmAngleDeviation:
    case BreachCause::kTeleoperationStalled:
    case BreachCause::kDeadmanReleased:
    case BreachCause::kGroundLinkLost:
    case BreachCause::kVisualTargetLost:
    case BreachCause::kInvalidIncrement:
      return true;
    default:
      return false;
  }
}

// A wrench below these is not yielded to while holding: the residue of tool-weight
// compensation and sensor offsets would otherwise make a stopped arm creep.
constexpr double kHoldForceDeadband = 2.0;   // [N]
constexpr double kHoldTorqueDeadband = 0.2;  // [N·m]
// Fastest the hold yields, per joint [rad/s]; a contact that pushes harder is followed no
// faster than this (a stopped arm must not be thrown about by its environment).
constexpr double kHoldMaxJointSpeed = 0.25;
// Added to the resolver's joint weights so the hold's DLS stays bounded at a singularity.
constexpr double kHoldJointDamping = 1e-3;
// Least stiffness of the hold per MOTION row (translation [N/m], rotation [N·m/rad], arm
// angle [N·m/rad]); the task's own K where it is stiffer. 9.81 N of unexpected payload sags
// the held tool by 10 mm; a contact 10× stiffer keeps a tenth of its force.
// ...and at least B/τ_hold, so each row of the hold settles within a few τ_hold [s].
constexpr double kHoldTimeConstant = 0.25;
constexpr std::array<double, kMotionDim> kHoldMinStiffness = {1000.0, 1000.0, 1000.0, 100.0,
                                                              100.0,  100.0,  10.0};

Vector3 beyond_deadband(const Vector3& v, double deadband) noexcept {
  const double norm = v.norm();
  return norm > deadband ? Vector3(v * (1.0 - deadband / norm)) : Vector3::Zero();
}

}  // namespace

void Executor::begin_stop(const BreachEvent& event) noexcept {
  if (state_ == ExecutorState::kRecovering) recovery_.outcome = RecoveryOutcome::kStopped;
  // The stop rule: the operator's enable is released and nothing waiting is played.
  behaviours_.teleoperation.release_on_stop();
  breach_ = event;
  breach_.time = task_time_;
  const double stop_time = current_ != nullptr ? current_->task.bounds.stop_time : 0.2;
  stop_.start(q_command_, qd_command_, stop_time);
  // Compliant only from a running task: its kinematics of this cycle are the hold's start.
  compliant_stop_ = state_ == ExecutorState::kRunning && current_ != nullptr &&
                    allows_compliant_stop(event.cause) && motion_pose_.p.allFinite();
  if (compliant_stop_) {
    hold_yield_.setZero();
    hold_impedance_ = ImpedanceState{};
    hold_parameters_ = current_->task.impedance;
    const ImpedanceParameters& task_law = current_->task.impedance;
    for (int i = 0; i < kMotionDim; ++i) {
      // The floor, halved until the discretised law is stable with it (a task with a tiny
      // mass or damping may not bear the full floor); never below the task's own K, which
      // validation found stable.
      double k = std::max({kHoldMinStiffness[static_cast<std::size_t>(i)],
                           task_law.damping[i] / kHoldTimeConstant});
      for (int halving = 0; halving < 40 && k > task_law.stiffness[i]; ++halving) {
        if (impedance_spectral_radius(task_law.formulation, period(), task_law.mass[i],
                                      task_law.damping[i], k) < 1.0) {
          break;
        }
        k *= 0.5;
      }
      hold_parameters_.stiffness[i] = std::max(k, task_law.stiffness[i]);
    }
    hold_qd_.setZero();
  }
  state_ = ExecutorState::kStopping;
}

void Executor::comply(const ArmState& arm, ArmStatus arm_status, double dt) noexcept {
  if (arm_status != ArmStatus::kOk || !arm.wrench_valid || !arm.position.allFinite()) {
    compliant_stop_ = false;
    return;
  }
  const TaskParameters& task = current_->task;
  update_kinematics();
  const Vector6& F_a = context_.measured_wrench;  // measured this cycle by cycle()
  ImpedanceInput input;
  input.error = hold_yield_;
  input.force.head<3>() = -beyond_deadband(F_a.head<3>(), kHoldForceDeadband);
  input.force.segment<3>(3) = -beyond_deadband(F_a.tail<3>(), kHoldTorqueDeadband);
  const MotionVector& xd = impedance_update(hold_parameters_, dt, input, hold_impedance_);
  JointVector weights = task.resolver.joint_weights;
  weights.array() += kHoldJointDamping;
  JointVector qd;
  if (weighted_dls<kMotionDim>(jacobian_, task.resolver.task_weights, weights, xd, qd) !=
          DlsStatus::kOk ||
      !qd.allFinite()) {
    compliant_stop_ = false;
    return;
  }
  // Limits, each by scaling the whole vector as the running law does: the hold's own speed
  // cap, its change per cycle within the joints' acceleration limits, and the total with
  // the ramp's velocity within the joints' velocity limits.
  const double scale = qd.cwiseAbs().maxCoeff() / kHoldMaxJointSpeed;
  if (scale > 1.0) qd /= scale;
  const JointVector change = qd - hold_qd_;
  const double change_scale = change.cwiseAbs().cwiseQuotient(acceleration_limit_ * dt).maxCoeff();
  if (change_scale > 1.0) qd = hold_qd_ + change / change_scale;
  for (int i = 0; i < kArmDof; ++i) {
    const double room = velocity_limit_[i] - std::abs(qd_command_[i]);
    if (room <= 0.0) {
      qd.setZero();
      break;
    }
    if (std::abs(qd[i]) > room) qd *= room / std::abs(qd[i]);
  }
  hold_qd_ = qd;
  // Never past the task's joint-limit margin: a joint already inside it does not move on
  // towards its limit.
  const JointVector& margin = task.bounds.joint_limit_margin;
  const JointVector low = (lower_ + margin).cwiseMin(q_command_);
  const JointVector high = (upper_ - margin).cwiseMax(q_command_);
  const JointVector q_next =
      (q_command_ + qd * dt).cwiseMax(low).cwiseMin(high).cwiseMax(lower_).cwiseMin(upper_);
  const JointVector step = q_next - q_command_;
  stop_.shift(step);
  q_command_ = q_next;
  qd_command_ += step / dt;
  // The hold's state follows what was achieved, as in the running law.
  const MotionVector achieved = jacobian_ * step;
  hold_yield_ += achieved;
  hold_impedance_.velocity = achieved / dt;
  if (hold_parameters_.formulation == Formulation::kVelocity) {
    hold_impedance_.perturbation = hold_impedance_.velocity;
  }
}

BoundsInput Executor::bounds_input(const ArmState& arm) noexcept {
  BoundsInput in;
  in.time = task_time_;
  in.wrench = context_.measured_wrench;
  in.proximity = &arm.proximity;
  in.measured_joints = &arm.position;
  in.lower = &lower_;
  in.upper = &upper_;
  return in;
}

void Executor::handle_reset(const ArmState& arm) noexcept {
  if (!reset_requested_.exchange(false, std::memory_order_acq_rel)) return;
  inputs_.reset = true;
  ++resets_handled_;
  if (state_ != ExecutorState::kStopped) {
    last_reset_ = ResetOutcome::kRefusedNotStopped;
    return;
  }
  if (current_ != nullptr) {
    // The measured pose and wrench are this cycle's (cycle() measures while stopped).
    const BreachEvent persisting =
        check_persistent_bounds(current_->task.bounds, bounds_input(arm));
    if (persisting) {
      last_reset_ = ResetOutcome::kRefusedBreach;
      reset_refusal_ = persisting;
      return;
    }
  }
  // A task submitted before the stop must not start by surprise after the reset, and a
  // switch held through the stop does not move the arm after it.
  reset_watermark_ = next_id_.load(std::memory_order_acquire);
  behaviours_.teleoperation.rearm_after_reset();
  last_reset_ = ResetOutcome::kAccepted;
  reset_refusal_ = BreachEvent{};
  breach_ = BreachEvent{};
  qd_command_.setZero();
  compliant_stop_ = false;
  state_ = ExecutorState::kIdle;
}

ExecutorState Executor::cycle(const ArmState& arm, ArmStatus arm_status,
                              JointCommand& command) noexcept {
  ++cycles_;
  if (!have_command_) {
    if (arm_status != ArmStatus::kOk || !arm.position.allFinite()) {
      command.position = arm.position;
      command.velocity.setZero();
      return state_;
    }
    q_command_ = arm.position.cwiseMax(lower_).cwiseMin(upper_);
    qd_command_.setZero();
    have_command_ = true;
  }
  inputs_.submission = 0;
  inputs_.restart = false;
  inputs_.from_rest = false;
  inputs_.stop = BreachCause::kNone;
  inputs_.reset = false;
  inputs_.recovery = false;
  inputs_.consecutive_overruns = consecutive_overruns_;
  inputs_.teleop_velocity.setZero();
  inputs_.teleop_enabled = false;
  inputs_.teleop_stalled = false;
  inputs_.prior_command = q_command_;
  // A stop request is an edge, taken in whatever state it finds: on an arm already stopping
  // or stopped it changes nothing (and cannot fire later, after a reset).
  const bool stop_asked = stop_requested_.exchange(false, std::memory_order_acq_rel);
  const bool active = state_ == ExecutorState::kRunning || state_ == ExecutorState::kIdle ||
                      state_ == ExecutorState::kRecovering;
  if (stop_asked) inputs_.stop = stop_cause_.load(std::memory_order_acquire);
  if (active && stop_asked) {
    begin_stop(BreachEvent{stop_cause_.load(std::memory_order_acquire), 0.0, 0.0, task_time_, -1});
  } else if (active && arm_status != ArmStatus::kOk) {
    begin_stop(BreachEvent{BreachCause::kArmFault, static_cast<double>(arm_status), 0.0, 0.0, -1});
  }
  if (state_ == ExecutorState::kRunning || state_ == ExecutorState::kIdle) {
    if (Submission* s = mailbox_.take()) {
      if (s->id < reset_watermark_) {
        mailbox_.retire(s);
      } else {
        start_task(s, arm);
      }
    }
  }

  const double dt = period();
  // The measured pose and wrench, once a cycle: the running law, the compliant hold and the
  // reset's bounds check all read them (and the wrench filter must advance once a cycle).
  bool measured = false;
  if (state_ == ExecutorState::kRunning) {
    const TaskParameters& task = current_->task;
    context_.time = behaviour_time_;
    context_.elapsed = task_time_;
    context_.steady_ns = steady_now_ns();
    context_.dt = task.period;
    context_.arm = &arm;
    update_kinematics();
    update_obstacles();
    forward_kinematics(model_, arm.position, measured_state_);
    process_wrench(arm);
    measured = true;
    run_behaviours();
    // What teleoperation applied, even in a cycle a breach then ends: its command is where
    // the stop starts from.
    if (task.teleoperation.enabled) {
      inputs_.teleop_velocity = behaviours_.teleoperation.teleop_velocity();
      inputs_.teleop_enabled = behaviours_.teleoperation.operator_enabled();
    }

    // Velocity inputs move the reference (eq. 6) and are integrated into its offset, so
    // the stiffness term does not pull them back.
    const Matrix3& Rc = motion_pose_.R;
    offset_position_ += Rc * output_.velocity.head<3>() * task.period;
    offset_rotation_ =
        so3_exp(Rc * output_.velocity.segment<3>(3) * task.period) * offset_rotation_;
    offset_arm_angle_ += output_.velocity[6] * task.period;
    const Matrix3 Rr = output_.reference.pose.R;
    output_.reference.pose.p += offset_position_;
    output_.reference.pose.R = offset_rotation_ * Rr;
    output_.reference.arm_angle = wrap_angle(output_.reference.arm_angle + offset_arm_angle_);
    const Matrix3 c_R_r = Rc.transpose() * output_.reference.pose.R;
    ImpedanceInput input;
    input.reference_velocity.head<3>() = c_R_r * output_.reference.velocity.head<3>();
    input.reference_velocity.segment<3>(3) = c_R_r * output_.reference.velocity.segment<3>(3);
    input.reference_velocity[6] = output_.reference.velocity[6];
    input.reference_velocity += output_.velocity;
    input.reference_acceleration.head<3>() = c_R_r * output_.reference.acceleration.head<3>();
    input.reference_acceleration.segment<3>(3) =
        c_R_r * output_.reference.acceleration.segment<3>(3);
    input.reference_acceleration[6] = output_.reference.acceleration[6];
    input.error = motion_error(motion_pose_, arm_angle_.psi, output_.reference);
    input.force = output_.force;
    telemetry_.error = input.error;
    const MotionVector& xd = impedance_update(task.impedance, task.period, input, impedance_);

    JointVector joint_weights = task.resolver.joint_weights;
    joint_weights.array() += output_.joint_weight;
    prepare_resolver_input(joint_weights, xd);
    resolver_->resolve(task, resolver_input_, resolver_result_);
    JointVector qd = resolver_result_.qd;
    const ResolverStatus resolved = resolver_result_.status;

    // Joint velocity and acceleration limits, each by scaling the whole vector (of q̇, then
    // of its change) so the motion-space direction is kept: clamping joints one by one
    // would bend the path and, on an oscillating command, rectify it into a drift.
    const double scale = (qd.cwiseAbs().cwiseQuotient(velocity_limit_)).maxCoeff();
    if (scale > 1.0) qd /= scale;
    const JointVector change = qd - qd_command_;
    const double change_scale =
        (change.cwiseAbs().cwiseQuotient(acceleration_limit_ * task.period)).maxCoeff();
    if (change_scale > 1.0) qd = qd_command_ + change / change_scale;
    const JointVector q_next = (q_command_ + qd * task.period).cwiseMax(lower_).cwiseMin(upper_);
    qd_command_ = (q_next - q_command_) / task.period;
    q_command_ = q_next;
    // The impedance state follows what was achieved, so limits and damping never wind it up.
    impedance_.velocity = jacobian_ * qd_command_;
    if (task.impedance.formulation == Formulation::kVelocity) {
      impedance_.perturbation = impedance_.velocity - input.reference_velocity;
    }

    Frame actual = motion_frame_pose(measured_state_, task.tool_T_motion);
    BoundsInput bounds = bounds_input(arm);
    bounds.actual_pose = actual;
    bounds.reference_pose = output_.reference.pose;
    bounds.reference_arm_angle = output_.reference.arm_angle;
    bounds.arm_angle_valid =
        arm_angle_model_.angle(measured_state_, bounds.actual_arm_angle) == ArmAngleStatus::kOk;
    BreachEvent event;
    if (!q_command_.allFinite() || !xd.allFinite() || !context_.measured_wrench.allFinite() ||
        resolved == ResolverStatus::kNonFiniteInput) {
      event = BreachEvent{BreachCause::kNonFinite, 0.0, 0.0, task_time_, -1};
    } else if (resolved == ResolverStatus::kSingular) {
      event = BreachEvent{BreachCause::kResolverSingular, 0.0, 0.0, task_time_, -1};
    } else if (consecutive_overruns_ > task.bounds.max_consecutive_overruns) {
      event =
          BreachEvent{BreachCause::kLoopOverrun, static_cast<double>(consecutive_overruns_),
                      static_cast<double>(task.bounds.max_consecutive_overruns), task_time_, -1};
    } else if (task.teleoperation.enabled &&
               (replaying_ ? replayed_.teleop_stalled
                           : behaviours_.teleoperation.stalled(task.teleoperation, task_time_))) {
      inputs_.teleop_stalled = true;
      event =
          BreachEvent{BreachCause::kTeleoperationStalled,
                      task_time_ - behaviours_.teleoperation.last_sample_time(),
                      behaviours_.teleoperation.stall_bound(task.teleoperation), task_time_, -1};
    } else if (task.visual_tracking.enabled &&
               behaviours_.visual_tracking.lost(task.visual_tracking, task_time_)) {
      event = BreachEvent{BreachCause::kVisualTargetLost,
                          task_time_ - behaviours_.visual_tracking.last_seen(),
                          task.visual_tracking.lost_timeout, task_time_, -1};
    } else if (!arm.wrench_valid &&
               (task.force_control.enabled || std::isfinite(task.bounds.max_force) ||
                std::isfinite(task.bounds.max_torque))) {
      event = BreachEvent{BreachCause::kArmFault, 0.0, 0.0, task_time_, -1};
    } else {
      event = check_bounds(task.bounds, bounds);
    }
    task_time_ += task.period;
    if (event) {
      // The command computed this cycle is discarded: stop from the last safe one.
      begin_stop(event);
    }
  }

  if (state_ == ExecutorState::kStopping) {
    stop_.step(dt, q_command_, qd_command_);
    if (!q_command_.allFinite()) q_command_ = arm.position;
    q_command_ = q_command_.cwiseMax(lower_).cwiseMin(upper_);
    if (stop_.at_rest()) state_ = ExecutorState::kStopped;
  } else if (state_ != ExecutorState::kRunning && state_ != ExecutorState::kRecovering) {
    qd_command_.setZero();
  }
  const bool stopped = state_ == ExecutorState::kStopping || state_ == ExecutorState::kStopped ||
                       state_ == ExecutorState::kRecovering;
  if (stopped && current_ != nullptr && !measured) {
    forward_kinematics(model_, arm.position, measured_state_);
    process_wrench(arm);
  }
  // Increments that arrive while the arm is stopped are taken and dropped, never played later.
  if (stopped) behaviours_.teleoperation.drain_stopped();
  if (state_ == ExecutorState::kRecovering) recover(arm, dt);
  if (stopped && current_ != nullptr && current_->task.teleoperation.enabled) {
    behaviours_.teleoperation.reflect(current_->task.teleoperation, context_.measured_wrench);
  }
  if (stopped && compliant_stop_) comply(arm, arm_status, dt);
  if (state_ == ExecutorState::kStopped || state_ == ExecutorState::kStopping) {
    handle_reset(arm);
  } else if (reset_requested_.exchange(false, std::memory_order_acq_rel)) {
    inputs_.reset = true;
    ++resets_handled_;
    last_reset_ = ResetOutcome::kRefusedNotStopped;
  }
  handle_recovery(arm);

  command.position = q_command_;
  command.velocity = qd_command_;

  telemetry_.cycle = cycles_;
  telemetry_.arm_time = arm.time;
  telemetry_.task_time = task_time_;
  telemetry_.state = state_;
  telemetry_.task_id = current_ != nullptr ? current_->id : 0;
  telemetry_.commanded_joints = q_command_;
  telemetry_.measured_joints = arm.position;
  telemetry_.motion_position = motion_pose_.p;
  telemetry_.arm_angle = arm_angle_.psi;
  telemetry_.velocity = impedance_.velocity;
  telemetry_.force = output_.force;
  telemetry_.wrench = context_.measured_wrench;
  telemetry_.wrench_error =
      current_ != nullptr && current_->task.force_control.enabled
          ? Vector6(current_->task.force_control.reference_wrench - context_.measured_wrench)
          : Vector6::Zero();
  telemetry_.joint_weight = output_.joint_weight;
  const bool running = state_ == ExecutorState::kRunning && current_ != nullptr;
  telemetry_.resolver = current_ != nullptr ? current_->task.resolver.kind : ResolverKind::kDls;
  telemetry_.resolver_status = running ? resolver_result_.status : ResolverStatus::kOk;
  telemetry_.achieved_fraction = running ? resolver_result_.achieved_fraction : 1.0;
  telemetry_.warn_below_p =
      current_ != nullptr ? current_->task.resolver.constrained_optimisation.warn_below_p : 0.5;
  telemetry_.obstacle_constraints = running ? resolver_result_.active_constraints : 0;
  double clearance = kUnbounded;
  for (std::size_t k = 0; k < critical_count_; ++k) {
    clearance = std::min(clearance, critical_[k].distance);
  }
  telemetry_.obstacle_clearance = clearance;
  telemetry_.aux = arm.aux;
  telemetry_.breach = breach_;
  telemetry_.teleoperation = behaviours_.teleoperation.counters();
  telemetry_.teleop_mode = behaviours_.teleoperation.last_mode();
  telemetry_.hand_controller_R_motion = behaviours_.teleoperation.hand_controller_R_motion();
  telemetry_.reflected_wrench = behaviours_.teleoperation.reflected_wrench();
  telemetry_.world_R_eye = behaviours_.teleoperation.world_R_eye_used();
  telemetry_.eye_time_ns = behaviours_.teleoperation.eye_time_ns_used();
  telemetry_.channel = behaviours_.teleoperation.energies();
  telemetry_.return_wave = behaviours_.teleoperation.return_wave();
  telemetry_.steady_ns = context_.steady_ns;
  telemetry_.sample_unix_ns = unix_now_ns();
  if (current_ != nullptr) {
    telemetry_.reflection = current_->task.teleoperation.reflection;
    telemetry_.wave_impedance = current_->task.teleoperation.wave_impedance;
  }
  telemetry_.overruns = total_overruns_;
  telemetry_.inputs = inputs_;
  telemetry_snapshot_.store(telemetry_);
  publish_status();
  return state_;
}

void Executor::publish_status() noexcept {
  ExecutorStatus s;
  s.state = state_;
  s.task_id = current_ != nullptr ? current_->id : 0;
  s.breach = breach_;
  s.last_reset = last_reset_;
  s.reset_refusal = reset_refusal_;
  s.resets_handled = resets_handled_;
  s.overruns = total_overruns_;
  s.teleoperation = behaviours_.teleoperation.counters();
  s.recovery = recovery_;
  s.recoveries_handled = recoveries_handled_;
  status_snapshot_.store(s);
  published_state_.store(state_, std::memory_order_release);
}

}  // namespace tether::remote

namespace tether::remote {

namespace {

bool recoverable(BreachCause cause) noexcept {
  return cause == BreachCause::kJointLimitMargin || cause == BreachCause::kProximityTooClose ||
         cause == BreachCause::kProximityTooFar || cause == BreachCause::kResolverSingular;
}

// The breached quantity gets worse when it falls (joint room, a too-close distance,
// manipulability) or when it rises (a too-far distance).
bool worse_when_rising(BreachCause cause) noexcept {
  return cause == BreachCause::kProximityTooFar;
}

// How far the breached quantity may drift the wrong way before the recovery stops (sensor
// noise, the ramp's first cycles): [rad], [m] or manipulability.
constexpr double kRecoveryDeepenTolerance = 1e-3;

}  // namespace

void Executor::handle_recovery(const ArmState& arm) noexcept {
  if (!recovery_requested_.exchange(false, std::memory_order_acq_rel)) return;
  ++recoveries_handled_;
  const RecoveryRequest request = recovery_request_.load();
  inputs_.recovery = true;
  inputs_.recovery_request = request;
  recovery_ = RecoveryStatus{};
  recovery_.request = request;
  const auto refuse = [this](RecoveryRefusal why) {
    recovery_.outcome = RecoveryOutcome::kRefused;
    recovery_.refusal = why;
  };
  if (state_ != ExecutorState::kStopped || current_ == nullptr) {
    refuse(RecoveryRefusal::kNotStopped);
    return;
  }
  const TaskParameters& task = current_->task;
  // What to leave: the bound that persists this cycle, else a latched singular resolver
  // (not a bound a reset re-checks, but the arm still stands where the resolver failed).
  BreachEvent target = check_persistent_bounds(task.bounds, bounds_input(arm));
  if (!target && breach_.cause == BreachCause::kResolverSingular) target = breach_;
  recovery_.target = target.cause;
  recovery_.joint = target.index;
  if (!recoverable(target.cause)) {
    refuse(RecoveryRefusal::kNotRecoverable);
    return;
  }
  const bool proximity = target.cause == BreachCause::kProximityTooClose ||
                         target.cause == BreachCause::kProximityTooFar;
  const double limit = proximity ? recovery_limits_.tool_speed : recovery_limits_.joint_speed;
  const double max_amount = proximity ? kMaxRecoveryTool : kMaxRecoveryJoint;
  const double amount = std::abs(request.distance);
  if (!(amount > 0.0 && amount <= max_amount) ||
      (request.kind == RecoveryKind::kRetreat && request.distance < 0.0)) {
    refuse(RecoveryRefusal::kBadAmount);
    return;
  }
  if (request.kind == RecoveryKind::kJointJog) {
    if (target.cause != BreachCause::kJointLimitMargin) {
      refuse(RecoveryRefusal::kJogNotForCause);
      return;
    }
    const int j = request.joint;
    const JointVector& q = arm.position;
    if (j < 0 || j >= kArmDof ||
        std::min(q[j] - lower_[j], upper_[j] - q[j]) >= task.bounds.joint_limit_margin[j]) {
      recovery_.joint = j;
      refuse(RecoveryRefusal::kJointNotInMargin);
      return;
    }
    recovery_.joint = j;
    const double leaving = q[j] - lower_[j] < upper_[j] - q[j] ? 1.0 : -1.0;
    if (request.distance * leaving < 0.0) {
      refuse(RecoveryRefusal::kDeepens);
      return;
    }
  }
  JointVector direction;
  double value = 0.0;
  if (!recovery_direction(arm, direction, value)) {
    refuse(RecoveryRefusal::kNoDirection);
    return;
  }
  recovery_.request.speed = request.speed > 0.0 && request.speed < limit ? request.speed : limit;
  recovery_.start_value = recovery_.value = value;
  recovery_.remaining = amount;
  recovery_.outcome = RecoveryOutcome::kMoving;
  recovery_speed_ = 0.0;
  // The recovery alone moves the arm: no compliant hold beside it.
  compliant_stop_ = false;
  qd_command_.setZero();
  state_ = ExecutorState::kRecovering;
}

bool Executor::recovery_direction(const ArmState& arm, JointVector& direction,
                                  double& value) noexcept {
  const TaskParameters& task = current_->task;
  direction.setZero();
  switch (recovery_.target) {
    case BreachCause::kJointLimitMargin: {
      const int j = recovery_.joint;
      const double low = arm.position[j] - lower_[j];
      const double high = upper_[j] - arm.position[j];
      direction[j] = low < high ? 1.0 : -1.0;
      value = std::min(low, high);
      return true;
    }
    case BreachCause::kProximityTooClose:
    case BreachCause::kProximityTooFar: {
      // The sensor's z points from the surface to the sensor: along it the distance grows.
      const Matrix3 base_R_sensor = commanded_state_.tool.R * task.proximity.tool_T_sensor.R;
      const double sign = recovery_.target == BreachCause::kProximityTooClose ? 1.0 : -1.0;
      Vector6 twist = Vector6::Zero();
      twist.head<3>() = sign * base_R_sensor.col(2);  // 1 m/s, orientation held
      Jacobian6 J;
      tool_jacobian(commanded_state_, J);
      JointVector weights = task.resolver.joint_weights;
      weights.array() += kHoldJointDamping;
      if (weighted_dls<6>(J, Vector6::Ones(), weights, twist, direction) != DlsStatus::kOk ||
          !direction.allFinite()) {
        return false;
      }
      value = arm.proximity.valid ? arm.proximity.distance : kUnbounded;
      return true;
    }
    case BreachCause::kResolverSingular: {
      JointVector gradient;
      value = configuration_control::manipulability(commanded_state_, &gradient);
      const double largest = gradient.cwiseAbs().maxCoeff();
      if (!(largest > 0.0) || !gradient.allFinite()) return false;
      direction = gradient / largest;  // its fastest joint at the recovery speed
      return true;
    }
    default:
      return false;
  }
}

void Executor::recover(const ArmState& arm, double dt) noexcept {
  const TaskParameters& task = current_->task;
  update_kinematics();
  JointVector direction;
  double value = 0.0;
  if (!recovery_direction(arm, direction, value)) {
    begin_stop(BreachEvent{recovery_.target == BreachCause::kResolverSingular
                               ? BreachCause::kResolverSingular
                               : BreachCause::kNonFinite,
                           0.0, 0.0, task_time_, -1});
    return;
  }
  recovery_.value = value;
  // Every other bound stays armed: the recovered one is left out here and watched below,
  // so that it may only improve.
  BoundsParameters armed = task.bounds;
  if (recovery_.target == BreachCause::kJointLimitMargin) {
    for (int i = 0; i < kArmDof; ++i) {
      const double room = std::min(arm.position[i] - lower_[i], upper_[i] - arm.position[i]);
      // Joints already inside their margin may not move on into it (they do not move at all
      // unless jogged), so only the others are watched.
      if (i == recovery_.joint || room < armed.joint_limit_margin[i]) {
        armed.joint_limit_margin[i] = -kUnbounded;
      }
    }
  } else if (recovery_.target != BreachCause::kResolverSingular) {
    armed.min_proximity_distance = 0.0;
    armed.max_proximity_distance = kUnbounded;
  }
  BreachEvent breach = check_persistent_bounds(armed, bounds_input(arm));
  const double deepened = worse_when_rising(recovery_.target) ? value - recovery_.start_value
                                                              : recovery_.start_value - value;
  if (!breach && recovery_.target != BreachCause::kResolverSingular &&
      deepened > kRecoveryDeepenTolerance) {
    breach =
        BreachEvent{recovery_.target, value, recovery_.start_value, task_time_, recovery_.joint};
  }
  if (breach) {
    begin_stop(breach);
    return;
  }
  // A trapezoid in the recovered quantity: up to speed within kRecoveryRampTime, down to rest
  // exactly at the asked amount.
  const double speed = recovery_.request.speed;
  const double accel = speed / kRecoveryRampTime;
  double v = std::min({speed, recovery_speed_ + accel * dt,
                       std::sqrt(2.0 * accel * recovery_.remaining), recovery_.remaining / dt});
  JointVector qd = direction * v;
  // The joints' own limits, scaling the whole vector so the direction is kept.
  double scale = qd.cwiseAbs().cwiseQuotient(velocity_limit_).maxCoeff();
  const JointVector change = qd - qd_command_;
  scale = std::max(scale, change.cwiseAbs().cwiseQuotient(acceleration_limit_ * dt).maxCoeff());
  if (scale > 1.0) {
    qd /= scale;
    v /= scale;
  }
  const JointVector q_next = (q_command_ + qd * dt).cwiseMax(lower_).cwiseMin(upper_);
  qd_command_ = (q_next - q_command_) / dt;
  q_command_ = q_next;
  recovery_speed_ = v;
  recovery_.moved += v * dt;
  recovery_.remaining = std::max(0.0, recovery_.remaining - v * dt);
  if (recovery_.remaining <= 1e-9) {
    qd_command_.setZero();
    recovery_speed_ = 0.0;
    recovery_.remaining = 0.0;
    recovery_.outcome = RecoveryOutcome::kDone;
    state_ = ExecutorState::kStopped;
  }
}

}  // namespace tether::remote

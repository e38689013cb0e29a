#pragma once

// Teleoperation input (the extended-task-space patent, eq. 14 and appendix eq. 32-36): the
// operator's hand controller drives the MOTION frame through a virtual force F_t = B_t ẋ_h.
//
// The ground station sends hand-controller *increments* (displacement since the previous
// sample), numbered, at its sampling rate. Every cycle the behaviour drains the queue; a
// sequence gap counts lost samples, a repeated or older number is dropped and counted.
//
// Delay and jitter (a real link). A TCP stream keeps order, so a late segment holds back the
// ones behind it and they arrive in a burst. Applied at once, a burst is a velocity spike the
// joint limits clip and the impedance state then forgets: the motion is lost; and against a
// heavy environment (the door) every step of the arm's velocity is a spike of interaction
// torque. So enabled samples are played out at the pace they were sampled. Each sample's
// increment is the hand's motion over the ground time since the sample before (at most
// 0.1 s); a playout clock, in ground time, plays that motion out evenly, aiming at
//   now − min_recent(arrival − ground_time) − playout_delay,
// with playout_delay the decaying peak of (arrival − ground_time) above that least value plus
// a margin (as much again, at most 50 ms), at most the task's max_playout_delay. Its pace
// changes smoothly (a 10 ms lag), eases off as it nears the newest motion received, and
// catches up at most twice real time, so a new window's least value, a longer delay learnt
// from a late arrival, or a sample the ground's thread took late change the arm's velocity by
// a few per cent per cycle rather than stopping it or bursting. Clock offset between the
// sites cancels in the difference. None is lost or applied twice.
// While that peak is below kMinPlayoutJitter (5 ms: a loopback link's jitter bunches a few
// samples, which the arm takes in its stride, and holding every sample back would cost the
// round trip more), there is no playout delay: samples are applied as they arrive, and one
// sampled several periods after the one before (the ground's thread was held up) has its
// motion spread over as many cycles (at most 0.1 s) rather than applied as a velocity spike.
//
// Enabling switch. A sample with the switch released zeroes the input at once (within the
// cycle it arrives in, ahead of anything waiting) and drops the waiting motion; the arm holds
// compliantly; the switch enabled again resumes without a reset. Only the executor decides
// stops: a stall (no arrival for longer than stall_bound()) or a lost link latches one, a
// released switch does not. A stream that ends cleanly delivers an `end` sample: its waiting
// motion still plays out, and there is no stall until a new stream sends again.
//
// Force reflection through a delayed channel (tether/common/teleop_channel.h), chosen by the
// task: kNone applies ẋ_h as delivered; kPassivity passes it through the slave port's
// passivity observer and controller with drift compensation; kWave forms the slave velocity
// from the forward wave and the measured wrench. The port's velocity and the wrench F_s are in
// TELEOP axes (power does not depend on the axes, so the ground's hand-controller axes agree);
// F_s is the measured wrench F_a, robot on environment. Rows 0-5 only: the arm-angle row
// carries no reflection.
//
// Frames (task_parameters.h, TeleoperationParameters):
//   tool mode    ẋ in the handle frame HH, rotated into TELEOP by teleop_R_handle
//   world mode   ẋ in the hand-controller base HB, rotated into remote WORLD by
//                world_R_hc_base (local WORLD ≡ remote WORLD), then into TELEOP with the
//                current commanded pose — so the same hand motion moves the tool the same
//                way in the world whatever its orientation
//   camera mode  ẋ in HB → stereo screen ST by screen_R_hc_base, ST ≡ remote EYE, → WORLD by
//                world_R_eye, then as world mode. The EYE frame may move while the task runs
//                (a camera on an arm, set between cycles with its stamp eye_time_ns): each
//                cycle maps the increments it plays with the frame it has, rotates the
//                reflection with the same one, and reports both (eye_used()).
// F_t is formed in TELEOP axes (B_t diagonal there) and moved to the MOTION origin and axes
// as a rigid-body wrench. Row 6 (arm angle) is the trigger's ψ increment times B_t[6].

#include <array>
#include <cstdint>
#include <optional>

#include "tether/common/teleop_channel.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/teleoperation/parameters.h"
#include "tether/remote/loop/spsc_ring.h"

namespace tether::remote {

struct HandControllerSample {
  std::uint64_t sequence = 0;  // consecutive from 1 per stream
  // Displacement since the previous sample in the hand-controller frame of the mode
  // (HH for tool mode, HB otherwise): translation [m], rotation vector [rad].
  Vector6 increment = Vector6::Zero();
  double arm_angle_increment = 0.0;  // [rad], trigger + sign button
  // The ground's mode for this sample; empty = the task's mode. The ground may switch
  // modes while teleoperating, so each increment says which frame it is expressed in.
  std::optional<TeleopMode> mode;
  // Enabling switch: a sample without it carries no motion; it zeroes the operator's input
  // (the arm holds compliantly) and drops the motion still waiting to be played out.
  bool deadman = true;
  std::uint64_t ground_time_ns = 0;  // the ground's sampling time, echoed for latency
  // This site's CLOCK_MONOTONIC when the sample arrived [ns]; 0 = play it out at once.
  std::int64_t arrival_ns = 0;
  // The stream ended cleanly (the operator ended the session): an end, not a stall. Carries
  // nothing else and no sequence.
  bool end = false;
  // A stream opened: its arrival statistics start afresh and its stall clock runs from now.
  // Carries nothing else and no sequence.
  bool opened = false;
  // Delay-robust reflection (teleop_channel.h), from the ground's side of the channel:
  double master_in = 0.0;          // [J] cumulative energy into the channel at the hand
  double master_observed = 0.0;    // [J] the ground's observed energy, for telemetry
  double master_dissipated = 0.0;  // [J] what the ground's passivity controller removed
  Vector6 wave = Vector6::Zero();  // forward wave u_m, hand-controller axes [√W]
  // The plane it came by, and whether its motion was recovered from a later datagram's
  // redundancy (a lost datagram's, concealed) rather than sent by its own.
  DataPlane plane = DataPlane::kStream;
  bool concealed = false;
};

using HandControllerQueue = SpscRing<HandControllerSample, 1024>;

struct TeleoperationCounters {
  std::uint64_t applied = 0;     // samples summed into a command
  std::uint64_t lost = 0;        // gaps in the sequence
  std::uint64_t duplicates = 0;  // repeated or out-of-order numbers, dropped
  std::uint64_t discarded = 0;   // motion dropped unplayed when the operator disabled
  std::uint64_t stale = 0;       // sent before the task started: dropped at its start
  // Taken with motion recovered from the datagram plane's redundancy (their datagram was
  // lost, a later one carried it): counted in applied too when played, never in lost.
  std::uint64_t concealed = 0;
  DataPlane plane = DataPlane::kNone;     // the plane of the newest sample taken
  std::uint64_t last_sequence = 0;        // newest sample played out (applied or a heartbeat)
  std::uint64_t last_ground_time_ns = 0;  // of the sample with last_sequence
  std::int64_t last_arrival_ns = 0;       // when it arrived here (CLOCK_MONOTONIC), 0 unknown
  std::uint64_t last_received = 0;        // newest sample received
  bool enabled = false;                   // the operator's enabling switch, as last received
  bool ended = false;                     // the stream ended cleanly and no new one has sent yet
  // A stop released the enable: motion needs the switch released and pressed again after
  // the reset (the one rule for stops, executor.h).
  bool awaiting_release = false;
  double stall_bound = 0.0;    // [s] in force this cycle
  double playout_delay = 0.0;  // [s] added by the de-jitter buffer this cycle
  friend bool operator==(const TeleoperationCounters&, const TeleoperationCounters&) = default;
};

// Both ports of the force-reflection channel (tether/common/teleop_channel.h), [J].
struct ChannelEnergies {
  PortEnergies master;  // the ground's port, as it last reported
  PortEnergies slave;   // this site's port
  friend bool operator==(const ChannelEnergies&, const ChannelEnergies&) = default;
};

class Teleoperation {
 public:
  // The queue is owned by whoever owns the executor; it must outlive this object.
  explicit Teleoperation(HandControllerQueue& queue) : queue_(&queue) {}

  // Restarts the stall clock; samples already queued or waiting are discarded as stale.
  // Reallocates nothing in the cycle but may (re)configure the channel: not real time.
  void reset(const TeleoperationParameters& parameters, const BehaviourContext& context);
  // `context.elapsed` drives the stall clock and `context.steady_ns` the playout.
  void update(const TeleoperationParameters& parameters, const BehaviourContext& context,
              BehaviourOutput& out) noexcept;
  // Drains the queue without applying motion: what the executor calls while the task
  // holds everything, so the enabling switch, heartbeats and the stall clock still count.
  void receive(const TeleoperationParameters& parameters, const BehaviourContext& context) noexcept;

  // The one rule for stops (executor.h). A stop releases the operator's enable and drops the
  // motion waiting to be played; while the arm is stopped, drain_stopped() takes every
  // arriving sample without applying it (counted as discarded; the switch's state is still
  // followed); a reset re-arms the enable only through a fresh press: a switch still held
  // at the reset must be released and pressed again before increments move the arm.
  void release_on_stop() noexcept;
  void drain_stopped() noexcept;
  void rearm_after_reset() noexcept;

  // Replay (Executor::replay_inputs): from now on update() applies `velocity` (TELEOP axes,
  // after the reflection channel, as teleop_velocity() reported it) with the switch `enabled`
  // instead of taking samples from the queue, and receive() only follows the switch.
  void replay(const MotionVector& velocity, bool enabled) noexcept {
    replay_ = true;
    replay_velocity_ = velocity;
    replay_enabled_ = enabled;
  }
  // True once no sample arrived for longer than the stall bound (never after a clean end).
  bool stalled(const TeleoperationParameters& parameters, double elapsed) const noexcept {
    return !ended_ && elapsed - last_sample_time_ > stall_bound(parameters);
  }
  // [s] the larger of the task's stall timeout and kStallJitterFactor × the decaying peak
  // of the gaps between arrivals, at most kMaxStallBound; kMaxStallBound until the task's
  // first increment arrives (the start and the stream may arrive in either order).
  double stall_bound(const TeleoperationParameters& parameters) const noexcept;
  double last_sample_time() const { return last_sample_time_; }
  const TeleoperationCounters& counters() const { return counters_; }
  const ChannelEnergies& energies() const { return energies_; }
  // Hand-controller velocity of the last cycle in TELEOP axes, for logs and reflection.
  const MotionVector& teleop_velocity() const { return velocity_; }
  // The operator's enabling switch as last received (false before any sample).
  bool operator_enabled() const { return operator_enabled_; }
  // Force reflection (eq. 37-39 up to J_hcᵀ): rotates a wrench in MOTION axes into the
  // hand-controller axes of the last sample's mode (HH for tool, HB otherwise). Like the
  // seed, it rotates force and torque alike and ignores the displacement between frames.
  const Matrix3& hand_controller_R_motion() const { return hc_R_motion_; }
  // F_a at the MOTION origin along the reflected directions (reflect_all_axes), in the hand
  // controller's axes of the last increment's mode: what the hand renders [N, N·m].
  const Vector6& reflected_wrench() const { return reflected_; }
  // While the executor stops or holds a stopped arm, update() no longer runs, but the arm
  // still touches what it touched: the reflection follows the measured wrench F_a (MOTION
  // origin and axes [N, N·m]) along the directions and axes of the last update(), rather
  // than keeping the wrench of the last running cycle on the operator's hand.
  void reflect(const TeleoperationParameters& parameters,
               const Eigen::Ref<const Vector6>& measured_wrench) noexcept;
  TeleopMode last_mode() const { return last_mode_; }
  // The EYE frame (world_R_eye) and its stamp (eye_time_ns) of the last update(): what its
  // camera-mode increments were mapped and its camera-mode reflection rotated with, and,
  // while the arm is stopped, what reflect() still rotates with.
  const Matrix3& world_R_eye_used() const { return world_R_eye_used_; }
  std::uint64_t eye_time_ns_used() const { return eye_time_ns_used_; }
  // Wave method: the returning wave w_s, hand-controller axes of the last mode.
  const Vector6& return_wave() const { return return_wave_; }

 private:
  void take(const HandControllerSample& sample, const TeleoperationParameters& parameters,
            const BehaviourContext& context) noexcept;
  void decay(double elapsed) noexcept;
  void follow_switch(const HandControllerSample& sample) noexcept;
  // Counts the gap in the numbering before `sequence`: lost, or stale right after reset().
  void count_gap(std::uint64_t sequence) noexcept;
  // A numbered sample taken in turn (a repeat or older one is counted a duplicate: false);
  // and the newest one answered (played, or taken without motion), reported back.
  bool take_sequence(const HandControllerSample& sample) noexcept;
  void answered(const HandControllerSample& sample) noexcept;
  bool due(const HandControllerSample& sample, const TeleoperationParameters& parameters,
           std::int64_t now_ns) const noexcept;
  double playout_delay(const TeleoperationParameters& parameters) const noexcept;
  double playout_margin() const noexcept;
  void drop_spread() noexcept;

  HandControllerQueue* queue_;
  TeleoperationCounters counters_;
  bool replay_ = false;
  MotionVector replay_velocity_ = MotionVector::Zero();
  bool replay_enabled_ = false;
  double last_sample_time_ = 0.0;  // [s] context.elapsed of the newest arrival
  MotionVector velocity_ = MotionVector::Zero();
  bool operator_enabled_ = false;
  bool ended_ = false;
  // The stop rule: the switch as last received (held), and whether a press enables only
  // after a release (set by a stop, cleared by a released sample or a new stream).
  bool switch_held_ = false;
  bool awaiting_release_ = false;
  TeleopMode last_mode_ = TeleopMode::kTool;
  Matrix3 hc_R_motion_ = Matrix3::Identity();
  Matrix3 motion_R_teleop_ = Matrix3::Identity();   // of the last update()
  Matrix3 teleop_R_hc_last_ = Matrix3::Identity();  // the last increment's mode, then
  Matrix3 world_R_eye_used_ = Matrix3::Identity();  // EYE frame of the last update()
  std::uint64_t eye_time_ns_used_ = 0;              // and its stamp
  Vector6 reflected_ = Vector6::Zero();

  // De-jitter buffer: enabled samples wait here until their playout time,
  // ground_time + (least recent arrival − ground offset) + playout_delay().
  std::array<HandControllerSample, HandControllerQueue::capacity()> pending_{};
  std::size_t pending_head_ = 0;
  std::size_t pending_size_ = 0;
  // Motion taken but not yet applied: a late sample's, spread over the cycles it covers
  // (TELEOP axes), and the ground time of the newest sample taken.
  Vector6 spread_increment_ = Vector6::Zero();
  double spread_arm_angle_ = 0.0;
  int spread_cycles_ = 0;  // cycles left to spread over; 0 = apply what is taken at once
  std::uint64_t previous_ground_time_ns_ = 0;
  // Paced playout (a de-jitter buffer in use): the fraction of the head sample played so
  // far, and the playout clock: the ground time played up to [ns] and its pace (1 = real
  // time).
  double head_fraction_ = 0.0;
  bool cursor_valid_ = false;
  std::int64_t cursor_ = 0;
  double pace_ = 1.0;
  // Arrival statistics: the least (arrival − ground time) over two 2-s windows, the decaying
  // peak of the excess over it (the jitter the playout absorbs) and of the gaps between
  // arrivals (what the stall bound follows).
  std::int64_t offset_min_current_ = 0;
  std::int64_t offset_min_previous_ = 0;
  bool offset_known_ = false;
  double window_start_ = 0.0;
  double spread_peak_ = 0.0;  // [s]
  double gap_peak_ = 0.0;     // [s]
  double decayed_at_ = 0.0;   // [s] context.elapsed the peaks were last aged to
  bool received_since_reset_ = false;
  bool gap_is_stale_ = false;  // until the first numbered sample taken after reset()

  // The force-reflection channel.
  SlavePassivity passivity_;
  WaveSlave wave_{WaveImpedance{50.0, 5.0}};
  ChannelEnergies energies_;
  double master_in_ = 0.0;                  // newest cumulative master `in` received
  Vector6 forward_wave_ = Vector6::Zero();  // newest u_m received, hand-controller axes
  Matrix3 wave_R_ = Matrix3::Identity();    // hand-controller axes of that wave → TELEOP
  Vector6 return_wave_ = Vector6::Zero();
};

// Rotation of hand-controller axes into TELEOP axes for the mode, given the commanded
// TELEOP pose in BASE and the BASE pose in WORLD.
Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters, TeleopMode mode,
                                 const Matrix3& base_R_teleop, const Matrix3& world_R_base);
inline Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters,
                                        const Matrix3& base_R_teleop, const Matrix3& world_R_base) {
  return teleop_R_hand_controller(parameters, parameters.mode, base_R_teleop, world_R_base);
}

}  // namespace tether::remote

#include "tether/remote/behaviours/teleoperation/teleoperation.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tether/common/spatial.h"

namespace tether::remote {

Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters, TeleopMode mode,
                                 const Matrix3& base_R_teleop, const Matrix3& world_R_base) {
  switch (mode) {
    case TeleopMode::kTool:
      return parameters.teleop_R_handle;
    case TeleopMode::kWorld:
      return (world_R_base * base_R_teleop).transpose() * parameters.world_R_hc_base;
    case TeleopMode::kCamera:
      return (world_R_base * base_R_teleop).transpose() * parameters.world_R_eye *
             parameters.screen_R_hc_base;
  }
  return Matrix3::Identity();
}

namespace {

// Half-lives of the decaying peaks [s]: long enough to remember the jitter of the last few
// seconds, short enough to follow a link that got better.
constexpr double kSpreadHalfLife = 5.0;
constexpr double kGapHalfLife = 10.0;
// The least arrival offset is taken over the current and the previous window of this length
// [s], so a link whose delay grows is followed within two windows.
constexpr double kOffsetWindow = 2.0;
// [s] the longest a late sample's motion is spread over (a ground held up longer has its
// motion applied faster, as a burst is).
constexpr double kMaxSpread = 0.1;
// The paced playout's clock (update()): its pace follows what it wants through a first-order
// lag of kPaceSmoothing [s], so the arm's velocity changes by a few per cent per cycle; it
// wants to close a lag behind its target (beyond a quarter of the margin) over
// kPaceCorrection [s] (10 × the smoothing: no overshoot), at most kMaxPace × real time; and within
// the playout margin of the newest motion received it slows down in proportion to the distance left
// (to kMinPace), rather than run into its end. The margin is what the playout delay adds to the
// jitter it has seen, so that slowing down needs a later sample than any yet: the jitter itself, at
// most kMaxPlayoutMargin [s].
constexpr double kPaceSmoothing = 0.01;
constexpr double kPaceCorrection = 0.1;
constexpr double kMaxPace = 2.0;
constexpr double kMinPace = 0.05;
constexpr double kMaxPlayoutMargin = 0.05;

// The slave port's wrench F_s: F_a (MOTION axes) in TELEOP axes, along the directions the
// hand drives only (the others belong to the task's other behaviours) unless the task
// reflects every axis.
Vector6 slave_wrench(const TeleoperationParameters& parameters, const Matrix3& motion_R_teleop,
                     const Eigen::Ref<const Vector6>& measured_wrench) noexcept {
  Vector6 F_s;
  F_s.head<3>() = motion_R_teleop.transpose() * measured_wrench.head<3>();
  F_s.tail<3>() = motion_R_teleop.transpose() * measured_wrench.tail<3>();
  if (!parameters.reflect_all_axes) {
    for (int i = 0; i < 6; ++i) {
      if (parameters.gain[i] == 0.0) F_s[i] = 0.0;
    }
  }
  return F_s;
}

}  // namespace

void Teleoperation::reset(const TeleoperationParameters& parameters,
                          const BehaviourContext& context) {
  HandControllerSample stale;
  while (queue_->pop(stale)) {
    follow_switch(stale);
    if (stale.end || stale.opened) continue;
    ++counters_.stale;
    counters_.last_sequence = std::max(counters_.last_sequence, stale.sequence);
    counters_.last_received = std::max(counters_.last_received, stale.sequence);
  }
  gap_is_stale_ = true;
  pending_head_ = 0;
  pending_size_ = 0;
  drop_spread();
  decayed_at_ = context.elapsed;
  last_sample_time_ = context.elapsed;
  velocity_.setZero();
  operator_enabled_ = false;
  ended_ = false;
  received_since_reset_ = false;
  // The gaps between arrivals are the stream's, learnt before the task started, and the
  // stall bound keeps them. The offsets are learnt afresh per task: a stream that opened
  // just before (its marker was discarded above) may run over another link than the last.
  offset_known_ = false;
  spread_peak_ = 0.0;
  passivity_ = SlavePassivity(parameters.drift);
  if (parameters.reflection == ReflectionMethod::kWave) {
    wave_ = WaveSlave(parameters.wave_impedance);
  }
  energies_ = ChannelEnergies{};
  master_in_ = 0.0;
  forward_wave_.setZero();
  return_wave_.setZero();
  counters_.enabled = false;
  counters_.ended = false;
  counters_.awaiting_release = awaiting_release_;
  counters_.stall_bound = stall_bound(parameters);
  counters_.playout_delay = playout_delay(parameters);
}

void Teleoperation::follow_switch(const HandControllerSample& sample) noexcept {
  if (sample.end || sample.opened) {
    // A stream that ended holds nothing; a new one is a new session, its first press fresh.
    switch_held_ = false;
    if (sample.opened) awaiting_release_ = false;
    return;
  }
  switch_held_ = sample.deadman;
  if (!sample.deadman) awaiting_release_ = false;
}

void Teleoperation::release_on_stop() noexcept {
  counters_.discarded += pending_size_;
  pending_head_ = 0;
  pending_size_ = 0;
  drop_spread();
  velocity_.setZero();
  operator_enabled_ = false;
  awaiting_release_ = true;
  counters_.enabled = false;
  counters_.awaiting_release = true;
}

void Teleoperation::drain_stopped() noexcept {
  HandControllerSample sample;
  while (queue_->pop(sample)) {
    follow_switch(sample);
    if (sample.end) {
      ended_ = true;
      continue;
    }
    if (sample.opened) {
      ended_ = false;
      continue;
    }
    if (!take_sequence(sample)) continue;
    // Taken and answered (the ground counts it as handled) but never played.
    if (sample.deadman) ++counters_.discarded;
    answered(sample);
  }
  counters_.enabled = false;
  counters_.ended = ended_;
  counters_.awaiting_release = awaiting_release_;
}

bool Teleoperation::take_sequence(const HandControllerSample& sample) noexcept {
  if (sample.sequence <= counters_.last_received) {
    ++counters_.duplicates;
    return false;
  }
  count_gap(sample.sequence);
  counters_.last_received = sample.sequence;
  counters_.plane = sample.plane;
  if (sample.concealed) ++counters_.concealed;
  return true;
}

void Teleoperation::answered(const HandControllerSample& sample) noexcept {
  counters_.last_sequence = sample.sequence;
  counters_.last_ground_time_ns = sample.ground_time_ns;
  counters_.last_arrival_ns = sample.arrival_ns;
}

void Teleoperation::count_gap(std::uint64_t sequence) noexcept {
  const std::uint64_t gap = sequence - counters_.last_received - 1;
  // Nothing takes increments while no teleoperated task runs: the queue fills within a
  // second of a stream's heartbeats and the server refuses the rest. They leave a gap
  // before the first increment taken after the task's start, and were sent before it, as
  // those still queued (reset()): stale, not lost.
  if (gap_is_stale_) {
    counters_.stale += gap;
  } else {
    counters_.lost += gap;
  }
  gap_is_stale_ = false;
}

void Teleoperation::rearm_after_reset() noexcept {
  awaiting_release_ = switch_held_;
  operator_enabled_ = false;
  counters_.enabled = false;
  counters_.awaiting_release = awaiting_release_;
}

void Teleoperation::drop_spread() noexcept {
  spread_increment_.setZero();
  spread_arm_angle_ = 0.0;
  spread_cycles_ = 0;
  previous_ground_time_ns_ = 0;
  head_fraction_ = 0.0;
  cursor_valid_ = false;
}

double Teleoperation::stall_bound(const TeleoperationParameters& parameters) const noexcept {
  // Until the task's first increment arrives, the cap: the start and the stream travel
  // different connections, and across a jittery link either may arrive first.
  if (!received_since_reset_) return std::max(parameters.stall_timeout, kMaxStallBound);
  return std::max(parameters.stall_timeout,
                  std::min(kMaxStallBound, kStallJitterFactor * gap_peak_));
}

double Teleoperation::playout_delay(const TeleoperationParameters& parameters) const noexcept {
  // A few milliseconds of jitter (a loopback link on a busy machine) bunch a few samples,
  // which the arm takes in its stride; holding every sample back for them would cost the
  // round trip more than it saves.
  if (spread_peak_ < kMinPlayoutJitter) return 0.0;
  return std::min(spread_peak_ + playout_margin(), parameters.max_playout_delay);
}

double Teleoperation::playout_margin() const noexcept {
  return std::min(spread_peak_, kMaxPlayoutMargin);
}

void Teleoperation::decay(double elapsed) noexcept {
  // By the time since the last call: a task that holds everything calls receive() before
  // update(), and a cycle must not age the peaks twice.
  const double dt = std::max(0.0, elapsed - decayed_at_);
  decayed_at_ = elapsed;
  spread_peak_ *= std::exp2(-dt / kSpreadHalfLife);
  gap_peak_ *= std::exp2(-dt / kGapHalfLife);
}

bool Teleoperation::due(const HandControllerSample& sample,
                        const TeleoperationParameters& parameters,
                        std::int64_t now_ns) const noexcept {
  if (sample.arrival_ns == 0 || now_ns == 0 || !offset_known_) return true;
  const std::int64_t offset = std::min(offset_min_current_, offset_min_previous_);
  const auto delay_ns = static_cast<std::int64_t>(playout_delay(parameters) * 1e9);
  return static_cast<std::int64_t>(sample.ground_time_ns) + offset + delay_ns <= now_ns;
}

void Teleoperation::take(const HandControllerSample& sample,
                         const TeleoperationParameters& parameters,
                         const BehaviourContext& context) noexcept {
  follow_switch(sample);
  if (sample.end) {
    ended_ = true;
    return;
  }
  if (sample.opened) {
    // A new stream, perhaps over another link or from another ground: what the last one
    // taught about offsets, jitter and gaps does not hold for it, and its stall clock runs
    // from its opening.
    ended_ = false;
    offset_known_ = false;
    spread_peak_ = 0.0;
    gap_peak_ = 0.0;
    previous_ground_time_ns_ = 0;
    received_since_reset_ = false;
    last_sample_time_ = context.elapsed;
    return;
  }
  if (!take_sequence(sample)) return;
  ended_ = false;
  master_in_ = std::max(master_in_, sample.master_in);
  energies_.master.observed = sample.master_observed;
  energies_.master.dissipated = sample.master_dissipated;
  energies_.master.in = master_in_;
  if (sample.arrival_ns != 0 && sample.ground_time_ns != 0) {
    const std::int64_t offset =
        sample.arrival_ns - static_cast<std::int64_t>(sample.ground_time_ns);
    if (!offset_known_) {
      offset_known_ = true;
      offset_min_current_ = offset_min_previous_ = offset;
      window_start_ = context.elapsed;
    }
    if (context.elapsed - window_start_ > kOffsetWindow || context.elapsed < window_start_) {
      offset_min_previous_ = offset_min_current_;
      offset_min_current_ = offset;
      window_start_ = context.elapsed;
    }
    offset_min_current_ = std::min(offset_min_current_, offset);
    const std::int64_t least = std::min(offset_min_current_, offset_min_previous_);
    spread_peak_ = std::max(spread_peak_, static_cast<double>(offset - least) * 1e-9);
  }
  if (!sample.deadman) {
    // Released: nothing waiting is played out, and the input is zero from this cycle on.
    counters_.discarded += pending_size_;
    pending_head_ = 0;
    pending_size_ = 0;
    drop_spread();
    operator_enabled_ = false;
    answered(sample);
    return;
  }
  if (awaiting_release_) {
    // Held through a stop and its reset: no motion until the switch is pressed afresh.
    ++counters_.discarded;
    operator_enabled_ = false;
    answered(sample);
    return;
  }
  operator_enabled_ = true;
  if (parameters.reflection == ReflectionMethod::kWave) {
    // The wave is a signal, not an increment: the newest one holds until the next.
    forward_wave_ = sample.wave;
  }
  if (pending_size_ == pending_.size()) {
    // A full buffer means playout fell a whole buffer behind: nothing is lost, the oldest
    // is counted as played now (its motion is lost to the clip, as without the buffer).
    ++counters_.applied;
    counters_.last_sequence = pending_[pending_head_].sequence;
    head_fraction_ = 0.0;
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
  }
  pending_[(pending_head_ + pending_size_) % pending_.size()] = sample;
  ++pending_size_;
}

void Teleoperation::receive(const TeleoperationParameters& parameters,
                            const BehaviourContext& context) noexcept {
  if (replay_) {
    operator_enabled_ = replay_enabled_;
    counters_.enabled = operator_enabled_;
    return;
  }
  decay(context.elapsed);
  bool received = false;
  HandControllerSample sample;
  while (queue_->pop(sample)) {
    const std::uint64_t before = counters_.last_received;
    take(sample, parameters, context);
    received = received || counters_.last_received != before;
  }
  if (received) {
    if (received_since_reset_) {
      gap_peak_ = std::max(gap_peak_, context.elapsed - last_sample_time_);
    }
    received_since_reset_ = true;
    last_sample_time_ = context.elapsed;
  }
  counters_.enabled = operator_enabled_;
  counters_.ended = ended_;
  counters_.awaiting_release = awaiting_release_;
  counters_.stall_bound = stall_bound(parameters);
  counters_.playout_delay = playout_delay(parameters);
}

void Teleoperation::update(const TeleoperationParameters& parameters,
                           const BehaviourContext& context, BehaviourOutput& out) noexcept {
  const Frame tool_T_teleop = parameters.tool_T_teleop;
  const Frame base_T_tool = context.motion_pose * context.tool_T_motion.inverse();
  const Matrix3 base_R_teleop = base_T_tool.R * tool_T_teleop.R;
  // Rotations for every mode up front: samples of one cycle may differ in mode. Camera mode's
  // uses the EYE frame the task has this cycle (it may have moved since the last), and the
  // reflection below is rotated with the same.
  world_R_eye_used_ = parameters.world_R_eye;
  eye_time_ns_used_ = parameters.eye_time_ns;
  std::array<Matrix3, 3> teleop_R_hc;
  for (TeleopMode mode : {TeleopMode::kTool, TeleopMode::kWorld, TeleopMode::kCamera}) {
    teleop_R_hc[static_cast<std::size_t>(mode)] =
        teleop_R_hand_controller(parameters, mode, base_R_teleop, context.world_T_base.R);
  }

  if (replay_) {
    // What the recorded cycle applied, with this cycle's frames: the force follows as live.
    operator_enabled_ = replay_enabled_;
    counters_.enabled = operator_enabled_;
    velocity_ = replay_velocity_;
    const Frame motion_T_teleop = context.tool_T_motion.inverse() * tool_T_teleop;
    const Vector6 wrench_teleop = parameters.gain.head<6>().cwiseProduct(velocity_.head<6>());
    out.force.head<6>() += transform_wrench(motion_T_teleop, wrench_teleop);
    out.force[6] += parameters.gain[6] * velocity_[6];
    return;
  }
  receive(parameters, context);
  Vector6 played = Vector6::Zero();  // motion taken for this cycle alone, TELEOP axes
  double played_arm_angle = 0.0;
  // Adds what is left of the head sample (or up to `fraction` of it in all) and, once all of
  // it is in, retires it.
  const auto play_head = [&](double fraction) -> void {
    const HandControllerSample& sample = pending_[pending_head_];
    const double share = fraction - head_fraction_;
    last_mode_ = sample.mode.value_or(parameters.mode);
    const Matrix3& R = teleop_R_hc[static_cast<std::size_t>(last_mode_)];
    played.head<3>() += share * (R * sample.increment.head<3>());
    played.tail<3>() += share * (R * sample.increment.tail<3>());
    played_arm_angle += share * sample.arm_angle_increment;
    head_fraction_ = fraction;
    if (fraction < 1.0) return;
    ++counters_.applied;
    answered(sample);
    if (sample.ground_time_ns != 0) previous_ground_time_ns_ = sample.ground_time_ns;
    head_fraction_ = 0.0;
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
  };
  const auto dt_ns = static_cast<std::int64_t>(context.dt * 1e9);
  const auto max_spread_ns = static_cast<std::int64_t>(kMaxSpread * 1e9);
  const double delay = playout_delay(parameters);
  if (delay > 0.0 && offset_known_ && context.steady_ns != 0) {
    // Paced playout: the hand's motion, each sample's increment spread evenly over the ground
    // time since the sample before (at most kMaxSpread), is played along a playout clock (the
    // cursor, in ground time) that follows now − least offset − playout delay at a pace that
    // changes smoothly. Jumps of the target (the least offset of a new window, a longer
    // delay learnt from a late arrival) and a late sample's pause then change the arm's
    // velocity by a few per cent per cycle, rather than by a burst or a stop.
    const std::int64_t least = std::min(offset_min_current_, offset_min_previous_);
    const std::int64_t target = context.steady_ns - least - static_cast<std::int64_t>(delay * 1e9);
    // Ground time of the newest motion received: the last sample waiting (they wait in
    // sequence order, and the ground's clock is monotonic).
    std::int64_t newest =
        pending_size_ == 0
            ? 0
            : static_cast<std::int64_t>(
                  pending_[(pending_head_ + pending_size_ - 1) % pending_.size()].ground_time_ns);
    if (!cursor_valid_) {
      // From the last sample played, or one period before the first.
      cursor_ = previous_ground_time_ns_ != 0 ? static_cast<std::int64_t>(previous_ground_time_ns_)
                : pending_size_ > 0
                    ? static_cast<std::int64_t>(pending_[pending_head_].ground_time_ns) - dt_ns
                    : target;
      cursor_valid_ = true;
      pace_ = 1.0;
    }
    newest = std::max(newest, cursor_);
    const double lag = static_cast<double>(target - cursor_) * 1e-9;
    const double depth = static_cast<double>(newest - cursor_) * 1e-9;
    // A lag within a quarter of the margin is left alone: the least offset of a jittery link
    // moves by a few milliseconds now and then, and chasing each move would be a change of
    // the arm's velocity for nothing the margin does not already cover.
    const double deadband = 0.25 * playout_margin();
    const double excess = std::copysign(std::max(0.0, std::abs(lag) - deadband), lag);
    pace_ += (std::clamp(1.0 + excess / kPaceCorrection, 0.0, kMaxPace) - pace_) *
             std::min(1.0, context.dt / kPaceSmoothing);
    // Within half the margin of the newest motion, the pace falls with the distance to it:
    // the arm slows down exponentially rather than run into the end of what it has, down to
    // kMinPace, at which it plays the rest (the stream's last motion plays out).
    pace_ = std::min(
        pace_, std::max(kMinPace, depth / (0.5 * std::max(playout_margin(), kMinPlayoutJitter))));
    const std::int64_t next =
        std::min(newest, cursor_ + static_cast<std::int64_t>(pace_ * static_cast<double>(dt_ns)));
    while (pending_size_ > 0) {
      const HandControllerSample& sample = pending_[pending_head_];
      const auto end = static_cast<std::int64_t>(sample.ground_time_ns);
      if (sample.ground_time_ns == 0 || sample.arrival_ns == 0 || end <= next) {
        play_head(1.0);
        continue;
      }
      const std::int64_t start =
          previous_ground_time_ns_ != 0
              ? std::max(static_cast<std::int64_t>(previous_ground_time_ns_), end - max_spread_ns)
              : end - dt_ns;
      if (next > start) {
        play_head(std::max(head_fraction_,
                           static_cast<double>(next - start) / static_cast<double>(end - start)));
      }
      break;
    }
    cursor_ = next;
  } else {
    cursor_valid_ = false;
    // The most cycles one sample's motion is spread over: 0.1 s.
    const int max_spread = std::max(1, static_cast<int>(std::ceil(kMaxSpread / context.dt - 1e-9)));
    while (pending_size_ > 0 && due(pending_[pending_head_], parameters, context.steady_ns)) {
      const std::uint64_t ground_time_ns = pending_[pending_head_].ground_time_ns;
      // A sample that followed the one before after several periods (the ground's thread was
      // held up) carries their motion: spread over as many cycles, as the hand moved.
      if (previous_ground_time_ns_ != 0 && ground_time_ns > previous_ground_time_ns_) {
        const double gap = static_cast<double>(ground_time_ns - previous_ground_time_ns_) * 1e-9;
        const int cycles =
            std::clamp(static_cast<int>(std::lround(gap / context.dt)), 1, max_spread);
        spread_cycles_ = std::max(spread_cycles_, cycles);
      }
      play_head(1.0);
    }
    // What was taken joins the motion being spread, which this cycle's share comes from.
    spread_increment_ += played;
    spread_arm_angle_ += played_arm_angle;
    played.setZero();
    played_arm_angle = 0.0;
  }
  // This cycle's share of the motion taken: all of it unless a late sample is being spread.
  const int share = std::max(spread_cycles_, 1);
  const Vector6 spread = spread_increment_ / share;  // TELEOP axes
  const double spread_arm_angle = spread_arm_angle_ / share;
  spread_increment_ -= spread;
  spread_arm_angle_ -= spread_arm_angle;
  const Vector6 increment = played + spread;
  const double arm_angle_increment = played_arm_angle + spread_arm_angle;
  spread_cycles_ = std::max(spread_cycles_ - 1, 0);

  const Frame motion_T_teleop = context.tool_T_motion.inverse() * tool_T_teleop;
  const Matrix3& R_last = teleop_R_hc[static_cast<std::size_t>(last_mode_)];
  // The slave port: delivered velocity and measured wrench, TELEOP axes.
  const Vector6 v_delivered = increment / context.dt;
  motion_R_teleop_ = motion_T_teleop.R;
  teleop_R_hc_last_ = R_last;
  const Vector6 F_s = slave_wrench(parameters, motion_R_teleop_, context.measured_wrench);
  Vector6 v_port = v_delivered;
  switch (parameters.reflection) {
    case ReflectionMethod::kNone:
      // Observed only: the energies show what the plain channel does.
      v_port = passivity_.observe(v_delivered, F_s, master_in_, context.dt);
      break;
    case ReflectionMethod::kPassivity:
      // Disabled, nothing moves, drift compensation included: the hand may be re-indexed,
      // so the drift it measured is forgotten.
      if (operator_enabled_) {
        v_port = passivity_.step(v_delivered, F_s, master_in_, context.dt);
      } else {
        passivity_.forget_drift();
        v_port = passivity_.observe(v_delivered, F_s, master_in_, context.dt);
      }
      break;
    case ReflectionMethod::kWave: {
      Vector6 u;  // forward wave, into TELEOP axes
      u.head<3>() = R_last * forward_wave_.head<3>();
      u.tail<3>() = R_last * forward_wave_.tail<3>();
      if (!operator_enabled_) u.setZero();
      wave_.step(u, F_s, master_in_, context.dt);
      v_port = operator_enabled_ ? wave_.velocity() : Vector6::Zero();
      return_wave_.head<3>() = R_last.transpose() * wave_.return_wave().head<3>();
      return_wave_.tail<3>() = R_last.transpose() * wave_.return_wave().tail<3>();
      break;
    }
  }
  energies_.slave =
      parameters.reflection == ReflectionMethod::kWave ? wave_.energies() : passivity_.energies();

  velocity_.head<6>() = v_port;
  velocity_[6] = arm_angle_increment / context.dt;

  const Vector6 wrench_teleop = parameters.gain.head<6>().cwiseProduct(velocity_.head<6>());
  out.force.head<6>() += transform_wrench(motion_T_teleop, wrench_teleop);
  out.force[6] += parameters.gain[6] * velocity_[6];
  hc_R_motion_ = R_last.transpose() * motion_T_teleop.R.transpose();
  reflected_.head<3>() = R_last.transpose() * F_s.head<3>();
  reflected_.tail<3>() = R_last.transpose() * F_s.tail<3>();
}

void Teleoperation::reflect(const TeleoperationParameters& parameters,
                            const Eigen::Ref<const Vector6>& measured_wrench) noexcept {
  const Vector6 F_s = slave_wrench(parameters, motion_R_teleop_, measured_wrench);
  reflected_.head<3>() = teleop_R_hc_last_.transpose() * F_s.head<3>();
  reflected_.tail<3>() = teleop_R_hc_last_.transpose() * F_s.tail<3>();
}

}  // namespace tether::remote

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
    if (stale.end || stale.opened) continue;
    ++counters_.stale;
    counters_.last_sequence = std::max(counters_.last_sequence, stale.sequence);
    counters_.last_received = std::max(counters_.last_received, stale.sequence);
  }
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
  counters_.stall_bound = stall_bound(parameters);
  counters_.playout_delay = playout_delay(parameters);
}

void Teleoperation::drop_spread() noexcept {
  spread_increment_.setZero();
  spread_arm_angle_ = 0.0;
  spread_cycles_ = 0;
  previous_ground_time_ns_ = 0;
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
  return std::min(spread_peak_, parameters.max_playout_delay);
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
  if (sample.sequence <= counters_.last_received) {
    ++counters_.duplicates;
    return;
  }
  counters_.lost += sample.sequence - counters_.last_received - 1;
  counters_.last_received = sample.sequence;
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
    counters_.last_sequence = sample.sequence;
    counters_.last_ground_time_ns = sample.ground_time_ns;
    counters_.last_arrival_ns = sample.arrival_ns;
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
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
  }
  pending_[(pending_head_ + pending_size_) % pending_.size()] = sample;
  ++pending_size_;
}

void Teleoperation::receive(const TeleoperationParameters& parameters,
                            const BehaviourContext& context) noexcept {
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
  counters_.stall_bound = stall_bound(parameters);
  counters_.playout_delay = playout_delay(parameters);
}

void Teleoperation::update(const TeleoperationParameters& parameters,
                           const BehaviourContext& context, BehaviourOutput& out) noexcept {
  const Frame tool_T_teleop = parameters.tool_T_teleop;
  const Frame base_T_tool = context.motion_pose * context.tool_T_motion.inverse();
  const Matrix3 base_R_teleop = base_T_tool.R * tool_T_teleop.R;
  // Rotations for every mode up front: samples of one cycle may differ in mode.
  std::array<Matrix3, 3> teleop_R_hc;
  for (TeleopMode mode : {TeleopMode::kTool, TeleopMode::kWorld, TeleopMode::kCamera}) {
    teleop_R_hc[static_cast<std::size_t>(mode)] =
        teleop_R_hand_controller(parameters, mode, base_R_teleop, context.world_T_base.R);
  }

  receive(parameters, context);
  // The most cycles one sample's motion is spread over: 0.1 s.
  const int max_spread = std::max(1, static_cast<int>(std::ceil(kMaxSpread / context.dt - 1e-9)));
  while (pending_size_ > 0 && due(pending_[pending_head_], parameters, context.steady_ns)) {
    const HandControllerSample& sample = pending_[pending_head_];
    ++counters_.applied;
    counters_.last_sequence = sample.sequence;
    counters_.last_ground_time_ns = sample.ground_time_ns;
    counters_.last_arrival_ns = sample.arrival_ns;
    last_mode_ = sample.mode.value_or(parameters.mode);
    const Matrix3& R = teleop_R_hc[static_cast<std::size_t>(last_mode_)];
    spread_increment_.head<3>() += R * sample.increment.head<3>();
    spread_increment_.tail<3>() += R * sample.increment.tail<3>();
    spread_arm_angle_ += sample.arm_angle_increment;
    // A sample that followed the one before after several periods (the ground's thread was
    // held up) carries their motion: spread over as many cycles, as the hand moved.
    if (previous_ground_time_ns_ != 0 && sample.ground_time_ns > previous_ground_time_ns_) {
      const double gap =
          static_cast<double>(sample.ground_time_ns - previous_ground_time_ns_) * 1e-9;
      const int cycles = std::clamp(static_cast<int>(std::lround(gap / context.dt)), 1, max_spread);
      spread_cycles_ = std::max(spread_cycles_, cycles);
    }
    if (sample.ground_time_ns != 0) previous_ground_time_ns_ = sample.ground_time_ns;
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_size_;
  }
  // This cycle's share of the motion taken: all of it unless a late sample is being spread.
  const int share = std::max(spread_cycles_, 1);
  const Vector6 increment = spread_increment_ / share;  // TELEOP axes
  const double arm_angle_increment = spread_arm_angle_ / share;
  spread_increment_ -= increment;
  spread_arm_angle_ -= arm_angle_increment;
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

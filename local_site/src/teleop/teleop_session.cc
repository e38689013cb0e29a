#include "tether/local/teleop/teleop_session.h"

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "datagram_link.h"
#include "link/channel.h"
#include "link/wire.h"
#include "tether/local/link/session_recorder.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::local {

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t t) {
  timespec ts{};
  ts.tv_sec = t / 1000000000LL;
  ts.tv_nsec = t % 1000000000LL;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(
      std::min<double>(static_cast<double>(values.size() - 1),
                       std::ceil(p / 100.0 * static_cast<double>(values.size())) - 1.0));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

}  // namespace

struct TeleopSession::Stream {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::RemoteSite::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::TeleopIncrement, v1::ForceReflection>> rw;
  std::mutex write_mutex;  // Write and WritesDone come from two threads
  bool writes_done = false;
  std::unique_ptr<GroundDatagramLink> datagrams;  // set before datagrams_ready_
};

TeleopSession::TeleopSession(OperatorInput& input, const TeleopOptions& options)
    : input_(input),
      options_(options),
      send_time_ns_(std::make_unique<std::atomic<std::int64_t>[]>(kSendRing)) {
  if (!(options.rate >= 10.0 && options.rate <= 5000.0)) {
    throw std::invalid_argument("rate = " + std::to_string(options.rate) +
                                " Hz: allowed 10 … 5000 Hz");
  }
  if (!(options.duration >= 0.0) || !std::isfinite(options.duration)) {
    throw std::invalid_argument("duration = " + std::to_string(options.duration) +
                                " s: must be ≥ 0 (0 = until stopped)");
  }
  if (options.address.empty()) throw std::invalid_argument("address is empty: give host:port");
  latencies_.reserve(static_cast<std::size_t>(std::max(1.0, options.duration) * options.rate) +
                     1024);
  if (!(options.settle >= 0.0 && options.settle <= 30.0)) {
    throw std::invalid_argument("settle = " + std::to_string(options.settle) +
                                " s: allowed 0 … 30 s");
  }
  // Ten minutes of 20 ms rows (3 MB); a longer session keeps its first ten minutes.
  trace_.reserve(30000);
}

TeleopSession::~TeleopSession() {
  stop();
  if (stream_) stream_->context.TryCancel();
  if (sampler_.joinable()) sampler_.join();
  if (reader_.joinable()) reader_.join();
  if (datagram_reader_.joinable()) datagram_reader_.join();
}

void TeleopSession::start() {
  stream_ = std::make_unique<Stream>();
  SiteChannel site =
      open_site_channel(options_.address, options_.credentials, options_.operator_name);
  stream_->channel = std::move(site.channel);
  const auto connect_deadline = std::chrono::system_clock::now() +
                                std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                    std::chrono::duration<double>(options_.connect_timeout));
  if (!stream_->channel->WaitForConnected(connect_deadline)) {
    throw std::runtime_error("cannot reach the remote site at " + options_.address + " within " +
                             std::to_string(options_.connect_timeout) + " s");
  }
  stream_->stub = v1::RemoteSite::NewStub(stream_->channel);
  if (site.insecure) stream_->context.AddMetadata("tether-operator", options_.operator_name);
  if (options_.plane == DataPlane::kDatagram) stream_->context.AddMetadata("tether-datagram", "1");
  stream_->rw = stream_->stub->Teleoperate(&stream_->context);
  reader_ = std::thread([this] { read_loop(); });
  sampler_ = std::thread([this] { sample_loop(); });
}

int increment_pieces(const OperatorIncrement& increment) {
  const double n = std::max({increment.increment.head<3>().norm() / kMaxIncrementTranslation,
                             increment.increment.tail<3>().norm() / kMaxIncrementRotation,
                             std::abs(increment.arm_angle_increment) / kMaxIncrementRotation});
  // Not finite, or beyond any pause: the remote refuses it, naming the field.
  if (!(n <= kMaxIncrementPieces)) return 1;
  return std::max(1, static_cast<int>(std::ceil(n)));
}

FeltShares felt_shares(const Vector6& rendered, const ForceReflectionConfig& reflection,
                       const Vector6& F_m, const Vector6& F_c, const Vector6& v_m) {
  const auto factor = [](const Eigen::Ref<const Vector3>& rendered_group, double scale,
                         const Eigen::Ref<const Vector3>& channel,
                         const Eigen::Ref<const Vector3>& coupling) -> double {
    if (!(scale > 0.0)) return 0.0;
    const double asked = (scale * (channel + coupling)).norm();
    return asked > 1e-12 ? std::min(1.0, rendered_group.norm() / asked) : 1.0;
  };
  const double force =
      factor(rendered.head<3>(), reflection.force_scale, F_m.head<3>(), F_c.head<3>());
  const double torque =
      factor(rendered.tail<3>(), reflection.torque_scale, F_m.tail<3>(), F_c.tail<3>());
  FeltShares out;
  out.channel << force * F_m.head<3>(), torque * F_m.tail<3>();
  out.coupling_power =
      force * F_c.head<3>().dot(v_m.head<3>()) + torque * F_c.tail<3>().dot(v_m.tail<3>());
  return out;
}

void TeleopSession::stop() { stop_.store(true); }

void TeleopSession::cancel() {
  stop();
  if (stream_) stream_->context.TryCancel();
}

void TeleopSession::set_task(const TaskParameters& task) {
  gain_translation_.store(task.teleoperation.gain.head<3>().cwiseAbs().maxCoeff());
  gain_rotation_.store(task.teleoperation.gain.segment<3>(3).cwiseAbs().maxCoeff());
  task_method_.store(static_cast<int>(task.teleoperation.reflection));
}

void TeleopSession::attach_model(LocalModel* model, bool reflect_from_model) {
  reflect_from_model_.store(reflect_from_model);
  model_.store(model, std::memory_order_release);
}

void TeleopSession::sample_loop() {
  if (options_.realtime) {
    sched_param param{};
    param.sched_priority = 70;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0) {
      spdlog::debug("teleoperation: SCHED_FIFO not permitted, normal priority");
    }
  }
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / options_.rate));
  const double dt = 1.0 / options_.rate;
  if (options_.plane == DataPlane::kDatagram) {
    // The site's answer (its keys, or none) comes a round trip after the stream opened;
    // sampling begins once the plane is known, so that no increment goes on the stream
    // only to be overtaken by the datagrams after it. Nothing moves before: the session
    // and the task have not begun.
    const std::int64_t give_up =
        now_ns() + static_cast<std::int64_t>(options_.connect_timeout * 1e9);
    while (!metadata_read_.load(std::memory_order_acquire) && !stop_.load() && now_ns() < give_up) {
      sleep_until_ns(now_ns() + 1000000);
    }
  }
  const std::int64_t t0 = now_ns();
  start_ns_.store(t0);
  std::int64_t deadline = t0;
  std::uint64_t sequence = 0;
  std::uint64_t last_motion = 0;  // newest increment that carried the switch held
  double ended_at = -1.0;         // [s] when the device ended; the stream then lingers
  MasterPassivity passivity;
  double coupling_in = 0.0;  // [J] the operator's work on the coupling damping
  double sent_in = 0.0;      // [J] the hand port's input as the arm's port may spend it
  WaveImpedance wave_b{1.0, 1.0};
  WaveMaster wave(wave_b);
  ReflectionMethod method = ReflectionMethod::kNone;
  v1::TeleopIncrement message;
  // The datagram plane's segment: the motion summed since the switch or mode last changed
  // (or the plane was taken up), which each datagram carries whole (teleop_datagram.h).
  datagram::IncrementMessage dgram;
  bool segment_open = false;
  std::array<double, 7> segment_sum{};
  std::uint64_t segment_length = 0;
  double next_trace = 0.0;
  std::int64_t last_sample_ns = 0;
  while (!stop_.load(std::memory_order_acquire) && !finished_.load()) {
    sleep_until_ns(deadline);
    const std::int64_t now = now_ns();
    const double t = static_cast<double>(now - t0) * 1e-9;
    if (options_.duration > 0.0 && t >= options_.duration) break;
    OperatorIncrement increment = input_.sample(t);
    const ReflectionSample reflection = latest_reflection();
    if (!increment.valid && ended_at < 0.0) {
      if (sequence == 0) break;  // a device that never gave a sample
      ended_at = t;
    }
    if (ended_at >= 0.0) {
      // The device ended: hold the switch with no motion until the remote has played out
      // every increment, then settle; a link's delay must not cut the last motion short.
      if (reflection.applied_sequence >= last_motion && t - ended_at >= options_.settle) break;
      // A remote that stopped will play out nothing more.
      if (reflection.state == ExecutorState::kStopped ||
          reflection.state == ExecutorState::kStopping ||
          reflection.state == ExecutorState::kRecovering) {
        break;
      }
      if (t - ended_at > 30.0) break;
      increment = OperatorIncrement{};
      increment.time = t;
      increment.mode = input_.mode();
      increment.deadman = true;
    } else if (increment.deadman && increment.valid) {
      enabled_once_.store(true);
    }
    // A late sample carries more than one period's motion; one message may carry at most
    // kMaxIncrement*, so it goes as several, numbered in turn.
    const int pieces = increment_pieces(increment);
    sequence += static_cast<std::uint64_t>(pieces);
    if (ended_at < 0.0 && increment.deadman && increment.valid) last_motion = sequence;

    // The hand-controller port of the reflection channel: v_m in remote units, F_m the
    // remote's wrench (delayed) such that the hand renders −S ⊙ F_m.
    // The task this session started says the channel from its first sample; until the
    // remote reports it running, its reflections still describe the task before.
    const int known = task_method_.load(std::memory_order_relaxed);
    const ReflectionMethod wanted =
        known >= 0 ? static_cast<ReflectionMethod>(known) : reflection.reflection;
    if (wanted != method || (method == ReflectionMethod::kWave &&
                             !(reflection.wave_impedance.translation == wave_b.translation &&
                               reflection.wave_impedance.rotation == wave_b.rotation &&
                               reflection.wave_impedance.filter_hz == wave_b.filter_hz))) {
      // A new task's channel starts from rest.
      method = wanted;
      passivity.reset();
      coupling_in = 0.0;
      if (method == ReflectionMethod::kWave && reflection.wave_impedance.translation > 0.0 &&
          reflection.wave_impedance.rotation > 0.0 && reflection.wave_impedance.filter_hz >= 0.0 &&
          reflection.wave_impedance.filter_hz <= 1000.0) {
        wave_b = reflection.wave_impedance;
        wave = WaveMaster(wave_b);
      }
    }
    // The time this sample covers: one period, or, for a late sample (the thread was held
    // up), the time since the last one, whose motion it carries. Over one period its
    // velocity would be several times the hand's, and the coupling damping and the channel
    // would render that as a kick on the hand the arm then follows.
    const double since_last =
        last_sample_ns == 0 ? dt : static_cast<double>(now - last_sample_ns) * 1e-9;
    last_sample_ns = now;
    const double sample_dt = since_last > 1.5 * dt ? std::min(since_last, 0.05) : dt;
    const Vector6 v_m = increment.increment / sample_dt;
    // The other end of the hand's port: the remote, or the model when the hand feels it.
    double other_in = reflection.slave_in;
    Vector6 F_m = input_.config().reflection.source == ForceReflectionConfig::Source::kTrackingError
                      ? Vector6(-reflection.tracking_error)
                      : reflection.reflected;
    LocalModel* model = model_.load(std::memory_order_acquire);
    if (model != nullptr) {
      // Camera mode: the model maps and reflects through the EYE frame the remote reported
      // with its reflection, not the one its task started with (the cameras may move).
      if (reflection.has_eye) model->set_eye(reflection.world_R_eye);
      // The model keeps the remote's pace: it advances by the time that really passed (a
      // late sample carries more than one period), at most 50 ms at once.
      model->step(increment.increment, increment.arm_angle_increment, increment.mode,
                  increment.deadman && increment.valid, sent_in, std::min(since_last, 0.05));
      if (reflect_from_model_.load(std::memory_order_relaxed)) {
        F_m = model->wrench();
        other_in = model->slave_in();
      }
    }
    if (!F_m.allFinite()) F_m.setZero();
    master_.wave.setZero();
    switch (method) {
      case ReflectionMethod::kNone:
        break;
      case ReflectionMethod::kPassivity: {
        // What may leave the channel at the hand is bounded twice: by the slave port's input
        // (the two-port channel's passivity) and by the hand's own input (the one-port
        // condition of haptic rendering, Hannaford and Ryu: everything beyond the hand —
        // link, model or remote, the arm's own controller — gives back no more than the
        // hand put in). The second holds the loop that rings with no delay at all: the
        // arm's and the wrench filter's lag against a light, lightly damped hand at a high
        // reflection scale, which a channel observer cannot see.
        const double may_leave = std::min(other_in, passivity.energies().in);
        // The damping controller, unless the hand's clamp would cut its damping (and with it
        // the dissipation): then the controller that only lowers the wrench.
        const Vector6 damped = passivity.control(v_m, F_m, may_leave, sample_dt);
        const ForceReflectionConfig& c = input_.config().reflection;
        const bool clamped = damped.head<3>().norm() * c.force_scale > c.max_force ||
                             damped.tail<3>().norm() * c.torque_scale > c.max_torque;
        F_m = clamped ? passivity.control_scaled(v_m, F_m, may_leave, sample_dt) : damped;
        break;
      }
      case ReflectionMethod::kWave:
        wave.set_remote_in(reflection.slave_in);
        wave.step(v_m,
                  reflection.return_wave.allFinite() ? reflection.return_wave : Vector6::Zero(),
                  sample_dt);
        F_m = wave.force();
        master_.wave = wave.forward_wave();
        break;
    }
    // The coupling damping (ForceReflectionConfig::damping_ratio), in remote units: the
    // hand renders −S ⊙ F_m, so +b/S ⊙ v_m renders −b ⊙ v_m. Isotropic, so the same in
    // every mode's axes. It is the hand's own, not the channel's: left out of the hand port's
    // observer and its one-port bound, but the operator's work on it is added to what the
    // arm's port may spend (sent_in, below).
    const ForceReflectionConfig& rc0 = input_.config().reflection;
    Vector6 F_coupling = Vector6::Zero();
    if (rc0.source != ForceReflectionConfig::Source::kNone && rc0.damping_ratio > 0.0) {
      F_coupling.head<3>() = rc0.damping_ratio * gain_translation_.load() * v_m.head<3>();
      F_coupling.tail<3>() = rc0.damping_ratio * gain_rotation_.load() * v_m.tail<3>();
    }
    input_.reflect(F_m + F_coupling, -(F_m + F_coupling));
    // Account what the hand actually felt: the rendered wrench back in remote units.
    const ForceReflectionConfig& rc = input_.config().reflection;
    const Vector6& rendered = input_.reflected_wrench();
    // The clamp scales the channel's wrench and the coupling damping alike (each group
    // along its own direction): the channel's share is that factor times F_m.
    const FeltShares felt = felt_shares(rendered, rc, F_m, F_coupling, v_m);
    const Vector6& F_felt = felt.channel;
    if (std::isfinite(felt.coupling_power) && felt.coupling_power > 0.0) {
      coupling_in += felt.coupling_power * sample_dt;
    }
    if (method == ReflectionMethod::kWave) {
      master_.energies = wave.energies();
    } else {
      passivity.commit(v_m, F_felt, sample_dt);
      master_.energies = passivity.energies();
    }
    // The budget the arm's port may spend: the operator's work at the handle, the coupling
    // damping's share included. The two-port from the handle to the environment stays
    // passive (the arm never gives out more than the operator put in), and the arm no
    // longer starves and lurches where the operator's work went into the damping rather
    // than the channel. The hand's own accounts, and its one-port bound, stay the channel's.
    sent_in = master_.energies.in + (method == ReflectionMethod::kPassivity ? coupling_in : 0.0);
    min_master_observed_ = std::min(min_master_observed_, master_.energies.observed);
    peak_rendered_torque_ = std::max(peak_rendered_torque_, rendered.tail<3>().norm());

    MasterChannel sent = master_;
    sent.energies.in = sent_in;
    OperatorIncrement piece = increment;
    piece.increment /= pieces;
    piece.arm_angle_increment /= pieces;
    bool written = true;
    const bool by_datagram = use_datagrams(now) && sequence <= 0xFFFFFFFFULL;
    if (by_datagram) {
      const bool enabled = increment.deadman && increment.valid;
      const auto mode = static_cast<std::uint8_t>(wire::wire_mode(increment.mode));
      if (!segment_open || enabled != dgram.deadman || mode != dgram.mode) {
        segment_open = true;
        segment_sum.fill(0.0);
        segment_length = 0;
      }
      for (int i = 0; i < 6; ++i)
        segment_sum[static_cast<std::size_t>(i)] += increment.increment[i];
      segment_sum[6] += increment.arm_angle_increment;
      segment_length += static_cast<std::uint64_t>(pieces);
      dgram.sequence = static_cast<std::uint32_t>(sequence);
      dgram.pieces = static_cast<std::uint8_t>(pieces);
      dgram.ground_time_ns = static_cast<std::uint64_t>(now);
      dgram.deadman = enabled;
      dgram.mode = mode;
      dgram.segment_length = static_cast<std::uint16_t>(
          std::min<std::uint64_t>(std::min<std::uint64_t>(segment_length, sequence), 0xFFFF));
      for (std::size_t i = 0; i < 7; ++i) dgram.motion[i] = static_cast<float>(segment_sum[i]);
      dgram.master_in = sent.energies.in;
      dgram.master_observed = static_cast<float>(sent.energies.observed);
      dgram.master_dissipated = static_cast<float>(sent.energies.dissipated);
      dgram.has_wave = method == ReflectionMethod::kWave;
      for (std::size_t i = 0; i < 6; ++i) {
        dgram.wave[i] = static_cast<float>(sent.wave[static_cast<Eigen::Index>(i)]);
      }
      for (int k = pieces - 1; k >= 0; --k) {
        send_time_ns_[(sequence - static_cast<std::uint64_t>(k)) % kSendRing].store(
            now, std::memory_order_release);
      }
      stamped_.store(sequence, std::memory_order_release);
      // A datagram the socket refuses is lost like one the path drops: the next carries its
      // motion. The session ends on the stream (the control plane), not here. Refused before
      // the site ever answered (ICMP port unreachable: nothing listens for UDP there, e.g. a
      // byte-stream proxy in between), the plane is not there: this sample and the rest go
      // on the stream.
      if (SessionRecorder* r = recorder_.load()) {
        for (int k = pieces - 1; k >= 0; --k) {
          wire::to_wire(piece, sequence - static_cast<std::uint64_t>(k), now, &message);
          wire::to_wire(sent, &message);
          r->sent(message, DataPlane::kDatagram);
        }
      }
      if (!stream_->datagrams->send(dgram) && last_datagram_reflection_ns_.load() == 0) {
        fallen_back_.store(true);
        {
          std::lock_guard lock(mutex_);
          fallback_ = "the site's datagram port " + stream_->datagrams->peer() +
                      " refused the first datagrams";
          spdlog::warn("teleoperation: {}; increments go on the stream", fallback_);
        }
        segment_open = false;
        for (int k = pieces - 1; k >= 0 && written; --k) {
          const std::uint64_t number = sequence - static_cast<std::uint64_t>(k);
          wire::to_wire(piece, number, now, &message);
          wire::to_wire(sent, &message);
          std::lock_guard lock(stream_->write_mutex);
          written = !stream_->writes_done && stream_->rw->Write(message);
          if (SessionRecorder* r = recorder_.load(); r != nullptr && written) {
            r->sent(message, DataPlane::kStream);
          }
        }
        stream_increments_ += static_cast<std::uint64_t>(pieces);
      } else {
        std::lock_guard lock(stream_->write_mutex);
        written = !stream_->writes_done;
      }
    } else {
      // Back on the stream: a later switch to datagrams begins a segment of its own.
      segment_open = false;
      for (int k = pieces - 1; k >= 0 && written; --k) {
        const std::uint64_t number = sequence - static_cast<std::uint64_t>(k);
        send_time_ns_[number % kSendRing].store(now, std::memory_order_release);
        stamped_.store(number, std::memory_order_release);
        wire::to_wire(piece, number, now, &message);
        wire::to_wire(sent, &message);
        std::lock_guard lock(stream_->write_mutex);
        written = !stream_->writes_done && stream_->rw->Write(message);
        if (SessionRecorder* r = recorder_.load(); r != nullptr && written) {
          r->sent(message, DataPlane::kStream);
        }
      }
      stream_increments_ += static_cast<std::uint64_t>(pieces);
    }
    if (!written) break;
    sent_.store(sequence);
    if (t >= next_trace && trace_.size() < trace_.capacity()) {
      next_trace = t + 0.02;
      TeleopTrace row;
      row.time = t;
      row.remote_force = reflection.measured.head<3>().norm();
      row.rendered_force = rendered.head<3>().norm();
      row.remote_torque = reflection.measured.tail<3>().norm();
      row.rendered_torque = rendered.tail<3>().norm();
      row.master = master_.energies;
      row.slave = reflection.channel.slave;
      row.enabled = increment.deadman && increment.valid;
      if (model != nullptr) {
        row.model_aux0 = model->aux0();
        row.predicted_aux0 = model->predicted_aux0();
      }
      trace_.push_back(row);
    }
    deadline += period_ns;
    const std::int64_t late = now_ns() - deadline;
    if (late > 0) deadline += (late / period_ns + 1) * period_ns;  // skip, don't burst
  }
  if (dgram.sequence != 0 && datagrams_ready_.load() && !fallen_back_.load()) {
    // The end on the datagram plane as well: on a lossy path the stream's end can arrive a
    // few retransmission timeouts after the last datagram, and the site would take the
    // silence between for a stall. Ten copies a millisecond apart outlast a burst of loss.
    dgram.end = true;
    for (int copy = 0; copy < 10; ++copy) {
      stream_->datagrams->send(dgram);
      sleep_until_ns(now_ns() + 1000000);
    }
  }
  std::lock_guard lock(stream_->write_mutex);
  if (!stream_->writes_done) {
    stream_->writes_done = true;
    stream_->rw->WritesDone();
  }
}

void TeleopSession::read_loop() {
  if (options_.plane == DataPlane::kDatagram) {
    // The site's answer to the request for a datagram session comes as the stream's initial
    // metadata (with its first reflection, or its refusal).
    const std::int64_t asked = now_ns();
    stream_->rw->WaitForInitialMetadata();
    // The site answers with its first reflection: a round trip, the first estimate of the
    // path (the fallback's wait is three of them), until reflections measure it better.
    double expected = 0.0;
    round_trip_.compare_exchange_strong(expected, static_cast<double>(now_ns() - asked) * 1e-9);
    {
      const auto& metadata = stream_->context.GetServerInitialMetadata();
      const auto keys_it = metadata.find("tether-datagram-session");
      const auto port_it = metadata.find("tether-datagram-port");
      if (keys_it != metadata.end() && port_it != metadata.end()) {
        const auto keys = datagram::keys_from_text(
            std::string_view(keys_it->second.data(), keys_it->second.size()));
        int port = 0;
        try {
          port = std::stoi(std::string(port_it->second.data(), port_it->second.size()));
        } catch (const std::exception&) {
          port = 0;
        }
        const std::string host = host_of(options_.address);
        if (keys && port > 0 && port < 65536 && !host.empty()) {
          try {
            stream_->datagrams = std::make_unique<GroundDatagramLink>(host, port, *keys);
            datagrams_ready_.store(true, std::memory_order_release);
            datagram_reader_ = std::thread([this] { datagram_loop(); });
          } catch (const std::exception& e) {
            std::lock_guard lock(mutex_);
            fallback_ = e.what();
          }
        } else {
          std::lock_guard lock(mutex_);
          fallback_ = "the site's datagram session could not be read";
        }
      }
    }
  }
  metadata_read_.store(true, std::memory_order_release);
  v1::ForceReflection in;
  while (stream_->rw->Read(&in)) {
    const std::int64_t arrived = now_ns();
    last_stream_reflection_ns_.store(arrived);
    if (SessionRecorder* r = recorder_.load()) r->reflection(in);
    ReflectionSample sample = wire::to_domain(in);
    std::lock_guard lock(mutex_);
    absorb(std::move(sample), arrived, true, false);
  }
  const grpc::Status status = stream_->rw->Finish();
  {
    std::lock_guard lock(mutex_);
    stream_ok_ = status.ok();
    stream_status_ =
        status.ok() ? "OK"
                    : "code " + std::to_string(status.error_code()) + ": " + status.error_message();
  }
  finished_.store(true);
  if (stream_->datagrams) stream_->datagrams->close();
}

void TeleopSession::datagram_loop() {
  GroundDatagramLink& link = *stream_->datagrams;
  while (!finished_.load()) {
    std::int64_t arrived = 0;
    const auto m = link.receive(100, arrived);
    if (!m) continue;
    last_datagram_reflection_ns_.store(arrived);
    std::lock_guard lock(mutex_);
    // Reflections are state: one older than the newest taken is dropped.
    const auto behind =
        static_cast<std::int32_t>(m->cycle - static_cast<std::uint32_t>(latest_.cycle));
    if (reflections_ > 0 && behind <= 0) continue;
    ReflectionSample sample = latest_;
    sample.cycle = latest_.cycle + static_cast<std::uint64_t>(static_cast<std::int64_t>(behind));
    if (reflections_ == 0) sample.cycle = m->cycle;
    sample.applied_sequence = m->applied_sequence;
    sample.state = wire::to_executor_state(m->state);
    sample.mode = wire::to_mode(m->mode, sample.mode);
    sample.reflection = static_cast<ReflectionMethod>(m->method);
    for (int i = 0; i < 6; ++i) sample.reflected[i] = m->reflected[static_cast<std::size_t>(i)];
    sample.slave_in = m->slave_in;
    sample.channel.slave.in = m->slave_in;
    sample.remote_time_ns = m->remote_time_ns;
    sample.increment_arrival_ns = m->hold_ns == datagram::ReflectionMessage::kNoHold
                                      ? 0
                                      : m->remote_time_ns - std::int64_t{m->hold_ns};
    if (m->has_detail) {
      for (int i = 0; i < 6; ++i) {
        sample.measured[i] = m->measured[static_cast<std::size_t>(i)];
        sample.tracking_error[i] = m->tracking_error[static_cast<std::size_t>(i)];
      }
      sample.task_time = m->task_time;
      sample.channel.slave.observed = m->slave_observed;
      sample.channel.slave.dissipated = m->slave_dissipated;
    }
    if (m->has_wave) {
      for (int i = 0; i < 6; ++i)
        sample.return_wave[i] = m->return_wave[static_cast<std::size_t>(i)];
      sample.wave_impedance.translation = m->wave_impedance[0];
      sample.wave_impedance.rotation = m->wave_impedance[1];
      sample.wave_impedance.filter_hz = m->wave_impedance[2];
    }
    sample.has_eye = m->has_eye;
    if (m->has_eye) {
      const Eigen::Quaterniond q(m->eye[0], m->eye[1], m->eye[2], m->eye[3]);
      sample.world_R_eye = q.normalized().toRotationMatrix();
      sample.eye_time_ns = m->eye_time_ns;
    }
    // A change in what the site passed over (lost or stale) marks an advance that made no
    // round trip, as the stream's counters do.
    const bool skipped = skipped_known_ && m->skipped != skipped_;
    if (SessionRecorder* r = recorder_.load()) {
      v1::ForceReflection as_received;
      wire::to_wire(sample, &as_received);
      r->reflection(as_received);
    }
    absorb(std::move(sample), arrived, false, skipped);
    skipped_ = m->skipped;
    skipped_known_ = true;
  }
}

bool TeleopSession::use_datagrams(std::int64_t now) {
  if (!datagrams_ready_.load(std::memory_order_acquire) || fallen_back_.load()) return false;
  std::int64_t since = datagrams_since_ns_.load();
  if (since == 0) {
    datagrams_since_ns_.store(now);
    since = now;
  }
  // Back to the stream when the stream delivers and no datagram ever came back: UDP
  // blocked on the way. Once the plane worked it stays: loss and outages are what its
  // concealment and the site's stall rule are for, and after an outage TCP's backlog can
  // arrive before the first datagram does. The wait covers a round trip of seconds.
  if (last_datagram_reflection_ns_.load() != 0) return true;
  const double wait = std::max(1.0, 3.0 * round_trip_.load());
  const auto wait_ns = static_cast<std::int64_t>(wait * 1e9);
  if (now - since > wait_ns && now - last_stream_reflection_ns_.load() < 250'000'000) {
    fallen_back_.store(true);
    std::lock_guard lock(mutex_);
    fallback_ = "no reflection datagram for " + std::to_string(static_cast<int>(wait * 1e3)) +
                " ms while the stream delivered";
    spdlog::warn("teleoperation: {}; increments go on the stream", fallback_);
    return false;
  }
  return true;
}

void TeleopSession::absorb(ReflectionSample sample, std::int64_t arrived, bool from_stream,
                           bool skipped) {
  if (from_stream && reflections_ > 0 && sample.cycle < latest_.cycle) {
    // Behind the datagrams: only what they leave out (the counters, the breach, the
    // ground's port as the site saw it).
    latest_.teleoperation = sample.teleoperation;
    latest_.breach = sample.breach;
    latest_.channel.master = sample.channel.master;
    return;
  }
  ++reflections_;
  // The site counts over its life, across streams and grounds (it numbers increments on
  // from stream to stream): this session's counts are what changed from the stream's
  // first reflection, which the site sends before it has read the stream's increments.
  if (reflections_ == 1) first_counters_ = sample.teleoperation;
  const TeleoperationCounters& before =
      reflections_ == 1 ? sample.teleoperation : latest_.teleoperation;
  // Increments the site passed over — dropped at a task's start (stale: queued, or
  // refused by its full queue, while nothing took them) or a gap in the numbering (lost)
  // — made no round trip: the advance that skips them says nothing of when they were
  // sent, which may be the whole idle time before the task started.
  const bool passed_over = skipped || sample.teleoperation.stale != before.stale ||
                           sample.teleoperation.lost != before.lost;
  // Bounded by what this session stamped (not by sent_, stored after the write returns):
  // the site may answer an increment before the writing thread gets that far, and were it
  // the session's last, its round trip would go unmeasured.
  const std::uint64_t sent = stamped_.load(std::memory_order_acquire);
  const std::uint64_t newest = std::min<std::uint64_t>(sample.applied_sequence, sent);
  // The ring holds the sampling times of the last kSendRing increments numbered (a sample
  // being written included): an older increment's slot holds a newer one's time.
  const std::uint64_t numbered = sent + static_cast<std::uint64_t>(kMaxIncrementPieces);
  const std::uint64_t oldest = numbered >= kSendRing ? numbered - kSendRing + 1 : 1;
  if (!passed_over) {
    // Every increment applied since the last reflection made the round trip just now.
    for (std::uint64_t s = std::max(measured_up_to_ + 1, oldest); s <= newest; ++s) {
      const std::int64_t sent_at = send_time_ns_[s % kSendRing].load(std::memory_order_acquire);
      latencies_.push_back(static_cast<double>(arrived - sent_at) * 1e-9);
    }
  }
  measured_up_to_ = std::max(measured_up_to_, newest);
  // NTP-style: t1 sent, t2 arrived at the remote, t3 the remote's reflection, t4 here.
  if (!passed_over && sample.increment_arrival_ns != 0 && sample.remote_time_ns != 0 &&
      newest >= oldest && newest == sample.applied_sequence) {
    const double t1 =
        static_cast<double>(send_time_ns_[newest % kSendRing].load(std::memory_order_acquire));
    const auto t2 = static_cast<double>(sample.increment_arrival_ns);
    const auto t3 = static_cast<double>(sample.remote_time_ns);
    const auto t4 = static_cast<double>(arrived);
    const double path = ((t4 - t1) - (t3 - t2)) * 1e-9;
    if (path > 0.0 && path <= best_path_) {
      best_path_ = path;
      round_trip_.store(path);
      one_way_delay_ = 0.5 * path;
      clock_offset_ = 0.5 * ((t2 - t1) + (t3 - t4)) * 1e-9;
      link_estimated_ = true;
    }
  }
  peak_force_ = std::max(peak_force_, sample.measured.head<3>().norm());
  peak_torque_ = std::max(peak_torque_, sample.measured.tail<3>().norm());
  min_slave_observed_ = std::min(min_slave_observed_, sample.channel.slave.observed);
  latest_ = std::move(sample);
}

ReflectionSample TeleopSession::latest_reflection() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

TeleopReport TeleopSession::wait() {
  if (sampler_.joinable()) sampler_.join();
  if (reader_.joinable()) reader_.join();
  if (datagram_reader_.joinable()) datagram_reader_.join();
  return build_report();
}

TeleopReport TeleopSession::build_report() {
  std::lock_guard lock(mutex_);
  TeleopReport r;
  r.sent = sent_.load();
  r.reflections = reflections_;
  r.measured = latencies_.size();
  r.latency_p50 = percentile(latencies_, 50.0);
  r.latency_p99 = percentile(latencies_, 99.0);
  r.latency_max =
      latencies_.empty() ? 0.0 : *std::max_element(latencies_.begin(), latencies_.end());
  r.peak_force = peak_force_;
  r.peak_torque = peak_torque_;
  r.reflection = latest_.reflection;
  r.min_master_observed = min_master_observed_;
  r.min_slave_observed = min_slave_observed_;
  r.master_dissipated = master_.energies.dissipated;
  r.slave_dissipated = latest_.channel.slave.dissipated;
  r.peak_rendered_torque = peak_rendered_torque_;
  r.trace = trace_;
  r.one_way_delay = one_way_delay_;
  r.clock_offset = clock_offset_;
  r.link_estimated = link_estimated_;
  if (const LocalModel* model = model_.load(std::memory_order_acquire); model != nullptr) {
    r.predicted_aux0 = model->predicted_aux0();
    r.prediction = model->prediction_error();
  }
  r.last = latest_;
  if (reflections_ > 0) {
    // This session's counts (read_loop): the site's own run over its life.
    TeleoperationCounters& c = r.last.teleoperation;
    c.applied -= first_counters_.applied;
    c.lost -= first_counters_.lost;
    c.duplicates -= first_counters_.duplicates;
    c.discarded -= first_counters_.discarded;
    c.stale -= first_counters_.stale;
    c.concealed -= first_counters_.concealed;
  }
  r.stream_status = stream_status_;
  r.ok = stream_ok_;
  r.plane =
      datagrams_ready_.load() && !fallen_back_.load() ? DataPlane::kDatagram : DataPlane::kStream;
  r.datagrams.fallback = fallback_;
  r.datagrams.stream_increments = stream_increments_;
  if (stream_ && stream_->datagrams) {
    const GroundDatagramStats d = stream_->datagrams->stats();
    r.datagrams.offered = true;
    r.datagrams.peer = stream_->datagrams->peer();
    r.datagrams.sent = d.sent;
    r.datagrams.bytes_sent = d.bytes_sent;
    r.datagrams.received = d.received;
    r.datagrams.bytes_received = d.bytes_received;
    r.datagrams.dropped = d.drops.forged + d.drops.replayed + d.drops.malformed + d.drops.invalid;
  }
  return r;
}

}  // namespace tether::local

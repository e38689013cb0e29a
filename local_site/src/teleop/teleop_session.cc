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

#include "link/channel.h"
#include "link/wire.h"
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
}

TeleopSession::~TeleopSession() {
  stop();
  if (stream_) stream_->context.TryCancel();
  if (sampler_.joinable()) sampler_.join();
  if (reader_.joinable()) reader_.join();
}

void TeleopSession::start() {
  stream_ = std::make_unique<Stream>();
  SiteChannel site =
      open_site_channel(options_.address, options_.credentials, options_.operator_name);
  stream_->channel = std::move(site.channel);
  if (!stream_->channel->WaitForConnected(std::chrono::system_clock::now() +
                                          std::chrono::seconds(5))) {
    throw std::runtime_error("cannot reach the remote site at " + options_.address);
  }
  stream_->stub = v1::RemoteSite::NewStub(stream_->channel);
  if (site.insecure) stream_->context.AddMetadata("tether-operator", options_.operator_name);
  stream_->rw = stream_->stub->Teleoperate(&stream_->context);
  reader_ = std::thread([this] { read_loop(); });
  sampler_ = std::thread([this] { sample_loop(); });
}

void TeleopSession::stop() { stop_.store(true); }

void TeleopSession::sample_loop() {
  if (options_.realtime) {
    sched_param param{};
    param.sched_priority = 70;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0) {
      spdlog::debug("teleoperation: SCHED_FIFO not permitted, normal priority");
    }
  }
  const auto period_ns = static_cast<std::int64_t>(std::llround(1e9 / options_.rate));
  const std::int64_t t0 = now_ns();
  std::int64_t deadline = t0;
  std::uint64_t sequence = 0;
  v1::TeleopIncrement message;
  while (!stop_.load(std::memory_order_acquire) && !finished_.load()) {
    sleep_until_ns(deadline);
    const std::int64_t now = now_ns();
    const double t = static_cast<double>(now - t0) * 1e-9;
    if (options_.duration > 0.0 && t >= options_.duration) break;
    const OperatorIncrement increment = input_.sample(t);
    if (!increment.valid && sequence > 0) break;  // the device (or script) ended
    ++sequence;
    send_time_ns_[sequence % kSendRing].store(now, std::memory_order_release);
    wire::to_wire(increment, sequence, now, &message);
    {
      std::lock_guard lock(stream_->write_mutex);
      if (stream_->writes_done || !stream_->rw->Write(message)) break;
    }
    sent_.store(sequence);
    const ReflectionSample reflection = latest_reflection();
    input_.reflect(reflection.measured, reflection.tracking_error);
    deadline += period_ns;
    const std::int64_t late = now_ns() - deadline;
    if (late > 0) deadline += (late / period_ns + 1) * period_ns;  // skip, don't burst
  }
  std::lock_guard lock(stream_->write_mutex);
  if (!stream_->writes_done) {
    stream_->writes_done = true;
    stream_->rw->WritesDone();
  }
}

void TeleopSession::read_loop() {
  v1::ForceReflection in;
  while (stream_->rw->Read(&in)) {
    const std::int64_t arrived = now_ns();
    ReflectionSample sample = wire::to_domain(in);
    std::lock_guard lock(mutex_);
    ++reflections_;
    const std::uint64_t newest = std::min<std::uint64_t>(sample.applied_sequence, sent_.load());
    // Every increment applied since the last reflection made the round trip just now.
    for (std::uint64_t s =
             std::max(measured_up_to_ + 1, newest > kSendRing ? newest - kSendRing + 1 : 1);
         s <= newest; ++s) {
      const std::int64_t sent_at = send_time_ns_[s % kSendRing].load(std::memory_order_acquire);
      latencies_.push_back(static_cast<double>(arrived - sent_at) * 1e-9);
    }
    measured_up_to_ = std::max(measured_up_to_, newest);
    peak_force_ = std::max(peak_force_, sample.measured.head<3>().norm());
    peak_torque_ = std::max(peak_torque_, sample.measured.tail<3>().norm());
    latest_ = std::move(sample);
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
}

ReflectionSample TeleopSession::latest_reflection() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

TeleopReport TeleopSession::wait() {
  if (sampler_.joinable()) sampler_.join();
  if (reader_.joinable()) reader_.join();
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
  r.last = latest_;
  r.stream_status = stream_status_;
  r.ok = stream_ok_;
  return r;
}

}  // namespace tether::local

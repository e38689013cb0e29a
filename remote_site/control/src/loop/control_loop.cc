#include "tether/remote/loop/control_loop.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tether/remote/loop/realtime.h"

namespace tether::remote {

using realtime::now_ns;
using realtime::sleep_until_ns;

void LatencyHistogram::add(double seconds) noexcept {
  const double us = seconds * 1e6;
  const auto bin =
      static_cast<std::size_t>(std::clamp(us, 0.0, static_cast<double>(bins_.size() - 1)));
  ++bins_[bin];
  ++count_;
  max_ = std::max(max_, seconds);
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  const auto target =
      static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen >= std::max<std::uint64_t>(target, 1)) return (static_cast<double>(i) + 0.5) * 1e-6;
  }
  return max_;
}

ControlLoop::ControlLoop(ArmInterface& arm, Executor& executor, Pacing pacing)
    : arm_(arm), executor_(executor), pacing_(pacing) {}

ControlLoop::~ControlLoop() { stop(); }

ExecutorState ControlLoop::step() { return run_cycle(0.0); }

ExecutorState ControlLoop::run_cycle(double wakeup_latency) {
  const std::int64_t t0 = now_ns();
  const ArmStatus status = arm_.read(state_);
  const ExecutorState s = executor_.cycle(state_, status, command_);
  // A task started: the state this cycle read is where a replay of it starts from (taken
  // before advance_to() moves the arm on).
  const bool restart = executor_.last_cycle().inputs.restart;
  if (restart) arm_.checkpoint(checkpoint_);
  arm_.write(command_);
  arm_time_ += executor_.period();
  arm_.advance_to(arm_time_);
  ++statistics_.cycles;
  const double compute = static_cast<double>(now_ns() - t0) * 1e-9;
  statistics_.compute_time.add(compute);
  timing_.store(CycleTiming{compute, wakeup_latency, statistics_.overruns});
  if (record_) {
    record_buffer_ = executor_.last_cycle();
    record_buffer_.compute_time = compute;
    record_buffer_.wakeup_latency = wakeup_latency;
    if (restart) record_buffer_.checkpoint = checkpoint_;
    if (!telemetry_.push(record_buffer_)) ++statistics_.telemetry_dropped;
    if (recording_on_.load(std::memory_order_relaxed) && !recording_.push(record_buffer_)) {
      ++statistics_.recording_dropped;
    }
  }
  // Wakes consumers blocked in wait_for_cycle(); no system call unless one is waiting.
  cycles_published_.fetch_add(1, std::memory_order_release);
  cycles_published_.notify_all();
  return s;
}

CycleTelemetry ControlLoop::latest() const noexcept {
  CycleTelemetry newest = executor_.telemetry();
  const CycleTiming timing = timing_.load();
  newest.compute_time = timing.compute_time;
  newest.wakeup_latency = timing.wakeup_latency;
  newest.overruns = timing.overruns;
  return newest;
}

std::uint64_t ControlLoop::wait_for_cycle(std::uint64_t seen) const {
  cycles_published_.wait(seen, std::memory_order_acquire);
  return cycles_published_.load(std::memory_order_acquire);
}

void ControlLoop::wake_waiters() {
  cycles_published_.fetch_add(1, std::memory_order_release);
  cycles_published_.notify_all();
}

void ControlLoop::run_cycles(std::uint64_t cycles) {
  if (running_.load()) throw std::logic_error("ControlLoop::run_cycles while the thread runs");
  for (std::uint64_t i = 0; i < cycles; ++i) run_cycle(0.0);
}

void ControlLoop::start() {
  if (running_.exchange(true)) return;
  stop_.store(false);
  thread_ = std::thread([this] { thread_main(); });
}

void ControlLoop::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  running_.store(false);
}

void ControlLoop::thread_main() {
  if (pacing_ == Pacing::kRealTime) {
    const realtime::Grant grant = realtime::enter_realtime(80, cpu_);
    realtime_refused_.store((grant.fifo_scheduling ? 0U : 1U) | (grant.memory_locked ? 0U : 2U) |
                                (grant.pinned ? 0U : 4U),
                            std::memory_order_release);
  }
  std::int64_t deadline = now_ns();
  std::int64_t previous_wake = -1;
  while (!stop_.load(std::memory_order_acquire)) {
    const auto period_ns = static_cast<std::int64_t>(std::llround(executor_.period() * 1e9));
    double lateness = 0.0;
    if (pacing_ == Pacing::kRealTime) {
      sleep_until_ns(deadline);
      const std::int64_t woke = now_ns();
      lateness = static_cast<double>(woke - deadline) * 1e-9;
      statistics_.wakeup_latency.add(lateness);
      if (previous_wake >= 0) {
        statistics_.period_jitter.add(
            std::abs(static_cast<double>(woke - previous_wake - period_ns)) * 1e-9);
      }
      previous_wake = woke;
    }
    executor_.notify_overruns(consecutive_overruns_, statistics_.overruns);
    run_cycle(lateness);
    const std::int64_t t1 = now_ns();
    deadline += period_ns;
    if (pacing_ == Pacing::kRealTime) {
      if (t1 > deadline) {
        ++statistics_.overruns;
        ++consecutive_overruns_;
        // Skip the deadlines already missed rather than running a burst of late cycles.
        const std::int64_t missed = (t1 - deadline) / period_ns + 1;
        deadline += missed * period_ns;
      } else {
        consecutive_overruns_ = 0;
      }
    }
  }
}

}  // namespace tether::remote

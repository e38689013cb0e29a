#include "tether/remote/loop/control_loop.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "loop/realtime.h"

namespace tether::remote {

using realtime::now_ns;
using realtime::sleep_until_ns;

void LatencyHistogram::add(double seconds) noexcept {
  const double us = seconds * 1e6;
  const auto bin = static_cast<std::size_t>(
      std::clamp(us, 0.0, static_cast<double>(bins_.size() - 1)));
  ++bins_[bin];
  ++count_;
  max_ = std::max(max_, seconds);
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  const auto target = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
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

ExecutorState ControlLoop::step() {
  const ArmStatus status = arm_.read(state_);
  const ExecutorState s = executor_.cycle(state_, status, command_);
  arm_.write(command_);
  arm_time_ += executor_.period();
  arm_.advance_to(arm_time_);
  ++statistics_.cycles;
  if (record_ && !telemetry_.push(executor_.last_cycle())) ++statistics_.telemetry_dropped;
  return s;
}

void ControlLoop::run_cycles(std::uint64_t cycles) {
  if (running_.load()) throw std::logic_error("ControlLoop::run_cycles while the thread runs");
  for (std::uint64_t i = 0; i < cycles; ++i) {
    const std::int64_t t0 = now_ns();
    step();
    statistics_.compute_time.add(static_cast<double>(now_ns() - t0) * 1e-9);
  }
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
  if (pacing_ == Pacing::kRealTime) realtime::enter_realtime("control loop", 80);
  std::int64_t deadline = now_ns();
  std::int64_t previous_wake = -1;
  while (!stop_.load(std::memory_order_acquire)) {
    const auto period_ns = static_cast<std::int64_t>(std::llround(executor_.period() * 1e9));
    if (pacing_ == Pacing::kRealTime) {
      sleep_until_ns(deadline);
      const std::int64_t woke = now_ns();
      statistics_.wakeup_latency.add(static_cast<double>(woke - deadline) * 1e-9);
      if (previous_wake >= 0) {
        statistics_.period_jitter.add(
            std::abs(static_cast<double>(woke - previous_wake - period_ns)) * 1e-9);
      }
      previous_wake = woke;
    }
    const std::int64_t t0 = now_ns();
    executor_.notify_overruns(consecutive_overruns_, statistics_.overruns);
    step();
    const std::int64_t t1 = now_ns();
    statistics_.compute_time.add(static_cast<double>(t1 - t0) * 1e-9);
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

#pragma once

// The control loop: one dedicated thread that runs the executor every period against an
// ArmInterface, on absolute deadlines (CLOCK_MONOTONIC, clock_nanosleep TIMER_ABSTIME) so
// timing errors never accumulate. A cycle that finishes after its deadline is an overrun;
// the executor stops the arm after the task's allowed number in a row. Missed deadlines
// are skipped, not caught up.
//
// Batch pacing runs the same cycles as fast as possible (the simulated arm integrates in
// lock-step), for scenario tests and faster-than-real-time studies.

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/loop/realtime.h"
#include "tether/remote/loop/spsc_ring.h"

namespace tether::remote {

enum class Pacing { kRealTime, kBatch };

// Microsecond histogram, 0…9999 µs (larger values land in the last bin).
class LatencyHistogram {
 public:
  void add(double seconds) noexcept;
  double percentile(double p) const;  // [s]
  double max() const { return max_; }
  std::uint64_t count() const { return count_; }

 private:
  std::array<std::uint32_t, 10000> bins_{};
  std::uint64_t count_ = 0;
  double max_ = 0.0;
};

struct LoopStatistics {
  std::uint64_t cycles = 0;
  std::uint64_t overruns = 0;
  std::uint64_t telemetry_dropped = 0;
  std::uint64_t recording_dropped = 0;  // samples the recorder's ring had no room for
  // |actual − nominal| period between consecutive wake-ups, and wake-up lateness.
  LatencyHistogram period_jitter;
  LatencyHistogram wakeup_latency;
  LatencyHistogram compute_time;  // read → write → advance, one cycle
};

using TelemetryRing = SpscRing<CycleTelemetry, 4096>;

class ControlLoop {
 public:
  ControlLoop(ArmInterface& arm, Executor& executor, Pacing pacing);
  ~ControlLoop();
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // The CPU start() pins the loop thread to (−1, the default: not pinned).
  void set_cpu(int cpu) noexcept { cpu_ = cpu; }
  // Starts the loop thread (tries SCHED_FIFO and locked memory; carries on without them).
  void start();
  // Stops the thread after the current cycle. Does not move the arm: stop the executor
  // first for a controlled stop.
  void stop();
  bool running() const { return running_.load(); }

  // Runs `cycles` cycles on the calling thread (batch pacing; the thread must not run).
  void run_cycles(std::uint64_t cycles);
  // Runs one cycle on the calling thread.
  ExecutorState step();

  // Every cycle's telemetry, for a consumer thread; a full ring drops (and counts) samples.
  TelemetryRing& telemetry() { return telemetry_; }
  // Every cycle's telemetry again, for the recorder alone (the black box, remote_site/server):
  // a consumer of its own, so a slow telemetry subscriber never costs the recording a sample.
  // Filled only while set_recording(true).
  TelemetryRing& recording() { return recording_; }
  void set_recording(bool on) { recording_on_.store(on, std::memory_order_relaxed); }
  // The newest cycle as the executor published it, with the timing of the last finished
  // cycle: what a status answer reads, never a consumer of the ring that may lag behind it.
  // Any thread; composed here, so the cycle itself stores only its few timing numbers.
  CycleTelemetry latest() const noexcept;
  // Blocks until a cycle after the one numbered `seen` was published (or wake_waiters());
  // returns the newest number. Lets a consumer follow the loop without polling.
  std::uint64_t wait_for_cycle(std::uint64_t seen) const;
  std::uint64_t cycles_published() const { return cycles_published_.load(); }
  // Releases every waiter (for shutting a consumer down).
  void wake_waiters();
  void set_record_telemetry(bool on) { record_ = on; }
  // Read after stop() (or between run_cycles calls).
  const LoopStatistics& statistics() const { return statistics_; }
  double arm_time() const { return arm_time_; }
  // What the loop thread was granted (real-time pacing): read after the first cycle was
  // published. The control core does not log; the service reports refusals.
  realtime::Grant realtime_grant() const {
    const unsigned refused = realtime_refused_.load(std::memory_order_acquire);
    return realtime::Grant{(refused & 1U) == 0, (refused & 2U) == 0, (refused & 4U) == 0};
  }

 private:
  void thread_main();
  ExecutorState run_cycle(double wakeup_latency);

  ArmInterface& arm_;
  Executor& executor_;
  Pacing pacing_;
  ArmState state_;
  JointCommand command_;
  double arm_time_ = 0.0;
  int consecutive_overruns_ = 0;
  bool record_ = true;
  LoopStatistics statistics_;
  TelemetryRing telemetry_;
  TelemetryRing recording_;
  std::atomic<bool> recording_on_{false};
  CycleTelemetry record_buffer_;
  ArmCheckpoint checkpoint_;
  struct CycleTiming {
    double compute_time = 0.0;    // [s]
    double wakeup_latency = 0.0;  // [s]
    std::uint64_t overruns = 0;
  };
  SeqLock<CycleTiming> timing_;
  std::atomic<std::uint64_t> cycles_published_{0};
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> realtime_refused_{0};
  int cpu_ = -1;
  std::thread thread_;
};

}  // namespace tether::remote

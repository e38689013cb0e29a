#pragma once

// The monotonic clock and real-time thread set-up shared by the periodic loops of the
// remote site (the control loop, the simulated arm's servo loop). Nothing here logs: the
// control core has no logger, so set-up reports what it was granted and the caller says so.

#include <cstdint>
#include <string>

namespace tether::remote::realtime {

// CLOCK_MONOTONIC [ns].
std::int64_t now_ns() noexcept;
// Sleeps until the absolute CLOCK_MONOTONIC time `deadline` [ns] (TIMER_ABSTIME, so
// deadlines never drift), resuming after signals.
void sleep_until_ns(std::int64_t deadline) noexcept;

// What enter_realtime obtained from the operating system.
struct Grant {
  bool fifo_scheduling = false;  // SCHED_FIFO at the requested priority
  bool memory_locked = false;    // mlockall(MCL_CURRENT | MCL_FUTURE)
};

// Tries SCHED_FIFO at `priority` for the calling thread and locks the process's memory;
// carries on without either when not permitted.
Grant enter_realtime(int priority) noexcept;

// "SCHED_FIFO not permitted, running at normal priority; could not lock memory (mlockall)"
// for what was refused, empty when everything was granted (allocates: not for the cycle).
std::string describe_refusals(const Grant& grant);

}  // namespace tether::remote::realtime

#pragma once

// The monotonic clock and real-time thread set-up shared by the periodic loops of the
// remote site (the control loop, the simulated arm's servo loop).

#include <cstdint>

namespace tether::remote::realtime {

// CLOCK_MONOTONIC [ns].
std::int64_t now_ns() noexcept;
// Sleeps until the absolute CLOCK_MONOTONIC time `deadline` [ns] (TIMER_ABSTIME, so
// deadlines never drift), resuming after signals.
void sleep_until_ns(std::int64_t deadline) noexcept;
// Tries SCHED_FIFO at `priority` for the calling thread and locks the process's memory;
// logs a warning naming `loop` for each that is not permitted and carries on.
void enter_realtime(const char* loop, int priority);

}  // namespace tether::remote::realtime

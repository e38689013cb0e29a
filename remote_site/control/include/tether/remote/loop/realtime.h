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
  bool pinned = true;            // to the requested CPU (true when none was requested)
};

// Tries SCHED_FIFO at `priority` for the calling thread, pins it to `cpu` (≥ 0; −1 leaves it
// free) and locks the process's memory; carries on without any of them when not permitted.
// Also, process-wide: malloc keeps freed memory instead of returning it to the kernel (no
// mmap'd blocks, no trimming), because every munmap interrupts the loop's CPU to flush its
// TLB and a later allocation page-faults; and the thread's stack is touched now, so its
// first deep call does not fault.
Grant enter_realtime(int priority, int cpu = -1) noexcept;

// "SCHED_FIFO not permitted, running at normal priority; could not lock memory (mlockall)"
// for what was refused, empty when everything was granted (allocates: not for the cycle).
std::string describe_refusals(const Grant& grant);

}  // namespace tether::remote::realtime

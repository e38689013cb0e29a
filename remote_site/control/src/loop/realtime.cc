#include "tether/remote/loop/realtime.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstddef>

namespace tether::remote::realtime {

std::int64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t deadline) noexcept {
  timespec ts;
  ts.tv_sec = deadline / 1'000'000'000;
  ts.tv_nsec = deadline % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

namespace {

// Touches kStackPrefault bytes below the current frame, so those stack pages are resident
// (and, after mlockall, locked) before the first cycle needs them.
constexpr std::size_t kStackPrefault = 256 * 1024;

void prefault_stack() noexcept {
  unsigned char block[kStackPrefault];
  // A real write per page: the pointer escapes to the compiler, so the stores stay.
  for (std::size_t i = 0; i < kStackPrefault; i += 4096) block[i] = 0;
  asm volatile("" : : "r"(block) : "memory");
}

}  // namespace

Grant enter_realtime(int priority, int cpu) noexcept {
  Grant grant;
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    grant.pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
  }
  sched_param param{};
  param.sched_priority = priority;
  grant.fifo_scheduling = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  grant.memory_locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;
  prefault_stack();
  return grant;
}

std::string describe_refusals(const Grant& grant) {
  std::string text;
  if (!grant.pinned) text = "could not pin the loop to its CPU";
  if (!grant.fifo_scheduling) {
    if (!text.empty()) text += "; ";
    text += "SCHED_FIFO not permitted, running at normal priority";
  }
  if (!grant.memory_locked) {
    if (!text.empty()) text += "; ";
    text += "could not lock memory (mlockall)";
  }
  return text;
}

}  // namespace tether::remote::realtime

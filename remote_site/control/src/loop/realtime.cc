#include "tether/remote/loop/realtime.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>

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

Grant enter_realtime(int priority) noexcept {
  sched_param param{};
  param.sched_priority = priority;
  Grant grant;
  grant.fifo_scheduling = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  grant.memory_locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;
  return grant;
}

std::string describe_refusals(const Grant& grant) {
  std::string text;
  if (!grant.fifo_scheduling) text = "SCHED_FIFO not permitted, running at normal priority";
  if (!grant.memory_locked) {
    if (!text.empty()) text += "; ";
    text += "could not lock memory (mlockall)";
  }
  return text;
}

}  // namespace tether::remote::realtime

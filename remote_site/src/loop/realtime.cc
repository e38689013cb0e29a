#include "loop/realtime.h"

#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>
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

void enter_realtime(const char* loop, int priority) {
  sched_param param{};
  param.sched_priority = priority;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0) {
    spdlog::warn("{}: SCHED_FIFO not permitted, running at normal priority", loop);
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    spdlog::warn("{}: could not lock memory (mlockall)", loop);
  }
}

}  // namespace tether::remote::realtime

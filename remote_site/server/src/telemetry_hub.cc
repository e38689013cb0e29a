#include "telemetry_hub.h"

#include <algorithm>

namespace tether::remote::server {

void TelemetryHub::start() {
  stop_.store(false);
  thread_ = std::thread([this] { run(); });
}

void TelemetryHub::stop() {
  stop_.store(true);
  loop_.wake_waiters();
  if (thread_.joinable()) thread_.join();
}

void TelemetryHub::subscribe(CycleSubscriber* subscriber) {
  std::lock_guard lock(mutex_);
  subscribers_.push_back(subscriber);
}

void TelemetryHub::unsubscribe(CycleSubscriber* subscriber) {
  std::lock_guard lock(mutex_);
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), subscriber),
                     subscribers_.end());
}

void TelemetryHub::end_streams() {
  std::lock_guard lock(mutex_);
  for (CycleSubscriber* s : subscribers_) s->on_shutdown();
}

CycleTelemetry TelemetryHub::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void TelemetryHub::run() {
  std::uint64_t seen = loop_.cycles_published();
  CycleTelemetry cycle;
  while (!stop_.load(std::memory_order_acquire)) {
    seen = loop_.wait_for_cycle(seen);
    while (loop_.telemetry().pop(cycle)) {
      std::lock_guard lock(mutex_);
      latest_ = cycle;
      for (CycleSubscriber* s : subscribers_) s->on_cycle(cycle);
    }
  }
}

}  // namespace tether::remote::server

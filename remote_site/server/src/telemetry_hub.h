#pragma once

// Follows the control loop from an ordinary thread: drains the loop's telemetry ring
// (the loop never blocks on it) and hands every cycle to the subscribed streams —
// telemetry streams and the teleoperation stream's force reflection. It wakes on the
// loop's cycle counter, so reflection leaves within microseconds of the cycle that
// applied an increment.

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tether/remote/loop/control_loop.h"

namespace tether::remote::server {

class CycleSubscriber {
 public:
  virtual ~CycleSubscriber() = default;
  // Called on the hub thread for every cycle, in order.
  virtual void on_cycle(const CycleTelemetry& cycle) = 0;
  // The site is shutting down: end the stream now (it may still be writing).
  virtual void on_shutdown() = 0;
};

class TelemetryHub {
 public:
  explicit TelemetryHub(ControlLoop& loop) : loop_(loop) {}
  ~TelemetryHub() { stop(); }

  void start();
  void stop();

  void subscribe(CycleSubscriber* subscriber);
  // After it returns, `subscriber` is never called again.
  void unsubscribe(CycleSubscriber* subscriber);
  // Asks every subscribed stream to end (on_shutdown), under the hub's lock.
  void end_streams();

  // The newest cycle seen.
  CycleTelemetry latest() const;

 private:
  void run();

  ControlLoop& loop_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<CycleSubscriber*> subscribers_;
  CycleTelemetry latest_;
};

}  // namespace tether::remote::server

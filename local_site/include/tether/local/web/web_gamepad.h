#pragma once

// Teleoperation from the browser: the operator console's Gamepad API readings (a gamepad or a
// SpaceMouse) arrive as WebSocket `gamepad` messages (local_site/web/PROTOCOL.md) and drive a
// hand controller, `tether-ground --device web` (open.h).
//
// WebGamepad is the hand-off between the web server's thread, which writes each reading,
// and the teleoperation thread, which samples the device at its rate: plain atomics, so
// neither ever waits for the other. The enable (deadman) is on only while all hold:
//   * a browser session holds teleoperation (`teleop` request with enable true), and
//   * its latest reading has its enabling switch on, and
//   * its last heartbeat or reading came less than kHeartbeatTimeout ago (the device checks
//     this itself at every sample, so a stalled server thread releases the enable too), and
//   * the page is visible and the socket open (the server calls release()).
//
// Axes: the six readings in [-1, 1] are the handle twist as a share of full rate, in the
// hand controller's base frame HB (the operator's view: x right, y forward, z up, as the
// front end maps the device):
//   v_HB = linear_rate · axes[0..2]  [m/s],  ω_HB = angular_rate · axes[3..5]  [rad/s].

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tether/local/hand_controller/rate_device.h"

namespace tether::local {

struct WebGamepadConfig {
  double linear_rate = 0.05;  // [m/s] at full deflection, in (0, 1]
  double angular_rate = 0.5;  // [rad/s] at full deflection, in (0, 10]
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const WebGamepadConfig& config);

class WebGamepad {
 public:
  static constexpr std::chrono::milliseconds kHeartbeatTimeout{250};

  // Server thread. `session` identifies the browser session holding teleoperation (never 0).
  void hold(std::uint64_t session);
  // Releases teleoperation if `session` holds it (0: whoever holds it); zero axes. Returns
  // whether it was held.
  bool release(std::uint64_t session = 0);
  std::uint64_t holder() const { return holder_.load(std::memory_order_acquire); }
  // A reading of the holder; axes clamped to [-1, 1] (finite values only: the caller
  // refuses others). Also counts as a heartbeat.
  void set(const std::array<double, 6>& axes, bool enable_switch);
  void heartbeat();
  // The mode the holder picked (`teleop` request's mode); applied by OperatorInput once the
  // enable is off (hand_controller.h, requested_mode).
  void request_mode(TeleopMode mode) {
    mode_.store(static_cast<int>(mode), std::memory_order_release);
  }
  std::optional<TeleopMode> requested_mode() const {
    const int mode = mode_.load(std::memory_order_acquire);
    if (mode < 0) return std::nullopt;
    return static_cast<TeleopMode>(mode);
  }
  // Steady-clock time of the last heartbeat or reading [ns since the clock's epoch].
  std::int64_t last_heartbeat_ns() const { return heartbeat_ns_.load(std::memory_order_acquire); }

  // Teleoperation thread: never blocks, allocates or throws.
  bool enabled(std::int64_t now_ns) const;
  std::array<double, 6> axes() const;

  static std::int64_t now_ns();

 private:
  std::atomic<std::uint64_t> holder_{0};
  std::atomic<bool> switch_{false};
  std::atomic<int> mode_{-1};  // a TeleopMode, or -1: none picked
  std::atomic<std::int64_t> heartbeat_ns_{0};
  std::array<std::atomic<double>, 6> axes_{};
};

// The hand controller of `--device web`: a rate device (rate_device.h) commanded by the
// browser's readings; no actuators, so no force reflection is rendered (the browser shows
// the wrench instead).
class WebHandController : public RateHandController {
 public:
  WebHandController(std::shared_ptr<const WebGamepad> gamepad, const WebGamepadConfig& config);
  std::string describe() const override { return "browser gamepad (operator console)"; }
  std::optional<TeleopMode> requested_mode() const override;

 protected:
  RateCommand command_at(double t) const override;
  void poll(double now, DeviceSample& out) override;

 private:
  std::shared_ptr<const WebGamepad> gamepad_;
  WebGamepadConfig config_;
  RateCommand command_;
};

}  // namespace tether::local

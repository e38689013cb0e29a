#include "tether/local/web/web_gamepad.h"

#include <algorithm>
#include <cmath>

#include "../hand_controller/config_check.h"

namespace tether::local {

void validate(const WebGamepadConfig& config) {
  detail::require_range("web_gamepad.linear_rate", config.linear_rate, 1e-9, 1.0);
  detail::require_range("web_gamepad.angular_rate", config.angular_rate, 1e-9, 10.0);
}

std::int64_t WebGamepad::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void WebGamepad::hold(std::uint64_t session) {
  // A fresh holder starts with the switch off and still axes: the enable follows its own
  // next reading, never a previous holder's.
  switch_.store(false, std::memory_order_release);
  for (auto& a : axes_) a.store(0.0, std::memory_order_relaxed);
  heartbeat();
  holder_.store(session, std::memory_order_release);
}

bool WebGamepad::release(std::uint64_t session) {
  std::uint64_t current = holder_.load(std::memory_order_acquire);
  if (current == 0 || (session != 0 && current != session)) return false;
  if (!holder_.compare_exchange_strong(current, 0, std::memory_order_acq_rel)) return false;
  switch_.store(false, std::memory_order_release);
  for (auto& a : axes_) a.store(0.0, std::memory_order_relaxed);
  return true;
}

void WebGamepad::set(const std::array<double, 6>& axes, bool enable_switch) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    axes_[i].store(std::clamp(axes[i], -1.0, 1.0), std::memory_order_relaxed);
  }
  switch_.store(enable_switch, std::memory_order_release);
  heartbeat();
}

void WebGamepad::heartbeat() { heartbeat_ns_.store(now_ns(), std::memory_order_release); }

bool WebGamepad::enabled(std::int64_t now) const {
  if (holder_.load(std::memory_order_acquire) == 0) return false;
  if (!switch_.load(std::memory_order_acquire)) return false;
  const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(kHeartbeatTimeout);
  return now - heartbeat_ns_.load(std::memory_order_acquire) < timeout.count();
}

std::array<double, 6> WebGamepad::axes() const {
  std::array<double, 6> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = axes_[i].load(std::memory_order_relaxed);
  return out;
}

WebHandController::WebHandController(std::shared_ptr<const WebGamepad> gamepad,
                                     const WebGamepadConfig& config)
    : gamepad_(std::move(gamepad)), config_(config) {
  validate(config_);
  if (!gamepad_) throw std::invalid_argument("web hand controller: no gamepad (needs --web)");
}

RateCommand WebHandController::command_at(double /*t*/) const { return command_; }

std::optional<TeleopMode> WebHandController::requested_mode() const {
  return gamepad_->requested_mode();
}

void WebHandController::poll(double /*now*/, DeviceSample& out) {
  const bool enabled = gamepad_->enabled(WebGamepad::now_ns());
  // Without the enable nothing moves: a stale reading must not keep driving the handle.
  const std::array<double, 6> a = enabled ? gamepad_->axes() : std::array<double, 6>{};
  command_.handle_axes = false;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    command_.twist[row] = a[i] * config_.linear_rate;
    command_.twist[row + 3] = a[i + 3] * config_.angular_rate;
  }
  command_.arm_angle_rate = 0.0;
  out.deadman = enabled;
  out.clutch = false;
  out.valid = true;
}

}  // namespace tether::local

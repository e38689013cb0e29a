#pragma once

// Linux joystick-API device (/dev/input/jsN), read as struct js_event records
// (<linux/joystick.h>): JS_EVENT_AXIS numbers 0..5 are the axes (±32767), JS_EVENT_BUTTON
// numbers the buttons (AxisDeviceConfig::joystick_defaults() maps buttons 0..5). The
// synthetic JS_EVENT_INIT state the driver sends on open is applied like live events.
// End of file or ENODEV (unplugged) makes the samples invalid.

#include <linux/joystick.h>

#include <array>
#include <memory>
#include <string>

#include "tether/local/hand_controller/axis_device.h"

namespace asio {
class io_context;
}

namespace tether::local {

namespace detail {
class FdReader;
}

class JoystickHandController final : public AxisHandController {
 public:
  JoystickHandController(asio::io_context& io, const std::string& path,
                         const AxisDeviceConfig& config = AxisDeviceConfig::joystick_defaults());
  JoystickHandController(asio::io_context& io, int fd, const AxisDeviceConfig& config, bool owns_fd,
                         std::string name);
  ~JoystickHandController() override;

  std::string describe() const override { return "joystick " + name_; }

 protected:
  void poll(double now, DeviceSample& out) override;

 private:
  std::string name_;
  std::unique_ptr<detail::FdReader> reader_;
  std::array<unsigned char, 64 * sizeof(js_event)> buffer_{};
  std::size_t filled_ = 0;
};

}  // namespace tether::local

#pragma once

// Linux joystick-API device (/dev/input/jsN), read as struct js_event records
// (<linux/joystick.h>): JS_EVENT_AXIS numbers 0..5 are the axes (±32767), JS_EVENT_BUTTON
// numbers the buttons (AxisDeviceConfig::joystick_defaults() maps buttons 0..5). The
// synthetic JS_EVENT_INIT state the driver sends on open is applied like live events.
// End of file or ENODEV (unplugged) makes the samples invalid.

#include <linux/joystick.h>

#include <string>

#include "tether/local/hand_controller/axis_device.h"

namespace tether::local {

class JoystickHandController final : public AxisHandController {
 public:
  // Opens `path` read-only; throws naming the path if it cannot.
  JoystickHandController(asio::io_context& io, const std::string& path,
                         const AxisDeviceConfig& config = AxisDeviceConfig::joystick_defaults());
  // Reads an already open descriptor (a test's pipe); closed on destruction if `owns_fd`.
  JoystickHandController(asio::io_context& io, int fd, const AxisDeviceConfig& config, bool owns_fd,
                         std::string name);

 protected:
  void on_record(const unsigned char* bytes, DeviceSample& out) override;
};

}  // namespace tether::local

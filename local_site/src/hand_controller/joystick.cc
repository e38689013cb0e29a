#include "tether/local/hand_controller/joystick.h"

#include <cstring>

#include "fd_reader.h"

namespace tether::local {

JoystickHandController::JoystickHandController(asio::io_context& io, const std::string& path,
                                               const AxisDeviceConfig& config)
    : JoystickHandController(io, detail::open_device(path), config, true, path) {}

JoystickHandController::JoystickHandController(asio::io_context& io, int fd,
                                               const AxisDeviceConfig& config, bool owns_fd,
                                               std::string name)
    : AxisHandController(io, fd, owns_fd, "joystick", std::move(name), sizeof(js_event), config) {}

void JoystickHandController::on_record(const unsigned char* bytes, DeviceSample& out) {
  js_event event;
  std::memcpy(&event, bytes, sizeof event);
  const auto type = static_cast<unsigned>(event.type & ~JS_EVENT_INIT);
  if (type == JS_EVENT_AXIS) {
    on_axis(event.number, static_cast<double>(event.value));
  } else if (type == JS_EVENT_BUTTON) {
    on_button(event.number, event.value != 0, out);
  }
}

}  // namespace tether::local

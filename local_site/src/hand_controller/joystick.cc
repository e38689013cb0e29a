#include "tether/local/hand_controller/joystick.h"

#include "fd_reader.h"

namespace tether::local {

JoystickHandController::JoystickHandController(asio::io_context& io, const std::string& path,
                                               const AxisDeviceConfig& config)
    : JoystickHandController(io, detail::open_device(path), config, true, path) {}

JoystickHandController::JoystickHandController(asio::io_context& io, int fd,
                                               const AxisDeviceConfig& config, bool owns_fd,
                                               std::string name)
    : AxisHandController(config), name_(std::move(name)) {
  reader_ = std::make_unique<detail::FdReader>(io, fd, owns_fd);
}

JoystickHandController::~JoystickHandController() = default;

void JoystickHandController::poll(double /*now*/, DeviceSample& out) {
  reader_->drain<js_event>(buffer_, filled_, [&](const js_event& event) {
    const auto type = static_cast<unsigned>(event.type & ~JS_EVENT_INIT);
    if (type == JS_EVENT_AXIS) {
      on_axis(event.number, static_cast<double>(event.value));
    } else if (type == JS_EVENT_BUTTON) {
      on_button(event.number, event.value != 0, out);
    }
  });
  fill_switches(out);
  out.valid = !reader_->lost();
}

}  // namespace tether::local

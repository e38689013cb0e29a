#include "tether/local/hand_controller/evdev.h"

#include <cstring>

#include "fd_reader.h"

namespace tether::local {

EvdevHandController::EvdevHandController(asio::io_context& io, const std::string& path,
                                         const AxisDeviceConfig& config)
    : EvdevHandController(io, detail::open_device(path), config, true, path) {}

EvdevHandController::EvdevHandController(asio::io_context& io, int fd,
                                         const AxisDeviceConfig& config, bool owns_fd,
                                         std::string name)
    : AxisHandController(io, fd, owns_fd, "evdev", std::move(name), sizeof(input_event), config) {}

void EvdevHandController::on_record(const unsigned char* bytes, DeviceSample& out) {
  input_event event;
  std::memcpy(&event, bytes, sizeof event);
  if ((event.type == EV_REL || event.type == EV_ABS) && event.code < 6) {
    on_axis(event.code, static_cast<double>(event.value));
  } else if (event.type == EV_KEY && event.value != 2) {  // 2: auto-repeat, no change
    on_button(event.code, event.value != 0, out);
  }
}

}  // namespace tether::local

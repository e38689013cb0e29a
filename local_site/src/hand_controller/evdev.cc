#include "tether/local/hand_controller/evdev.h"

#include "fd_reader.h"

namespace tether::local {

EvdevHandController::EvdevHandController(asio::io_context& io, const std::string& path,
                                         const AxisDeviceConfig& config)
    : EvdevHandController(io, detail::open_device(path), config, true, path) {}

EvdevHandController::EvdevHandController(asio::io_context& io, int fd,
                                         const AxisDeviceConfig& config, bool owns_fd,
                                         std::string name)
    : AxisHandController(config), name_(std::move(name)) {
  reader_ = std::make_unique<detail::FdReader>(io, fd, owns_fd);
}

EvdevHandController::~EvdevHandController() = default;

void EvdevHandController::poll(double /*now*/, DeviceSample& out) {
  reader_->drain<input_event>(buffer_, filled_, [&](const input_event& event) {
    if ((event.type == EV_REL || event.type == EV_ABS) && event.code < 6) {
      on_axis(event.code, static_cast<double>(event.value));
    } else if (event.type == EV_KEY && event.value != 2) {  // 2: auto-repeat, no change
      on_button(event.code, event.value != 0, out);
    }
  });
  fill_switches(out);
  out.valid = !reader_->lost();
}

}  // namespace tether::local

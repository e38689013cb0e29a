#pragma once

// Linux evdev 6-axis device (a SpaceMouse: /dev/input/eventN), read as struct input_event
// records (<linux/input.h>). EV_REL and EV_ABS codes 0..5 (REL_X..REL_RZ, ABS_X..ABS_RZ) are
// the axes, EV_KEY the buttons (axis_device.h has the mapping). A record split across reads
// is kept until complete. End of file or ENODEV (unplugged) makes the samples invalid.

#include <linux/input.h>

#include <string>

#include "tether/local/hand_controller/axis_device.h"

namespace tether::local {

class EvdevHandController final : public AxisHandController {
 public:
  // Opens `path` read-only; throws naming the path if it cannot.
  EvdevHandController(asio::io_context& io, const std::string& path,
                      const AxisDeviceConfig& config = {});
  // Reads an already open descriptor (a test's pipe); closed on destruction if `owns_fd`.
  EvdevHandController(asio::io_context& io, int fd, const AxisDeviceConfig& config, bool owns_fd,
                      std::string name);

 protected:
  void on_record(const unsigned char* bytes, DeviceSample& out) override;
};

}  // namespace tether::local

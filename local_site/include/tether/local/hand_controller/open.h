#pragma once

// Opening a hand controller from a command-line style spec:
//   keyboard                 this terminal (options.keyboard_fd, stdin by default)
//   evdev:/dev/input/eventN  a 6-axis evdev device (SpaceMouse)
//   joystick:/dev/input/jsN  a joystick-API device
//   script:PATH              scripted playback (script.h)
//   sim                      simulated hand controller, operator hand holding still
//   sim:PATH                 simulated hand controller, operator hand following a script
//   web                      the browser operator console's gamepad (web/web_gamepad.h;
//                            options.web must be set: tether-ground --web)
// Device frames and scalings come from the options. Throws std::invalid_argument for an
// unknown spec or a bad option (naming it) and std::runtime_error for a device or file that
// cannot be opened or parsed.

#include <unistd.h>

#include <memory>
#include <string>

#include "tether/local/hand_controller/axis_device.h"
#include "tether/local/hand_controller/keyboard.h"
#include "tether/local/hand_controller/simulated.h"
#include "tether/local/web/web_gamepad.h"

namespace asio {
class io_context;
}

namespace tether::local {

struct HandControllerOptions {
  KeyboardConfig keyboard;
  int keyboard_fd = STDIN_FILENO;
  AxisDeviceConfig evdev;
  AxisDeviceConfig joystick = AxisDeviceConfig::joystick_defaults();
  SimulatedHandControllerConfig sim;
  WebGamepadConfig web_gamepad;
  std::shared_ptr<const WebGamepad> web;  // fed by the web server; null without --web
};

std::unique_ptr<HandController> open_hand_controller(const std::string& spec, asio::io_context& io,
                                                     const HandControllerOptions& options = {});

}  // namespace tether::local

#include "tether/local/hand_controller/open.h"

#include <stdexcept>

#include "tether/local/hand_controller/evdev.h"
#include "tether/local/hand_controller/joystick.h"
#include "tether/local/hand_controller/script.h"

namespace tether::local {

std::unique_ptr<HandController> open_hand_controller(const std::string& spec, asio::io_context& io,
                                                     const HandControllerOptions& options) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const bool has_argument = colon != std::string::npos && !argument.empty();
  if (kind == "keyboard" && colon == std::string::npos) {
    return std::make_unique<KeyboardHandController>(io, options.keyboard_fd, options.keyboard);
  }
  if (kind == "evdev" && has_argument) {
    return std::make_unique<EvdevHandController>(io, argument, options.evdev);
  }
  if (kind == "joystick" && has_argument) {
    return std::make_unique<JoystickHandController>(io, argument, options.joystick);
  }
  if (kind == "script" && has_argument) {
    return std::make_unique<ScriptedHandController>(HandScript::load(argument));
  }
  if (kind == "sim" && colon == std::string::npos) {
    return std::make_unique<SimulatedHandController>(options.sim);
  }
  if (kind == "sim" && has_argument) {
    return std::make_unique<SimulatedHandController>(options.sim, HandScript::load(argument));
  }
  if (kind == "web" && colon == std::string::npos) {
    if (!options.web) {
      throw std::invalid_argument(
          "hand controller 'web': the browser's gamepad needs the operator console (--web "
          "HOST:PORT)");
    }
    return std::make_unique<WebHandController>(options.web, options.web_gamepad);
  }
  throw std::invalid_argument("hand controller '" + spec +
                              "': expected keyboard, evdev:/dev/input/eventN, "
                              "joystick:/dev/input/jsN, script:PATH, sim, sim:PATH or web");
}

}  // namespace tether::local

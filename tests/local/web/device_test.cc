// `--device web`: the browser console's gamepad opened like every other hand controller
// (open.h), only when the console gives it one. Standalone Asio here, as the ground's other
// devices use; Boost.Asio (the console's server) cannot share a translation unit with it.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "tether/local/hand_controller/open.h"
#include "tether/local/web/web_gamepad.h"

namespace tether::local {
namespace {

TEST(WebHandController, OpensAsDeviceWebOnlyWithTheConsole) {
  asio::io_context io;
  HandControllerOptions options;
  try {
    open_hand_controller("web", io, options);
    FAIL() << "opened a browser gamepad without --web";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--web HOST:PORT"), std::string::npos) << e.what();
  }
  options.web = std::make_shared<WebGamepad>();
  const auto device = open_hand_controller("web", io, options);
  EXPECT_EQ(device->describe(), "browser gamepad (operator console)");
  EXPECT_FALSE(device->has_actuators());
  EXPECT_THROW(open_hand_controller("web:x", io, options), std::invalid_argument);
}

}  // namespace
}  // namespace tether::local

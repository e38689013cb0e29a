#include "tether/local/hand_controller/open.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio/io_context.hpp>

namespace tether::local {
namespace {

TEST(OpenHandController, EachSpecOpensItsDriver) {
  asio::io_context io;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  HandControllerOptions options;
  options.keyboard_fd = pipe_fds[0];
  EXPECT_EQ(open_hand_controller("keyboard", io, options)->describe(),
            "keyboard on fd " + std::to_string(pipe_fds[0]));
  const std::string script = TETHER_LOCAL_SOURCE_DIR "/scripts/rotate_door.hcscript";
  EXPECT_EQ(open_hand_controller("script:" + script, io, options)->describe(), "script " + script);
  auto sim = open_hand_controller("sim", io, options);
  EXPECT_TRUE(sim->has_actuators());
  EXPECT_NE(open_hand_controller("sim:" + script, io, options)->describe().find(script),
            std::string::npos);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(OpenHandController, UnknownSpecsListWhatIsAccepted) {
  asio::io_context io;
  for (const char* spec : {"spacemouse", "evdev:", "script", "keyboard:foo"}) {
    try {
      open_hand_controller(spec, io);
      FAIL() << spec;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("expected keyboard, evdev:/dev/input/eventN"),
                std::string::npos);
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos);
    }
  }
  EXPECT_THROW(open_hand_controller("joystick:/dev/input/js-none", io), std::runtime_error);
  EXPECT_THROW(open_hand_controller("sim:/nonexistent.hcscript", io), std::runtime_error);
}

}  // namespace
}  // namespace tether::local

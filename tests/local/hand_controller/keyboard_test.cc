#include "tether/local/hand_controller/keyboard.h"

#include <gtest/gtest.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <string>

namespace tether::local {
namespace {

struct KeyboardFixture : ::testing::Test {
  asio::io_context io;
  int pipe_fds[2] = {-1, -1};
  KeyboardConfig config;

  void SetUp() override {
    ASSERT_EQ(::pipe(pipe_fds), 0);
    config.linear_rate = 0.1;
    config.angular_rate = 1.0;
    config.key_hold = 0.5;
  }
  void TearDown() override {
    if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  }
  void type(const std::string& keys) {
    ASSERT_EQ(::write(pipe_fds[1], keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  KeyboardHandController make() {
    return KeyboardHandController(io, pipe_fds[0], config, /*owns_fd=*/true);
  }
};

TEST_F(KeyboardFixture, AKeyDrivesItsAxisAtTheFullRateForTheHoldTime) {
  auto keyboard = make();
  keyboard.sample(0.0);
  type("w");
  keyboard.sample(1.0);  // the press is read at t = 1
  const DeviceSample during = keyboard.sample(1.2);
  EXPECT_NEAR(during.increment_base[0], 0.1 * 0.2, 1e-12);
  const DeviceSample across_expiry = keyboard.sample(2.0);  // hold ends at 1.5
  EXPECT_NEAR(across_expiry.increment_base[0], 0.1 * 0.3, 1e-12);
  EXPECT_EQ(keyboard.sample(3.0).increment_base.norm(), 0.0);
}

TEST_F(KeyboardFixture, KeysMapToTheDocumentedAxesAndSigns) {
  auto keyboard = make();
  keyboard.sample(0.0);
  type("sAriKjO]");
  keyboard.sample(0.0);
  const DeviceSample s = keyboard.sample(0.1);
  Vector6 expected;
  expected << -0.01, 0.01, 0.01, -0.1, 0.1, -0.1;
  EXPECT_LT((s.increment_base - expected).norm(), 1e-12) << s.increment_base.transpose();
  EXPECT_NEAR(s.arm_angle_increment, config.arm_angle_rate * 0.1, 1e-12);
}

TEST_F(KeyboardFixture, SwitchesToggleScaleKeysCountAndStopHaltsEverything) {
  auto keyboard = make();
  keyboard.sample(0.0);
  type(" c++-w");
  DeviceSample s = keyboard.sample(0.0);
  EXPECT_TRUE(s.deadman);
  EXPECT_TRUE(s.clutch);
  EXPECT_EQ(s.scale_steps, 1);
  type("x c");
  s = keyboard.sample(0.1);  // 0.1 s of +x, then the stop
  EXPECT_NEAR(s.increment_base[0], 0.01, 1e-12);
  EXPECT_FALSE(s.deadman);
  EXPECT_FALSE(s.clutch);
  EXPECT_EQ(keyboard.sample(0.2).increment_base.norm(), 0.0);
}

TEST_F(KeyboardFixture, ArrowKeyEscapeSequencesAreSkippedWhole) {
  auto keyboard = make();
  keyboard.sample(0.0);
  type("\x1b[A\x1b[D\x1bOB");  // up, left, SS3 down: '[' must not move ψ, 'A','D','B' nothing
  keyboard.sample(0.0);
  const DeviceSample s = keyboard.sample(0.1);
  EXPECT_EQ(s.increment_base.norm(), 0.0);
  EXPECT_EQ(s.arm_angle_increment, 0.0);
}

TEST_F(KeyboardFixture, ClosedInputMakesTheSamplesInvalid) {
  auto keyboard = make();
  keyboard.sample(0.0);
  ::close(pipe_fds[1]);
  pipe_fds[1] = -1;
  EXPECT_FALSE(keyboard.sample(0.1).valid);
}

TEST(KeyboardTerminal, RawModeIsSetOnATerminalAndRestoredOnDestruction) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  termios before{};
  ASSERT_EQ(::tcgetattr(slave, &before), 0);
  ASSERT_TRUE(before.c_lflag & ICANON);
  asio::io_context io;
  {
    KeyboardHandController keyboard(io, slave);
    termios during{};
    ASSERT_EQ(::tcgetattr(slave, &during), 0);
    EXPECT_FALSE(during.c_lflag & ICANON);
    EXPECT_FALSE(during.c_lflag & ECHO);
    EXPECT_TRUE(during.c_lflag & ISIG);  // Ctrl-C still interrupts
    keyboard.sample(0.0);
    ASSERT_EQ(::write(master, "d", 1), 1);
    keyboard.sample(0.0);  // the pty may need a moment: retry the read a few times
    double moved = 0.0;
    for (int i = 1; i <= 200 && moved == 0.0; ++i) {
      const DeviceSample s = keyboard.sample(0.001 * i);
      ASSERT_TRUE(s.valid);  // an empty terminal read is not end of input
      moved = s.increment_base[1];
      if (moved == 0.0) ::usleep(1000);
    }
    EXPECT_LT(moved, 0.0);  // d: −y
    EXPECT_NE(keyboard.describe().find("terminal"), std::string::npos);
  }
  termios after{};
  ASSERT_EQ(::tcgetattr(slave, &after), 0);
  EXPECT_EQ(after.c_lflag, before.c_lflag);
  ::close(slave);
  ::close(master);
}

TEST(KeyboardConfigValidation, NamesTheFieldTheValueAndTheRange) {
  KeyboardConfig config;
  config.key_hold = -1.0;
  try {
    validate(config);
    FAIL() << "accepted a negative key hold";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "keyboard.key_hold = -1: must be finite and in [0.001, 5]");
  }
}

}  // namespace
}  // namespace tether::local

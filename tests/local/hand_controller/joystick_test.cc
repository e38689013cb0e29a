#include "tether/local/hand_controller/joystick.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <vector>

namespace tether::local {
namespace {

js_event event(unsigned char type, unsigned char number, short value) {
  js_event e{};
  e.type = type;
  e.number = number;
  e.value = value;
  return e;
}

struct JoystickFixture : ::testing::Test {
  asio::io_context io;
  int pipe_fds[2] = {-1, -1};
  AxisDeviceConfig config = AxisDeviceConfig::joystick_defaults();

  void SetUp() override { ASSERT_EQ(::pipe(pipe_fds), 0); }
  void TearDown() override {
    if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  }
  void send(const std::vector<js_event>& events) {
    const auto bytes = static_cast<ssize_t>(events.size() * sizeof(js_event));
    ASSERT_EQ(::write(pipe_fds[1], events.data(), static_cast<size_t>(bytes)), bytes);
  }
};

TEST_F(JoystickFixture, AxesAndButtonsIncludingTheInitialStateDriveTheHandle) {
  JoystickHandController device(io, pipe_fds[0], config, true, "pipe");
  device.sample(0.0);
  send({event(JS_EVENT_BUTTON | JS_EVENT_INIT, 0, 1),  // deadman already held at open
        event(JS_EVENT_AXIS | JS_EVENT_INIT, 5, 0), event(JS_EVENT_AXIS, 2, -32767),
        event(JS_EVENT_AXIS, 5, 32767), event(JS_EVENT_BUTTON, 2, 1)});
  DeviceSample s = device.sample(0.0);
  EXPECT_TRUE(s.deadman);
  EXPECT_FALSE(s.clutch);
  EXPECT_EQ(s.scale_steps, 1);
  s = device.sample(0.2);
  EXPECT_NEAR(s.increment_base[2], -config.linear_rate * 0.2, 1e-12);
  EXPECT_NEAR(s.increment_base[5], config.angular_rate * 0.2, 1e-12);
  send({event(JS_EVENT_AXIS, 2, 1000)});  // inside the deadband: stop
  device.sample(0.2);
  EXPECT_NEAR(device.sample(0.4).increment_base[2], 0.0, 1e-15);
}

TEST_F(JoystickFixture, HandleAxisModeReportsTheTwistInTheTurningHandleFrame) {
  config.handle_axes = true;
  JoystickHandController device(io, pipe_fds[0], config, true, "pipe");
  device.sample(0.0);
  send({event(JS_EVENT_AXIS, 5, 32767)});  // yaw about HH z at the full angular rate
  device.sample(0.0);
  double yaw = 0.0;
  for (int i = 1; i <= 1000; ++i) yaw += device.sample(0.001 * i).increment_base[5];
  send({event(JS_EVENT_AXIS, 5, 0), event(JS_EVENT_AXIS, 0, 32767)});  // then push along HH x
  device.sample(1.0);
  const DeviceSample s = device.sample(1.1);
  EXPECT_NEAR(yaw, config.angular_rate, 1e-9);
  EXPECT_NEAR(s.increment_handle[0], config.linear_rate * 0.1, 1e-12);
  // HH x has turned by `yaw` about HB z.
  EXPECT_NEAR(s.increment_base[0], config.linear_rate * 0.1 * std::cos(yaw), 1e-12);
  EXPECT_NEAR(s.increment_base[1], config.linear_rate * 0.1 * std::sin(yaw), 1e-12);
}

}  // namespace
}  // namespace tether::local

#include "tether/local/hand_controller/evdev.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <cmath>
#include <vector>

namespace tether::local {
namespace {

struct EvdevFixture : ::testing::Test {
  asio::io_context io;
  int pipe_fds[2] = {-1, -1};
  AxisDeviceConfig config;  // SpaceMouse defaults: full scale 350, deadband 15

  void SetUp() override {
    ASSERT_EQ(::pipe(pipe_fds), 0);
    config.linear_rate = 0.1;
    config.angular_rate = 1.0;
  }
  void TearDown() override {
    if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  }
  static input_event event(unsigned short type, unsigned short code, int value) {
    input_event e{};
    e.type = type;
    e.code = code;
    e.value = value;
    return e;
  }
  void send(const std::vector<input_event>& events) {
    const auto bytes = static_cast<ssize_t>(events.size() * sizeof(input_event));
    ASSERT_EQ(::write(pipe_fds[1], events.data(), static_cast<size_t>(bytes)), bytes);
  }
  EvdevHandController make() {
    return EvdevHandController(io, pipe_fds[0], config, /*owns_fd=*/true, "pipe");
  }
};

TEST_F(EvdevFixture, RelativeAndAbsoluteAxesAreLevelsMappedToRatesPastTheDeadband) {
  auto device = make();
  device.sample(0.0);
  // Half-way past the deadband on REL_X, full scale on ABS_RY, inside the deadband on REL_Z.
  send({event(EV_REL, REL_X, 15 + 335 / 2), event(EV_ABS, ABS_RY, -350), event(EV_REL, REL_Z, 10),
        event(EV_SYN, SYN_REPORT, 0)});
  device.sample(0.0);
  const DeviceSample s = device.sample(0.5);
  Vector6 expected;
  expected << 0.1 * std::floor(335 / 2.0) / 335.0 * 0.5, 0, 0, 0, -1.0 * 0.5, 0;
  EXPECT_LT((s.increment_base - expected).norm(), 1e-12) << s.increment_base.transpose();
  // A level holds until the next event, as a SpaceMouse cap held still.
  EXPECT_NEAR(device.sample(1.0).increment_base[4], -0.5, 1e-12);
  send({event(EV_ABS, ABS_RY, 0), event(EV_REL, REL_X, 0)});
  device.sample(1.0);
  EXPECT_EQ(device.sample(2.0).increment_base.norm(), 0.0);
}

TEST_F(EvdevFixture, DeviceAxesAreRotatedIntoTheBaseFrameFromConfiguration) {
  config.hb_R_device << 0, -1, 0, 1, 0, 0, 0, 0, 1;  // device x along HB y
  config.axis_sign[2] = -1.0;                        // device z points down
  auto device = make();
  device.sample(0.0);
  send({event(EV_REL, REL_X, 350), event(EV_REL, REL_Z, 350)});
  device.sample(0.0);
  const DeviceSample s = device.sample(1.0);
  EXPECT_NEAR(s.increment_base[0], 0.0, 1e-12);
  EXPECT_NEAR(s.increment_base[1], 0.1, 1e-12);
  EXPECT_NEAR(s.increment_base[2], -0.1, 1e-12);
}

TEST_F(EvdevFixture, ButtonsAreDeadmanClutchScaleAndArmAngle) {
  auto device = make();
  device.sample(0.0);
  send({event(EV_KEY, BTN_0, 1), event(EV_KEY, BTN_1, 1), event(EV_KEY, BTN_2, 1),
        event(EV_KEY, BTN_2, 0), event(EV_KEY, BTN_2, 1), event(EV_KEY, BTN_4, 1),
        event(EV_KEY, BTN_4, 2)});  // auto-repeat changes nothing
  DeviceSample s = device.sample(0.0);
  EXPECT_TRUE(s.deadman);
  EXPECT_TRUE(s.clutch);
  EXPECT_EQ(s.scale_steps, 2);
  s = device.sample(0.5);
  EXPECT_NEAR(s.arm_angle_increment, config.arm_angle_rate * 0.5, 1e-12);
  EXPECT_EQ(s.scale_steps, 0);
  send({event(EV_KEY, BTN_0, 0), event(EV_KEY, BTN_3, 1)});
  s = device.sample(0.5);
  EXPECT_FALSE(s.deadman);
  EXPECT_TRUE(s.clutch);
  EXPECT_EQ(s.scale_steps, -1);
}

TEST_F(EvdevFixture, ARecordSplitAcrossWritesIsAppliedOnceComplete) {
  auto device = make();
  device.sample(0.0);
  const input_event e = event(EV_REL, REL_Y, 350);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&e);
  ASSERT_EQ(::write(pipe_fds[1], bytes, 5), 5);
  device.sample(0.0);
  EXPECT_EQ(device.sample(1.0).increment_base.norm(), 0.0);
  ASSERT_EQ(::write(pipe_fds[1], bytes + 5, sizeof e - 5), static_cast<ssize_t>(sizeof e - 5));
  device.sample(1.0);
  EXPECT_NEAR(device.sample(2.0).increment_base[1], 0.1, 1e-12);
}

TEST_F(EvdevFixture, AnUnpluggedDeviceMakesTheSamplesInvalidWithZeroMotion) {
  auto device = make();
  device.sample(0.0);
  send({event(EV_REL, REL_X, 350)});
  ::close(pipe_fds[1]);
  pipe_fds[1] = -1;
  device.sample(0.0);
  const DeviceSample s = device.sample(1.0);
  EXPECT_FALSE(s.valid);
  EXPECT_EQ(s.increment_base.norm(), 0.0);
}

TEST(EvdevOpen, AMissingDeviceNodeIsNamedInTheError) {
  asio::io_context io;
  try {
    EvdevHandController device(io, "/dev/input/event-none");
    FAIL() << "opened a missing device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/input/event-none"), std::string::npos);
  }
}

TEST(AxisDeviceConfigValidation, RejectsADeadbandBeyondFullScaleAndANonRotation) {
  AxisDeviceConfig config;
  config.deadband = 400;
  EXPECT_THROW(
      {
        try {
          validate(config);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("axis_device.deadband = 400"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  config = AxisDeviceConfig{};
  config.hb_R_device(0, 0) = -1.0;  // a reflection
  EXPECT_THROW(validate(config), std::invalid_argument);
  config = AxisDeviceConfig{};
  config.axis_sign[3] = 0.5;
  EXPECT_THROW(validate(config), std::invalid_argument);
}

}  // namespace
}  // namespace tether::local

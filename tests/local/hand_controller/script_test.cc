#include "tether/local/hand_controller/script.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <sstream>

#include "tether/common/spatial.h"

namespace tether::local {
namespace {

HandScript parse(const std::string& text) {
  std::istringstream in(text);
  return HandScript::parse(in, "test.hcscript");
}

std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(HandScript, ShippedDoorScriptTurnsTheHandle45DegreesAboutItsXAxisIn3s) {
  ScriptedHandController device(
      HandScript::load(TETHER_LOCAL_SOURCE_DIR "/scripts/rotate_door.hcscript"));
  device.sample(10.0);  // script time starts at the first sample
  Vector6 sum = Vector6::Zero();
  bool deadman_always = true;
  for (int i = 1; i <= 3500; ++i) {
    const DeviceSample s = device.sample(10.0 + 0.001 * i);
    sum += s.increment_handle;
    deadman_always = deadman_always && s.deadman;
  }
  EXPECT_TRUE(deadman_always);
  EXPECT_NEAR(sum[3], std::numbers::pi / 4, 1e-9);
  EXPECT_NEAR(sum.norm(), std::numbers::pi / 4, 1e-9);
  EXPECT_LT((device.handle().pose().R - so3_exp(Vector3(std::numbers::pi / 4, 0, 0))).norm(), 1e-9);
  EXPECT_FALSE(device.sample(14.0).valid);  // `4.0 end`
}

TEST(HandScript, RatesChangeExactlyAtLineTimesWhateverTheSampleTimes) {
  ScriptedHandController device(
      parse("# comment\n"
            "0.5 base 1 0 0 0 0 0 0.2 1 0   # trailing comment\n"
            "1.25 base 0 2 0 0 0 0 0 1 1\n"));
  device.sample(0.0);
  DeviceSample s = device.sample(1.0);
  EXPECT_NEAR(s.increment_base[0], 0.5, 1e-12);
  EXPECT_NEAR(s.arm_angle_increment, 0.1, 1e-12);
  EXPECT_TRUE(s.deadman);
  EXPECT_FALSE(s.clutch);
  s = device.sample(2.0);
  EXPECT_NEAR(s.increment_base[0], 0.25, 1e-12);
  EXPECT_NEAR(s.increment_base[1], 1.5, 1e-12);
  EXPECT_TRUE(s.clutch);
  EXPECT_TRUE(device.sample(100.0).valid);  // no end line: the last line holds
}

// Regression: a line time shifted by the script origin can round back onto the sample time;
// sampling must still advance (it once spun for ever at the first such line).
TEST(HandScript, SamplingAdvancesAcrossEveryLineWhateverTheOrigin) {
  const HandScript script =
      HandScript::load(TETHER_LOCAL_SOURCE_DIR "/scripts/door_swing.hcscript");
  for (double origin : {0.0, 0.0123456789, 1234.56789, 86400.000317}) {
    ScriptedHandController device(script);
    device.sample(origin);
    double sum = 0.0;
    for (int i = 1; i <= 40000; ++i) {
      const DeviceSample s = device.sample(origin + 0.001 * i);
      if (!s.valid) break;
      sum += s.increment_handle[3];
    }
    // Alternating ±10°/s for 2 s each over 32 s ends where it began, but for the motion
    // of the sample that crosses the end (invalid, so dropped): under 2 ms of 10°/s.
    EXPECT_NEAR(sum, 0.0, 2e-3 * 10.0 * std::numbers::pi / 180.0) << "origin " << origin;
    EXPECT_FALSE(device.sample(origin + 32.5).valid);
  }
}

TEST(HandScript, ErrorsNameFileLineAndTheBadToken) {
  EXPECT_EQ(parse_error("0 base 0 0 0 0 0 0 0 1 0\n\n0.5 handel 0 0 0 0 0 0 0 1 0\n"),
            "test.hcscript:3: bad token 'handel' for frame: expected handle or base");
  EXPECT_EQ(parse_error("0 base 0 0 zero 0 0 0 0 1 0\n"),
            "test.hcscript:1: bad token 'zero' for vz: expected a finite number");
  EXPECT_EQ(parse_error("0 base 0 0 0 0 0 0 0 yes 0\n"),
            "test.hcscript:1: bad token 'yes' for deadman: expected 0 or 1");
  EXPECT_EQ(parse_error("1 base 0 0 0 0 0 0 0 1 0\n1 end\n"),
            "test.hcscript:2: bad token '1' for t_s: times must be >= 0 and strictly "
            "increasing");
  EXPECT_EQ(parse_error("units grad\n"),
            "test.hcscript:1: bad token 'grad' for units: expected `units deg` or `units rad`");
  EXPECT_EQ(parse_error("0 base 0 0 0\n"),
            "test.hcscript:1: expected 11 fields `t_s frame vx vy vz wx wy wz psi_rate deadman "
            "clutch` or `t_s end`, got 5");
  EXPECT_EQ(parse_error("# nothing\n"),
            "test.hcscript: no command lines in hand-controller script");
  EXPECT_THROW(HandScript::load("/nonexistent.hcscript"), std::runtime_error);
}

}  // namespace
}  // namespace tether::local

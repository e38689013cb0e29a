// Hand-controller increments as the site takes them off the wire (server::from_wire):
// every refusal names the field, the value and the allowed range.

#include "wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tether/proto/convert.h"

namespace tether::remote::server {
namespace {

v1::TeleopIncrement increment(std::uint64_t sequence) {
  v1::TeleopIncrement in;
  in.set_sequence(sequence);
  in.set_deadman(true);
  in.mutable_translation_m()->set_x(0.0001);
  return in;
}

TEST(TeleopWire, NumbersAnAcceptedIncrementAfterTheStreamsBase) {
  HandControllerSample sample;
  EXPECT_EQ(from_wire(increment(5), 1000, sample), "");
  EXPECT_EQ(sample.sequence, 1005U);
  EXPECT_DOUBLE_EQ(sample.increment[0], 0.0001);
  EXPECT_TRUE(sample.deadman);
}

TEST(TeleopWire, RefusesASequenceThatWouldWrapTheSitesNumbering) {
  // Found by teleop_increment_fuzz: 2^64 - 1 wrapped base + sequence to a number already
  // applied.
  HandControllerSample sample;
  EXPECT_EQ(from_wire(increment(std::numeric_limits<std::uint64_t>::max()), 1000, sample),
            "sequence = 18446744073709551615; allowed 1 … 281474976710656 on a stream");
  EXPECT_EQ(from_wire(increment(kMaxSequence), 0, sample), "");
  EXPECT_EQ(from_wire(increment(0), 0, sample),
            "sequence = 0; sequences start at 1 on each stream");
}

TEST(TeleopWire, RefusesANonFiniteOrOversizedIncrementNamingTheField) {
  HandControllerSample sample;
  v1::TeleopIncrement in = increment(1);
  in.set_arm_angle_rad(std::nan(""));
  EXPECT_NE(from_wire(in, 0, sample).find("arm_angle_rad = nan"), std::string::npos);
  in = increment(1);
  in.mutable_translation_m()->set_y(1.0);
  EXPECT_NE(from_wire(in, 0, sample).find("translation_m"), std::string::npos);
}

// The camera may ride on an arm: a camera-mode reflection says which EYE frame its wrenches
// were rotated with, and its stamp; a reused message carries none once the mode is another.
TEST(TeleopWire, ACameraModeReflectionReportsTheEyeFrameItsCycleUsed) {
  CycleTelemetry cycle;
  cycle.teleop_mode = TeleopMode::kCamera;
  cycle.world_R_eye = Eigen::AngleAxisd(0.7, Vector3(0.0, 0.6, 0.8)).toRotationMatrix();
  cycle.eye_time_ns = 1'234'567'890'123;
  v1::ForceReflection out;
  to_reflection(cycle, 0, &out);
  ASSERT_TRUE(out.has_eye());
  EXPECT_EQ(out.eye().time_ns(), 1'234'567'890'123U);
  const Matrix3 R = proto::to_rotation(out.eye().world_r_eye(), "eye.world_R_eye");
  EXPECT_TRUE(R.isApprox(cycle.world_R_eye, 1e-12)) << R;

  cycle.teleop_mode = TeleopMode::kWorld;
  to_reflection(cycle, 0, &out);
  EXPECT_FALSE(out.has_eye());
}

}  // namespace
}  // namespace tether::remote::server

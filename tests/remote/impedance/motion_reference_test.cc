#include "tether/remote/impedance/motion_reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

Frame pose(const Vector3& rotation, const Vector3& p) { return Frame{so3_exp(rotation), p}; }

TEST(MotionError, IsTranslationRotationAndArmAngleInCommandedAxes) {
  MotionReference ref;
  ref.pose = pose(Vector3(0.1, -0.2, 0.3), Vector3(0.4, 0.1, 0.5));
  ref.arm_angle = 0.3;
  const Vector3 w(0.05, 0.02, -0.04);
  Frame commanded = ref.pose;
  commanded.R = so3_exp(w) * ref.pose.R;  // rotated by w (BASE axes) from the reference
  commanded.p += Vector3(0.01, -0.02, 0.03);
  const MotionVector e = motion_error(commanded, 0.5, ref);
  EXPECT_TRUE(e.head<3>().isApprox(commanded.R.transpose() * Vector3(0.01, -0.02, 0.03), 1e-12));
  EXPECT_TRUE(e.segment<3>(3).isApprox(commanded.R.transpose() * w, 1e-12));
  EXPECT_NEAR(e[6], 0.2, 1e-12);
}

TEST(MotionError, ArmAngleDifferenceWrapsTheShortWay) {
  MotionReference ref;
  ref.arm_angle = M_PI - 0.1;
  const MotionVector e = motion_error(Frame{}, -M_PI + 0.1, ref);
  EXPECT_NEAR(e[6], 0.2, 1e-12);
}

TEST(MotionError, SpringLengthsLimitEachComponent) {
  MotionReference ref;
  ref.max_translation = Vector3(0.01, 0.02, 0.03);
  ref.max_rotation = 0.1;
  ref.max_arm_angle = 0.05;
  Frame translated;
  translated.p = Vector3(1.0, -1.0, 0.01);
  const MotionVector et = motion_error(translated, 1.0, ref);
  EXPECT_DOUBLE_EQ(et[0], 0.01);
  EXPECT_DOUBLE_EQ(et[1], -0.02);
  EXPECT_DOUBLE_EQ(et[2], 0.01);  // inside its limit: untouched
  EXPECT_DOUBLE_EQ(et[6], 0.05);
  Frame rotated;
  rotated.R = so3_exp(Vector3(0.0, 0.0, 0.6));
  const MotionVector er = motion_error(rotated, -1.0, ref);
  EXPECT_NEAR(er.segment<3>(3).norm(), 0.1, 1e-12);
  EXPECT_NEAR(er.segment<3>(3).normalized().z(), 1.0, 1e-12);  // direction kept
  EXPECT_DOUBLE_EQ(er[6], -0.05);
}

}  // namespace
}  // namespace tether::remote

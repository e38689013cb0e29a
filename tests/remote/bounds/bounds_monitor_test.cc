#include "tether/remote/bounds/bounds_monitor.h"

#include <gtest/gtest.h>

#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

struct BoundsFixture : ::testing::Test {
  BoundsParameters bounds;
  BoundsInput input;
  ProximityReading proximity;
  JointVector q = JointVector::Zero();
  JointVector lower = JointVector::Constant(-2.0);
  JointVector upper = JointVector::Constant(2.0);
  void SetUp() override {
    input.proximity = &proximity;
    input.measured_joints = &q;
    input.lower = &lower;
    input.upper = &upper;
    input.time = 1.5;
  }
};

TEST_F(BoundsFixture, NothingBreachedWithUnboundedDefaults) {
  input.actual_pose.p = Vector3(10, 0, 0);
  input.wrench << 1e3, 0, 0, 0, 1e3, 0;
  EXPECT_FALSE(check_bounds(bounds, input));
}

TEST_F(BoundsFixture, TranslationDeviationCarriesValueBoundAndTime) {
  bounds.max_translation_deviation = 0.05;
  input.actual_pose.p = Vector3(0.03, 0.04, 0.0);
  EXPECT_FALSE(check_bounds(bounds, input));
  input.actual_pose.p = Vector3(0.03, 0.05, 0.0);
  const BreachEvent e = check_bounds(bounds, input);
  EXPECT_EQ(e.cause, BreachCause::kTranslationDeviation);
  EXPECT_NEAR(e.value, std::hypot(0.03, 0.05), 1e-12);
  EXPECT_EQ(e.bound, 0.05);
  EXPECT_EQ(e.time, 1.5);
  EXPECT_EQ(describe(e), "translation deviation 0.05831 m exceeds the bound 0.05 m at t = 1.500 s");
}

TEST_F(BoundsFixture, RotationAndArmAngleDeviation) {
  bounds.max_rotation_deviation = 0.1;
  input.actual_pose.R = so3_exp(Vector3(0, 0.2, 0));
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kRotationDeviation);
  bounds.max_rotation_deviation = kUnbounded;
  bounds.max_arm_angle_deviation = 0.2;
  input.actual_arm_angle = M_PI - 0.05;
  input.reference_arm_angle = -M_PI + 0.05;  // 0.1 apart across ±π
  EXPECT_FALSE(check_bounds(bounds, input));
  input.reference_arm_angle = 0.0;
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kArmAngleDeviation);
  input.arm_angle_valid = false;  // ψ undefined: not judged
  EXPECT_FALSE(check_bounds(bounds, input));
}

TEST_F(BoundsFixture, ForceAndTorqueThresholds) {
  bounds.max_force = 50;
  bounds.max_torque = 10;
  input.wrench << 30, 40, 0.1, 0, 0, 0;
  const BreachEvent f = check_bounds(bounds, input);
  EXPECT_EQ(f.cause, BreachCause::kForce);
  EXPECT_NEAR(f.value, std::sqrt(2500.01), 1e-9);
  input.wrench << 0, 0, 0, 6, 8, 0.5;
  const BreachEvent t = check_bounds(bounds, input);
  EXPECT_EQ(t.cause, BreachCause::kTorque);
  EXPECT_EQ(describe(t).substr(0, 27), "torque 10.01 N·m exceeds t");
}

TEST_F(BoundsFixture, ProximityWindowAndLostReading) {
  bounds.min_proximity_distance = 0.05;
  bounds.max_proximity_distance = 0.3;
  proximity.valid = true;
  proximity.distance = 0.1;
  EXPECT_FALSE(check_bounds(bounds, input));
  proximity.distance = 0.04;
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kProximityTooClose);
  proximity.distance = 0.31;
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kProximityTooFar);
  proximity.valid = false;
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kProximityTooFar);
}

TEST_F(BoundsFixture, JointLimitMarginNamesTheJoint) {
  bounds.joint_limit_margin.setConstant(0.1);
  q[4] = 1.95;
  const BreachEvent e = check_bounds(bounds, input);
  EXPECT_EQ(e.cause, BreachCause::kJointLimitMargin);
  EXPECT_EQ(e.index, 4);
  EXPECT_NEAR(e.value, 0.05, 1e-12);
  EXPECT_NE(describe(e).find("joint-limit margin (joint 5) 0.05 rad is below the bound 0.1 rad"),
            std::string::npos);
}

TEST_F(BoundsFixture, NonFiniteMeasurementsBreach) {
  bounds.max_force = 50;
  input.wrench[1] = std::nan("");
  EXPECT_EQ(check_bounds(bounds, input).cause, BreachCause::kForce);
}

TEST_F(BoundsFixture, PersistentCheckIgnoresTheStoppedTasksReference) {
  bounds.max_translation_deviation = 0.01;
  bounds.max_force = 50;
  input.actual_pose.p = Vector3(1, 0, 0);
  EXPECT_FALSE(check_persistent_bounds(bounds, input));
  input.wrench[0] = 60;
  EXPECT_EQ(check_persistent_bounds(bounds, input).cause, BreachCause::kForce);
}

TEST(BreachDescription, UsesTheSharedNamesAndUnits) {
  // The causes the executor and the ground station name alike (tether/common/vocabulary.h).
  EXPECT_EQ(describe(BreachEvent{BreachCause::kArmAngleDeviation, 0.25, 0.2, 2.0}),
            "arm-angle deviation 0.25 rad exceeds the bound 0.2 rad at t = 2.000 s");
  EXPECT_EQ(describe(BreachEvent{BreachCause::kLoopOverrun, 3, 3, 0.5}),
            "control-loop overrun 3 cycles exceeds the bound 3 cycles at t = 0.500 s");
  EXPECT_EQ(describe(BreachEvent{BreachCause::kTeleoperationStalled, 0.12, 0.1, 4.25}),
            "teleoperation stream stalled 0.12 s exceeds the bound 0.1 s at t = 4.250 s");
  // Causes without a measured value say only what and when.
  EXPECT_EQ(describe(BreachEvent{BreachCause::kDeadmanReleased, 0.0, 0.0, 1.0}),
            "deadman released at t = 1.000 s");
  EXPECT_EQ(describe(BreachEvent{}), "no breach");
}

}  // namespace
}  // namespace tether::remote

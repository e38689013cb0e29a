#include "link/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "tether/proto/convert.h"

namespace tether::local {
namespace {

template <typename Vector>
Vector random_vector(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  Vector v;
  for (int i = 0; i < v.size(); ++i) v[i] = u(rng);
  return v;
}

Breach sample_breach() {
  Breach b;
  b.cause = BreachCause::kJointLimitMargin;
  b.description = "joint 4 is 0.01 rad from its limit, the margin is 0.05 rad at t = 1.5 s";
  b.value = 0.01;
  b.bound = 0.05;
  b.time = 1.5;
  b.joint = 3;
  return b;
}

TEST(LinkWire, SiteStatusRoundTripsExactly) {
  std::mt19937 rng(7);
  SiteStatus s;
  s.site = "lab-1";
  s.arm = "iiwa7";
  s.arm_link = "embedded simulation";
  s.state = ExecutorState::kStopped;
  s.task_id = 42;
  s.task_name = "door_force";
  s.breach = sample_breach();
  s.controller = "ana@ground";
  s.teleoperation = {1000, 3, 2, 1005};
  s.timing = {0.001, 123456, 7, 35e-6, 12e-6};
  s.has_measured_joints = true;
  s.measured_joints = random_vector<JointVector>(rng);
  s.last_reset = "refused: force 93 N exceeds the bound 80 N";

  v1::SiteStatus message;
  wire::to_wire(s, &message);
  EXPECT_EQ(message.breach().cause(), v1::BREACH_CAUSE_JOINT_LIMIT_MARGIN);
  EXPECT_EQ(message.measured_joints().values_size(), 7);
  EXPECT_EQ(wire::to_domain(message), s);
}

TEST(LinkWire, StatusWithoutJointsReportsNone) {
  v1::SiteStatus message;
  message.set_state(v1::EXECUTOR_STATE_IDLE);
  const SiteStatus s = wire::to_domain(message);
  EXPECT_FALSE(s.has_measured_joints);
  EXPECT_EQ(s.state, ExecutorState::kIdle);
  EXPECT_FALSE(s.breach);
  EXPECT_EQ(s.breach.joint, -1);  // proto3's 0 is not a joint unless the cause is per joint
}

TEST(LinkWire, TelemetryRoundTripsExactly) {
  std::mt19937 rng(11);
  TelemetrySample t;
  t.cycle = 987654;
  t.arm_time = 987.654;
  t.task_time = 3.25;
  t.state = ExecutorState::kRunning;
  t.task_id = 5;
  t.task_name = "door_shared";
  t.commanded_joints = random_vector<JointVector>(rng);
  t.measured_joints = random_vector<JointVector>(rng);
  t.motion_position = random_vector<Vector3>(rng);
  t.arm_angle = 0.3;
  t.error = random_vector<MotionVector>(rng);
  t.velocity = random_vector<MotionVector>(rng);
  t.force = random_vector<MotionVector>(rng);
  t.wrench = random_vector<Vector6>(rng);
  t.wrench_error = random_vector<Vector6>(rng);
  t.joint_weight = 0.25;
  t.behaviours = {Behaviour::kTeleoperation, Behaviour::kForceControl};
  t.timing = {0.001, 987654, 0, 30e-6, 5e-6};
  t.teleoperation = {3000, 0, 0, 3000};
  t.aux = {0.61, 0.2, 1.0};

  v1::Telemetry message;
  wire::to_wire(t, &message);
  EXPECT_EQ(message.behaviours(1), v1::BEHAVIOUR_FORCE_CONTROL);
  EXPECT_EQ(wire::to_domain(message), t);
}

TEST(LinkWire, TaskSummaryRoundTrips) {
  TaskSummary s{"door_spring", 3, 0.001, {Behaviour::kSpringTrajectory, Behaviour::kDither}};
  v1::TaskSummary message;
  wire::to_wire(s, &message);
  EXPECT_EQ(wire::to_domain(message), s);
}

TEST(LinkWire, ReportsKeepNonFiniteMeasurements) {
  // A NaN wrench is what stops the arm with a non-finite breach; the console must see it.
  v1::Telemetry message;
  message.mutable_wrench()->mutable_force()->set_x(std::numeric_limits<double>::quiet_NaN());
  message.mutable_error()->set_arm_angle(std::numeric_limits<double>::infinity());
  message.mutable_breach()->set_cause(v1::BREACH_CAUSE_NON_FINITE);
  const TelemetrySample t = wire::to_domain(message);
  EXPECT_TRUE(std::isnan(t.wrench[0]));
  EXPECT_EQ(t.error[6], std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.breach.cause, BreachCause::kNonFinite);
  EXPECT_STREQ(to_string(t.breach.cause), "non-finite value");
}

TEST(LinkWire, RefusesAnUnknownEnumValueNamingTheField) {
  v1::Telemetry message;
  message.mutable_breach()->set_cause(static_cast<v1::BreachCause>(99));
  try {
    wire::to_domain(message);
    FAIL() << "an unknown breach cause was accepted";
  } catch (const proto::ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("breach.cause = 99"), std::string::npos) << e.what();
  }
}

TEST(LinkWire, RefusesAJointVectorOfTheWrongSize) {
  v1::Telemetry message;
  for (int i = 0; i < 6; ++i) message.mutable_measured_joints()->add_values(0.1);
  try {
    wire::to_domain(message);
    FAIL() << "six joint values were accepted";
  } catch (const proto::ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("measured_joints.values: 6 values"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tether::local

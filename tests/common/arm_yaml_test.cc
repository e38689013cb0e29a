#include "tether/common/arm_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tether {
namespace {

std::string error_of(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const ArmModelError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JointLimitsYaml, ReadsKinovasPublishedFileAndIgnoresTheScalingFactors) {
  const JointLimitsYaml limits = load_joint_limits_yaml(data_path("arms/gen3_joint_limits.yaml"));
  ASSERT_EQ(limits.joints.size(), 7u);
  const JointLimitEntry& j3 = limits.joints.at("joint_3");
  EXPECT_DOUBLE_EQ(*j3.velocity, 1.33);
  EXPECT_DOUBLE_EQ(*j3.acceleration, 4.94);
  EXPECT_FALSE(j3.lower.has_value());
  EXPECT_DOUBLE_EQ(*limits.joints.at("joint_7").acceleration, 9.5);
  EXPECT_GT(j3.line, 0);
}

TEST(JointLimitsYaml, CountsAValueOnlyUnderItsTrueFlagAsMoveItDoes) {
  const JointLimitsYaml limits = parse_joint_limits_yaml(
      "joint_limits:\n"
      "  a: {has_acceleration_limits: false, max_acceleration: 3, has_velocity_limits: true,\n"
      "      max_velocity: 2, max_jerk: 100, has_jerk_limits: false}\n"
      "  b: {has_position_limits: true, min_position: -6.2, max_position: 6.2}\n",
      "limits.yaml");
  EXPECT_FALSE(limits.joints.at("a").acceleration.has_value());
  EXPECT_DOUBLE_EQ(*limits.joints.at("a").velocity, 2.0);
  EXPECT_DOUBLE_EQ(*limits.joints.at("b").lower, -6.2);
  EXPECT_DOUBLE_EQ(*limits.joints.at("b").upper, 6.2);
  EXPECT_FALSE(limits.joints.at("b").velocity.has_value());
}

struct BadYaml {
  const char* name;
  const char* text;
  std::vector<std::string> expected;  // all must appear in the message
};
void PrintTo(const BadYaml& bad, std::ostream* out) { *out << bad.name; }

class JointLimitsYamlRejects : public ::testing::TestWithParam<BadYaml> {};

TEST_P(JointLimitsYamlRejects, NamingFileLineFieldValueAndRange) {
  const std::string message =
      error_of([&] { parse_joint_limits_yaml(GetParam().text, "limits.yaml"); });
  for (const auto& piece : GetParam().expected) {
    EXPECT_NE(message.find(piece), std::string::npos)
        << "missing '" << piece << "' in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadFiles, JointLimitsYamlRejects,
    ::testing::Values(
        BadYaml{"NegativeAcceleration",
                "joint_limits:\n  j3:\n    has_acceleration_limits: true\n"
                "    max_acceleration: -2\n",
                {"limits.yaml:4:", "joint_limits.j3.max_acceleration = '-2'", "> 0 [rad/s^2]"}},
        BadYaml{"NotANumber",
                "joint_limits:\n  j3: {has_velocity_limits: true, max_velocity: fast}\n",
                {"limits.yaml:2:", "joint_limits.j3.max_velocity = 'fast'",
                 "finite number > 0 [rad/s]"}},
        BadYaml{"NotFinite",
                "joint_limits:\n  j3: {has_acceleration_limits: true, max_acceleration: .inf}\n",
                {"joint_limits.j3.max_acceleration = '.inf'", "finite"}},
        BadYaml{"Degrees",
                "joint_limits:\n  j1: {has_position_limits: true, min_position: -180,\n"
                "       max_position: 180}\n",
                {"joint_limits.j1.min_position = '-180'", "[rad] (radians, not degrees)"}},
        BadYaml{"EmptyRange",
                "joint_limits:\n  j1: {has_position_limits: true, min_position: 1,"
                " max_position: 1}\n",
                {"limits.yaml:2:", "joint_limits.j1", "lower 1 >= upper 1"}},
        BadYaml{"FlagWithoutValue",
                "joint_limits:\n  j2:\n    has_acceleration_limits: true\n",
                {"limits.yaml:3:", "joint_limits.j2.has_acceleration_limits is true",
                 "max_acceleration is missing"}},
        BadYaml{"FlagNotABoolean",
                "joint_limits:\n  j2: {has_acceleration_limits: maybe, max_acceleration: 1}\n",
                {"joint_limits.j2.has_acceleration_limits = 'maybe'", "true or false"}},
        BadYaml{"MisspeltKey",
                "joint_limits:\n  j2:\n    has_acceleration_limits: true\n"
                "    max_acceleation: 1\n",
                {"limits.yaml:4:", "joint_limits.j2.max_acceleation: unknown key"}},
        BadYaml{"NoRoot",
                "j1: {has_velocity_limits: true, max_velocity: 1}\n",
                {"limits.yaml", "no joint_limits key"}},
        BadYaml{"NotAMap", "- 1\n- 2\n", {"limits.yaml", "not a MoveIt joint_limits.yaml"}},
        BadYaml{"JointNotAMap",
                "joint_limits:\n  j1: 3\n",
                {"limits.yaml:2:", "joint_limits.j1 = '3'", "must be a map"}},
        BadYaml{"InvalidYaml",
                "joint_limits:\n  j1: {a: [1, 2}\n",
                {"limits.yaml:", "not valid YAML"}}),
    [](const ::testing::TestParamInfo<BadYaml>& info) { return info.param.name; });

TEST(ArmProfile, ReadsAccelerationsRangesPointsAndTolerance) {
  const ArmProfile profile = parse_arm_profile(
      "tether_arm_profile: 1\n"
      "joints:\n"
      "  joint_1: {acceleration: 4.5, lower: -6.2, upper: 6.2}\n"
      "  joint_2: {acceleration: 3}\n"
      "points:\n"
      "  elbow: {link: forearm_link, xyz: [0, 0.01, -0.2]}\n"
      "  wrist: {link: bracelet_link}\n"
      "point_tolerance: 0.006\n",
      "arm.yaml");
  EXPECT_DOUBLE_EQ(*profile.joints.at("joint_1").acceleration, 4.5);
  EXPECT_DOUBLE_EQ(*profile.joints.at("joint_1").lower, -6.2);
  EXPECT_FALSE(profile.joints.at("joint_2").upper.has_value());
  EXPECT_FALSE(profile.shoulder.has_value());
  ASSERT_TRUE(profile.elbow.has_value());
  EXPECT_EQ(profile.elbow->link, "forearm_link");
  EXPECT_LE((profile.elbow->xyz - Vector3(0, 0.01, -0.2)).norm(), 1e-15);
  EXPECT_EQ(profile.wrist->xyz, Vector3::Zero());
  EXPECT_DOUBLE_EQ(*profile.point_tolerance, 0.006);
}

TEST(ArmProfile, ReadsTheShippedGen3Profile) {
  const ArmProfile profile = load_arm_profile(data_path("arms/gen3_profile.yaml"));
  EXPECT_EQ(profile.joints.size(), 4u);
  EXPECT_NEAR(*profile.joints.at("joint_7").upper, 2.0 * 3.14159265358979, 1e-12);
}

class ArmProfileRejects : public ::testing::TestWithParam<BadYaml> {};

TEST_P(ArmProfileRejects, NamingFileLineFieldValueAndRange) {
  const std::string message = error_of([&] { parse_arm_profile(GetParam().text, "arm.yaml"); });
  for (const auto& piece : GetParam().expected) {
    EXPECT_NE(message.find(piece), std::string::npos)
        << "missing '" << piece << "' in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadFiles, ArmProfileRejects,
    ::testing::Values(
        BadYaml{"NoVersion", "joints: {}\n", {"arm.yaml", "'tether_arm_profile: 1' is missing"}},
        BadYaml{"OtherVersion",
                "tether_arm_profile: 2\n",
                {"arm.yaml:1:", "tether_arm_profile = '2'", "must be 1"}},
        BadYaml{"NegativeAcceleration",
                "tether_arm_profile: 1\njoints:\n  j1: {acceleration: -1}\n",
                {"arm.yaml:3:", "joints.j1.acceleration = '-1'", "> 0 [rad/s^2]"}},
        BadYaml{"LowerWithoutUpper",
                "tether_arm_profile: 1\njoints:\n  j1: {lower: -1}\n",
                {"arm.yaml:3:", "joints.j1: upper is missing"}},
        BadYaml{"UnknownJointKey",
                "tether_arm_profile: 1\njoints:\n  j1: {velocity: 1}\n",
                {"joints.j1.velocity: unknown key"}},
        BadYaml{"UnknownPoint",
                "tether_arm_profile: 1\npoints:\n  hip: {link: a}\n",
                {"arm.yaml:3:", "points.hip: unknown point"}},
        BadYaml{"PointWithoutLink",
                "tether_arm_profile: 1\npoints:\n  elbow: {xyz: [0, 0, 0]}\n",
                {"points.elbow.link is missing"}},
        BadYaml{"PointWithTwoCoordinates",
                "tether_arm_profile: 1\npoints:\n  elbow: {link: a, xyz: [0, 0]}\n",
                {"points.elbow.xyz", "list of 3 numbers"}},
        BadYaml{"ZeroTolerance",
                "tether_arm_profile: 1\npoint_tolerance: 0\n",
                {"arm.yaml:2:", "point_tolerance = '0'", "(0, 0.1] [m]"}},
        BadYaml{"UnknownTopLevelKey",
                "tether_arm_profile: 1\nacceleration: 3\n",
                {"arm.yaml:2:", "acceleration: unknown key"}}),
    [](const ::testing::TestParamInfo<BadYaml>& info) { return info.param.name; });

TEST(ArmYaml, NamesTheFileThatCannotBeOpened) {
  EXPECT_EQ(error_of([] { load_joint_limits_yaml("/nonexistent/limits.yaml"); }),
            "/nonexistent/limits.yaml: cannot open joint limits file");
  EXPECT_EQ(error_of([] { load_arm_profile("/nonexistent/arm.yaml"); }),
            "/nonexistent/arm.yaml: cannot open arm profile");
}

}  // namespace
}  // namespace tether

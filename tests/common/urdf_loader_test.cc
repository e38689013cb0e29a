#include "tether/common/urdf_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "tether/common/units.h"

namespace tether {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

UrdfLoadOptions iiwa_options() {
  UrdfLoadOptions options;
  options.base_link = "iiwa_link_0";
  options.tool_link = "iiwa_flange";
  return options;
}

// Loads a modified copy of the default arm's URDF and returns the error message.
std::string error_of(const std::string& xml, const UrdfLoadOptions& options = iiwa_options()) {
  try {
    load_arm_from_urdf_string(xml, "broken.urdf", options);
  } catch (const ArmModelError& e) {
    return e.what();
  }
  return "no error";
}

std::string iiwa_xml() { return read(data_path("arms/iiwa7.urdf")); }

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "fixture text not found: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(UrdfLoader, LoadsTheDefaultArmWithLimitsMassesAndArmAnglePoints) {
  const ArmModel arm = load_default_arm();
  ASSERT_EQ(arm.dof(), 7);
  EXPECT_EQ(arm.name, "iiwa7");
  EXPECT_EQ(arm.joints[0].name, "iiwa_joint_1");
  EXPECT_NEAR(arm.joints[1].limits.upper, 120.0 * kDegToRad, 1e-9);
  EXPECT_NEAR(arm.joints[6].limits.velocity, 180.0 * kDegToRad, 1e-9);
  EXPECT_DOUBLE_EQ(arm.joints[6].limits.acceleration, 20.0);
  EXPECT_DOUBLE_EQ(arm.joints[0].limits.effort, 176.0);
  EXPECT_NEAR(arm.joints[2].link.mass, 4.05623, 1e-9);
  EXPECT_EQ(arm.shoulder.joint, 1);
  EXPECT_EQ(arm.elbow.joint, 3);
  EXPECT_EQ(arm.wrist.joint, 5);
  // The fixed flange joint is folded into the tool frame.
  EXPECT_LE((arm.tool.p - Vector3(0, 0, 0.045)).norm(), 1e-15);
}

TEST(UrdfLoader, LoadsThePandaWithItsLinkOffsets) {
  const ArmModel arm = load_panda_arm();
  ASSERT_EQ(arm.dof(), 7);
  EXPECT_LE((arm.joints[3].origin.p - Vector3(0.0825, 0, 0)).norm(), 1e-15);
  EXPECT_DOUBLE_EQ(arm.joints[3].limits.upper, -0.0698);
}

TEST(UrdfLoader, MergesMassOfRigidlyAttachedLinks) {
  // A 2 kg tool plate 0.1 m beyond the flange adds to link 7's mass and moves its centre.
  std::string xml = iiwa_xml();
  xml = replace(xml, "<link name=\"iiwa_flange\"/>",
                "<link name=\"iiwa_flange\"><inertial><origin xyz=\"0 0 0.1\"/><mass "
                "value=\"2\"/><inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" "
                "izz=\"0\"/></inertial></link>");
  const ArmModel arm = load_arm_from_urdf_string(xml, "plate.urdf", iiwa_options());
  const LinkInertia& link = arm.joints[6].link;
  EXPECT_NEAR(link.mass, 0.354321 + 2.0, 1e-9);
  // Flange at z = 0.045 in joint 7's frame, plate 0.1 beyond; link body centre at 0.0225.
  EXPECT_NEAR(link.com.z(), (0.354321 * 0.0225 + 2.0 * 0.145) / (2.354321), 1e-9);
}

struct BadUrdf {
  const char* name;
  std::function<std::string(const std::string&)> edit;
  UrdfLoadOptions options;
  std::vector<std::string> expected;  // all must appear in the message
};

void PrintTo(const BadUrdf& bad, std::ostream* out) { *out << bad.name; }

class UrdfLoaderRejects : public ::testing::TestWithParam<BadUrdf> {};

TEST_P(UrdfLoaderRejects, WithAMessageNamingFileAndElement) {
  const BadUrdf& bad = GetParam();
  const std::string message = error_of(bad.edit(iiwa_xml()), bad.options);
  EXPECT_NE(message, "no error");
  for (const auto& piece : bad.expected) {
    EXPECT_NE(message.find(piece), std::string::npos)
        << "missing '" << piece << "' in: " << message;
  }
}

UrdfLoadOptions with_tool(const std::string& tool) {
  UrdfLoadOptions o = iiwa_options();
  o.tool_link = tool;
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    BadFiles, UrdfLoaderRejects,
    ::testing::Values(
        BadUrdf{"MalformedXml",
                [](const std::string& x) { return replace(x, "</robot>", "</robt>"); },
                iiwa_options(),
                {"broken.urdf:", "malformed XML"}},
        BadUrdf{"NotARobot",
                [](const std::string&) { return std::string("<?xml version=\"1.0\"?><model/>"); },
                iiwa_options(),
                {"broken.urdf", "no <robot> root element"}},
        BadUrdf{"MissingLimit",
                [](const std::string& x) {
                  return std::regex_replace(
                      x,
                      std::regex("<limit lower=\"-2.0943951024\" upper=\"2.0943951024\" "
                                 "velocity=\"2.2689280276\"[^>]*>"),
                      "");
                },
                iiwa_options(),
                {"broken.urdf:", "<joint name=\"iiwa_joint_4\">", "missing <limit>"}},
        BadUrdf{"MissingAcceleration",
                [](const std::string& x) { return replace(x, " acceleration=\"20\"", ""); },
                iiwa_options(),
                {"broken.urdf:", "joint \"iiwa_joint_7\": no acceleration limit [rad/s^2]",
                 "max_acceleration to a MoveIt joint_limits.yaml (--joint-limits)",
                 "acceleration to a tether arm profile (--arm-profile)"}},
        BadUrdf{"BadAcceleration",
                [](const std::string& x) {
                  return replace(x, "acceleration=\"20\"", "acceleration=\"-3\"");
                },
                iiwa_options(),
                {"iiwa_joint_7", "acceleration=\"-3\"", "> 0"}},
        BadUrdf{"EmptyPositionRange",
                [](const std::string& x) {
                  return replace(x, "lower=\"-2.9670597284\" upper=\"2.9670597284\"", "");
                },
                iiwa_options(),
                {"iiwa_joint_1", "lower=0 upper=0", "lower < upper"}},
        BadUrdf{"ContinuousJoint",
                [](const std::string& x) {
                  return replace(x, "<joint name=\"iiwa_joint_5\" type=\"revolute\">",
                                 "<joint name=\"iiwa_joint_5\" type=\"continuous\">");
                },
                iiwa_options(),
                {"broken.urdf:", "joint \"iiwa_joint_5\" is continuous and has no position range",
                 "(--joint-limits)", "(--arm-profile)"}},
        BadUrdf{"PrismaticJoint",
                [](const std::string& x) {
                  return replace(x, "<joint name=\"iiwa_joint_2\" type=\"revolute\">",
                                 "<joint name=\"iiwa_joint_2\" type=\"prismatic\">");
                },
                iiwa_options(),
                {"iiwa_joint_2", "type 'prismatic'"}},
        BadUrdf{"NonSerialChain",
                [](const std::string& x) {
                  return replace(
                      x, "</robot>",
                      "<link name=\"extra\"/><joint name=\"branch\" type=\"revolute\">"
                      "<parent link=\"iiwa_link_3\"/><child link=\"extra\"/>"
                      "<axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" "
                      "velocity=\"1\" effort=\"1\" acceleration=\"1\"/></joint></robot>");
                },
                iiwa_options(),
                {"broken.urdf", "<joint name=\"branch\">", "not a serial chain", "iiwa_link_3"}},
        BadUrdf{"ParallelShoulderAxesWithoutMarkers",
                [](const std::string& x) {
                  const std::string unmarked = std::regex_replace(
                      std::regex_replace(x, std::regex("<link name=\"tether_[a-z]+\"/>"), ""),
                      std::regex("<joint name=\"tether_[a-z]+_mount\"[\\s\\S]*?</joint>"), "");
                  return replace(unmarked, "xyz=\"0 0 0.19\" rpy=\"-1.5707963267948966 0 0\"",
                                 "xyz=\"0 0 0.19\" rpy=\"0 0 0\"");
                },
                iiwa_options(),
                {"broken.urdf: shoulder point: the axes of joints 1 ('iiwa_joint_1') and 2 "
                 "('iiwa_joint_2') are parallel at q = 0 and never meet",
                 "points.shoulder", "tether_shoulder"}},
        BadUrdf{"UnknownToolLink",
                [](const std::string& x) { return x; },
                with_tool("gripper"),
                {"broken.urdf", "tool link 'gripper' is not a <link>"}},
        BadUrdf{"UrdfdomRejects",
                [](const std::string& x) {
                  return replace(x, "<parent link=\"iiwa_link_5\"/>", "<parent link=\"nowhere\"/>");
                },
                iiwa_options(),
                {"broken.urdf", "urdfdom rejected the URDF", "nowhere"}}),
    [](const ::testing::TestParamInfo<BadUrdf>& info) { return info.param.name; });

TEST(UrdfLoader, NamesTheFileThatCannotBeOpened) {
  try {
    load_arm_from_urdf("/nonexistent/arm.urdf", iiwa_options());
    FAIL();
  } catch (const ArmModelError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/arm.urdf: cannot open URDF file");
  }
}

}  // namespace
}  // namespace tether

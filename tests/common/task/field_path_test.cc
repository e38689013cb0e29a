#include "tether/common/task/field_path.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tether {
namespace {

using Segments = std::vector<FieldPath::Segment>;

TEST(FieldPath, JoinsFieldsWithDotsAndIndexesRepeatedFields) {
  const FieldPath path =
      FieldPath().field("trajectory").field("waypoints").element(3).field("time_s");
  EXPECT_EQ(path.to_string(), "trajectory.waypoints[3].time_s");
  EXPECT_EQ(path.segments(), (Segments{{"trajectory", -1}, {"waypoints", 3}, {"time_s", -1}}));
  EXPECT_FALSE(path.empty());
  EXPECT_TRUE(FieldPath().empty());
  EXPECT_EQ(FieldPath().to_string(), "");
}

TEST(FieldPath, NamesMotionRowsByTheSchemasComponents) {
  const FieldPath mass("impedance.mass");
  const std::vector<std::string> expected = {
      "impedance.mass.translation.x", "impedance.mass.translation.y",
      "impedance.mass.translation.z", "impedance.mass.rotation.x",
      "impedance.mass.rotation.y",    "impedance.mass.rotation.z",
      "impedance.mass.arm_angle"};
  for (int row = 0; row < 7; ++row) EXPECT_EQ(mass.motion_row(row).to_string(), expected[row]);
  EXPECT_THROW(mass.motion_row(7), std::out_of_range);
  EXPECT_THROW(mass.motion_row(-1), std::out_of_range);
}

TEST(FieldPath, NamesVectorWrenchTwistAndJointComponents) {
  EXPECT_EQ(FieldPath("tool_T_motion.position").component(1).to_string(),
            "tool_T_motion.position.y");
  EXPECT_EQ(FieldPath("force_control.reference_wrench").wrench_row(0).to_string(),
            "force_control.reference_wrench.force.x");
  EXPECT_EQ(FieldPath("force_control.reference_wrench").wrench_row(5).to_string(),
            "force_control.reference_wrench.torque.z");
  EXPECT_EQ(FieldPath("dither.amplitude").twist_row(2).to_string(), "dither.amplitude.linear.z");
  EXPECT_EQ(FieldPath("dither.amplitude").twist_row(3).to_string(), "dither.amplitude.angular.x");
  const FieldPath zone = FieldPath("joint_limit_avoidance.zone").joint(2);
  EXPECT_EQ(zone.to_string(), "joint_limit_avoidance.zone.values[2]");
  EXPECT_EQ(zone.segments().back(), (FieldPath::Segment{"values", 2}));
  EXPECT_THROW(FieldPath("v").component(3), std::out_of_range);
  EXPECT_THROW(FieldPath("w").wrench_row(6), std::out_of_range);
  EXPECT_THROW(FieldPath("t").twist_row(-1), std::out_of_range);
  EXPECT_THROW(FieldPath("q").joint(-1), std::out_of_range);
}

TEST(FieldPath, OnlyAFieldCanBeIndexedOnce) {
  EXPECT_THROW(FieldPath().element(0), std::logic_error);
  EXPECT_THROW(FieldPath("trajectory.waypoints[1]").element(2), std::logic_error);
}

TEST(FieldPath, ParsesItsOwnSpellingBack) {
  for (const char* spelled :
       {"period_s", "impedance.mass.rotation.x", "trajectory.waypoints[12].pose.position.z",
        "resolver.configuration_control.functions[0].weights[3].weights.values[6]",
        "tool_T_motion.rotation.matrix.rows[8]"}) {
    const auto parsed = FieldPath::parse(spelled);
    ASSERT_TRUE(parsed.has_value()) << spelled;
    EXPECT_EQ(parsed->to_string(), spelled);
    EXPECT_EQ(FieldPath(spelled), *parsed) << spelled;
  }
  EXPECT_EQ(
      FieldPath::parse("resolver.configuration_control.functions[0].weights[3]")->segments(),
      (Segments{
          {"resolver", -1}, {"configuration_control", -1}, {"functions", 0}, {"weights", 3}}));
}

TEST(FieldPath, RejectsTextThatIsNotAPath) {
  for (const char* text :
       {"", ".", "a.", ".a", "a..b", "1a", "a-b", "a b", "a[", "a[]", "a[x]", "a[-1]", "a[1]b",
        "a[1][2]", "a.[1]", "[1]", "a[1 ]", "a[99999999999]"}) {
    EXPECT_FALSE(FieldPath::parse(text).has_value()) << '"' << text << '"';
  }
  // Converted implicitly, such text is one segment, printed as given.
  EXPECT_EQ(FieldPath("not a path").segments(), (Segments{{"not a path", -1}}));
  EXPECT_EQ(FieldPath("not a path").to_string(), "not a path");
  EXPECT_TRUE(FieldPath("").empty());
}

TEST(FieldPath, APositionIsPrintedBeforeThePathAsCompilersDo) {
  const FieldPath path("impedance.mass.rotation.x");
  EXPECT_FALSE(path.position().has_value());
  const FieldPath placed = path.at({"door.textproto", 7, 5});
  EXPECT_EQ(placed.to_string(), "door.textproto:7:5: impedance.mass.rotation.x");
  EXPECT_EQ(placed.position(), (SourcePosition{"door.textproto", 7, 5}));
  EXPECT_EQ(path.at({"door.json", 4, 0}).to_string(), "door.json:4: impedance.mass.rotation.x");
  EXPECT_EQ(path.at({"door.json"}).to_string(), "door.json: impedance.mass.rotation.x");
  // An error about the file as a whole has no path after its position.
  EXPECT_EQ(FieldPath().at({"door.json", 2, 9}).to_string(), "door.json:2:9: ");
  // Extending keeps the position; unplaced() drops it.
  EXPECT_EQ(FieldPath("bounds").at({"b.textproto", 1, 1}).field("max_force_n").to_string(),
            "b.textproto:1:1: bounds.max_force_n");
  EXPECT_EQ(placed.unplaced(), path);
  EXPECT_NE(placed, path);
}

}  // namespace
}  // namespace tether

#include "tether/local/console/preview.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tether/common/units.h"
#include "tether/proto/task_io.h"

namespace tether::local {
namespace {

TaskParameters load(const std::string& path) { return proto::load_task_file(path); }

TEST(Preview, PredictsNoBreachForTheDoorForceTaskInTheDoorScene) {
  const TaskParameters task = load(TETHER_TASK_DIR "/door_force.textproto");
  PreviewOptions options;
  options.scene = "door";
  options.duration = 3.0;
  const PreviewReport report = preview_task(task, options);
  EXPECT_FALSE(report.breach) << report.breach->description;
  EXPECT_EQ(report.final_state, "running");
  EXPECT_EQ(report.cycles, 3001u);
  // 18 N·m about the hinge opens the door (docs/task-authoring.md: 47° after 4 s).
  EXPECT_GT(report.final_door_angle * kRadToDeg, 20.0);
  EXPECT_GT(report.peak_torque, 1.0);
  EXPECT_LT(report.peak_torque, task.bounds.max_torque);
  EXPECT_LT(report.max_translation_deviation, task.bounds.max_translation_deviation);
  EXPECT_GT(report.min_joint_limit_margin, task.bounds.joint_limit_margin.maxCoeff());
  EXPECT_NE(format_preview(report).find("no breach predicted"), std::string::npos);
}

TEST(Preview, PredictsTheForceBreachOfATooTightBound) {
  const TaskParameters task = load(TETHER_CONSOLE_TEST_DIR "/tight_bounds.textproto");
  PreviewOptions options;
  options.scene = "door";
  const PreviewReport report = preview_task(task, options);
  ASSERT_TRUE(report.breach);
  EXPECT_EQ(report.breach->cause, "force");
  EXPECT_DOUBLE_EQ(report.breach->bound, 2.0);
  EXPECT_GT(report.breach->value, 2.0);
  EXPECT_GT(report.breach->time, 0.0);
  EXPECT_LT(report.breach->time, 5.0);
  EXPECT_NE(report.final_state, "running");
  const std::string text = format_preview(report);
  EXPECT_NE(text.find("PREDICTED BREACH"), std::string::npos) << text;
  EXPECT_NE(text.find(report.breach->description), std::string::npos) << text;
}

TEST(Preview, HoldsTheHandControllerStillForTeleoperation) {
  // door_shared: shared control whose only motion comes from the operator.
  const TaskParameters task = load(TETHER_TASK_DIR "/door_shared.textproto");
  EXPECT_TRUE(teleoperation_only(task));
  PreviewOptions options;
  options.scene = "door";
  options.duration = 1.0;
  const PreviewReport report = preview_task(task, options);
  // Without the still hand controller the 0.1 s stall bound would stop it.
  EXPECT_FALSE(report.breach) << report.breach->description;
  EXPECT_LT(std::abs(report.final_door_angle) * kRadToDeg, 1.0);
  EXPECT_NE(format_preview(report).find("teleoperation only"), std::string::npos);
}

TEST(Preview, RunsForTheTrajectoryPlusOneSecondByDefault) {
  TaskParameters task;
  EXPECT_DOUBLE_EQ(natural_duration(task), 5.0);
  task.trajectory.enabled = true;
  task.trajectory.waypoints.resize(2);
  task.trajectory.waypoints[1].time = 2.5;
  EXPECT_DOUBLE_EQ(natural_duration(task), 3.5);
  EXPECT_FALSE(teleoperation_only(task));
}

TEST(Preview, RejectsAnUnknownSceneListingTheChoices) {
  PreviewOptions options;
  options.scene = "kitchen";
  try {
    preview_task(TaskParameters{}, options);
    FAIL() << "scene 'kitchen' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("free, door, wall, obstacles, proximity or target"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tether::local

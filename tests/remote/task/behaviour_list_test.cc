// The list of behaviours (behaviours/list.h) drives the task's members, the vocabulary, the
// validation walk and the executor: these tests check that what it generates is complete
// and in the list's order.

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/behaviours/list.h"
#include "tether/remote/task/task_parameters.h"
#include "tether/remote/task/validation.h"

namespace tether {
namespace {

std::vector<Behaviour> every_behaviour() {
  std::vector<Behaviour> all;
#define TETHER_APPEND(field, Name, ENUM, label) all.push_back(Behaviour::k##Name);
  TETHER_BEHAVIOURS(TETHER_APPEND)
#undef TETHER_APPEND
  return all;
}

TEST(BehaviourList, EveryBehaviourHasItsOwnOperatorName) {
  std::set<std::string> names;
  for (Behaviour b : every_behaviour()) {
    const std::string name = to_string(b);
    EXPECT_NE(name, "unknown");
    EXPECT_NE(name, "unspecified");
    EXPECT_TRUE(names.insert(name).second) << "'" << name << "' names two behaviours";
  }
  EXPECT_EQ(static_cast<int>(names.size()), kBehaviourCount);
  EXPECT_EQ(every_behaviour().back(), static_cast<Behaviour>(kBehaviourCount));
  EXPECT_STREQ(to_string(Behaviour::kUnspecified), "unspecified");
  EXPECT_STREQ(to_string(Behaviour::kJointLimitAvoidance), "joint-limit avoidance");
  EXPECT_STREQ(to_string(static_cast<Behaviour>(every_behaviour().size() + 1)), "unknown");
}

TEST(BehaviourList, EnabledBehavioursFollowTheListInOrder) {
  TaskParameters task;
  EXPECT_TRUE(enabled_behaviours(task).empty());
  task.obstacle_avoidance.enabled = true;
  task.force_control.enabled = true;
  task.trajectory.enabled = true;
  EXPECT_EQ(enabled_behaviours(task),
            (std::vector<Behaviour>{Behaviour::kTrajectory, Behaviour::kForceControl,
                                    Behaviour::kObstacleAvoidance}));

  // Every section enabled names every behaviour of the list, in its order.
#define TETHER_ENABLE(field, Name, ENUM, label) task.field.enabled = true;
  TETHER_BEHAVIOURS(TETHER_ENABLE)
#undef TETHER_ENABLE
  EXPECT_EQ(enabled_behaviours(task), every_behaviour());
}

TEST(BehaviourList, ValidationWalksEverySectionOfTheList) {
  // One bad value in each behaviour's section: each is reported, at its own field, in the
  // order of the list.
  TaskParameters task;
  task.trajectory.waypoints.resize(1);
  task.trajectory.waypoints[0].time = -1.0;
  task.spring_trajectory.max_rotation = -1.0;
  task.teleoperation.stall_timeout = -1.0;
  task.force_control.reference_wrench[0] = std::numeric_limits<double>::quiet_NaN();
  task.joint_limit_avoidance.gain[0] = -1.0;
  task.singularity_avoidance.gain = -1.0;
  task.singularity_robustness.gain = -1.0;
  task.dither.period = -1.0;
  task.proximity.distance_gain = -1.0;
  task.manipulability.gain = -1.0;
  task.obstacle_avoidance.recovery = -1.0;
  const KinematicModel model(load_default_arm());
  const std::vector<ValidationIssue> issues = validate_task(task, model);
  const std::vector<std::string> expected = {
      "trajectory.waypoints[0].time_s",
      "spring_trajectory.max_rotation_rad",
      "teleoperation.stall_timeout_s",
      "force_control.reference_wrench.force.x",
      "joint_limit_avoidance.gain.values[0]",
      "singularity_avoidance.gain",
      "singularity_robustness.gain",
      "dither.period_s",
      "proximity.distance_gain",
      "manipulability.gain",
      "obstacle_avoidance.recovery",
  };
  std::vector<std::string> fields;
  fields.reserve(issues.size());
  for (const ValidationIssue& issue : issues) fields.push_back(issue.field);
  EXPECT_EQ(fields, expected);
}

}  // namespace
}  // namespace tether

// The extended-task-space patent's door-opening experiment (FIGS. 4-10) on the MuJoCo door scene,
// with the task files shipped in remote_site/tasks: force control, spring trajectory and shared
// control.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote {
namespace {

constexpr double kDeg = kDegToRad;

TaskParameters shipped(const std::string& name) {
  return proto::load_task_file(std::string(TETHER_TASK_DIR) + "/" + name + ".textproto");
}

SimulatedArm make_arm(SceneKind scene, const ArmModel& model) {
  SimulationOptions options;
  options.scene = scene;
  options.initial_position = default_initial_position(scene, model);
  return SimulatedArm(model, options);
}

TaskRunRecord run_door(const TaskParameters& task, double seconds, HandControllerScript hand = {}) {
  const ArmModel model = load_default_arm();
  SimulatedArm arm = make_arm(SceneKind::kDoor, model);
  // The task's MOTION frame is the scene's hinge: the experiment is only meaningful if so.
  const Frame hinge = arm.hinge_in_tool();
  EXPECT_LT((hinge.p - task.tool_T_motion.p).norm(), 1e-9);
  EXPECT_LT((hinge.R - task.tool_T_motion.R).norm(), 1e-9);
  TaskRunOptions run;
  run.duration = seconds;
  run.hand_controller = std::move(hand);
  return run_task(arm, task, run);
}

double value_at(const TaskRunRecord& r, const std::vector<double>& v, double time) {
  const auto it = std::lower_bound(r.time.begin(), r.time.end(), time);
  return v[static_cast<std::size_t>(
      std::min<std::ptrdiff_t>(it - r.time.begin(), static_cast<std::ptrdiff_t>(v.size()) - 1))];
}

TEST(DoorExperiment, ForceControlWith18NmAboutTheHingeOpensTheDoor) {
  const TaskRunRecord r = run_door(shipped("door_force"), 4.0);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  EXPECT_EQ(r.final_state, ExecutorState::kRunning);
  // Opens steadily: with the door's own damping negligible the hinge rate tends to
  // τ_r / B_rot = 18 / 80 rad/s, so 4 s give about 47°.
  EXPECT_GT(r.aux0.back(), 40.0 * kDeg);
  EXPECT_LT(r.aux0.back(), 55.0 * kDeg);
  for (std::size_t k = 100; k < r.aux0.size(); ++k) ASSERT_GE(r.aux0[k], r.aux0[k - 100]);
  const double rate = (value_at(r, r.aux0, 3.5) - value_at(r, r.aux0, 2.5)) / 1.0;
  EXPECT_NEAR(rate, 18.0 / 80.0, 0.03);
  // Compliance in every other direction: the door is opened without fighting the hinge.
  EXPECT_LT(r.peak_force, 20.0);
  EXPECT_LT(r.peak_torque, 20.0);
}

TEST(DoorExperiment, SpringTrajectoryOpensTheDoorTo35DegreesFastFirstThenSlowerAndSettles) {
  const TaskRunRecord r = run_door(shipped("door_spring"), 60.0);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  EXPECT_NEAR(r.aux0.back(), 35.0 * kDeg, 1.0 * kDeg);
  // Settled: less than 0.1° of motion over the last 5 s.
  EXPECT_LT(std::abs(r.aux0.back() - value_at(r, r.aux0, 55.0)), 0.1 * kDeg);
  // Fast at first, then slower (the seed's FIG. 9).
  const double early = value_at(r, r.aux0, 5.0) - value_at(r, r.aux0, 0.0);
  const double late = value_at(r, r.aux0, 30.0) - value_at(r, r.aux0, 25.0);
  EXPECT_GT(early, 3.0 * late);
  // The spring length limit caps the initial pull: K·max_rotation = 10 · 0.349 N·m.
  EXPECT_LT(r.peak_torque, 5.0);
}

TEST(DoorExperiment, SharedControlFollowsTheOperatorsRotationAboutTheHingeOnly) {
  // The operator turns the handle about its x axis at 15°/s for 3 s: 45° in all.
  const double rate = 15.0 * kDeg;
  auto hand = [rate](double time, double dt) {
    HandControllerSample s;
    if (time < 3.0) s.increment[3] = rate * dt;
    return s;
  };
  const TaskRunRecord r = run_door(shipped("door_shared"), 4.0, hand);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  EXPECT_NEAR(r.aux0.back(), 45.0 * kDeg, 3.0 * kDeg);
  // After the operator stops, the door stops too.
  EXPECT_LT(std::abs(r.aux0.back() - value_at(r, r.aux0, 3.3)), 0.5 * kDeg);
  EXPECT_EQ(r.teleoperation.lost, 0u);
  EXPECT_EQ(r.teleoperation.duplicates, 0u);
  EXPECT_EQ(r.teleoperation.applied, 4000u);
  EXPECT_LT(r.peak_force, 20.0);
}

TEST(DoorExperiment, SharedControlWithoutAHandControllerStreamStopsAtTheStallDeadline) {
  TaskParameters task = shipped("door_shared");
  task.teleoperation.stall_timeout = 0.05;
  const ArmModel model = load_default_arm();
  SimulatedArm arm = make_arm(SceneKind::kDoor, model);
  TaskRunOptions run;
  run.duration = 1.0;  // no hand-controller stream at all
  const TaskRunRecord r = run_task(arm, task, run);
  EXPECT_EQ(r.breach.cause, BreachCause::kTeleoperationStalled);
  EXPECT_NEAR(r.breach.time, 0.05, 0.0011);
  EXPECT_EQ(r.final_state, ExecutorState::kStopped);
}

TEST(SeedPeriod, ATrajectorySampledAt20MsTracksOnTheSimulatedArm) {
  const ArmModel model = load_default_arm();
  SimulatedArm arm = make_arm(SceneKind::kFreeSpace, model);
  TaskParameters task;
  task.name = "free_space_20ms";
  task.period = 0.02;
  task.impedance.mass << 10, 10, 10, 2, 2, 2, 2;
  task.impedance.damping << 350, 350, 350, 80, 80, 80, 80;
  task.impedance.stiffness << 1000, 1000, 1000, 100, 100, 100, 100;
  task.trajectory.enabled = true;
  Frame goal;
  goal.p = Vector3(0.0, 0.1, -0.1);
  task.trajectory.waypoints.push_back(Waypoint{2.0, goal, 0.2});
  task.bounds.max_translation_deviation = 0.05;
  TaskRunOptions run;
  run.duration = 5.0;
  const TaskRunRecord r = run_task(arm, task, run);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  EXPECT_EQ(r.cycles, 251u);
  EXPECT_LT(r.error.back().head<3>().norm(), 1e-3);
  EXPECT_LT(std::abs(r.error.back()[6]), 2e-3);
}

TEST(WallScene, ForceControlPressesTheGripperOnTheWallWithTheReferenceForce) {
  const ArmModel model = load_default_arm();
  SimulatedArm arm = make_arm(SceneKind::kWall, model);
  TaskParameters task;
  task.name = "wall_press";
  task.impedance.stiffness.head<6>().setZero();
  // Against a rigid wall behind stiff servos the force loop's gain k_env/B must stay below
  // the servo bandwidth: a much larger damping than the door's.
  task.impedance.damping.head<3>().setConstant(2000.0);
  task.wrench_sensor.tool_mass = arm.gripper().mass;
  task.wrench_sensor.tool_center_of_mass = arm.gripper().center_of_mass;
  task.wrench_sensor.filter_cutoff = 20.0;
  task.force_control.enabled = true;
  task.force_control.reference_wrench << 0, 0, 10.0, 0, 0, 0;  // 10 N along TOOL +z, into it
  task.bounds.max_force = 40.0;
  TaskRunOptions run;
  run.duration = 10.0;  // 3 cm at 10 N / B = 5 mm/s, then contact
  const TaskRunRecord r = run_task(arm, task, run);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  // The gripper crossed the 3 cm gap and now pushes with F_r (exact force tracking, K = 0).
  EXPECT_NEAR(r.wrench.back()[2], 10.0, 0.3);
  EXPECT_LT(r.wrench.back().head<2>().norm(), 1.0);
}

TEST(ProximityScene, ProximityControlHoldsTheReferenceDistanceSquareToTheTiltedPlate) {
  const ArmModel model = load_default_arm();
  SimulatedArm arm = make_arm(SceneKind::kProximityTarget, model);
  TaskParameters task;
  task.name = "proximity_hold";
  task.impedance.stiffness.head<6>().setZero();
  task.proximity.enabled = true;
  task.proximity.reference_distance = 0.10;
  task.proximity.tool_T_sensor = arm.options().proximity_sensor.tool_T_sensor;
  task.bounds.min_proximity_distance = 0.03;
  task.bounds.max_proximity_distance = 0.3;
  TaskRunOptions run;
  run.duration = 4.0;
  const TaskRunRecord r = run_task(arm, task, run);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  ArmState state;
  arm.read(state);
  ASSERT_TRUE(state.proximity.valid);
  EXPECT_NEAR(state.proximity.distance, 0.10, 1e-3);  // from 0.15 m
  // The plate is tilted 3° and −2°: the sensor has turned square to it.
  EXPECT_LT(std::acos(std::min(1.0, state.proximity.surface_normal.z())), 0.2 * kDeg);
}

}  // namespace
}  // namespace tether::remote

// The door scene (the extended-task-space patent, FIGS. 4-10): the gripper holds the handle, the
// door swings about the hinge frame the arm reports, its angle goes to aux[0], and the wrist sensor
// feels it.

#include <gtest/gtest.h>

#include "sim_test_support.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote {
namespace {

using testing::kDeg;

SimulationOptions door_options() {
  SimulationOptions options;
  options.scene = SceneKind::kDoor;
  return options;
}

TEST(SimulatedDoor, StaysShutWhileTheServosHoldTheInitialPosture) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulatedArm sim(arm.model, door_options());
    double max_angle = 0.0;
    const ArmState s = testing::run(
        sim, 2.0, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); },
        [&](const ArmState& st) { max_angle = std::max(max_angle, std::abs(st.aux[0])); });
    EXPECT_LT(max_angle, 0.5 * kDeg);
    // Holding the handle costs nothing beyond the gripper's weight.
    EXPECT_NEAR(s.wrench.head<3>().norm(), 0.8 * 9.81, 0.5);
  }
}

// Drives the joints along the door arc to `target` [rad] over `duration`, then holds 0.5 s.
ArmState open_along_arc(SimulatedArm& sim, double target, double duration, double* max_force) {
  const double step = 0.5 * kDeg;
  const auto path = testing::door_arc_joints(sim.model(), sim.initial_position(),
                                             sim.hinge_in_tool(), std::abs(target), step);
  const double sign = target < 0.0 ? -1.0 : 1.0;
  std::vector<JointVector> signed_path = path;
  if (sign < 0.0) {
    // The arc helper opens; for a negative target solve the mirrored arc.
    const KinematicModel model(sim.model());
    KinematicState state;
    forward_kinematics(model, sim.initial_position(), state);
    JointVector q = sim.initial_position();
    for (std::size_t k = 0; k < path.size(); ++k) {
      const Frame pose =
          testing::door_arc_pose(state.tool, sim.hinge_in_tool(), -static_cast<double>(k) * step);
      EXPECT_TRUE(
          solve_tool_pose(model, pose, testing::arm_angle(model, sim.initial_position()), q));
      signed_path[k] = q;
    }
  }
  const double t0 = sim.time();
  // Smooth in time (zero velocity at both ends), so the door is not jerked into motion.
  auto command = [&](double t, const ArmState&) {
    const double phase = std::clamp((t - t0) / duration, 0.0, 1.0);
    const double s = 0.5 * (1.0 - std::cos(testing::kPi * phase)) * (signed_path.size() - 1);
    const std::size_t k = std::min(static_cast<std::size_t>(s), signed_path.size() - 2);
    const double a = s - static_cast<double>(k);
    return testing::hold((1.0 - a) * signed_path[k] + a * signed_path[k + 1]);
  };
  return testing::run(sim, duration + 0.5, command, [&](const ArmState& st) {
    if (max_force) *max_force = std::max(*max_force, st.wrench.head<3>().norm());
  });
}

TEST(SimulatedDoor, OpensToTheAngleTheJointsAreDrivenToAlongTheArc) {
  SimulatedArm sim(load_default_arm(), door_options());
  double max_force = 0.0;
  const ArmState s = open_along_arc(sim, 40.0 * kDeg, 3.0, &max_force);
  EXPECT_NEAR(s.aux[0], 40.0 * kDeg, 0.5 * kDeg);
  EXPECT_NEAR(s.aux[1], 0.0, 1e-3);
  // Moving the 0.85 kg·m², 3 N·m·s/rad door at up to 21°/s takes ~1.5 N·m at 0.55 m on top
  // of the gripper's 7.8 N weight.
  EXPECT_LT(max_force, 15.0);
}

TEST(SimulatedDoor, HingeInToolIsTheAxisTheToolTurnsAbout) {
  SimulatedArm sim(load_default_arm(), door_options());
  const ArmState s = open_along_arc(sim, 25.0 * kDeg, 2.0, nullptr);
  // The TOOL pose of the measured joints is the initial one turned about HINGE X by the
  // measured door angle.
  const KinematicModel model(sim.model());
  KinematicState state;
  forward_kinematics(model, s.position, state);
  const Frame expected =
      testing::door_arc_pose(sim.initial_tool_pose(), sim.hinge_in_tool(), s.aux[0]);
  EXPECT_LT((state.tool.p - expected.p).norm(), 1e-3);
  EXPECT_LT(orientation_error(expected.R, state.tool.R).norm(), 0.2 * kDeg);
}

TEST(SimulatedDoor, PushingAgainstTheFrameStopReadsForceIntoTheDoor) {
  SimulatedArm sim(load_default_arm(), door_options());
  // Closing past the −5° stop: the door stays at the stop, and the robot pushes the handle
  // away from itself, along TOOL +z (BASE +x), into the door.
  const ArmState s = open_along_arc(sim, -6.0 * kDeg, 1.0, nullptr);
  EXPECT_NEAR(s.aux[0], -5.0 * kDeg, 0.5 * kDeg);
  EXPECT_GT(s.wrench[2], 10.0);
  // The door is pushed, not pulled: the force points away from the robot in BASE.
  const Vector3 f_base = sim.initial_tool_pose().R * s.wrench.head<3>();
  EXPECT_GT(f_base.x(), 10.0);
}

// Replay restarts the simulation from a checkpoint (ArmInterface::checkpoint): the readings
// that follow must be the recorded ones bit for bit, door and wrist contact included, or a
// replayed run drifts from the recorded one.
TEST(SimulatedDoor, RestoredCheckpointReproducesEveryLaterReadingExactly) {
  const auto arms = testing::shipped_arms();
  const ArmModel& model = arms.front().model;
  SimulationOptions options = door_options();
  options.initial_position = default_initial_position(SceneKind::kDoor, model);
  SimulatedArm live(model, options);
  // A pull on the handle, so the door moves and the wrist's contact carries load.
  JointVector q = live.initial_position();
  ArmState state;
  double t = 0.0;
  const auto command_at = [&](int k) {
    JointCommand c;
    c.position = q;
    c.position[6] += 0.02 * std::sin(0.004 * k);
    c.position[0] += 0.01 * std::sin(0.003 * k);
    return c;
  };
  for (int k = 0; k < 300; ++k) {
    live.read(state);
    live.write(command_at(k));
    t += 0.001;
    live.advance_to(t);
  }
  ArmCheckpoint checkpoint;
  ASSERT_TRUE(live.checkpoint(checkpoint));
  EXPECT_GT(checkpoint.size, 30U);
  ArmState at_checkpoint;
  live.read(at_checkpoint);

  SimulatedArm replayed(model, options);
  ASSERT_TRUE(replayed.restore(checkpoint));
  ArmState restored;
  replayed.read(restored);
  EXPECT_EQ(restored.time, at_checkpoint.time);
  EXPECT_EQ(restored.position, at_checkpoint.position);
  EXPECT_EQ(restored.velocity, at_checkpoint.velocity);
  EXPECT_EQ(restored.wrench, at_checkpoint.wrench);
  EXPECT_EQ(restored.aux, at_checkpoint.aux);

  double t_replayed = t;
  ArmState a, b;
  for (int k = 300; k < 1300; ++k) {
    live.read(a);
    replayed.read(b);
    ASSERT_EQ(a.position, b.position) << "cycle " << k;
    ASSERT_EQ(a.wrench, b.wrench) << "cycle " << k;
    ASSERT_EQ(a.aux[0], b.aux[0]) << "cycle " << k;
    live.write(command_at(k));
    replayed.write(command_at(k));
    t += 0.001;
    t_replayed += 0.001;
    live.advance_to(t);
    replayed.advance_to(t_replayed);
  }
  EXPECT_GT(std::abs(a.aux[0]), 1e-4) << "the door did not move: the test proves little";
}

TEST(SimulatedDoor, RefusesACheckpointOfAnotherScene) {
  const auto arms = testing::shipped_arms();
  SimulatedArm free_space(arms.front().model, SimulationOptions{});
  SimulatedArm door(arms.front().model, door_options());
  ArmState state;
  free_space.read(state);
  free_space.write(testing::hold(free_space.initial_position()));
  free_space.advance_to(0.001);
  ArmCheckpoint checkpoint;
  ASSERT_TRUE(free_space.checkpoint(checkpoint));
  EXPECT_FALSE(door.restore(checkpoint));
}

}  // namespace
}  // namespace tether::remote

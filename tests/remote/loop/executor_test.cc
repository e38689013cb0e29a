#include "tether/remote/loop/executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "fake_arm.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/task/validation.h"

namespace tether::remote {
namespace {

using testing::FakeArm;

JointVector home() {
  JointVector q;
  q << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  return q;
}

struct ExecutorFixture : ::testing::Test {
  ArmModel model = load_default_arm();
  HandControllerQueue queue;
  FakeArm arm{model, home()};
  Executor executor{model, queue};
  ControlLoop loop{arm, executor, Pacing::kBatch};
  KinematicModel kin{model};

  // MOTION frame at the tool origin with BASE-aligned axes at the start pose.
  TaskParameters base_task() {
    TaskParameters t;
    t.name = "test";
    t.period = 0.001;
    KinematicState s;
    forward_kinematics(kin, home(), s);
    t.tool_T_motion.R = s.tool.R.transpose();
    return t;
  }
  Frame actual_motion_pose(const TaskParameters& t) {
    KinematicState s;
    forward_kinematics(kin, arm.kinematics().q, s);
    return motion_frame_pose(s, t.tool_T_motion);
  }
};

TEST_F(ExecutorFixture, HoldsTheMeasuredPositionWhenIdle) {
  loop.run_cycles(100);
  EXPECT_EQ(executor.status().state, ExecutorState::kIdle);
  EXPECT_LT((arm.kinematics().q - home()).norm(), 1e-12);
}

TEST_F(ExecutorFixture, RejectsAnInvalidTaskAndAppliesNothing) {
  loop.run_cycles(2);
  TaskParameters t = base_task();
  t.impedance.mass[1] = -3.0;
  try {
    executor.submit(t);
    FAIL() << "accepted a negative mass";
  } catch (const TaskValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("impedance.mass.translation.y = -3"), std::string::npos)
        << e.what();
  }
  loop.run_cycles(10);
  EXPECT_EQ(executor.status().state, ExecutorState::kIdle);
  EXPECT_EQ(executor.status().task_id, 0u);
}

TEST_F(ExecutorFixture, TracksATrajectoryIncludingTheArmAngle) {
  for (Formulation f : {Formulation::kAcceleration, Formulation::kVelocity}) {
    TaskParameters t = base_task();
    t.impedance.formulation = f;
    t.impedance.mass.setConstant(1.0);
    t.impedance.damping.setConstant(80.0);
    t.impedance.stiffness.setConstant(1600.0);
    t.trajectory.enabled = true;
    Frame goal;
    goal.p = Vector3(0.05, -0.04, 0.03);
    goal.R = so3_exp(Vector3(0.1, 0.0, -0.15));
    t.trajectory.waypoints.push_back(Waypoint{1.0, goal, 0.2});
    loop.run_cycles(1);
    const Frame start = actual_motion_pose(t);
    executor.submit(t);
    loop.run_cycles(1600);
    ASSERT_EQ(executor.status().state, ExecutorState::kRunning)
        << describe(executor.status().breach);
    const Frame end = actual_motion_pose(t);
    const Frame expected = start * goal;
    EXPECT_LT((end.p - expected.p).norm(), 5e-4) << static_cast<int>(f);
    EXPECT_LT(orientation_error(end.R, expected.R).norm(), 2e-3);
    EXPECT_LT(std::abs(executor.last_cycle().error[6]), 2e-3);
  }
}

TEST_F(ExecutorFixture, ForceControlTracksTheReferenceForceAgainstAWall) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 0, 0, -15.0, 0, 0, 0;  // press down with 15 N
  t.wrench_sensor.tool_mass = 0.8;
  t.wrench_sensor.tool_center_of_mass = Vector3(0, 0, 0.05);
  arm.tool_mass = 0.8;
  arm.tool_com = Vector3(0, 0, 0.05);
  KinematicState s;
  forward_kinematics(kin, home(), s);
  arm.wall_z = s.tool.p.z() - 0.01;  // 1 cm below the tool
  arm.wall_stiffness = 5000.0;
  executor.submit(t);
  loop.run_cycles(4000);
  const CycleTelemetry c = executor.last_cycle();
  ASSERT_EQ(c.state, ExecutorState::kRunning);
  EXPECT_NEAR(c.wrench[2], -15.0, 0.05);
  EXPECT_NEAR(arm.kinematics().tool.p.z(), arm.wall_z - 15.0 / 5000.0, 1e-4);
  EXPECT_LT(c.wrench.tail<3>().norm(), 0.05);  // the tool's weight is compensated
}

TEST_F(ExecutorFixture, AForceBreachStopYieldsToTheContactLatchedUntilAReset) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 0, 0, -15.0, 0, 0, 0;
  t.bounds.max_force = 20.0;
  t.bounds.stop_time = 0.05;
  KinematicState s;
  forward_kinematics(kin, home(), s);
  arm.wall_z = s.tool.p.z() - 0.005;
  arm.wall_stiffness = 5000.0;
  executor.submit(t);
  loop.run_cycles(3000);
  ASSERT_EQ(executor.status().state, ExecutorState::kRunning);
  arm.wall_z += 0.01;  // the surface moves towards the tool: 50 N more at once
  loop.run_cycles(1000);
  ExecutorStatus st = executor.status();
  ASSERT_EQ(st.state, ExecutorState::kStopped);
  EXPECT_EQ(st.breach.cause, BreachCause::kForce);
  EXPECT_GT(st.breach.value, 20.0);
  EXPECT_EQ(st.breach.bound, 20.0);
  // The stopped arm yielded to the wall (compliant hold, K_h = B/τ_hold = 1400 N/m against
  // the wall's 5000 N/m): of the 65 N it met, 2 N + (65 − 2)·1400/6400 ≈ 15.8 N remain,
  // below the bound, and it comes to rest there.
  loop.run_cycles(2000);
  const CycleTelemetry held_cycle = executor.last_cycle();
  EXPECT_NEAR(-held_cycle.wrench[2], 15.8, 0.5);
  const JointVector held = arm.kinematics().q;
  loop.run_cycles(100);
  EXPECT_LT((arm.kinematics().q - held).norm(), 5e-6);
  // Latched: a new task is refused until a reset, which the unloaded contact allows.
  EXPECT_THROW(executor.submit(t), std::logic_error);
  executor.request_reset();
  loop.run_cycles(1);
  st = executor.status();
  EXPECT_EQ(st.last_reset, ResetOutcome::kAccepted);
  EXPECT_EQ(st.state, ExecutorState::kIdle);
  EXPECT_NO_THROW(executor.submit(base_task()));
}

TEST_F(ExecutorFixture, AnArmFaultStopsRigidlyWithoutYieldingToTheMeasuredWrench) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.bounds.stop_time = 0.01;
  executor.submit(t);
  loop.run_cycles(100);
  arm.status = ArmStatus::kFault;
  loop.run_cycles(1);
  arm.status = ArmStatus::kOk;
  loop.run_cycles(20);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  EXPECT_EQ(executor.status().breach.cause, BreachCause::kArmFault);
  // A load appears: a compliant hold would sag under it; a rigid one does not move.
  arm.tool_mass = 2.0;
  const JointVector held = arm.kinematics().q;
  loop.run_cycles(500);
  EXPECT_EQ(arm.kinematics().q, held);
}

TEST_F(ExecutorFixture, AnOperatorStopSagsABoundedDistanceUnderAnUnexpectedLoad) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();  // no spring in the task: the hold's own keeps it bounded
  t.bounds.stop_time = 0.01;
  executor.submit(t);
  loop.run_cycles(100);
  executor.request_stop();
  loop.run_cycles(20);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  const Vector3 held = arm.kinematics().tool.p;
  arm.tool_mass = 1.0;  // 9.81 N the task was not told about
  loop.run_cycles(3000);
  const double sag = held.z() - arm.kinematics().tool.p.z();
  // (9.81 N − 2 N deadband) / K_h, K_h = B/τ_hold = 350 / 0.25 s = 1400 N/m: 5.6 mm,
  // reached and held.
  EXPECT_NEAR(sag, 5.6e-3, 0.4e-3);
  const Vector3 settled = arm.kinematics().tool.p;
  loop.run_cycles(1000);
  EXPECT_LT((arm.kinematics().tool.p - settled).norm(), 1e-5);
}

TEST_F(ExecutorFixture, ForceBreachStopIsRefusedWhileTheForcePersists) {
  TaskParameters t = base_task();
  t.bounds.max_force = 5.0;
  t.bounds.stop_time = 0.01;
  t.wrench_sensor.tool_mass = 0.0;
  arm.tool_mass = 1.0;  // an unmodelled 9.81 N load appears at once
  executor.submit(t);
  loop.run_cycles(50);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  executor.request_reset();
  loop.run_cycles(1);
  const ExecutorStatus st = executor.status();
  EXPECT_EQ(st.last_reset, ResetOutcome::kRefusedBreach);
  EXPECT_EQ(st.reset_refusal.cause, BreachCause::kForce);
  EXPECT_NEAR(st.reset_refusal.value, 9.81, 1e-6);
  EXPECT_EQ(st.state, ExecutorState::kStopped);
}

TEST_F(ExecutorFixture, AStalledTeleoperationStreamStopsWithinOnePeriodOfTheDeadline) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.teleoperation.enabled = true;
  t.teleoperation.gain.setConstant(10.0);
  t.teleoperation.stall_timeout = 0.05;
  executor.submit(t);
  loop.run_cycles(1);  // samples queued before the task starts are discarded as stale
  std::uint64_t seq = 0;
  for (int n = 0; n < 200; ++n) {  // 0.2 s of samples at 1 kHz
    HandControllerSample s;
    s.sequence = ++seq;
    queue.push(s);
    loop.run_cycles(1);
  }
  ASSERT_EQ(executor.status().state, ExecutorState::kRunning);
  const double last_sample = executor.last_cycle().task_time;
  int cycles = 0;
  while (executor.status().state == ExecutorState::kRunning && cycles < 1000) {
    loop.run_cycles(1);
    ++cycles;
  }
  const ExecutorStatus st = executor.status();
  EXPECT_EQ(st.breach.cause, BreachCause::kTeleoperationStalled);
  const double deadline = last_sample + 0.05;
  EXPECT_GE(st.breach.time, deadline - 1e-3);
  EXPECT_LE(st.breach.time, deadline + t.period + 1e-9);
  EXPECT_EQ(st.teleoperation.applied, 200u);
  EXPECT_EQ(st.teleoperation.lost, 0u);
}

// A stopped arm still touches what it touched: the operator's hand feels that wrench as it
// is now, not frozen at what it was in the cycle the arm stopped.
TEST_F(ExecutorFixture, AfterAStopTheHandFeelsTheWrenchAsItIsNotAsItWasWhenTheArmStopped) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.teleoperation.enabled = true;
  t.teleoperation.mode = TeleopMode::kWorld;
  t.teleoperation.gain.setConstant(350.0);
  t.teleoperation.stall_timeout = 1.0;
  t.bounds.max_force = 20.0;
  t.bounds.stop_time = 0.05;
  KinematicState s;
  forward_kinematics(kin, home(), s);
  arm.wall_z = s.tool.p.z() - 0.002;  // 2 mm below the tool
  arm.wall_stiffness = 5000.0;
  executor.submit(t);
  loop.run_cycles(1);
  // The operator drives down at 10 mm/s into the wall until the force bound stops the arm.
  std::uint64_t seq = 0;
  while (executor.status().state == ExecutorState::kRunning && seq < 2000) {
    HandControllerSample sample;
    sample.sequence = ++seq;
    sample.increment[2] = -1e-5;
    queue.push(sample);
    loop.run_cycles(1);
  }
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kForce);
  EXPECT_GT(executor.last_cycle().reflected_wrench.head<3>().norm(), 15.0);
  // The wall goes away while the arm is stopped: nothing is touched, nothing is felt.
  arm.wall_z = -1e9;
  for (int n = 0; n < 500; ++n) {
    HandControllerSample sample;
    sample.sequence = ++seq;
    queue.push(sample);
    loop.run_cycles(1);
  }
  const CycleTelemetry c = executor.last_cycle();
  ASSERT_EQ(c.state, ExecutorState::kStopped);
  EXPECT_LT(c.wrench.head<3>().norm(), 0.1);
  EXPECT_LT(c.reflected_wrench.head<3>().norm(), 0.1) << c.reflected_wrench.transpose();
}

TEST_F(ExecutorFixture, ParametersReplacedBetweenCyclesApplyWithoutRestartingTheTask) {
  TaskParameters t = base_task();
  t.trajectory.enabled = true;
  Frame goal;
  goal.p = Vector3(0.0, 0.0, 0.05);
  t.trajectory.waypoints.push_back(Waypoint{2.0, goal, 0.0});
  executor.submit(t);
  loop.run_cycles(500);
  const double before = executor.last_cycle().task_time;
  t.impedance.stiffness.setConstant(200.0);
  executor.submit(t, /*restart=*/false);
  loop.run_cycles(1);
  EXPECT_NEAR(executor.last_cycle().task_time, before + 0.001, 1e-9);
  EXPECT_EQ(executor.status().task_id, 2u);
  executor.submit(t, /*restart=*/true);
  loop.run_cycles(1);
  EXPECT_NEAR(executor.last_cycle().task_time, 0.001, 1e-9);
}

TEST_F(ExecutorFixture, OperatorStopRampsDownAndLatches) {
  TaskParameters t = base_task();
  t.trajectory.enabled = true;
  Frame goal;
  goal.p = Vector3(0.1, 0.0, 0.0);
  t.trajectory.waypoints.push_back(Waypoint{1.0, goal, 0.0});
  t.bounds.stop_time = 0.1;
  executor.submit(t);
  loop.run_cycles(500);  // mid-trajectory, moving
  ASSERT_GT(executor.last_cycle().velocity.head<3>().norm(), 0.05);
  executor.request_stop();
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopping);
  loop.run_cycles(100);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopped);
  EXPECT_EQ(executor.status().breach.cause, BreachCause::kOperatorStop);
  const JointVector held = arm.kinematics().q;
  loop.run_cycles(10);
  EXPECT_EQ(arm.kinematics().q, held);
}

TEST_F(ExecutorFixture, AnArmFaultLeadsToAControlledStop) {
  executor.submit(base_task());
  loop.run_cycles(10);
  arm.status = ArmStatus::kCommunicationLost;
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopping);
  EXPECT_EQ(executor.status().breach.cause, BreachCause::kArmFault);
}

TEST_F(ExecutorFixture, JointCommandsStayWithinPositionAndVelocityLimits) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 500, 0, 0, 0, 0, 0;  // drives far beyond the limits
  t.bounds.stop_time = 0.01;
  executor.submit(t);
  JointVector previous = home();
  for (int n = 0; n < 5000; ++n) {
    loop.run_cycles(1);
    const JointVector q = arm.kinematics().q;
    EXPECT_LE(((q - previous).cwiseAbs() / 0.001 - kin.velocity_limits()).maxCoeff(), 1e-9);
    EXPECT_TRUE((q.array() >= kin.lower_limits().array()).all());
    EXPECT_TRUE((q.array() <= kin.upper_limits().array()).all());
    previous = q;
  }
}

// Item 1 of the stop rule: a STOP on an arm already stopped is acknowledged and changes
// nothing, so the one reset that follows is enough (it used to fire after the reset).
TEST_F(ExecutorFixture, AStopOnAStoppedArmChangesNothingAndOneResetIsEnough) {
  TaskParameters t = base_task();
  t.bounds.max_force = 5.0;
  t.bounds.stop_time = 0.01;
  t.wrench_sensor.tool_mass = 0.0;
  executor.submit(t);
  loop.run_cycles(10);
  arm.tool_mass = 1.0;  // 9.81 N appears: a force breach
  loop.run_cycles(50);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kForce);
  executor.request_stop();  // the operator presses STOP anyway
  loop.run_cycles(5);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopped);
  EXPECT_EQ(executor.status().breach.cause, BreachCause::kForce) << "a STOP re-latched the cause";
  arm.tool_mass = 0.0;  // the load is gone
  executor.request_reset();
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
  loop.run_cycles(50);
  EXPECT_EQ(executor.status().state, ExecutorState::kIdle)
      << "one reset was not enough: " << describe(executor.status().breach);
  executor.submit(t);
  loop.run_cycles(5);
  EXPECT_EQ(executor.status().state, ExecutorState::kRunning);
}

// The one rule for stops, for teleoperation: a stop releases the operator's enable; what is
// queued or arrives while stopped is never played; after the reset a switch still held moves
// nothing until it is released and pressed again.
TEST_F(ExecutorFixture, AfterAStopTeleoperationNeedsAFreshEnableAndNothingQueuedIsPlayed) {
  TaskParameters t = base_task();
  t.impedance.stiffness.setZero();
  t.teleoperation.enabled = true;
  t.teleoperation.mode = TeleopMode::kWorld;
  t.teleoperation.gain.setConstant(350.0);
  t.teleoperation.stall_timeout = 1.0;
  t.bounds.stop_time = 0.01;
  executor.submit(t);
  loop.run_cycles(1);
  std::uint64_t seq = 0;
  const auto send = [&](bool deadman, double dz) {
    HandControllerSample s;
    s.sequence = ++seq;
    s.deadman = deadman;
    s.increment[2] = dz;
    queue.push(s);
  };
  for (int n = 0; n < 100; ++n) {
    send(true, 1e-5);  // 10 mm/s up
    loop.run_cycles(1);
  }
  ASSERT_GT(executor.status().teleoperation.applied, 50u);
  executor.request_stop();
  // Motion queued in the same instant as the STOP, and motion sent while stopped.
  for (int n = 0; n < 20; ++n) send(true, 1e-3);
  loop.run_cycles(100);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  for (int n = 0; n < 50; ++n) {
    send(true, 1e-3);
    loop.run_cycles(1);
  }
  const ExecutorStatus stopped = executor.status();
  EXPECT_FALSE(stopped.teleoperation.enabled);
  EXPECT_TRUE(stopped.teleoperation.awaiting_release);
  EXPECT_EQ(stopped.teleoperation.last_received, seq) << "samples were left queued";
  executor.request_reset();
  loop.run_cycles(1);
  ASSERT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
  executor.submit(t);
  loop.run_cycles(1);
  ASSERT_EQ(executor.status().state, ExecutorState::kRunning);
  const std::uint64_t applied = executor.status().teleoperation.applied;
  const Vector3 held = arm.kinematics().tool.p;
  for (int n = 0; n < 200; ++n) {  // the switch still held from before the stop
    send(true, 1e-3);
    loop.run_cycles(1);
  }
  EXPECT_EQ(executor.status().teleoperation.applied, applied);
  EXPECT_LT((arm.kinematics().tool.p - held).norm(), 1e-6) << "a held switch moved the arm";
  EXPECT_TRUE(executor.status().teleoperation.awaiting_release);
  send(false, 0.0);  // released ...
  loop.run_cycles(1);
  EXPECT_FALSE(executor.status().teleoperation.awaiting_release);
  for (int n = 0; n < 200; ++n) {  // ... and pressed again: motion resumes
    send(true, 1e-5);
    loop.run_cycles(1);
  }
  EXPECT_GT(executor.status().teleoperation.applied, applied + 100);
  EXPECT_GT(arm.kinematics().tool.p.z() - held.z(), 5e-4);
}

struct RecoveryFixture : ExecutorFixture {
  // A task whose joint-limit margin on joint 4 (index 3, q = −1.2 rad, 0.89 rad from its
  // lower limit) the start pose is already inside: it stops at once, rigidly.
  TaskParameters margin_task() {
    TaskParameters t = base_task();
    t.bounds.joint_limit_margin[3] = room(home(), 3) + 0.02;
    t.bounds.stop_time = 0.01;
    return t;
  }
  double room(const JointVector& q, int j) {
    return std::min(q[j] - kin.lower_limits()[j], kin.upper_limits()[j] - q[j]);
  }
  // Runs until the recovery ends; returns the largest joint speed seen [rad/s].
  double run_recovery(int limit_cycles = 20000) {
    double fastest = 0.0;
    JointVector previous = arm.kinematics().q;
    for (int n = 0; n < limit_cycles && executor.status().state == ExecutorState::kRecovering;
         ++n) {
      loop.run_cycles(1);
      const JointVector q = arm.kinematics().q;
      fastest = std::max(fastest, (q - previous).cwiseAbs().maxCoeff() / 0.001);
      previous = q;
    }
    return fastest;
  }
};

TEST_F(RecoveryFixture, AJointLimitStopIsLeftByJoggingTheJointAwayAndTheTaskStartsAgain) {
  const TaskParameters t = margin_task();
  executor.submit(t);
  loop.run_cycles(20);
  ExecutorStatus s = executor.status();
  ASSERT_EQ(s.state, ExecutorState::kStopped);
  ASSERT_EQ(s.breach.cause, BreachCause::kJointLimitMargin);
  ASSERT_EQ(s.breach.index, 3);
  executor.request_reset();
  loop.run_cycles(1);
  ASSERT_EQ(executor.status().last_reset, ResetOutcome::kRefusedBreach);

  // Towards the limit: refused, nothing moves.
  const JointVector before = arm.kinematics().q;
  executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 3, -0.05, 0.0});
  loop.run_cycles(5);
  s = executor.status();
  EXPECT_EQ(s.recovery.outcome, RecoveryOutcome::kRefused);
  EXPECT_EQ(s.recovery.refusal, RecoveryRefusal::kDeepens);
  EXPECT_EQ(s.state, ExecutorState::kStopped);
  // A joint that is not in its margin: refused.
  executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 1, 0.05, 0.0});
  loop.run_cycles(5);
  EXPECT_EQ(executor.status().recovery.refusal, RecoveryRefusal::kJointNotInMargin);
  EXPECT_EQ(arm.kinematics().q, before);

  // Away from it, 0.05 rad at the site's 0.1 rad/s.
  executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 3, 0.05, 0.0});
  loop.run_cycles(1);
  ASSERT_EQ(executor.status().state, ExecutorState::kRecovering);
  const double fastest = run_recovery();
  s = executor.status();
  EXPECT_EQ(s.state, ExecutorState::kStopped);
  EXPECT_EQ(s.recovery.outcome, RecoveryOutcome::kDone);
  const JointVector after = arm.kinematics().q;
  EXPECT_NEAR(after[3] - before[3], 0.05, 1e-6);
  EXPECT_LT(((after - before).cwiseAbs().array() > 1e-12).count(), 2) << "another joint moved";
  EXPECT_LE(fastest, 0.1 + 1e-9);
  EXPECT_GT(fastest, 0.09);

  executor.request_reset();
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
  executor.submit(t);
  loop.run_cycles(50);
  EXPECT_EQ(executor.status().state, ExecutorState::kRunning);
}

TEST_F(RecoveryFixture, ARecoveryIsStoppedRigidlyByAnyOtherBound) {
  TaskParameters t = margin_task();
  t.bounds.max_force = 5.0;
  t.wrench_sensor.tool_mass = 0.0;
  executor.submit(t);
  loop.run_cycles(20);
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kJointLimitMargin);
  executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 3, 0.2, 0.0});
  loop.run_cycles(100);
  ASSERT_EQ(executor.status().state, ExecutorState::kRecovering);
  arm.tool_mass = 1.0;  // 9.81 N: the force bound is armed during the recovery
  loop.run_cycles(50);
  const ExecutorStatus s = executor.status();
  EXPECT_EQ(s.state, ExecutorState::kStopped);
  EXPECT_EQ(s.breach.cause, BreachCause::kForce);
  EXPECT_EQ(s.recovery.outcome, RecoveryOutcome::kStopped);
  EXPECT_GT(s.recovery.remaining, 0.0);
}

TEST_F(RecoveryFixture, AStopDuringARecoveryEndsItAndARetreatLeavesTheMarginToo) {
  executor.submit(margin_task());
  loop.run_cycles(20);
  executor.request_recovery(RecoveryRequest{RecoveryKind::kRetreat, -1, 0.1, 0.05});
  loop.run_cycles(200);
  ASSERT_EQ(executor.status().state, ExecutorState::kRecovering);
  executor.request_stop();
  loop.run_cycles(50);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopped);
  EXPECT_EQ(executor.status().recovery.outcome, RecoveryOutcome::kStopped);
  // The retreat moved the breached joint, and only it, away from its limit at 0.05 rad/s.
  executor.request_recovery(RecoveryRequest{RecoveryKind::kRetreat, -1, 0.05, 0.05});
  loop.run_cycles(1);
  const double fastest = run_recovery();
  EXPECT_EQ(executor.status().recovery.outcome, RecoveryOutcome::kDone);
  EXPECT_LE(fastest, 0.05 + 1e-9);
  EXPECT_GT(room(arm.kinematics().q, 3), margin_task().bounds.joint_limit_margin[3]);
  executor.request_reset();
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
}

TEST_F(RecoveryFixture, AProximityStopRetreatsAlongTheBeamBackIntoTheWindow) {
  TaskParameters t = base_task();
  t.proximity.enabled = true;  // the window is the proximity behaviour's
  t.proximity.reference_distance = 0.12;
  t.bounds.min_proximity_distance = 0.10;
  t.bounds.stop_time = 0.01;
  // A plate across the sensor's beam (L = TOOL here): the distance follows the tool along
  // L's z, which points from the surface to the sensor.
  KinematicState s0;
  forward_kinematics(kin, home(), s0);
  const Vector3 normal = s0.tool.R.col(2);
  const Vector3 surface = s0.tool.p - 0.08 * normal;  // 8 cm: too close
  const auto sense = [&] {
    arm.proximity.valid = true;
    arm.proximity.distance = (arm.kinematics().tool.p - surface).dot(normal);
  };
  sense();
  executor.submit(t);
  for (int n = 0; n < 20; ++n) {
    loop.run_cycles(1);
    sense();
  }
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kProximityTooClose);
  ASSERT_EQ(executor.status().state, ExecutorState::kStopped);
  executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 3, 0.05, 0.0});
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().recovery.refusal, RecoveryRefusal::kJogNotForCause);
  executor.request_recovery(RecoveryRequest{RecoveryKind::kRetreat, -1, 0.03, 0.0});
  loop.run_cycles(1);
  ASSERT_EQ(executor.status().state, ExecutorState::kRecovering);
  Vector3 previous = arm.kinematics().tool.p;
  double fastest = 0.0;
  for (int n = 0; n < 20000 && executor.status().state == ExecutorState::kRecovering; ++n) {
    loop.run_cycles(1);
    sense();
    fastest = std::max(fastest, (arm.kinematics().tool.p - previous).norm() / 0.001);
    previous = arm.kinematics().tool.p;
  }
  EXPECT_EQ(executor.status().recovery.outcome, RecoveryOutcome::kDone);
  EXPECT_NEAR(arm.proximity.distance, 0.11, 2e-3);
  EXPECT_LE(fastest, 0.02 * 1.05);
  executor.request_reset();
  loop.run_cycles(1);
  EXPECT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
}

TEST_F(ExecutorFixture, TheLoopPublishesEveryCycleWithItsTimingAndSampleTime) {
  const auto now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t before = now();
  loop.run_cycles(37);
  const CycleTelemetry latest = loop.latest();
  EXPECT_EQ(latest.cycle, 37u);
  EXPECT_GT(latest.compute_time, 0.0);
  EXPECT_GE(latest.sample_unix_ns, before);
  EXPECT_LE(latest.sample_unix_ns, now());
}

}  // namespace
}  // namespace tether::remote

#include <gtest/gtest.h>

#include <memory>

#include "all_behaviours.h"
#include "allocation_counter.h"
#include "fake_arm.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"

namespace tether::remote {
namespace {

void expect_no_allocation(ResolverKind resolver) {
  const ArmModel model = load_default_arm();
  JointVector q0;
  q0 << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  // The queue and the loop's telemetry ring are large: keep them off the stack.
  auto queue_owner = std::make_unique<HandControllerQueue>();
  HandControllerQueue& queue = *queue_owner;
  testing::FakeArm arm(model, q0);
  arm.proximity.valid = true;
  arm.proximity.distance = 0.16;
  arm.proximity.surface_normal = Vector3(0.05, 0.0, 1.0).normalized();
  arm.tool_mass = 0.8;
  arm.visual.frame = 1;
  arm.visual.valid = true;
  arm.visual.target_in_camera = Vector3(0.01, -0.01, 0.31);
  auto executor_owner = std::make_unique<Executor>(model, queue);
  Executor& executor = *executor_owner;
  auto loop_owner = std::make_unique<ControlLoop>(arm, executor, Pacing::kBatch);
  ControlLoop& loop = *loop_owner;
  loop.set_record_telemetry(false);
  TaskParameters task = testing::all_behaviours_task();
  task.resolver.kind = resolver;
  KinematicFunctionParameters elbow;
  elbow.kind = KinematicFunctionKind::kArmAngle;
  KinematicFunctionParameters gravity;
  gravity.kind = KinematicFunctionKind::kGravityTorque;
  gravity.weight = 0.1;
  task.resolver.configuration_control.functions = {elbow, gravity};
  executor.submit(task);
  std::uint64_t seq = 0;
  auto feed = [&] {
    // A new camera image every 33 cycles, as a 30 Hz camera delivers them.
    if (seq % 33 == 0) {
      ++arm.visual.frame;
      arm.visual.capture_time = 0.001 * static_cast<double>(seq) - 0.05;
    }
    HandControllerSample s;
    s.sequence = ++seq;
    s.increment << 1e-5, 0, 0, 0, 0, 1e-5;
    queue.push(s);
  };
  for (int n = 0; n < 50; ++n) {  // warm-up: the task is picked up
    feed();
    loop.run_cycles(1);
  }
  ASSERT_EQ(executor.status().state, ExecutorState::kRunning);
  // The loop's cycle by hand (read, cycle, write, advance), so only the executor is counted.
  auto cycle = [&] {
    JointCommand command;
    ArmState state;
    const ArmStatus status = arm.read(state);
    executor.cycle(state, status, command);
    arm.write(command);
    arm.advance_to(state.time + 0.001);
  };
  ::tether::testing::ScopedAllocationCounter counter;
  for (int n = 0; n < 2000; ++n) {
    feed();
    cycle();
  }
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_EQ(executor.status().state, ExecutorState::kRunning) << describe(executor.status().breach);

  // The controlled stop and the compliant hold after it (the wrench is valid) run in the
  // same cycle and allocate nothing either.
  // Once the 0.2 s ramp is over, an unexpected 2.2 kg load makes the hold yield: the motion
  // after it is the hold's alone, so its path ran too.
  executor.request_stop(BreachCause::kOperatorStop);
  ::tether::testing::ScopedAllocationCounter stop_counter;
  JointVector loaded_at = JointVector::Zero();
  for (int n = 0; n < 1000; ++n) {
    if (n == 300) {
      arm.tool_mass = 3.0;
      loaded_at = arm.kinematics().q;
    }
    cycle();
  }
  EXPECT_GT((arm.kinematics().q - loaded_at).norm(), 1e-3) << "the hold did not yield";
  EXPECT_EQ(stop_counter.count(), 0u);
  EXPECT_EQ(executor.status().state, ExecutorState::kStopped);
}

// A recovery out of a joint-limit stop (a jog) and out of a proximity stop (a retreat, the
// resolver's DLS each cycle) runs in the cycle: nothing allocated from the stop to the end.
TEST(ExecutorAllocation, RecoveryMotionAllocatesNothing) {
  const ArmModel model = load_default_arm();
  JointVector q0;
  q0 << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  auto queue_owner = std::make_unique<HandControllerQueue>();
  testing::FakeArm arm(model, q0);
  arm.proximity.valid = true;
  arm.proximity.distance = 0.2;
  auto executor_owner = std::make_unique<Executor>(model, *queue_owner);
  Executor& executor = *executor_owner;
  const KinematicModel kin(model);
  TaskParameters task;
  task.name = "margin";
  task.proximity.enabled = true;
  task.proximity.reference_distance = 0.2;
  task.bounds.min_proximity_distance = 0.1;
  task.bounds.joint_limit_margin[3] = q0[3] - kin.lower_limits()[3] + 0.02;
  task.bounds.stop_time = 0.01;
  executor.submit(task);
  auto cycle = [&] {
    JointCommand command;
    ArmState state;
    const ArmStatus status = arm.read(state);
    executor.cycle(state, status, command);
    arm.write(command);
    arm.advance_to(state.time + 0.001);
  };
  for (int n = 0; n < 50; ++n) cycle();
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kJointLimitMargin);
  {
    ::tether::testing::ScopedAllocationCounter counter;
    executor.request_recovery(RecoveryRequest{RecoveryKind::kJointJog, 3, 0.05, 0.0});
    for (int n = 0; n < 2000 && executor.status().recovery.outcome != RecoveryOutcome::kDone; ++n) {
      cycle();
    }
    EXPECT_EQ(counter.count(), 0u);
  }
  ASSERT_EQ(executor.status().recovery.outcome, RecoveryOutcome::kDone);
  executor.request_reset();
  cycle();
  ASSERT_EQ(executor.status().last_reset, ResetOutcome::kAccepted);
  executor.submit(task);
  for (int n = 0; n < 10; ++n) cycle();
  arm.proximity.distance = 0.05;  // too close: a proximity stop
  for (int n = 0; n < 50; ++n) cycle();
  ASSERT_EQ(executor.status().breach.cause, BreachCause::kProximityTooClose);
  ::tether::testing::ScopedAllocationCounter counter;
  executor.request_recovery(RecoveryRequest{RecoveryKind::kRetreat, -1, 0.01, 0.0});
  for (int n = 0; n < 200; ++n) cycle();
  EXPECT_EQ(executor.status().state, ExecutorState::kRecovering);
  EXPECT_EQ(counter.count(), 0u);
}

TEST(ExecutorAllocation, ACycleWithEveryBehaviourOnAllocatesNothing) {
  expect_no_allocation(ResolverKind::kDls);
}

TEST(ExecutorAllocation, ConfigurationControlAllocatesNothing) {
  expect_no_allocation(ResolverKind::kConfigurationControl);
}

TEST(ExecutorAllocation, ConstrainedOptimisationAllocatesNothing) {
  expect_no_allocation(ResolverKind::kConstrainedOptimisation);
}

TEST(ExecutorAllocation, ShakeAllocatesNothing) { expect_no_allocation(ResolverKind::kShake); }

}  // namespace
}  // namespace tether::remote

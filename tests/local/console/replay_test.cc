// `tether replay` (replay.h): a run of the site's loop on the simulated door, teleoperated
// through the executor's queue, recorded as the site records it (every cycle's telemetry with
// its inputs, the arm's checkpoint at the task's start), replays to the same joints and the
// same breach in the same cycle; a recording that misses what a replay needs says so.

#include "tether/local/console/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {
namespace {

constexpr std::uint64_t kTaskId = 7;  // as a site numbered it, unlike the replay's executor

RecordedCycle recorded(const remote::CycleTelemetry& t) {
  RecordedCycle c;
  c.cycle = t.cycle;
  c.unix_ns = t.sample_unix_ns;
  c.arm_time = t.arm_time;
  c.task_time = t.task_time;
  c.state = t.state;
  c.task_id = t.task_id;
  c.measured_joints = t.measured_joints;
  c.commanded_joints = t.commanded_joints;
  c.wrench = t.wrench;
  c.aux = t.aux;
  c.breach.cause = t.breach.cause;
  c.breach.value = t.breach.value;
  c.breach.bound = t.breach.bound;
  c.inputs = t.inputs;
  // The site's ids are not the replay's: the recording names the task by the site's.
  if (c.inputs.submission != 0) c.inputs.submission = kTaskId;
  c.checkpoint = t.checkpoint;
  return c;
}

struct LiveRun {
  RecordingContents recording;
  double door_angle = 0.0;  // [rad] the most it opened
  // Each joint's room to its nearer limit [rad]: as the task started, and the least since.
  JointVector start_room = JointVector::Constant(1e9);
  JointVector least_room = JointVector::Constant(1e9);
  BreachCause breach = BreachCause::kNone;
};

// The site's loop in lock-step: idle for a while, then the shared-control door task with a
// seeded, jittery stream of hand-controller increments turning the handle, a torque bound that
// the pull trips, the stop held, a reset and a second start.
LiveRun run_live(const JointVector& margin) {
  const ArmModel model = load_arm_by_name("iiwa7", UrdfLoadOptions{});
  remote::SimulationOptions options;
  options.scene = remote::SceneKind::kDoor;
  options.initial_position = remote::default_initial_position(options.scene, model);
  remote::SimulatedArm arm(model, options);
  remote::HandControllerQueue queue;
  remote::Executor executor(arm.model(), queue);
  remote::ControlLoop loop(arm, executor, remote::Pacing::kBatch);
  TaskParameters task = proto::load_task_file(TETHER_TASK_DIR "/door_shared.textproto");
  task.bounds.joint_limit_margin = margin;
  task.bounds.max_torque = 200.0;  // the grasp's start-up transient is not the subject

  LiveRun live;
  live.recording.site = {{"arm", "iiwa7"}, {"scene", "door"}};
  RecordedTaskSet set;
  set.name = "door_shared";
  set.task = task;
  set.has_parameters = true;
  live.recording.tasks[kTaskId] = set;

  std::mt19937 random(42);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  std::uint64_t sequence = 0;
  remote::CycleTelemetry t;
  for (int k = 0; k < 3500; ++k) {
    if (k == 200 || k == 2600) {
      try {
        executor.submit(task);
      } catch (const std::logic_error&) {
        // Still stopped (the reset was refused while the breach persisted): as a site would.
      }
    }
    if (k == 2400) executor.request_reset();
    if (k > 200 && k % 3 != 0) {
      // Uneven, and none every third cycle, like a real link.
      remote::HandControllerSample sample;
      sample.sequence = ++sequence;
      sample.increment[3] = 0.35e-3 * jitter(random);
      sample.ground_time_ns = static_cast<std::uint64_t>(k) * 1000000ULL;
      // Lock-step runs faster than real time: no arrival clock, the behaviour plays at once.
      sample.arrival_ns = 0;
      queue.push(sample);
    }
    loop.step();
    while (loop.telemetry().pop(t)) {
      live.recording.cycles.push_back(recorded(t));
      live.door_angle = std::max(live.door_angle, std::abs(t.aux[0]));
      if (t.state == ExecutorState::kRunning) {
        for (int j = 0; j < kArmDof; ++j) {
          const JointLimits& limits = model.joints[static_cast<std::size_t>(j)].limits;
          const double q = t.measured_joints[j];
          const double room = std::min(q - limits.lower, limits.upper - q);
          if (live.start_room[j] > 1e8) live.start_room[j] = room;
          live.least_room[j] = std::min(live.least_room[j], room);
        }
      }
      if (live.breach == BreachCause::kNone && t.breach) live.breach = t.breach.cause;
    }
  }
  return live;
}

// The shipped margins: the door's arc stays clear of them.
JointVector shipped_margin() { return JointVector::Constant(0.05); }

// A joint-limit margin the pull trips partway through the door's arc: for the joint the arc
// brings nearest its limit, a margin `fraction` of the way from its room at the start to its
// least.
JointVector tripping_margin(double fraction = 0.5) {
  static const LiveRun free_run = run_live(shipped_margin());
  Eigen::Index j = 0;
  (free_run.start_room - free_run.least_room).maxCoeff(&j);
  JointVector margin = shipped_margin();
  margin[j] = free_run.start_room[j] - fraction * (free_run.start_room[j] - free_run.least_room[j]);
  return margin;
}

TEST(Replay, ATeleoperatedDoorRunReplaysToTheSameJointsAndTheSameBreachCycle) {
  const LiveRun live = run_live(tripping_margin());
  ASSERT_GT(std::abs(live.door_angle), 0.02) << "the door hardly moved: the test proves little";
  ASSERT_EQ(live.breach, BreachCause::kJointLimitMargin) << "the arc should trip the margin";

  const ReplayReport r = replay(live.recording, ReplayOptions{});
  EXPECT_EQ(r.first_cycle, live.recording.cycles[200].cycle);
  EXPECT_EQ(r.cycles, live.recording.cycles.size() - 200);
  EXPECT_TRUE(r.ended.empty()) << r.ended;
  EXPECT_LE(r.max_joint_error, 1e-9)
      << "departs from cycle " << r.departed_at.value_or(0) << " breach at "
      << (r.recorded_breach ? r.recorded_breach->cycle : 0) << " replayed "
      << (r.replayed_breach ? r.replayed_breach->cycle : 0);
  EXPECT_LE(r.max_command_error, 1e-9);
  EXPECT_LE(r.max_door_error, 1e-9);
  ASSERT_TRUE(r.recorded_breach.has_value());
  ASSERT_TRUE(r.replayed_breach.has_value());
  EXPECT_EQ(r.replayed_breach->cause, to_string(BreachCause::kJointLimitMargin));
  EXPECT_GT(r.replayed_breach->cycle, 300U) << "a breach at the start proves little";
  EXPECT_EQ(r.replayed_breach->cycle, r.recorded_breach->cycle);
  EXPECT_TRUE(r.same_breach);
  EXPECT_TRUE(r.within_tolerance);
}

TEST(Replay, AChangedSiteDepartsAndSaysSo) {
  LiveRun live = run_live(tripping_margin());
  // The recording of a site whose margin was narrower: the replay here trips it earlier
  // than that site did, and reports the difference rather than agreeing.
  live.recording.tasks[kTaskId].task.bounds.joint_limit_margin = tripping_margin(0.3);
  const ReplayReport r = replay(live.recording, ReplayOptions{});
  EXPECT_FALSE(r.same_breach && r.within_tolerance);
}

TEST(Replay, EndsAtACycleTheRecordingDropped) {
  LiveRun live = run_live(shipped_margin());
  auto& cycles = live.recording.cycles;
  const std::uint64_t missing = cycles[1000].cycle;
  cycles.erase(cycles.begin() + 1000);
  const ReplayReport r = replay(live.recording, ReplayOptions{});
  EXPECT_EQ(r.cycles, 800U);
  EXPECT_NE(r.ended.find("cycle " + std::to_string(missing) + " is missing"), std::string::npos)
      << r.ended;
  EXPECT_LE(r.max_joint_error, 1e-9);
}

TEST(Replay, RefusesARecordingWithoutATaskStartNamingWhatItLacks) {
  LiveRun live = run_live(shipped_margin());
  live.recording.tasks.clear();
  try {
    replay(live.recording, ReplayOptions{});
    FAIL() << "replayed without the task's parameters";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("its parameter set is not recorded"), std::string::npos)
        << e.what();
  }
  live.recording.site.erase("scene");
  EXPECT_THROW(replay(live.recording, ReplayOptions{}), std::runtime_error);
}

}  // namespace
}  // namespace tether::local

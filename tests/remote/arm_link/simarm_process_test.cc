// The arm link end to end with real processes: the tether-simarm binary serves the door
// scene on loopback, this process runs the executor's real-time control loop against it
// through UdpArm with the shipped force-control door task, then the arm process is killed
// and the bounded execution must stop the task with an arm fault within the link timeout.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"
#include "udp_peer.h"

namespace tether::remote {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kDeg = kDegToRad;

using ::tether::testing::ChildProcess;

TEST(SimArmProcess, OpensTheDoorOverUdpAndStopsWithAnArmFaultWhenTheArmProcessDies) {
  const std::uint16_t port = testing::free_udp_port();
  // Timeouts above the pauses measured on the project's 2-vCPU VMs while compilers run
  // beside the test (often 5-10 ms, sometimes tens, even for SCHED_FIFO threads); the
  // defaults (10 ms, 20 ms) are for a quiet machine. CTest runs this test alone.
  constexpr double kLinkTimeout = 0.15;
  const std::string key = testing::test_key_file();
  ChildProcess simarm(TETHER_SIMARM_BINARY,
                      {"--arm", "iiwa7", "--scene", "door", "--bind", "127.0.0.1", "--port",
                       std::to_string(port), "--command-timeout", "100ms", "--key", key});
  ASSERT_GT(simarm.pid(), 0) << "cannot start " << TETHER_SIMARM_BINARY;

  const ArmModel model = load_default_arm();
  UdpArmOptions link = parse_udp_endpoint("127.0.0.1:" + std::to_string(port));
  link.connect_timeout = 10.0;  // the simulation builds its scene first
  link.link_timeout = kLinkTimeout;
  link.key_file = key;
  UdpArm arm(model, link);

  TaskParameters task =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_force.textproto");
  // This test is about the link. The VM pauses either process for 5-50 ms now and then, and
  // across the process boundary such a pause spikes the welded door grasp's wrench past any
  // fixed bound (60 N·m shipped; 514 N·m seen while the host stole CPU), so the wrench is
  // not bounded here, and missed deadlines are tolerated.
  task.bounds.max_force = kUnbounded;
  task.bounds.max_torque = kUnbounded;
  task.bounds.max_consecutive_overruns = 1000000;
  HandControllerQueue queue;
  Executor executor(model, queue);
  ControlLoop loop(arm, executor, Pacing::kRealTime);
  loop.set_record_telemetry(false);
  executor.submit(task);
  loop.start();

  // 3 s of the experiment: the door opens, nothing breaches.
  const auto start = Clock::now();
  double peak = 0.0;
  while (Clock::now() - start < std::chrono::seconds(3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    peak = std::max(peak, executor.telemetry().aux[0]);
    const ExecutorStatus running = executor.status();
    ASSERT_FALSE(running.breach) << describe(running.breach) << " (arm status "
                                 << to_string(static_cast<ArmStatus>(running.breach.value))
                                 << "), link losses " << arm.counters().link_losses << ", received "
                                 << arm.counters().received << ", longest gap "
                                 << arm.counters().state_gap_max * 1e3 << " ms";
  }
  const CycleTelemetry before_kill = executor.telemetry();
  const UdpArmCounters counters = arm.counters();
  ASSERT_EQ(executor.status().state, ExecutorState::kRunning);
  std::cout << "door angle over UDP after 3 s: " << before_kill.aux[0] / kDeg << " deg (task time "
            << before_kill.task_time << " s)\n"
            << "arm link: " << counters.received << " states, " << counters.sent
            << " commands, round trip mean " << counters.round_trip_mean() * 1e6 << " us, max "
            << counters.round_trip_max * 1e6 << " us, stale " << counters.dropped_stale
            << ", corrupt " << counters.dropped_corrupt << ", foreign " << counters.dropped_foreign
            << ", unauthenticated " << counters.dropped_unauthenticated
            << ", longest gap between states " << counters.state_gap_max * 1e6 << " us\n";
  // The embedded (lock-step) scenario reaches 35.3° at 3 s (18 N·m against B = 80 N·m·s/rad).
  EXPECT_GT(before_kill.aux[0], 20.0 * kDeg);
  EXPECT_LT(before_kill.aux[0], 45.0 * kDeg);
  EXPECT_GE(before_kill.aux[0], peak - 0.5 * kDeg);
  // The link carried a state for nearly every cycle and never lapsed.
  // Missed deadlines are skipped, not caught up, so a loaded VM runs fewer than 3000 (2379
  // round trips were seen once, 1894 another time, while the host stole CPU): half is the floor.
  EXPECT_GT(counters.received, 1500u);
  EXPECT_EQ(counters.dropped_corrupt, 0u);
  EXPECT_EQ(counters.dropped_foreign, 0u);
  EXPECT_EQ(counters.dropped_unauthenticated, 0u);
  EXPECT_EQ(counters.link_losses, 0u);
  EXPECT_GT(counters.round_trip_count, 1500u);

  // Kill the arm process: the executor must stop within the link timeout + 2 periods. The
  // loss is timed where the control loop saw it (its own thread), not by this polling one.
  const auto killed = Clock::now();
  simarm.signal(SIGKILL);
  const double killed_at = std::chrono::duration<double>(killed.time_since_epoch()).count();
  while (executor.status().state == ExecutorState::kRunning &&
         Clock::now() - killed < std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  const ExecutorStatus status = executor.status();
  const double detection = arm.counters().lost_at - killed_at;
  loop.stop();
  simarm.wait();
  std::cout << "controlled stop " << detection * 1e3 << " ms after the kill\n";
  EXPECT_TRUE(status.state == ExecutorState::kStopping || status.state == ExecutorState::kStopped)
      << to_string(status.state);
  EXPECT_EQ(status.breach.cause, BreachCause::kArmFault) << describe(status.breach);
  EXPECT_EQ(status.breach.value, static_cast<double>(ArmStatus::kCommunicationLost));
  EXPECT_LE(detection, link.link_timeout + 2.0 * task.period);
  // The breach is the first one: none before the kill (it happened after 3 s of task time).
  EXPECT_GT(status.breach.time, 2.4);
  const LoopStatistics& st = loop.statistics();
  std::cout << "control loop: " << st.cycles << " cycles, " << st.overruns
            << " overruns, wake-up latency p99 " << st.wakeup_latency.percentile(99) * 1e6
            << " us, max " << st.wakeup_latency.max() * 1e6 << " us\n";
  EXPECT_GT(st.cycles, 2000u);
  EXPECT_EQ(arm.counters().link_losses, 1u);
}

TEST(SimArmProcess, ExitsWithUsageErrorsAndPrintsHelp) {
  const std::string key = testing::test_key_file();
  ChildProcess bad_scene(TETHER_SIMARM_BINARY, {"--scene", "kitchen", "--key", key});
  int status = bad_scene.wait();
  EXPECT_EQ(WEXITSTATUS(status), 2);
  ChildProcess help(TETHER_SIMARM_BINARY, {"--help"});
  status = help.wait();
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ChildProcess no_key(TETHER_SIMARM_BINARY, {"--port", "0"});  // --key is required
  status = no_key.wait();
  EXPECT_EQ(WEXITSTATUS(status), 2);
  ChildProcess missing_arm(TETHER_SIMARM_BINARY,
                           {"--arm", "/nonexistent.urdf", "--port", "0", "--key", key});
  status = missing_arm.wait();
  EXPECT_EQ(WEXITSTATUS(status), 1);
  // A key file that is too short is a runtime error, as a missing arm file is.
  ChildProcess short_key(TETHER_SIMARM_BINARY,
                         {"--port", "0", "--key", testing::write_key_file("short.key", "short")});
  status = short_key.wait();
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(SimArmProcess, StopsCleanlyOnSigtermAndReportsItsStatistics) {
  ChildProcess simarm(TETHER_SIMARM_BINARY,
                      {"--port", "0", "--duration", "30s", "--key", testing::test_key_file()});
  ASSERT_GT(simarm.pid(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  simarm.signal(SIGTERM);
  const int status = simarm.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tether::remote

// The arm link across an emulated network (tether::linkem::UdpLinkEmulator between UdpArm
// and SimArmServer): random loss is ridden out on the last state, a run of losses longer
// than the link timeout is declared lost and recovers, and duplicated or reordered
// datagrams are never applied twice or out of order.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "tether/common/urdf_loader.h"
#include "tether/linkem/udp_link_emulator.h"
#include "tether/remote/arm_link/simarm_server.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/sim/simulated_arm.h"
#include "udp_peer.h"

namespace tether::remote {
namespace {

using namespace std::chrono_literals;

struct Relayed {
  explicit Relayed(const linkem::UdpLinkProfile& profile, double link_timeout)
      : model(load_default_arm()), sim(model) {
    SimArmServerOptions options;
    options.port = 0;
    options.command_timeout = 0.5;
    options.key_file = testing::test_key_file();
    server = std::make_unique<SimArmServer>(sim, options);
    server->start();
    link = std::make_unique<linkem::UdpLinkEmulator>(
        "127.0.0.1:0", "127.0.0.1:" + std::to_string(server->port()), profile, 3);
    UdpArmOptions arm_options;
    arm_options.remote_port = static_cast<std::uint16_t>(link->port());
    arm_options.link_timeout = link_timeout;
    arm_options.key_file = testing::test_key_file();
    arm = std::make_unique<UdpArm>(model, arm_options);
  }
  // Reads and commands the held position at ~1 kHz for `seconds`; counts the cycles whose
  // read reported the link lost.
  int run(double seconds) {
    ArmState s;
    JointCommand command;
    bool have = false;
    int lost = 0;
    const auto start = std::chrono::steady_clock::now();
    auto next = start;
    while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
      const ArmStatus status = arm->read(s);
      if (status == ArmStatus::kCommunicationLost) ++lost;
      if (status == ArmStatus::kOk && !have) {
        command.position = s.position;
        have = true;
      }
      if (have) arm->write(command);
      next += 1ms;
      std::this_thread::sleep_until(next);
    }
    return lost;
  }
  ArmModel model;
  SimulatedArm sim;
  std::unique_ptr<SimArmServer> server;
  std::unique_ptr<linkem::UdpLinkEmulator> link;
  std::unique_ptr<UdpArm> arm;
};

TEST(ArmLinkThroughEmulator, RidesOutRandomLossOnTheLastStateWithoutDeclaringTheLinkLost) {
  linkem::UdpLinkProfile profile;
  profile.up.loss = 0.2;
  profile.down.loss = 0.2;
  Relayed relayed(profile, 0.010);
  EXPECT_EQ(relayed.run(2.0), 0);
  const UdpArmCounters c = relayed.arm->counters();
  const linkem::UdpEmulatorStatistics s = relayed.link->statistics();
  std::printf("20%% loss each way: %llu states lost, longest gap %.1f ms, link losses %llu\n",
              static_cast<unsigned long long>(s.down.lost), c.state_gap_max * 1e3,
              static_cast<unsigned long long>(c.link_losses));
  EXPECT_GT(s.down.lost, 200U);
  EXPECT_GT(s.up.lost, 200U);
  EXPECT_EQ(c.link_losses, 0U);
  EXPECT_GE(c.state_gap_max, 0.0019) << "no stale state was ever held";
  EXPECT_LT(c.state_gap_max, 0.010);
}

TEST(ArmLinkThroughEmulator, DeclaresTheLinkLostAfterItsTimeoutOfLossesAndRecovers) {
  Relayed relayed(linkem::UdpLinkProfile{}, 0.010);
  ASSERT_EQ(relayed.run(0.3), 0);
  // A 5 ms outage is shorter than the 10 ms link timeout: ridden out.
  linkem::UdpLinkProfile profile;
  profile.down.outages.push_back({relayed.link->now() + 0.1, relayed.link->now() + 0.105});
  relayed.link->set_profile(profile);
  EXPECT_EQ(relayed.run(0.3), 0);
  EXPECT_EQ(relayed.arm->counters().link_losses, 0U);
  // A 60 ms outage is not: the link is declared lost once, then recovers.
  profile.down.outages = {{relayed.link->now() + 0.1, relayed.link->now() + 0.16}};
  relayed.link->set_profile(profile);
  const int lost_cycles = relayed.run(0.5);
  const UdpArmCounters c = relayed.arm->counters();
  std::printf("60 ms outage: %d cycles reported the link lost, link losses %llu\n", lost_cycles,
              static_cast<unsigned long long>(c.link_losses));
  EXPECT_EQ(c.link_losses, 1U);
  EXPECT_GE(lost_cycles, 35);  // 60 ms less the 10 ms timeout, less a loaded machine's slack
  EXPECT_LE(lost_cycles, 60);
  ArmState s;
  EXPECT_EQ(relayed.arm->read(s), ArmStatus::kOk) << "the link did not recover";
}

TEST(ArmLinkThroughEmulator, NeverAppliesADuplicatedOrReorderedDatagramTwiceOrOutOfOrder) {
  linkem::UdpLinkProfile profile;
  for (linkem::DatagramProfile* d : {&profile.up, &profile.down}) {
    d->duplicate = 0.3;
    d->reorder = 0.3;
    d->reorder_delay = 0.003;
  }
  Relayed relayed(profile, 0.050);
  EXPECT_EQ(relayed.run(1.5), 0);
  const UdpArmCounters c = relayed.arm->counters();
  const SimArmServerStatistics st = relayed.server->statistics();
  const linkem::UdpEmulatorStatistics s = relayed.link->statistics();
  std::printf(
      "30%% duplicated, 30%% reordered: controller dropped %llu stale states, arm %llu "
      "stale commands\n",
      static_cast<unsigned long long>(c.dropped_stale),
      static_cast<unsigned long long>(st.stale_dropped));
  EXPECT_GT(s.down.duplicated, 100U);
  EXPECT_GT(s.up.reordered, 100U);
  EXPECT_GT(c.dropped_stale, 100U);
  EXPECT_GT(st.stale_dropped, 100U);
  EXPECT_EQ(c.dropped_corrupt + c.dropped_foreign + c.dropped_unauthenticated, 0U);
}

// The executor itself on the far side of the emulated arm link, its loop in real time: it
// holds a task through random loss (each cycle uses the last state) and stops it as an arm
// fault once the link is declared lost.
struct ExecutorThroughLink {
  explicit ExecutorThroughLink(const linkem::UdpLinkProfile& profile)
      : relayed(profile, 0.010),
        executor(relayed.model, queue),
        loop(*relayed.arm, executor, Pacing::kRealTime) {
    loop.start();
    TaskParameters hold;  // hold the start pose, compliantly
    hold.name = "hold";
    executor.submit(hold, true);
  }
  ~ExecutorThroughLink() {
    executor.request_stop();
    std::this_thread::sleep_for(50ms);
    loop.stop();
  }
  // Waits until the executor is in `state` (or `limit` passed); returns the state seen.
  ExecutorState wait_for(ExecutorState state, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (executor.status().state != state && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(1ms);
    }
    return executor.status().state;
  }
  Relayed relayed;
  HandControllerQueue queue;
  Executor executor;
  ControlLoop loop;
};

TEST(ExecutorThroughEmulatedArmLink, KeepsItsTaskThroughRandomLossOnTheLastState) {
  linkem::UdpLinkProfile profile;
  profile.up.loss = 0.2;
  profile.down.loss = 0.2;
  ExecutorThroughLink e(profile);
  ASSERT_EQ(e.wait_for(ExecutorState::kRunning, 1000ms), ExecutorState::kRunning);
  std::this_thread::sleep_for(2s);
  const ExecutorStatus s = e.executor.status();
  EXPECT_EQ(s.state, ExecutorState::kRunning) << describe(s.breach);
  const linkem::UdpEmulatorStatistics st = e.relayed.link->statistics();
  std::printf(
      "executor through 20%% loss each way for 2 s: %llu states and %llu commands lost, "
      "state %s\n",
      static_cast<unsigned long long>(st.down.lost), static_cast<unsigned long long>(st.up.lost),
      to_string(s.state));
  EXPECT_GT(st.down.lost, 200U);
}

TEST(ExecutorThroughEmulatedArmLink, StopsTheTaskAsAnArmFaultWhenTheLinkIsLost) {
  ExecutorThroughLink e(linkem::UdpLinkProfile{});
  ASSERT_EQ(e.wait_for(ExecutorState::kRunning, 1000ms), ExecutorState::kRunning);
  // 60 ms without states: longer than the 10 ms link timeout (about 10 consecutive losses).
  linkem::UdpLinkProfile profile;
  profile.down.outages.push_back({e.relayed.link->now() + 0.1, e.relayed.link->now() + 0.16});
  e.relayed.link->set_profile(profile);
  const auto start = std::chrono::steady_clock::now();
  const ExecutorState state = e.wait_for(ExecutorState::kStopped, 2000ms);
  EXPECT_TRUE(state == ExecutorState::kStopped || state == ExecutorState::kStopping)
      << to_string(state);
  const ExecutorStatus s = e.executor.status();
  EXPECT_EQ(s.breach.cause, BreachCause::kArmFault) << describe(s.breach);
  std::printf(
      "outage of 60 ms from +100 ms: stopped (%s) %.0f ms after the outage was set\n",
      describe(s.breach).c_str(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace
}  // namespace tether::remote

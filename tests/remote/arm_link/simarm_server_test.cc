// SimArmServer in-process: a SimulatedArm served over loopback UDP, driven through UdpArm
// (and a plain peer for what UdpArm never sends).

#include "tether/remote/arm_link/simarm_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include "tether/common/urdf_loader.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "tether/remote/sim/simulated_arm.h"
#include "udp_peer.h"

namespace tether::remote {
namespace {

using testing::eventually;

struct Served {
  // A generous command timeout unless a test is about it: the test's own command loop is
  // not real-time and a loaded machine may pause it for tens of milliseconds.
  explicit Served(double command_timeout = 0.5) : model(load_default_arm()), sim(model) {
    SimArmServerOptions options;
    options.port = 0;
    options.command_timeout = command_timeout;
    server = std::make_unique<SimArmServer>(sim, options);
    server->start();
  }
  std::unique_ptr<UdpArm> connect(double link_timeout = 0.5) {
    UdpArmOptions options;
    options.remote_port = server->port();
    options.link_timeout = link_timeout;
    return std::make_unique<UdpArm>(model, options);
  }
  ArmModel model;
  SimulatedArm sim;
  std::unique_ptr<SimArmServer> server;
};

// Commands q0 + ramp on joint 4 at ~1 kHz for `seconds`; returns the last command.
JointCommand drive(UdpArm& arm, const JointVector& q0, double seconds, double amplitude) {
  JointCommand command;
  command.position = q0;
  ArmState s;
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  for (;;) {
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (t > seconds) break;
    arm.read(s);
    const double alpha = std::min(1.0, t / (0.5 * seconds));
    command.position[3] = q0[3] + amplitude * alpha;
    command.velocity[3] = t < 0.5 * seconds ? amplitude / (0.5 * seconds) : 0.0;
    arm.write(command);
    next += std::chrono::milliseconds(1);
    std::this_thread::sleep_until(next);
  }
  return command;
}

TEST(SimArmServer, TracksTheCommandedJointPositions) {
  Served served;
  auto arm = served.connect();
  ArmState s;
  ASSERT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  const JointVector q0 = s.position;
  EXPECT_LT((q0 - served.sim.initial_position()).norm(), 1e-3);
  const JointCommand last = drive(*arm, q0, 1.0, 0.1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(arm->read(s), ArmStatus::kOk);
  // Joint 4 moved by 0.1 rad and arrived; the others held.
  EXPECT_NEAR(s.position[3], last.position[3], 2e-3);
  EXPECT_NEAR(s.position[3] - q0[3], 0.1, 2e-3);
  EXPECT_LT((s.position - last.position).cwiseAbs().maxCoeff(), 2e-3);
  const SimArmServerStatistics st = served.server->statistics();
  EXPECT_GT(st.commands_applied, 500u);
  EXPECT_EQ(st.corrupt_dropped, 0u);
  EXPECT_EQ(st.command_timeouts, 0u);
  EXPECT_FALSE(st.holding);
  EXPECT_GT(st.states_sent, 500u);
  EXPECT_GT(arm->counters().round_trip_count, 500u);
}

TEST(SimArmServer, HoldsTheLastCommandedPositionAfterTheCommandTimeout) {
  Served served(0.02);
  auto arm = served.connect();
  ArmState s;
  ASSERT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  // Stop commanding while the joint is still moving fast.
  const JointCommand last = drive(*arm, s.position, 0.3, 0.3);
  ASSERT_TRUE(eventually([&] { return served.server->statistics().holding; }));
  EXPECT_EQ(arm->read(s), ArmStatus::kCommunicationLost);  // the arm flags the timeout
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  arm->read(s);
  const JointVector held = s.position;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(arm->read(s), ArmStatus::kCommunicationLost);
  EXPECT_LT((s.position - last.position).cwiseAbs().maxCoeff(), 2e-3);
  EXPECT_LT((s.position - held).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT(s.velocity.cwiseAbs().maxCoeff(), 1e-3);
  const SimArmServerStatistics st = served.server->statistics();
  EXPECT_TRUE(st.holding);
  EXPECT_GE(st.command_timeouts, 1u);

  // Commands resume: the flag clears and the arm follows again.
  JointCommand command = last;
  command.velocity.setZero();
  command.position[0] += 0.01;
  ASSERT_TRUE(eventually([&] {
    arm->write(command);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return arm->read(s) == ArmStatus::kOk && std::abs(s.position[0] - command.position[0]) < 1e-3;
  }));
  EXPECT_FALSE(served.server->statistics().holding);
}

TEST(SimArmServer, DropsStaleCorruptAndForeignCommands) {
  Served served;
  auto arm = served.connect();
  ArmState s;
  ASSERT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  JointCommand hold;
  hold.position = s.position;
  arm->write(hold);
  // Another controller while this one is live, and garbage.
  testing::UdpPeer intruder;
  intruder.set_remote(served.server->port());
  arm_link::CommandPacket foreign;
  foreign.sequence = 1'000'000;
  foreign.command.position = s.position;
  foreign.command.position[0] += 0.5;
  intruder.send(foreign);
  const std::uint8_t garbage[] = {0x54, 0x41, 0x52, 0x4D, 1, 0};
  intruder.send_raw(garbage, sizeof garbage);
  ASSERT_TRUE(eventually([&] {
    arm->write(hold);
    const SimArmServerStatistics st = served.server->statistics();
    return st.foreign_dropped == 1 && st.corrupt_dropped == 1;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  arm->read(s);
  EXPECT_NEAR(s.position[0], hold.position[0], 1e-3);  // the intruder did not move it
}

TEST(SimArmServer, RejectsBadOptionsAndBusyPortsNamingThem) {
  const ArmModel model = load_default_arm();
  SimulatedArm sim(model);
  SimArmServerOptions options;
  options.port = 0;
  options.period = 0.0;
  try {
    SimArmServer server(sim, options);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("period"), std::string::npos) << e.what();
  }
  options.period = 0.001;
  options.command_timeout = 0.0005;
  EXPECT_THROW(SimArmServer(sim, options), std::invalid_argument);
  options.command_timeout = 0.02;
  testing::UdpPeer occupant;
  options.port = occupant.port();
  try {
    SimArmServer server(sim, options);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(occupant.port())),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tether::remote

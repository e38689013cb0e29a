// SimArmServer in-process: a SimulatedArm served over loopback UDP, driven through UdpArm
// (and a plain peer for what UdpArm never sends).

#include "tether/remote/arm_link/simarm_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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
    options.key_file = testing::test_key_file();
    server = std::make_unique<SimArmServer>(sim, options);
    server->start();
  }
  std::unique_ptr<UdpArm> connect(double link_timeout = 0.5) {
    return connect(model, testing::test_key_file(), link_timeout);
  }
  std::unique_ptr<UdpArm> connect(const ArmModel& arm, const std::string& key_file,
                                  double link_timeout = 0.5, double connect_timeout = 2.0) {
    UdpArmOptions options;
    options.remote_port = server->port();
    options.link_timeout = link_timeout;
    options.connect_timeout = connect_timeout;
    options.key_file = key_file;
    return std::make_unique<UdpArm>(arm, options);
  }
  // A plain peer aimed at the server, in a session of its own under the site's secret.
  std::unique_ptr<testing::UdpPeer> peer(std::uint64_t session) {
    auto p = std::make_unique<testing::UdpPeer>();
    p->set_remote(server->port());
    p->use_session(testing::test_secret(), session, arm_link::arm_model_id(model));
    return p;
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
  EXPECT_EQ(st.foreign_dropped, 0u);
  EXPECT_EQ(st.unauthenticated_dropped, 0u);
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
  // Another controller (with the site's secret, in its own session) while this one is
  // live, the same from another address in this one's session, and garbage.
  auto intruder = served.peer(arm->session() + 1);
  arm_link::CommandPacket foreign;
  foreign.sequence = 1'000'000;
  foreign.command.position = s.position;
  foreign.command.position[0] += 0.5;
  intruder->send(foreign);
  intruder->use_session(testing::test_secret(), arm->session(),
                        arm_link::arm_model_id(served.model));
  intruder->send(foreign);
  const std::uint8_t garbage[] = {0x54, 0x41, 0x52, 0x4D, 2, 0};
  intruder->send_raw(garbage, sizeof garbage);
  ASSERT_TRUE(eventually([&] {
    arm->write(hold);
    const SimArmServerStatistics st = served.server->statistics();
    return st.foreign_dropped == 2 && st.corrupt_dropped == 1;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  arm->read(s);
  EXPECT_NEAR(s.position[0], hold.position[0], 1e-3);  // the intruder did not move it
}

TEST(SimArmServer, RefusesCommandsOfAnotherSecretOrArmModelAndCountsThem) {
  Served served;
  // A controller with another site's secret: its hellos are refused, it never connects.
  EXPECT_THROW(served.connect(served.model, testing::other_key_file(), 0.5, 0.2),
               std::runtime_error);
  SimArmServerStatistics st = served.server->statistics();
  EXPECT_GT(st.unauthenticated_dropped, 0u);
  EXPECT_EQ(st.hellos, 0u);
  EXPECT_EQ(st.states_sent, 0u);
  // A controller of another arm model (the right secret): refused as foreign.
  EXPECT_THROW(served.connect(load_panda_arm(), testing::test_key_file(), 0.5, 0.2),
               std::runtime_error);
  st = served.server->statistics();
  EXPECT_GT(st.foreign_dropped, 0u);
  EXPECT_EQ(st.hellos, 0u);
  EXPECT_EQ(st.states_sent, 0u);
  EXPECT_EQ(st.corrupt_dropped, 0u);
  // The right one connects, and neither stray counted anything else.
  auto arm = served.connect();
  ArmState s;
  EXPECT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  EXPECT_GT(served.server->statistics().hellos, 0u);
  EXPECT_EQ(arm->counters().dropped_unauthenticated, 0u);
  EXPECT_EQ(arm->counters().dropped_foreign, 0u);
}

TEST(SimArmServer, IgnoresAStraySenderOfRandomDatagrams) {
  Served served;
  auto arm = served.connect();
  ArmState s;
  ASSERT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  JointCommand hold;
  hold.position = s.position;
  ASSERT_TRUE(eventually([&] {
    arm->write(hold);
    return arm->read(s) == ArmStatus::kOk && served.server->statistics().commands_applied > 0;
  }));
  const SimArmServerStatistics before = served.server->statistics();
  const auto refused = [](const SimArmServerStatistics& st) {
    return st.corrupt_dropped + st.foreign_dropped + st.unauthenticated_dropped;
  };

  // Random bytes of random lengths, and well-framed COMMANDs (right magic, version, kind,
  // size and arm model, in the live session or another) with random payloads and MACs. One
  // at a time, each counted before the next is sent, so no socket buffer can lose one.
  testing::UdpPeer stray;
  stray.set_remote(served.server->port());
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> length(0, 400);
  const std::uint64_t model = served.server->arm_model_id();
  for (int i = 0; i < 120; ++i) {
    const bool forged = i % 3 == 0;
    const bool in_session = i % 2 == 0;
    std::vector<std::uint8_t> d(forged ? arm_link::kCommandPacketSize : length(rng));
    for (std::uint8_t& b : d) b = static_cast<std::uint8_t>(byte(rng));
    if (forged) {  // the framing of a real COMMAND, the rest random
      arm_link::CommandPacket packet;
      packet.command.position = hold.position;
      packet.command.position[0] += 0.5;
      const arm_link::LinkIds ids{in_session ? arm->session() : (rng() | 1U), model};
      arm_link::PacketBuffer frame{};
      arm_link::encode(packet, ids, arm_link::LinkKey{}, frame);
      std::copy(frame.begin(), frame.begin() + arm_link::kHeaderSize, d.begin());
    }
    const SimArmServerStatistics was = served.server->statistics();
    stray.send_raw(d.data(), d.size());
    ASSERT_TRUE(eventually([&] {
      arm->write(hold);  // the controller stays live meanwhile
      arm->read(s);
      return refused(served.server->statistics()) == refused(was) + 1;
    })) << "datagram "
        << i << " (" << d.size() << " bytes) not counted";
    const SimArmServerStatistics st = served.server->statistics();
    if (forged && in_session) {
      EXPECT_EQ(st.unauthenticated_dropped, was.unauthenticated_dropped + 1) << "datagram " << i;
    } else if (forged) {
      EXPECT_EQ(st.foreign_dropped, was.foreign_dropped + 1) << "datagram " << i;
    } else {
      EXPECT_EQ(st.corrupt_dropped, was.corrupt_dropped + 1) << "datagram " << i;
    }
  }
  // Nothing else changed: the arm kept following its controller, which noticed nothing.
  const SimArmServerStatistics after = served.server->statistics();
  EXPECT_EQ(refused(after) - refused(before), 120u);
  EXPECT_EQ(after.command_timeouts, before.command_timeouts);
  EXPECT_FALSE(after.holding);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(arm->read(s), ArmStatus::kOk);
  EXPECT_NEAR(s.position[0], hold.position[0], 1e-3);  // the forgeries did not move it
  EXPECT_EQ(arm->counters().dropped_foreign + arm->counters().dropped_unauthenticated, 0u);
  EXPECT_EQ(arm->counters().link_losses, 0u);
}

TEST(SimArmServer, AReplayedHelloOfAnotherSessionCannotTakeOverALiveOne) {
  Served served(0.2);
  // An earlier controller's hello, recorded (valid MAC, its own session)...
  auto earlier = served.peer(0x5EED5EED5EED5EEDULL);
  arm_link::CommandPacket hello;
  hello.sequence = 1;
  hello.flags = 0;
  arm_link::PacketBuffer recorded{};
  const std::size_t n = arm_link::encode(hello, earlier->ids, earlier->key, recorded);
  // ...replayed while the current controller is live: refused as foreign.
  auto arm = served.connect();
  ArmState s;
  ASSERT_TRUE(eventually([&] { return arm->read(s) == ArmStatus::kOk; }));
  JointCommand hold;
  hold.position = s.position;
  arm->write(hold);
  const std::uint64_t foreign = served.server->statistics().foreign_dropped;
  earlier->send_raw(recorded.data(), n);
  ASSERT_TRUE(eventually([&] {
    arm->write(hold);
    return served.server->statistics().foreign_dropped == foreign + 1;
  }));
  EXPECT_EQ(arm->read(s), ArmStatus::kOk);  // the arm still answers this controller
  // Once this controller has been silent past the command timeout, another session may
  // take over (the arm holds meanwhile).
  ASSERT_TRUE(eventually([&] { return served.server->statistics().holding; }));
  // But an old COMMAND of this very session, replayed now from anywhere, is stale.
  auto replay = served.peer(arm->session());
  arm_link::CommandPacket old;
  old.sequence = 1;
  old.command.position = hold.position;
  old.command.position[0] += 0.3;
  const std::uint64_t stale = served.server->statistics().stale_dropped;
  replay->send(old);
  ASSERT_TRUE(eventually([&] { return served.server->statistics().stale_dropped == stale + 1; }));
  EXPECT_TRUE(served.server->statistics().holding);
  const std::uint64_t hellos = served.server->statistics().hellos;
  earlier->send_raw(recorded.data(), n);
  ASSERT_TRUE(eventually([&] { return served.server->statistics().hellos == hellos + 1; }));
  EXPECT_EQ(served.server->statistics().foreign_dropped, foreign + 1);
}

TEST(SimArmServer, RejectsBadOptionsAndBusyPortsNamingThem) {
  const ArmModel model = load_default_arm();
  SimulatedArm sim(model);
  SimArmServerOptions options;
  options.port = 0;
  options.key_file = testing::test_key_file();
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
  options.key_file.clear();
  try {
    SimArmServer server(sim, options);
    FAIL() << "ran without a key";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("key_file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--key"), std::string::npos) << e.what();
  }
  options.key_file = testing::write_key_file("short.key", "0123456789abcde");
  try {
    SimArmServer server(sim, options);
    FAIL() << "took a 15-byte key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(options.key_file), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("15 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("minimum is 16"), std::string::npos) << e.what();
  }
  options.key_file = testing::test_key_file();
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

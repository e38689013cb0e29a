// UdpArm, the remote site's arm-link driver, against a plain UDP peer on loopback.

#include "tether/remote/arm_link/udp_arm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "tether/common/urdf_loader.h"
#include "udp_peer.h"

namespace tether::remote {
namespace {

using arm_link::StatePacket;
using testing::eventually;
using testing::UdpPeer;

StatePacket state(std::uint64_t sequence, double q0, std::uint32_t flags = 0) {
  StatePacket p;
  p.sequence = sequence;
  p.state.time = 0.001 * static_cast<double>(sequence);
  p.state.position.setConstant(0.5);
  p.state.position[0] = q0;
  p.flags = flags;
  return p;
}

std::uint64_t dropped(const UdpArmCounters& c) {
  return c.dropped_stale + c.dropped_corrupt + c.dropped_foreign + c.dropped_unauthenticated;
}

// A UdpArm and a peer in the arm's role, in the UdpArm's session with the site's secret.
struct Link {
  explicit Link(double link_timeout = 0.5) : model(load_default_arm()) {
    UdpArmOptions options;
    options.remote_port = peer.port();
    options.link_timeout = link_timeout;
    options.connect_timeout = 0.0;
    options.key_file = testing::test_key_file();
    arm = std::make_unique<UdpArm>(model, options);
    peer.set_remote(arm->local_port());
    peer.use_session(testing::test_secret(), arm->session(), arm_link::arm_model_id(model));
  }
  // Reads until the driver has taken `received` states and dropped `dropped` datagrams.
  ArmStatus read_after(std::uint64_t received, std::uint64_t dropped_count, ArmState& s) {
    ArmStatus status = ArmStatus::kNotReady;
    EXPECT_TRUE(eventually([&] {
      status = arm->read(s);
      const UdpArmCounters c = arm->counters();
      return c.received == received && dropped(c) == dropped_count;
    })) << "received "
        << arm->counters().received << ", dropped " << dropped(arm->counters());
    return status;
  }
  ArmModel model;
  UdpPeer peer;
  std::unique_ptr<UdpArm> arm;
};

TEST(UdpArmLink, IsNotReadyAndSendsOnlyHellosBeforeTheFirstState) {
  Link link;
  ArmState s;
  s.position.setConstant(7.0);
  EXPECT_EQ(link.arm->read(s), ArmStatus::kNotReady);
  EXPECT_EQ(s.position[0], 7.0);  // untouched
  JointCommand command;           // all zeros: must never reach the arm as a set-point
  link.arm->write(command);
  const auto received = link.peer.receive_command();  // in the session, MAC verified
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->flags & arm_link::kSetpointValid, 0u);
  EXPECT_EQ(received->sequence, 1u);
}

TEST(UdpArmLink, EachDriverIsItsOwnSession) {
  Link a;
  Link b;
  EXPECT_NE(a.arm->session(), 0u);
  EXPECT_NE(a.arm->session(), b.arm->session());
  // Its COMMANDs carry its session: a peer that expects another one refuses them.
  b.peer.ids.session = a.arm->session();
  b.arm->write(JointCommand{});
  EXPECT_FALSE(b.peer.receive_command(0.1).has_value());
  a.arm->write(JointCommand{});
  EXPECT_TRUE(a.peer.receive_command().has_value());
}

TEST(UdpArmLink, TakesTheNewestStateAndDropsReorderedAndDuplicatePackets) {
  Link link;
  for (const std::uint64_t sequence : {1, 2, 5, 3, 5, 4}) {
    link.peer.send(state(sequence, 0.1 * static_cast<double>(sequence)));
  }
  ArmState s;
  EXPECT_EQ(link.read_after(3, 3, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.5);
  EXPECT_DOUBLE_EQ(s.time, 0.005);
  const UdpArmCounters c = link.arm->counters();
  EXPECT_EQ(c.dropped_stale, 3u);
  EXPECT_EQ(c.dropped_corrupt, 0u);
  link.peer.send(state(6, 0.6));
  EXPECT_EQ(link.read_after(4, 3, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.6);
}

TEST(UdpArmLink, DropsCorruptDatagramsAndKeepsTheLastGoodState) {
  Link link;
  link.peer.send(state(1, 0.25));
  arm_link::PacketBuffer b{};
  const std::size_t n = arm_link::encode(state(2, 0.9), link.peer.ids, link.peer.key, b);
  b[arm_link::kHeaderSize + 16 + 1] ^= 0x10;  // a flipped bit in q[0]: the MAC fails
  link.peer.send_raw(b.data(), n);
  const std::uint8_t garbage[] = {1, 2, 3};
  link.peer.send_raw(garbage, sizeof garbage);
  ArmState s;
  EXPECT_EQ(link.read_after(1, 2, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.25);
  EXPECT_EQ(link.arm->counters().dropped_corrupt, 1u);
  EXPECT_EQ(link.arm->counters().dropped_unauthenticated, 1u);
}

TEST(UdpArmLink, RefusesStatesOfAnotherArmModelSessionOrSecretAndCountsThem) {
  Link link;
  const arm_link::LinkSecret secret = testing::test_secret();
  const std::uint64_t model = arm_link::arm_model_id(link.model);
  // The UdpArm's socket is connected to the arm's address, so the kernel drops datagrams
  // from anywhere else: the arm's own peer sends every kind of refused STATE.
  const arm_link::LinkIds ids = link.peer.ids;
  const arm_link::LinkKey good = link.peer.key;
  // Another arm model (a wrong arm process with the same secret).
  const std::uint64_t panda = arm_link::arm_model_id(load_panda_arm());
  ASSERT_NE(panda, model);
  link.peer.use_session(secret, ids.session, panda);
  link.peer.send(state(1, 0.9));
  // Another session (a replayed STATE of an earlier controller).
  link.peer.use_session(secret, ids.session + 1, model);
  link.peer.send(state(2, 0.9));
  // Another site's secret.
  link.peer.use_session(testing::other_secret(), ids.session, model);
  link.peer.send(state(3, 0.9));
  // No key at all: a zero MAC.
  link.peer.ids = ids;
  link.peer.key = arm_link::LinkKey{};
  link.peer.send(state(4, 0.9));
  // Then the arm itself.
  link.peer.key = good;
  link.peer.send(state(5, 0.4));
  ArmState s;
  EXPECT_EQ(link.read_after(1, 4, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.4);
  const UdpArmCounters c = link.arm->counters();
  EXPECT_EQ(c.dropped_foreign, 2u);
  EXPECT_EQ(c.dropped_unauthenticated, 2u);
  EXPECT_EQ(c.dropped_corrupt, 0u);
  EXPECT_EQ(c.dropped_stale, 0u);
}

TEST(UdpArmLink, RefusedStatesDoNotKeepTheLinkAlive) {
  Link link(0.05);
  link.peer.send(state(1, 0.1));
  ArmState s;
  EXPECT_EQ(link.read_after(1, 0, s), ArmStatus::kOk);
  link.peer.use_session(testing::other_secret(), link.peer.ids.session, link.peer.ids.arm_model);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  for (std::uint64_t n = 2; std::chrono::steady_clock::now() < end; ++n) {
    link.peer.send(state(n, 0.5));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(link.arm->read(s), ArmStatus::kCommunicationLost);
  EXPECT_DOUBLE_EQ(s.position[0], 0.1);
  EXPECT_GT(link.arm->counters().dropped_unauthenticated, 10u);
  EXPECT_EQ(link.arm->counters().received, 1u);
}

TEST(UdpArmLink, ReportsLinkLostAfterTimeoutAndResynchronisesOnTheNextState) {
  Link link(0.1);
  link.peer.send(state(100, 0.1));
  ArmState s;
  EXPECT_EQ(link.read_after(1, 0, s), ArmStatus::kOk);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(link.arm->read(s), ArmStatus::kCommunicationLost);
  EXPECT_DOUBLE_EQ(s.position[0], 0.1);  // the last state is still reported
  EXPECT_EQ(link.arm->read(s), ArmStatus::kCommunicationLost);
  EXPECT_EQ(link.arm->counters().link_losses, 1u);
  // A restarted arm process counts from 1 again: taken after a loss.
  link.peer.send(state(1, 0.2));
  EXPECT_EQ(link.read_after(2, 0, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.2);
}

TEST(UdpArmLink, MapsTheArmsFlagsToTheArmStatus) {
  Link link;
  ArmState s;
  link.peer.send(state(1, 0.1, arm_link::kAwaitingCommand));
  EXPECT_EQ(link.read_after(1, 0, s), ArmStatus::kOk);
  link.peer.send(state(2, 0.1, arm_link::kArmFault));
  EXPECT_EQ(link.read_after(2, 0, s), ArmStatus::kFault);
  link.peer.send(state(3, 0.1, arm_link::kCommandTimeout));
  EXPECT_EQ(link.read_after(3, 0, s), ArmStatus::kCommunicationLost);
  link.peer.send(state(4, 0.1));
  EXPECT_EQ(link.read_after(4, 0, s), ArmStatus::kOk);
}

TEST(UdpArmLink, SendsSetpointsWithIncreasingSequencesAndMeasuresTheRoundTrip) {
  Link link;
  link.peer.send(state(1, 0.1));
  ArmState s;
  ASSERT_EQ(link.read_after(1, 0, s), ArmStatus::kOk);
  JointCommand command;
  command.position = s.position;
  command.velocity.setConstant(0.01);
  link.arm->write(command);
  link.arm->write(command);
  const auto first = link.peer.receive_command();
  const auto second = link.peer.receive_command();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->flags, arm_link::kSetpointValid);
  EXPECT_EQ(second->sequence, first->sequence + 1);
  EXPECT_EQ(second->command.position, command.position);
  EXPECT_EQ(second->command.velocity, command.velocity);
  EXPECT_GE(second->controller_time, first->controller_time);
  EXPECT_EQ(link.arm->counters().sent, 2u);

  StatePacket echo = state(2, 0.1);
  echo.command_echo = second->sequence;
  link.peer.send(echo);
  ASSERT_EQ(link.read_after(2, 0, s), ArmStatus::kOk);
  const UdpArmCounters c = link.arm->counters();
  EXPECT_EQ(c.round_trip_count, 1u);
  EXPECT_GT(c.round_trip_last, 0.0);
  EXPECT_LT(c.round_trip_last, 1.0);  // sanity only
}

TEST(UdpArmLink, ConnectTimesOutNamingTheArmsAddress) {
  const std::uint16_t port = testing::free_udp_port();
  UdpArmOptions options;
  options.remote_port = port;
  options.connect_timeout = 0.05;
  options.key_file = testing::test_key_file();
  try {
    UdpArm arm(load_default_arm(), options);
    FAIL() << "connected to nobody";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

TEST(UdpArmLink, SetupErrorsNameTheFieldOrAddress) {
  UdpPeer peer;
  UdpArmOptions options;
  options.connect_timeout = 0.0;
  options.remote_port = peer.port();
  options.key_file = testing::test_key_file();
  options.local_port = peer.port();  // taken
  try {
    UdpArm arm(load_default_arm(), options);
    FAIL() << "bound a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(peer.port())),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot bind"), std::string::npos) << e.what();
  }
  options.local_port = 0;
  options.remote_host = "no-such-host.invalid";
  EXPECT_THROW(UdpArm(load_default_arm(), options), std::runtime_error);
  options.remote_host = "127.0.0.1";
  options.link_timeout = 0.0;
  try {
    UdpArm arm(load_default_arm(), options);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("link_timeout"), std::string::npos) << e.what();
  }
}

TEST(UdpArmLink, NeedsAKeyFileOfAtLeast16Bytes) {
  UdpPeer peer;
  UdpArmOptions options;
  options.connect_timeout = 0.0;
  options.remote_port = peer.port();
  try {
    UdpArm arm(load_default_arm(), options);
    FAIL() << "ran without a key";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("key_file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--arm-link-key"), std::string::npos) << e.what();
  }
  options.key_file = testing::write_key_file("short.key", "0123456789abcde\n");
  try {
    UdpArm arm(load_default_arm(), options);
    FAIL() << "took a 15-byte key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(options.key_file), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("minimum is 16"), std::string::npos) << e.what();
  }
}

TEST(UdpArmLink, ParsesHostAndPort) {
  UdpArmOptions o = parse_udp_endpoint("127.0.0.1:50600");
  EXPECT_EQ(o.remote_host, "127.0.0.1");
  EXPECT_EQ(o.remote_port, 50600);
  EXPECT_DOUBLE_EQ(o.link_timeout, 0.01);
  o = parse_udp_endpoint("[::1]:7");
  EXPECT_EQ(o.remote_host, "::1");
  EXPECT_EQ(o.remote_port, 7);
  EXPECT_TRUE(o.key_file.empty());
  o = parse_udp_endpoint("simarm.local:65535");
  EXPECT_EQ(o.remote_host, "simarm.local");
  for (const std::string bad :
       {"localhost", ":50600", "host:", "host:0", "host:65536", "host:50x", "host:-1"}) {
    try {
      parse_udp_endpoint(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("HOST:PORT"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tether::remote

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

struct Link {
  explicit Link(double link_timeout = 0.5) {
    UdpArmOptions options;
    options.remote_port = peer.port();
    options.link_timeout = link_timeout;
    options.connect_timeout = 0.0;
    arm = std::make_unique<UdpArm>(load_default_arm(), options);
    peer.set_remote(arm->local_port());
  }
  // Reads until the driver has taken `received` states and dropped `dropped` datagrams.
  ArmStatus read_after(std::uint64_t received, std::uint64_t dropped, ArmState& s) {
    ArmStatus status = ArmStatus::kNotReady;
    EXPECT_TRUE(eventually([&] {
      status = arm->read(s);
      const UdpArmCounters c = arm->counters();
      return c.received == received && c.dropped_stale + c.dropped_corrupt == dropped;
    })) << "received "
        << arm->counters().received;
    return status;
  }
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
  const auto received = link.peer.receive_command();
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->flags & arm_link::kSetpointValid, 0u);
  EXPECT_EQ(received->sequence, 1u);
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
  const std::size_t n = arm_link::encode(state(2, 0.9), b);
  b[40] ^= 0x10;  // a flipped bit in q
  link.peer.send_raw(b.data(), n);
  const std::uint8_t garbage[] = {1, 2, 3};
  link.peer.send_raw(garbage, sizeof garbage);
  ArmState s;
  EXPECT_EQ(link.read_after(1, 2, s), ArmStatus::kOk);
  EXPECT_DOUBLE_EQ(s.position[0], 0.25);
  EXPECT_EQ(link.arm->counters().dropped_corrupt, 2u);
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

TEST(UdpArmLink, ParsesHostAndPort) {
  UdpArmOptions o = parse_udp_endpoint("127.0.0.1:50600");
  EXPECT_EQ(o.remote_host, "127.0.0.1");
  EXPECT_EQ(o.remote_port, 50600);
  EXPECT_DOUBLE_EQ(o.link_timeout, 0.01);
  o = parse_udp_endpoint("[::1]:7");
  EXPECT_EQ(o.remote_host, "::1");
  EXPECT_EQ(o.remote_port, 7);
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

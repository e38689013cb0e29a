// UdpArm's read() and write() run every control cycle: after construction they must never
// touch the heap, whatever arrives (fresh, stale, corrupt, foreign and unauthenticated
// datagrams, a lost link), MACs computed and verified included.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "allocation_counter.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "udp_peer.h"

namespace tether::remote {
namespace {

TEST(UdpArmAllocation, ReadAndWriteAllocateNothing) {
  testing::UdpPeer peer;
  UdpArmOptions options;
  options.remote_port = peer.port();
  options.connect_timeout = 0.0;
  options.link_timeout = 0.005;
  options.key_file = testing::test_key_file();
  const ArmModel model = load_default_arm();
  UdpArm arm(model, options);
  peer.set_remote(arm.local_port());
  const arm_link::LinkSecret secret = testing::test_secret();
  const std::uint64_t model_id = arm_link::arm_model_id(model);
  peer.use_session(secret, arm.session(), model_id);

  // Queue every kind of datagram first: the peer's own sends may allocate.
  arm_link::StatePacket state;
  state.state.position.setConstant(0.3);
  for (std::uint64_t n = 1; n <= 50; ++n) {
    state.sequence = n % 7 == 0 ? n - 3 : n;  // some reordered
    state.command_echo = n;
    peer.send(state);
  }
  const std::uint8_t garbage[] = {9, 9, 9};
  peer.send_raw(garbage, sizeof garbage);
  peer.use_session(secret, arm.session() + 1, model_id);  // another session
  peer.send(state);
  peer.use_session(secret, arm.session(), model_id + 1);  // another arm model
  peer.send(state);
  peer.use_session(testing::other_secret(), arm.session(), model_id);  // another secret
  peer.send(state);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));

  ArmState s;
  JointCommand command;
  std::uint64_t taken = 0;
  ArmStatus last = ArmStatus::kOk;
  {
    tether::testing::ScopedAllocationCounter counter;
    for (int n = 0; n < 200; ++n) {
      last = arm.read(s);
      command.position = s.position;
      arm.write(command);
      taken = arm.counters().received;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    last = arm.read(s);  // the link is lost by now
    EXPECT_EQ(counter.count(), 0u);
  }
  EXPECT_EQ(last, ArmStatus::kCommunicationLost);
  EXPECT_GT(taken, 40u);
  EXPECT_EQ(arm.counters().dropped_corrupt, 1u);
  EXPECT_EQ(arm.counters().dropped_foreign, 2u);
  EXPECT_EQ(arm.counters().dropped_unauthenticated, 1u);
  EXPECT_GT(arm.counters().dropped_stale, 0u);
}

}  // namespace
}  // namespace tether::remote

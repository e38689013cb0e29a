#include "control_lease.h"

#include <gtest/gtest.h>

namespace tether::remote::server {
namespace {

using namespace std::chrono_literals;
using Clock = ControlLease::Clock;

TEST(ControlLease, FirstClaimTakesTheLeaseAndOthersAreRefusedByName) {
  ControlLease lease(5s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  const auto refusal = lease.claim("bob", t0 + 1s);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("operator 'alice'"), std::string::npos);
  EXPECT_EQ(lease.holder(t0 + 1s), "alice");
}

TEST(ControlLease, LapsesAfterSilenceButNotWhileTheHolderStreams) {
  ControlLease lease(2s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  lease.open_stream("alice");
  EXPECT_TRUE(lease.claim("bob", t0 + 10s));
  lease.close_stream("alice", t0 + 10s);
  EXPECT_TRUE(lease.claim("bob", t0 + 11s));
  EXPECT_FALSE(lease.claim("bob", t0 + 12500ms));
  EXPECT_EQ(lease.holder(t0 + 12500ms), "bob");
}

TEST(ControlLease, RenewsOnEveryClaimOfItsHolder) {
  ControlLease lease(2s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  EXPECT_FALSE(lease.claim("alice", t0 + 1500ms));
  EXPECT_TRUE(lease.claim("bob", t0 + 3s));
  EXPECT_FALSE(lease.claim("bob", t0 + 3600ms));
}

TEST(ControlLease, ReleaseFreesOnlyTheHoldersLease) {
  ControlLease lease(5s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  lease.release("bob");
  EXPECT_EQ(lease.holder(t0), "alice");
  lease.release("alice");
  EXPECT_EQ(lease.holder(t0), "");
  EXPECT_FALSE(lease.claim("bob", t0));
}

}  // namespace
}  // namespace tether::remote::server

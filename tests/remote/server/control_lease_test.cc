#include "control_lease.h"

#include <gtest/gtest.h>

#include <vector>

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

// A lapse is an event: noticed by the periodic check when nobody calls, reported once with
// its holder and how long they had been silent, and the lease is then free.
TEST(ControlLease, ALapseIsReportedOnceWithItsHolderAndTheirSilence) {
  ControlLease lease(5s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  lease.expire(t0 + 4s);
  EXPECT_TRUE(lease.take_lapses().empty()) << "lapsed before its timeout";
  lease.expire(t0 + 5200ms);
  const std::vector<ControlLease::Lapse> lapses = lease.take_lapses();
  ASSERT_EQ(lapses.size(), 1u);
  EXPECT_EQ(lapses[0].holder, "alice");
  EXPECT_EQ(lapses[0].silent, 5200ms);
  EXPECT_EQ(lease.holder(t0 + 5300ms), "");
  lease.expire(t0 + 6s);
  EXPECT_TRUE(lease.take_lapses().empty()) << "one lapse reported twice";
}

// Whichever call notices the lapse first reports it: here another operator's claim.
TEST(ControlLease, AClaimThatFindsTheLeaseLapsedReportsTheLapse) {
  ControlLease lease(2s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  EXPECT_FALSE(lease.claim("bob", t0 + 3s));
  const std::vector<ControlLease::Lapse> lapses = lease.take_lapses();
  ASSERT_EQ(lapses.size(), 1u);
  EXPECT_EQ(lapses[0].holder, "alice");
  EXPECT_EQ(lapses[0].silent, 3s);
  EXPECT_EQ(lease.take_over("carol", t0 + 4s), "bob");
  EXPECT_TRUE(lease.take_lapses().empty()) << "a takeover is not a lapse";
}

TEST(ControlLease, NeitherAnOpenStreamNorAReleaseIsALapse) {
  ControlLease lease(2s);
  const Clock::time_point t0{};
  EXPECT_FALSE(lease.claim("alice", t0));
  lease.open_stream("alice");
  lease.expire(t0 + 10s);
  EXPECT_TRUE(lease.take_lapses().empty());
  EXPECT_EQ(lease.holder(t0 + 10s), "alice");
  lease.close_stream("alice", t0 + 10s);
  lease.release("alice");
  lease.expire(t0 + 20s);
  EXPECT_TRUE(lease.take_lapses().empty());
}

// A renewal is told apart from an acquisition, so that the site need not audit renewals.
TEST(ControlLease, AClaimSaysWhetherItRenewedTheCallersOwnLease) {
  ControlLease lease(2s);
  const Clock::time_point t0{};
  bool renewal = true;
  EXPECT_FALSE(lease.claim("alice", t0, &renewal));
  EXPECT_FALSE(renewal) << "the first claim acquires";
  EXPECT_FALSE(lease.claim("alice", t0 + 1s, &renewal));
  EXPECT_TRUE(renewal);
  EXPECT_FALSE(lease.claim("alice", t0 + 5s, &renewal));
  EXPECT_FALSE(renewal) << "a claim after a lapse acquires the lease afresh";
  EXPECT_EQ(lease.take_lapses().size(), 1u);
}

}  // namespace
}  // namespace tether::remote::server

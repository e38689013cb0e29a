// The packet link proves the link it emulates on real packets: UDP datagrams sent from inside
// one network namespace to the other arrive after the delay it was set to (p50 within 1 ms,
// none early, order kept), a 10 % loss loses within its binomial bounds, an outage loses
// everything sent into it, and TCP carries a stream across it intact. Needs root (network
// namespaces, TUN devices); skipped without. Real time: run alone.

#include "tether/linkem/packet_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tether::linkem {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kAddrA = "10.201.0.1";
constexpr const char* kAddrB = "10.201.0.2";

bool run(const std::string& command) { return std::system(command.c_str()) == 0; }

// A socket of `type` in network namespace `ns`: made on a thread that enters the namespace
// and ends, since a socket belongs to the namespace it was created in and the test's own
// threads stay where they are.
int socket_in(const std::string& ns, int type) {
  int fd = -1;
  std::thread([&] {
    const int nsfd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return;
    if (::setns(nsfd, CLONE_NEWNET) == 0) fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    ::close(nsfd);
  }).join();
  return fd;
}

sockaddr_in endpoint(const char* address, std::uint16_t port) {
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &out.sin_addr);
  return out;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

struct Datagram {
  std::uint32_t sequence;
  std::int64_t sent_ns;  // steady clock
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// What `count` datagrams sent `gap` apart from `from` to `to` (ADDRESS:port) did.
struct Probe {
  std::vector<double> delay;            // [s] one-way, per datagram; < 0: never arrived
  std::vector<double> sent_at;          // [s] on the link's clock
  std::vector<std::uint32_t> arrivals;  // sequence numbers in arrival order
  std::size_t received() const { return arrivals.size(); }
};

class PacketLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces and TUN devices";
    if (::access("/dev/net/tun", F_OK) != 0) GTEST_SKIP() << "needs /dev/net/tun";
    if (!run("command -v ip >/dev/null 2>&1")) GTEST_SKIP() << "needs `ip` (iproute2)";
    static int counter = 0;
    const std::string stem = "tlk-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    ns_a_ = stem + "a";
    ns_b_ = stem + "b";
    if (!run("ip netns add " + ns_a_) || !run("ip netns add " + ns_b_)) {
      GTEST_SKIP() << "cannot create network namespaces here (`ip netns add` failed)";
    }
  }

  void TearDown() override {
    link_.reset();
    for (const std::string& ns : {ns_a_, ns_b_}) {
      if (!ns.empty()) run("ip netns del " + ns + " 2>/dev/null");
    }
  }

  PacketLink& start(const PacketLinkProfile& profile) {
    PacketLinkConfig config;
    config.ns_a = ns_a_;
    config.ns_b = ns_b_;
    link_ = std::make_unique<PacketLink>(config, profile);
    return *link_;
  }

  // Sends from `from_ns` to `to_address`:port on a receiver bound in `to_ns`.
  Probe probe(const std::string& from_ns, const std::string& to_ns, const char* to_address,
              int count, std::chrono::microseconds gap) {
    const int receiver = socket_in(to_ns, SOCK_DGRAM);
    const int sender = socket_in(from_ns, SOCK_DGRAM);
    EXPECT_GE(receiver, 0);
    EXPECT_GE(sender, 0);
    const sockaddr_in to = endpoint(to_address, 5000);
    EXPECT_EQ(::bind(receiver, reinterpret_cast<const sockaddr*>(&to), sizeof(to)), 0)
        << std::strerror(errno);
    timeval timeout{0, 200000};
    ::setsockopt(receiver, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    Probe out;
    out.delay.assign(static_cast<std::size_t>(count), -1.0);
    out.sent_at.assign(static_cast<std::size_t>(count), 0.0);
    std::atomic<bool> sent_all{false};
    std::thread receive([&] {
      // Until nothing has come for 200 ms after the last send (longer than any delay here).
      while (true) {
        Datagram d{};
        const ssize_t n = ::recv(receiver, &d, sizeof(d), 0);
        const std::int64_t t = now_ns();
        if (n < 0) {
          if (sent_all.load()) return;
          continue;
        }
        if (n != sizeof(d) || d.sequence >= out.delay.size()) continue;
        out.delay[d.sequence] = static_cast<double>(t - d.sent_ns) * 1e-9;
        out.arrivals.push_back(d.sequence);
      }
    });
    const Clock::time_point begin = Clock::now();
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_until(begin + i * gap);
      Datagram d{static_cast<std::uint32_t>(i), 0};
      out.sent_at[static_cast<std::size_t>(i)] = link_->now();
      d.sent_ns = now_ns();
      ::sendto(sender, &d, sizeof(d), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
    }
    sent_all.store(true);
    receive.join();
    ::close(receiver);
    ::close(sender);
    return out;
  }

  std::string ns_a_, ns_b_;
  std::unique_ptr<PacketLink> link_;
};

std::vector<double> arrived(const Probe& p) {
  std::vector<double> out;
  for (const double d : p.delay) {
    if (d >= 0.0) out.push_back(d);
  }
  return out;
}

TEST_F(PacketLinkTest, DelaysDatagramsByTheSettingInBothDirectionsAndNoneEarly) {
  PacketLinkProfile profile;
  profile.up.delay = profile.down.delay = 0.020;
  profile.up.jitter = profile.down.jitter = 0.002;  // uniform, order kept
  PacketLink& link = start(profile);
  for (const bool up : {true, false}) {
    SCOPED_TRACE(up ? "A -> B" : "B -> A");
    const Probe p =
        up ? probe(ns_a_, ns_b_, kAddrB, 300, 5ms) : probe(ns_b_, ns_a_, kAddrA, 300, 5ms);
    ASSERT_EQ(p.received(), 300U);
    const std::vector<double> d = arrived(p);
    EXPECT_NEAR(percentile(d, 0.50), 0.020, 0.001);
    EXPECT_GE(*std::min_element(d.begin(), d.end()), 0.020 - 0.002);
    EXPECT_LE(percentile(d, 0.99), 0.020 + 0.002 + 0.002);
    EXPECT_TRUE(std::is_sorted(p.arrivals.begin(), p.arrivals.end())) << "order was kept";
  }
  const PacketLinkStatistics s = link.statistics();
  for (const PacketDirectionStatistics* d : {&s.up, &s.down}) {
    EXPECT_GE(d->counters.forwarded, 300U);
    EXPECT_GE(d->written, 300U);
    EXPECT_NEAR(d->delay_p50, 0.020, 0.001);
  }
}

TEST_F(PacketLinkTest, LosesTenPercentOfDatagramsWithinBinomialBounds) {
  PacketLinkProfile profile;
  profile.up.loss = 0.10;
  PacketLink& link = start(profile);
  constexpr int kCount = 2000;
  const Probe p = probe(ns_a_, ns_b_, kAddrB, kCount, 500us);
  const double lost = kCount - static_cast<double>(p.received());
  EXPECT_NEAR(lost, kCount * 0.10, 5.0 * std::sqrt(kCount * 0.10 * 0.90));
  // Every loss is the link's: it forwarded exactly what arrived.
  const PacketCounters c = link.statistics().up.counters;
  EXPECT_EQ(c.forwarded, static_cast<std::uint64_t>(p.received()));
  EXPECT_EQ(c.lost_random + c.forwarded, c.packets_in);
}

TEST_F(PacketLinkTest, AnOutageLosesEverythingSentIntoItAndNothingElse) {
  PacketLinkProfile profile;
  profile.up.delay = 0.005;
  PacketLink& link = start(profile);
  const double begin = link.now() + 0.2;
  const double end = begin + 0.3;
  profile.up.outages = {{begin, end}};
  link.set_profile(profile);
  const Probe p = probe(ns_a_, ns_b_, kAddrB, 140, 5ms);  // 0.7 s
  int inside = 0;
  for (std::size_t i = 0; i < p.delay.size(); ++i) {
    const double t = p.sent_at[i];
    // The link sees a datagram a little after it is sent: 5 ms of margin either side.
    if (t >= begin && t < end - 0.005) {
      EXPECT_LT(p.delay[i], 0.0) << "sent " << t - begin << " s into the outage";
      ++inside;
    } else if (t < begin - 0.005 || t >= end) {
      EXPECT_GE(p.delay[i], 0.0) << "sent " << t - begin << " s from the outage's start";
    }
  }
  EXPECT_GE(inside, 50);
  const PacketCounters c = link.statistics().up.counters;
  EXPECT_GE(c.lost_outage, static_cast<std::uint64_t>(inside));
  EXPECT_LE(c.lost_outage, static_cast<std::uint64_t>(inside) + 2);
}

TEST_F(PacketLinkTest, CarriesATcpStreamIntactThroughDelayAndLoss) {
  PacketLinkProfile profile;
  profile.up.delay = profile.down.delay = 0.005;
  profile.up.loss = profile.down.loss = 0.01;
  start(profile);
  const int listener = socket_in(ns_b_, SOCK_STREAM);
  const int client = socket_in(ns_a_, SOCK_STREAM);
  ASSERT_GE(listener, 0);
  ASSERT_GE(client, 0);
  const sockaddr_in at = endpoint(kAddrB, 6000);
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&at), sizeof(at)), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  std::vector<std::uint8_t> sent(256 * 1024);
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<std::uint8_t>(i * 7 + 3);
  std::vector<std::uint8_t> got;
  std::thread server([&] {
    const int s = ::accept(listener, nullptr, nullptr);
    if (s < 0) return;
    timeval timeout{10, 0};
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    std::vector<std::uint8_t> buffer(65536);
    while (got.size() < sent.size()) {
      const ssize_t n = ::recv(s, buffer.data(), buffer.size(), 0);
      if (n <= 0) break;
      got.insert(got.end(), buffer.begin(), buffer.begin() + n);
    }
    ::close(s);
  });
  ASSERT_EQ(::connect(client, reinterpret_cast<const sockaddr*>(&at), sizeof(at)), 0)
      << std::strerror(errno);
  std::size_t written = 0;
  while (written < sent.size()) {
    const ssize_t n = ::send(client, sent.data() + written, sent.size() - written, MSG_NOSIGNAL);
    ASSERT_GT(n, 0) << std::strerror(errno);
    written += static_cast<std::size_t>(n);
  }
  server.join();
  ::close(client);
  ::close(listener);
  EXPECT_EQ(got, sent);
}

TEST_F(PacketLinkTest, NamesAMissingNamespaceAndHowToMakeIt) {
  PacketLinkConfig config;
  config.ns_a = ns_a_;
  config.ns_b = ns_b_ + "-missing";
  try {
    PacketLink link(config, {});
    FAIL() << "a missing namespace was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("network namespace '" + config.ns_b + "'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ip netns add"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tether::linkem

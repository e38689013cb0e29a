// The telemetry hub of the web console, driven directly with samples (no remote site: the
// site's client points at a closed port, so only its status poll fails): hello, arm and
// site on connect; telemetry decimated to each client's rate, latest only, with forward
// kinematics; a client that never reads does not hold up the publisher or the others.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "tether/local/web/web_protocol.h"
#include "tether/local/web/web_server.h"
#include "web_client.h"

namespace tether::local::web {
namespace {

using testing::json;
using testing::WsClient;
using Clock = std::chrono::steady_clock;

TelemetrySample sample_at(std::uint64_t cycle, std::mt19937& rng) {
  std::uniform_real_distribution<double> joint(-1.0, 1.0);
  TelemetrySample s;
  s.cycle = cycle;
  s.arm_time = static_cast<double>(cycle) * 1e-3;
  s.task_time = s.arm_time;
  s.state = ExecutorState::kRunning;
  s.task_id = 7;
  s.task_name = "";  // no task to fetch from the (absent) site
  for (int i = 0; i < kArmDof; ++i) {
    s.measured_joints[i] = joint(rng);
    s.commanded_joints[i] = s.measured_joints[i];
  }
  s.wrench << 1, 2, 3, 0.1, 0.2, 0.3;
  return s;
}

class TelemetryHub : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientOptions client_options;
    client_options.credentials.insecure = true;
    client_options.deadline = std::chrono::milliseconds(200);
    client_ = std::make_unique<RemoteSiteClient>("127.0.0.1:1", client_options);
    WebServerOptions options;
    options.port = 0;
    options.root = "/nonexistent";
    options.teleop_site = "left";
    options.device = "sim";
    server_ = std::make_unique<WebServer>(
        options, std::vector<WebSite>{{"left", "127.0.0.1:1", "iiwa7", client_.get()}});
  }
  void TearDown() override { server_.reset(); }

  // Publishes samples at about `hz` from a thread of its own until stopped.
  void publish_for(std::chrono::milliseconds duration, double hz) {
    std::mt19937 rng(42);
    const auto end = Clock::now() + duration;
    const auto period = std::chrono::duration<double>(1.0 / hz);
    while (Clock::now() < end) {
      server_->publish_telemetry(0, sample_at(++cycle_, rng));
      std::this_thread::sleep_for(period);
    }
  }

  std::unique_ptr<RemoteSiteClient> client_;
  std::unique_ptr<WebServer> server_;
  std::uint64_t cycle_ = 0;
};

TEST_F(TelemetryHub, HelloArmAndSiteOnConnect) {
  WsClient c(server_->port());
  const json hello = c.next();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["version"], 1);
  EXPECT_EQ(hello["teleop_site"], "left");
  EXPECT_EQ(hello["sites"][0]["name"], "left");
  EXPECT_EQ(hello["telemetry_hz"], kDefaultTelemetryRate);
  const json arm = c.next();
  EXPECT_EQ(arm["type"], "arm");
  EXPECT_EQ(arm["name"], "iiwa7");
  EXPECT_EQ(arm["joints"].size(), 7u);
  EXPECT_EQ(arm["links"].size(), static_cast<std::size_t>(ArmView::kPoints - 1));
  EXPECT_DOUBLE_EQ(arm["links"][0]["radius"].get<double>(), kDefaultLinkRadius);
  EXPECT_LT(arm["joints"][0]["lower"].get<double>(), arm["joints"][0]["upper"].get<double>());
  const json site = c.next();
  EXPECT_EQ(site["type"], "site");
  EXPECT_EQ(site["name"], "left");
  // The status poll of a closed port fails: the site shows as not connected, and why.
  const json polled = c.next("site");
  EXPECT_EQ(polled["connected"], false);
  EXPECT_TRUE(polled["polled_unix_ms"].is_null()) << "no poll has succeeded";
  EXPECT_NE(polled["error"].get<std::string>().find("127.0.0.1:1"), std::string::npos)
      << polled.dump();
}

TEST_F(TelemetryHub, TelemetryCarriesForwardKinematics) {
  WsClient c(server_->port());
  std::mt19937 rng(7);
  const TelemetrySample s = sample_at(123, rng);
  server_->publish_telemetry(0, s);
  const json t = c.next("telemetry");
  EXPECT_EQ(t["site"], "left");
  EXPECT_EQ(t["cycle"], 123);
  EXPECT_EQ(t["state"], "RUNNING");
  ASSERT_EQ(t["points"].size(), static_cast<std::size_t>(ArmView::kPoints));
  // The points are the FK of the measured joints: BASE origin first, flange last.
  const ArmView arm("iiwa7");
  const Frame tool = arm.tool(s.measured_joints);
  EXPECT_EQ(t["points"][0], json::array({0.0, 0.0, 0.0}));
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(t["points"][ArmView::kPoints - 1][k].get<double>(), tool.p[k], 1e-12);
  }
  EXPECT_EQ(t["wrench"][2], 3.0);
  EXPECT_EQ(t["dropped"], 0);
  EXPECT_TRUE(t["clearance"].is_null());  // infinite: no obstacle
  // Without the task and the site's scene: no bounds, no deviation, no named readings.
  EXPECT_TRUE(t["bounds"].is_null());
  EXPECT_TRUE(t["deviation"].is_null());
  EXPECT_EQ(t["aux"], json::array());
  EXPECT_TRUE(t["sample_unix_ms"].is_null());
}

TEST_F(TelemetryHub, ThePredictedArmComesBesideTheMeasuredOneWhenThereIsAModel) {
  WsClient c(server_->port());
  std::mt19937 rng(11);
  const TelemetrySample s = sample_at(200, rng);
  server_->publish_telemetry(0, s);
  EXPECT_TRUE(c.next("telemetry")["predicted"].is_null());
  // The model a link delay ahead: the arm where it will be.
  JointVector ahead = s.measured_joints;
  ahead[1] += 0.3;
  server_->publish_telemetry(0, sample_at(201, rng), &ahead);
  json t = c.next("telemetry");
  while (t["cycle"] != 201) t = c.next("telemetry");
  const json& predicted = t["predicted"];
  ASSERT_FALSE(predicted.is_null()) << t.dump();
  ASSERT_EQ(predicted["points"].size(), static_cast<std::size_t>(ArmView::kPoints));
  EXPECT_DOUBLE_EQ(predicted["q"][1].get<double>(), ahead[1]);
  const Frame tool = ArmView("iiwa7").tool(ahead);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(predicted["points"][ArmView::kPoints - 1][k].get<double>(), tool.p[k], 1e-12);
  }
}

TEST_F(TelemetryHub, SubscribeRefusesRatesOutOfRange) {
  WsClient c(server_->port());
  for (double hz : {0.0, 61.0, -5.0}) {
    const json r = c.request({{"type", "subscribe"}, {"rate_hz", hz}}, 1);
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["error"].get<std::string>().find("rate_hz"), std::string::npos) << r.dump();
    EXPECT_NE(r["error"].get<std::string>().find("[1, 60]"), std::string::npos) << r.dump();
  }
  EXPECT_TRUE(c.request({{"type", "subscribe"}, {"rate_hz", 60}}, 2)["ok"].get<bool>());
  const json bad = c.request({{"type", "subscribe"}}, 3);
  EXPECT_NE(bad["error"].get<std::string>().find("rate_hz: missing"), std::string::npos);
}

TEST_F(TelemetryHub, EachClientGetsItsOwnRate) {
  WsClient slow(server_->port()), fast(server_->port());
  ASSERT_TRUE(slow.request({{"type", "subscribe"}, {"rate_hz", 5}}, 1)["ok"].get<bool>());
  ASSERT_TRUE(fast.request({{"type", "subscribe"}, {"rate_hz", 50}}, 1)["ok"].get<bool>());
  std::atomic<int> slow_count{0}, fast_count{0};
  std::atomic<bool> done{false};
  std::uint64_t last_slow = 0, last_fast = 0;
  bool increasing = true;
  const auto count = [&](WsClient& c, std::atomic<int>& n, std::uint64_t& last) {
    while (!done.load()) {
      const json m = c.next();
      if (m["type"] != "telemetry") continue;
      const auto cycle = m["cycle"].get<std::uint64_t>();
      if (cycle <= last) increasing = false;
      last = cycle;
      ++n;
    }
  };
  std::thread a([&] { count(slow, slow_count, last_slow); });
  std::thread b([&] { count(fast, fast_count, last_fast); });
  const auto t0 = Clock::now();
  publish_for(std::chrono::milliseconds(2000), 1000.0);
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  done.store(true);
  // Samples for 3 s more, so that both readers wake and see `done`.
  std::mt19937 rng(1);
  for (int i = 0; i < 100; ++i) {  // 3 s of samples at most: readers at 5 Hz wake within it
    server_->publish_telemetry(0, sample_at(++cycle_, rng));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  a.join();
  b.join();
  // About 1000 samples a second were published; each client got its own rate (the bounds
  // are loose: a loaded machine delays messages, it never adds any).
  const WebServer::Stats stats = server_->stats();
  EXPECT_GE(stats.published, 1000u);
  EXPECT_LE(slow_count.load(), 5.0 * elapsed + 5) << "slow client over its rate";
  EXPECT_LE(fast_count.load(), 50.0 * elapsed + 5) << "fast client over its rate";
  EXPECT_GE(slow_count.load(), 3);
  EXPECT_GT(fast_count.load(), 3 * slow_count.load()) << "the 50 Hz client is not faster";
  EXPECT_TRUE(increasing) << "a client got an older sample after a newer one";
}

TEST_F(TelemetryHub, ANonReadingClientBlocksNothing) {
  // A client with a tiny receive buffer that never reads, and a reader beside it.
  WsClient stalled(server_->port(), "", 2048);
  WsClient reader(server_->port());
  ASSERT_TRUE(stalled.request({{"type", "subscribe"}, {"rate_hz", 60}}, 1)["ok"].get<bool>());
  ASSERT_TRUE(reader.request({{"type", "subscribe"}, {"rate_hz", 60}}, 1)["ok"].get<bool>());
  std::atomic<int> read{0};
  std::atomic<bool> done{false};
  std::thread r([&] {
    while (!done.load()) {
      if (reader.next()["type"] == "telemetry") ++read;
    }
  });
  // 10 000 samples as fast as the publisher goes, then 2 s more at 1 kHz so that the
  // stalled socket fills.
  std::mt19937 rng(3);
  const auto t0 = Clock::now();
  std::size_t max_queued = 0;
  for (int i = 0; i < 10000; ++i) {
    server_->publish_telemetry(0, sample_at(++cycle_, rng));
    max_queued = std::max(max_queued, server_->stats().queued_bytes);
  }
  const double burst = std::chrono::duration<double>(Clock::now() - t0).count();
  for (int i = 0; i < 2000; ++i) {
    server_->publish_telemetry(0, sample_at(++cycle_, rng));
    max_queued = std::max(max_queued, server_->stats().queued_bytes);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done.store(true);
  for (int i = 0; i < 200 && r.joinable(); ++i) {  // wake the reader
    server_->publish_telemetry(0, sample_at(++cycle_, rng));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (read.load() > 0) break;
  }
  r.join();
  const WebServer::Stats stats = server_->stats();
  std::printf(
      "10000 samples published in %.3f ms (%.2f us each); sent %llu, skipped %llu, "
      "largest queue %zu bytes, reader got %d\n",
      burst * 1e3, burst * 1e6 / 10000, static_cast<unsigned long long>(stats.sent),
      static_cast<unsigned long long>(stats.skipped), max_queued, read.load());
  EXPECT_LT(burst, 5.0) << "publishing waited for a client";
  EXPECT_GT(stats.skipped, 0u) << "the stalled client's socket never filled";
  EXPECT_LE(max_queued, 4u * 4096u) << "messages queued for a client that does not read";
  EXPECT_GE(read.load(), 20) << "the reading client starved beside the stalled one";
  EXPECT_EQ(stats.clients, 2u);
}

}  // namespace
}  // namespace tether::local::web

namespace tether::local::web {
namespace {

// Ten browsers at 30 Hz on one site published at 1 kHz: each gets its rate, and publishing
// stays a copy and an exchange (the figures are printed for docs/performance.md; the bounds are
// loose, a loaded machine only delays messages).
TEST_F(TelemetryHub, TenClientsEachGetTheirRate) {
  constexpr int kClients = 10;
  std::vector<std::unique_ptr<WsClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<WsClient>(server_->port()));
    ASSERT_TRUE(clients.back()->request({{"type", "subscribe"}, {"rate_hz", 30}}, 1)["ok"]);
  }
  std::atomic<bool> done{false};
  std::vector<int> counts(kClients, 0);
  std::vector<std::thread> readers;
  for (int i = 0; i < kClients; ++i) {
    readers.emplace_back([&, i] {
      while (!done.load()) {
        try {
          if (clients[static_cast<std::size_t>(i)]->next()["type"] == "telemetry") {
            ++counts[static_cast<std::size_t>(i)];
          }
        } catch (const std::exception&) {
          return;
        }
      }
    });
  }
  std::mt19937 rng(11);
  double publish_s = 0.0;
  const auto t0 = Clock::now();
  for (int i = 0; i < 3000; ++i) {
    const TelemetrySample s = sample_at(++cycle_, rng);
    const auto p0 = Clock::now();
    server_->publish_telemetry(0, s);
    publish_s += std::chrono::duration<double>(Clock::now() - p0).count();
    std::this_thread::sleep_for(std::chrono::microseconds(1000));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  done.store(true);
  // Wake the readers: each counts at most one message more, then sees `done`.
  for (int i = 0; i < 100; ++i) {
    server_->publish_telemetry(0, sample_at(++cycle_, rng));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  for (std::thread& t : readers) t.join();
  int least = counts[0], most = counts[0];
  for (int n : counts) {
    least = std::min(least, n);
    most = std::max(most, n);
  }
  const WebServer::Stats stats = server_->stats();
  std::printf(
      "%d clients at 30 Hz, %.2f s at ~%.0f Hz published: publish %.2f us each on "
      "average; each client got %d..%d telemetry messages in %.2f s (%.1f..%.1f Hz); "
      "dropped %llu\n",
      kClients, elapsed, 3000 / elapsed, publish_s / 3000 * 1e6, least, most, elapsed,
      least / elapsed, most / elapsed, static_cast<unsigned long long>(stats.skipped));
  for (int n : counts) {
    EXPECT_GE(n, static_cast<int>(10.0 * elapsed)) << "a client far below its 30 Hz";
    EXPECT_LE(n, static_cast<int>(30.0 * elapsed) + 5) << "a client above its rate";
  }
  EXPECT_LT(publish_s / 3000, 1e-3) << "publishing took more than 1 ms a sample";
}

}  // namespace
}  // namespace tether::local::web

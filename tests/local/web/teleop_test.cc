// Teleoperation from the browser: the WebGamepad hand-off and the `--device web` hand
// controller, and over a real WebSocket the enable released — with a `teleop` message
// saying why — when heartbeats stop, the page hides, the socket closes, STOP is pressed or
// the teleoperated site stops by itself.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tether/local/web/web_gamepad.h"
#include "tether/local/web/web_server.h"
#include "web_client.h"

namespace tether::local::web {
namespace {

using testing::json;
using testing::WsClient;

constexpr std::int64_t kMs = 1000000;  // [ns]

TEST(WebGamepad, EnabledOnlyWhileHeldSwitchedAndFresh) {
  WebGamepad g;
  const std::int64_t t = WebGamepad::now_ns();
  EXPECT_FALSE(g.enabled(t));
  g.set({1, 0, 0, 0, 0, 0}, true);  // a reading without holding teleoperation
  EXPECT_FALSE(g.enabled(WebGamepad::now_ns()));
  g.hold(5);
  EXPECT_FALSE(g.enabled(WebGamepad::now_ns())) << "a new holder starts with the switch off";
  g.set({2, -0.5, 0, 0, 0, 0.25}, true);
  const std::int64_t beat = g.last_heartbeat_ns();
  EXPECT_TRUE(g.enabled(beat + 249 * kMs));
  EXPECT_FALSE(g.enabled(beat + 250 * kMs)) << "heartbeat timeout is 250 ms";
  EXPECT_EQ(g.axes()[0], 1.0) << "axes are clamped to [-1, 1]";
  EXPECT_EQ(g.axes()[1], -0.5);
  EXPECT_FALSE(g.release(6)) << "only the holder (or anyone, 0) releases";
  EXPECT_TRUE(g.release(5));
  EXPECT_FALSE(g.enabled(WebGamepad::now_ns()));
  EXPECT_EQ(g.axes()[0], 0.0);
}

TEST(WebHandController, MovesOnlyWhileEnabled) {
  auto g = std::make_shared<WebGamepad>();
  WebHandController device(g, WebGamepadConfig{});
  g->hold(1);
  g->set({1, 0, 0, 0, 0, -1}, true);
  DeviceSample s = device.sample(0.0);
  EXPECT_TRUE(s.deadman);
  s = device.sample(0.01);  // 10 ms at full deflection
  EXPECT_TRUE(s.deadman);
  EXPECT_NEAR(s.increment_base[0], 0.05 * 0.01, 1e-12);
  EXPECT_NEAR(s.increment_base[5], -0.5 * 0.01, 1e-12);
  g->release(1);
  s = device.sample(0.02);
  EXPECT_FALSE(s.deadman);
  s = device.sample(0.03);
  EXPECT_FALSE(s.deadman);
  EXPECT_EQ(s.increment_base.norm(), 0.0) << "moved without the enable";
  EXPECT_THROW(WebHandController(g, WebGamepadConfig{0.0, 0.5}), std::invalid_argument);
}

class WebTeleop : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientOptions client_options;
    client_options.credentials.insecure = true;
    client_options.deadline = std::chrono::milliseconds(200);
    client_ = std::make_unique<RemoteSiteClient>("127.0.0.1:1", client_options);
    gamepad_ = std::make_shared<WebGamepad>();
    WebServerOptions options;
    options.port = 0;
    options.root = "/nonexistent";
    options.teleop_site = "left";
    options.device = "web";
    options.gamepad = gamepad_;
    server_ = std::make_unique<WebServer>(
        options, std::vector<WebSite>{{"left", "127.0.0.1:1", "iiwa7", client_.get()}});
  }

  // Takes teleoperation and holds the switch; true once the device is enabled.
  bool enable(WsClient& c, int id) {
    const json r = c.request({{"type", "teleop"}, {"site", "left"}, {"enable", true}}, id);
    if (!r["ok"].get<bool>()) return false;
    c.send({{"type", "gamepad"}, {"seq", 1}, {"axes", {0.5, 0, 0, 0, 0, 0}}, {"enable", true}});
    c.send({{"type", "heartbeat"}, {"seq", 2}});
    for (int i = 0; i < 200; ++i) {  // the server thread applies it within a moment
      if (gamepad_->enabled(WebGamepad::now_ns())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      c.send({{"type", "heartbeat"}, {"seq", 3 + i}});
    }
    return false;
  }

  // The next `teleop` message that releases the enable.
  static json released(WsClient& c) {
    for (;;) {
      json m = c.next("teleop");
      if (!m["enabled"].get<bool>()) return m;
    }
  }

  std::unique_ptr<RemoteSiteClient> client_;
  std::shared_ptr<WebGamepad> gamepad_;
  std::unique_ptr<WebServer> server_;
};

TEST_F(WebTeleop, HeartbeatLossReleasesTheEnable) {
  WsClient c(server_->port());
  ASSERT_TRUE(enable(c, 1));
  // No heartbeat from here on.
  const json m = released(c);
  EXPECT_EQ(m["reason"], "heartbeat");
  EXPECT_EQ(m["site"], "left");
  EXPECT_FALSE(gamepad_->enabled(WebGamepad::now_ns()));
  EXPECT_EQ(gamepad_->holder(), 0u);
  // Readings after the release move nothing.
  c.send({{"type", "gamepad"}, {"seq", 9}, {"axes", {1, 0, 0, 0, 0, 0}}, {"enable", true}});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(gamepad_->enabled(WebGamepad::now_ns()));
}

TEST_F(WebTeleop, HiddenPageReleasesTheEnable) {
  WsClient c(server_->port());
  ASSERT_TRUE(enable(c, 1));
  c.send({{"type", "visibility"}, {"hidden", true}});
  EXPECT_EQ(released(c)["reason"], "page hidden");
  EXPECT_FALSE(gamepad_->enabled(WebGamepad::now_ns()));
}

TEST_F(WebTeleop, ClosedSocketReleasesTheEnable) {
  WsClient watcher(server_->port());
  {
    WsClient c(server_->port());
    ASSERT_TRUE(enable(c, 1));
    // A second browser cannot take it meanwhile.
    const json r = watcher.request({{"type", "teleop"}, {"site", "left"}, {"enable", true}}, 1);
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["error"].get<std::string>().find("another browser session"), std::string::npos);
    c.close();
  }
  EXPECT_EQ(released(watcher)["reason"], "socket closed");
  EXPECT_FALSE(gamepad_->enabled(WebGamepad::now_ns()));
}

TEST_F(WebTeleop, StopReleasesTheEnable) {
  WsClient c(server_->port());
  ASSERT_TRUE(enable(c, 1));
  c.send({{"type", "stop"}, {"id", 2}, {"site", "left"}});
  EXPECT_EQ(released(c)["reason"], "stop");
  // The site is unreachable here: the stop's reply says so.
  const json r = c.next("reply", 2);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["error"].get<std::string>().find("127.0.0.1:1"), std::string::npos) << r.dump();
}

// A sample of the teleoperated site in `state`, with `breach` (none when empty).
TelemetrySample site_sample(std::uint64_t cycle, ExecutorState state, BreachCause cause = {},
                            const std::string& detail = "") {
  TelemetrySample s;
  s.cycle = cycle;
  s.state = state;
  s.breach.cause = cause;
  s.breach.description = detail;
  return s;
}

// The site stops by itself while the browser teleoperates: the enable goes at once with the
// site's reason, not only when the operator presses Esc.
TEST_F(WebTeleop, ASitesOwnStopReleasesTheEnableWithTheSitesReason) {
  WsClient c(server_->port());
  ASSERT_TRUE(enable(c, 1));
  server_->publish_telemetry(0, site_sample(1, ExecutorState::kRunning));
  while (c.next("telemetry")["state"] != "RUNNING") {
  }
  c.send({{"type", "heartbeat"}, {"seq", 100}});
  EXPECT_NE(gamepad_->holder(), 0u);
  const std::string detail = "torque 61.2 N·m exceeds the bound 60 N·m at t = 2.000 s";
  server_->publish_telemetry(
      0, site_sample(2, ExecutorState::kStopping, BreachCause::kTorque, detail));
  const json m = released(c);
  EXPECT_EQ(m["reason"], "the site stopped: torque: " + detail);
  EXPECT_EQ(m["site"], "left");
  EXPECT_EQ(gamepad_->holder(), 0u);
  EXPECT_FALSE(gamepad_->enabled(WebGamepad::now_ns()));
}

TEST_F(WebTeleop, ASiteLeavingRunningWithoutABreachReleasesTheEnable) {
  WsClient c(server_->port());
  ASSERT_TRUE(enable(c, 1));
  server_->publish_telemetry(0, site_sample(1, ExecutorState::kRunning));
  while (c.next("telemetry")["state"] != "RUNNING") {
  }
  c.send({{"type", "heartbeat"}, {"seq", 100}});
  server_->publish_telemetry(0, site_sample(2, ExecutorState::kStopped));
  EXPECT_EQ(released(c)["reason"], "the site stopped");
  EXPECT_EQ(gamepad_->holder(), 0u);
}

TEST_F(WebTeleop, WrongSiteAndBadAxesAreRefused) {
  WsClient c(server_->port());
  json r = c.request({{"type", "teleop"}, {"site", "right"}, {"enable", true}}, 1);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["error"].get<std::string>().find("site = \"right\""), std::string::npos);
  ASSERT_TRUE(enable(c, 2));
  c.send({{"type", "gamepad"}, {"seq", 5}, {"axes", {0, 0, "x", 0, 0, 0}}, {"enable", true}});
  r = c.next("reply");
  EXPECT_NE(r["error"].get<std::string>().find("axes[2]"), std::string::npos) << r.dump();
}

TEST_F(WebTeleop, TheModePickedInTheBrowserReachesTheHandController) {
  WsClient c(server_->port());
  EXPECT_FALSE(gamepad_->requested_mode().has_value());
  json r = c.request({{"type", "teleop"}, {"site", "left"}, {"enable", true}, {"mode", "up"}}, 1);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"], "mode = \"up\": expected tool, world or camera");
  EXPECT_EQ(gamepad_->holder(), 0u);
  // Every browser hears of the new holder and its mode before the reply comes.
  c.send({{"type", "teleop"}, {"id", 2}, {"site", "left"}, {"enable", true}, {"mode", "world"}});
  EXPECT_EQ(c.next("teleop")["mode"], "world");
  r = c.next("reply", 2);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(gamepad_->requested_mode(), TeleopMode::kWorld);
  WebHandController device(gamepad_, WebGamepadConfig{});
  EXPECT_EQ(device.requested_mode(), TeleopMode::kWorld);
}

TEST(WebTeleopWithoutWebDevice, TeleopRequestNamesTheDevice) {
  ClientOptions client_options;
  client_options.credentials.insecure = true;
  RemoteSiteClient client("127.0.0.1:1", client_options);
  WebServerOptions options;
  options.port = 0;
  options.teleop_site = "left";
  options.device = "sim";
  WebServer server(options, {{"left", "127.0.0.1:1", "iiwa7", &client}});
  WsClient c(server.port());
  const json r = c.request({{"type", "teleop"}, {"site", "left"}, {"enable", true}}, 1);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["error"].get<std::string>().find("'sim'"), std::string::npos) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("--device web"), std::string::npos);
}

}  // namespace
}  // namespace tether::local::web

// Console logins against the real pair over mutual TLS: tether-ground --web with HTTPS
// (--web-tls) and a users file (--web-users, two people of the test PKI, bob and admin) and
// --device web. Anonymous and cross-site calls are refused and move nothing; each person's
// requests reach the site under their own certificate, so its lease and audit trail name
// them; the browser's teleoperation needs the lease and runs under the person; logging out
// closes the person's sockets.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tether/local/web/web_auth.h"
#include "web_client.h"
#include "web_pair.h"

namespace tether::local::web {
namespace {

using testing::Endpoint;
using testing::json;
using testing::WsClient;
using testing::WsOptions;

constexpr const char* kCa = TETHER_TEST_PKI "/ca.pem";

class WebLogin : public ::testing::Test {
 protected:
  void SetUp() override {
    // Few iterations: the hash is checked the same way, the test just does not wait.
    const std::string users = TETHER_TEST_PKI "/web-users-" + std::to_string(::getpid());
    std::ofstream(users) << "# name hash certificate key\n"
                         << "bob " << hash_password("bob's secret", 10'000)
                         << " people/bob.pem people/bob.key\n"
                         << "admin " << hash_password("admin's secret", 10'000)
                         << " people/admin.pem people/admin.key\n";
    users_ = users;
    const std::string tls =
        std::string(TETHER_TEST_PKI) + "/sites/remote.pem," + TETHER_TEST_PKI + "/sites/remote.key";
    const std::string failed =
        pair_.start("web_login", {"--device", "web", "--web-tls", tls, "--web-users", users});
    ASSERT_TRUE(failed.empty()) << failed;
    ASSERT_EQ(pair_.url().substr(0, 8), "https://");
    to_ = Endpoint{pair_.web_port(), kCa};
  }
  void TearDown() override { std::remove(users_.c_str()); }

  std::string origin() const { return "https://127.0.0.1:" + std::to_string(to_.port); }

  struct Login {
    std::string cookie, csrf;
  };
  Login login(const std::string& user, const std::string& password) {
    const auto r = testing::http_request(
        to_, "POST", "/api/login", json{{"user", user}, {"password", password}}.dump(),
        {{"Content-Type", "application/json"}, {"Origin", origin()}});
    EXPECT_EQ(r.status, 200u) << r.body;
    return {testing::cookie_pair(r.set_cookie), json::parse(r.body).value("csrf", "")};
  }
  std::unique_ptr<WsClient> socket(const Login& l) {
    return std::make_unique<WsClient>(to_,
                                      WsOptions{origin(), 0, "/ws?csrf=" + l.csrf, l.cookie, ""});
  }

  testing::WebPair pair_;
  Endpoint to_;
  std::string users_;
};

TEST_F(WebLogin, AnonymousAndCrossSiteCallsAreRefusedAndMoveNothing) {
  // HTTPS only: a plain HTTP request gets no answer.
  EXPECT_THROW(testing::http_get(to_.port, "/api/health"), std::exception);
  auto r = testing::http_request(to_, "GET", "/api/session");
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(json::parse(r.body)["logins"], true);
  EXPECT_EQ(r.header("Strict-Transport-Security"), "max-age=31536000");
  EXPECT_EQ(r.header("X-Frame-Options"), "DENY");
  // No socket without a login.
  EXPECT_THROW(WsClient(to_, WsOptions{origin(), 0, "/ws", "", ""}), std::exception);
  // A wrong password, an unknown name, a form post and another site's page.
  const auto post = [&](const json& body, const std::string& type, const std::string& from) {
    return testing::http_request(to_, "POST", "/api/login", body.dump(),
                                 {{"Content-Type", type}, {"Origin", from}});
  };
  r = post({{"user", "bob"}, {"password", "guess"}}, "application/json", origin());
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(json::parse(r.body)["error"], "wrong user or password");
  r = post({{"user", "mallory"}, {"password", "guess"}}, "application/json", origin());
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(json::parse(r.body)["error"], "wrong user or password");
  r = post({{"user", "bob"}, {"password", "bob's secret"}}, "application/x-www-form-urlencoded",
           origin());
  EXPECT_EQ(r.status, 415u);
  r = post({{"user", "bob"}, {"password", "bob's secret"}}, "application/json",
           "https://evil.example");
  EXPECT_EQ(r.status, 403u);
  // A login's cookie without its CSRF token, or from another site's page, opens no socket.
  const Login bob = login("bob", "bob's secret");
  EXPECT_NE(bob.cookie.find("tether_session="), std::string::npos);
  EXPECT_THROW(WsClient(to_, WsOptions{origin(), 0, "/ws", bob.cookie, ""}), std::exception);
  EXPECT_THROW(
      WsClient(to_, WsOptions{"https://evil.example", 0, "/ws?csrf=" + bob.csrf, bob.cookie, ""}),
      std::exception);
  // Through all that the site was not touched: nobody holds its lease, the arm is idle.
  auto ws = socket(bob);
  const json site = ws->next("site");
  EXPECT_EQ(site["lease_holder"], "");
  EXPECT_EQ(site["state"], "IDLE");
}

TEST_F(WebLogin, EachPersonCallsTheSiteUnderTheirOwnName) {
  const auto r_ = testing::http_request(
      to_, "POST", "/api/login", json{{"user", "bob"}, {"password", "bob's secret"}}.dump(),
      {{"Content-Type", "application/json"}, {"Origin", origin()}});
  ASSERT_EQ(r_.status, 200u);
  for (const char* attribute : {"HttpOnly", "SameSite=Strict", "Secure", "Path=/"}) {
    EXPECT_NE(r_.set_cookie.find(attribute), std::string::npos) << r_.set_cookie;
  }
  const Login bob{testing::cookie_pair(r_.set_cookie), json::parse(r_.body)["csrf"]};
  auto b = socket(bob);
  const json hello = b->next("hello");
  EXPECT_EQ(hello["operator"], "bob");
  EXPECT_EQ(hello["logins"], true);
  json reply = b->request({{"type", "lease"}, {"site", "door"}, {"acquire", true}}, 1);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_EQ(reply["lease_holder"], "bob");

  const Login admin = login("admin", "admin's secret");
  auto a = socket(admin);
  EXPECT_EQ(a->next("hello")["operator"], "admin");
  reply = a->request({{"type", "start"}, {"site", "door"}, {"task", "door"}}, 1);
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_EQ(reply["code"], "FAILED_PRECONDITION") << reply.dump();
  EXPECT_NE(reply["error"].get<std::string>().find("bob"), std::string::npos) << reply.dump();
  // STOP is anyone's.
  reply = a->request({{"type", "stop"}, {"site", "door"}}, 2);
  EXPECT_TRUE(reply["ok"].get<bool>()) << reply.dump();

  reply = b->request({{"type", "audit"}, {"site", "door"}, {"first", 0}, {"max", 1000}}, 2);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  bool bob_leased = false, admin_stopped = false;
  for (const auto& line : reply["lines"]) {
    const json record = json::parse(line.get<std::string>());
    const std::string text = record.dump();
    if (text.find("\"bob\"") != std::string::npos && text.find("ontrol") != std::string::npos) {
      bob_leased = true;
    }
    if (text.find("\"admin\"") != std::string::npos && text.find("top") != std::string::npos) {
      admin_stopped = true;
    }
  }
  EXPECT_TRUE(bob_leased) << reply["lines"].dump();
  EXPECT_TRUE(admin_stopped) << reply["lines"].dump();
}

TEST_F(WebLogin, TeleoperationNeedsTheLeaseRunsUnderThePersonAndEndsAtLogout) {
  const Login bob = login("bob", "bob's secret");
  auto b = socket(bob);
  json reply = b->request({{"type", "teleop"}, {"site", "door"}, {"enable", true}}, 1);
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_NE(reply["error"].get<std::string>().find("needs its control lease"), std::string::npos)
      << reply.dump();
  reply = b->request({{"type", "lease"}, {"site", "door"}, {"acquire", true}}, 2);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  // The ground learns the holder from its next status poll (once a second).
  for (;;) {
    const json site = b->next("site");
    if (site["lease_holder"] == "bob") break;
  }
  // bob's shared-control door task, started under his name.
  reply = b->request(
      {{"type", "upload"},
       {"site", "door"},
       {"task", "door_shared"},
       {"replace", true},
       {"text", testing::read_text(TETHER_SOURCE_DIR "/remote_site/tasks/door_shared.textproto")}},
      3);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  reply = b->request({{"type", "teleop"}, {"site", "door"}, {"enable", true}}, 4);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_FALSE(testing::wait_for_line(pair_.ground(), pair_.ground_log(),
                                      std::regex("\\] (bob) teleoperates"),
                                      std::chrono::seconds(20))
                   .empty())
      << testing::read_text(pair_.ground_log());
  reply = b->request({{"type", "start"}, {"site", "door"}, {"task", "door_shared"}}, 5);
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  // A second of the gamepad pushed forward, with its switch on: the site applies bob's
  // increments (his stream, under his certificate, is the lease holder's).
  for (int i = 0; i < 50; ++i) {
    b->send({{"type", "gamepad"}, {"seq", i}, {"axes", {0, 0.5, 0, 0, 0, 0}}, {"enable", true}});
    b->send({{"type", "heartbeat"}, {"seq", i}});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  const auto r = testing::http_request(
      to_, "POST", "/api/logout", "",
      {{"Cookie", bob.cookie}, {"X-CSRF-Token", bob.csrf}, {"Origin", origin()}});
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.set_cookie.find("Max-Age=0"), std::string::npos);
  // The socket closes and the teleoperation ends with it.
  EXPECT_THROW(for (;;) b->next(), std::exception);
  const std::string applied = testing::wait_for_line(
      pair_.ground(), pair_.ground_log(),
      std::regex("bob's teleoperation ended: [0-9]+ increments sent, ([0-9]+) applied"),
      std::chrono::seconds(20));
  ASSERT_FALSE(applied.empty()) << testing::read_text(pair_.ground_log());
  EXPECT_GT(std::stoi(applied), 100) << testing::read_text(pair_.ground_log());
  EXPECT_EQ(testing::http_request(to_, "GET", "/api/session", "", {{"Cookie", bob.cookie}}).status,
            401u);
}

}  // namespace
}  // namespace tether::local::web

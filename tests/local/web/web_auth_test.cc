// Console logins' parts: the users file (every bad line named with its field and value),
// PBKDF2 password hashes, the login table's expiry and lockout, and cookies.
#include "tether/local/web/web_auth.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace tether::local::web {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_web_users(text, "/etc/tether", "users.txt");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(WebUsers, ALineNamesThePersonTheirHashAndTheirFiles) {
  const std::string hash = hash_password("secret", kMinPasswordIterations);
  const auto users = parse_web_users(
      "# who may log in\n\nalice " + hash + " people/alice.pem /keys/alice.key  # ops\n",
      "/etc/tether", "users.txt");
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(users[0].name, "alice");
  EXPECT_EQ(users[0].password_hash, hash);
  EXPECT_EQ(users[0].certificate, "/etc/tether/people/alice.pem");
  EXPECT_EQ(users[0].key, "/keys/alice.key");
}

TEST(WebUsers, EveryBadLineIsRefusedNamingItsFieldAndValue) {
  const std::string hash = hash_password("secret", kMinPasswordIterations);
  EXPECT_EQ(error_of("alice " + hash + " a.pem\n"),
            "users.txt:1: 3 fields: expected NAME PASSWORD-HASH CERTIFICATE KEY");
  EXPECT_NE(error_of("-alice " + hash + " a.pem a.key\n").find("users.txt:1: name '-alice'"),
            std::string::npos);
  EXPECT_EQ(error_of("a " + hash + " a.pem a.key\na " + hash + " b.pem b.key\n"),
            "users.txt:2: name 'a': listed twice");
  EXPECT_NE(error_of("a md5$x a.pem a.key").find("expected pbkdf2-sha256$ITERATIONS$SALT$HASH"),
            std::string::npos);
  EXPECT_NE(error_of("a pbkdf2-sha256$99$AAAAAAAAAAAAAAAAAAAAAA==$x a.pem a.key")
                .find("iterations 99: expected [10000, 10000000]"),
            std::string::npos);
  EXPECT_NE(error_of("a pbkdf2-sha256$10000$short$AAAA a.pem a.key")
                .find("salt: expected 16 bytes in base64"),
            std::string::npos);
  EXPECT_EQ(error_of("# nobody\n"),
            "users.txt: no users: expected a line NAME PASSWORD-HASH CERTIFICATE KEY per person");
}

TEST(WebPasswords, AHashMatchesItsPasswordOnlyAndIsSaltedAfresh) {
  const std::string a = hash_password("correct horse", kMinPasswordIterations);
  const std::string b = hash_password("correct horse", kMinPasswordIterations);
  EXPECT_NE(a, b);  // a new salt each time
  EXPECT_TRUE(verify_password("correct horse", a));
  EXPECT_TRUE(verify_password("correct horse", b));
  EXPECT_FALSE(verify_password("correct horsE", a));
  EXPECT_FALSE(verify_password("", a));
  EXPECT_FALSE(verify_password("correct horse", a.substr(0, a.size() - 4)));
  EXPECT_FALSE(verify_password("correct horse", "plain text"));
  EXPECT_THROW(hash_password("", kMinPasswordIterations), std::invalid_argument);
  EXPECT_THROW(hash_password("x", kMinPasswordIterations - 1), std::invalid_argument);
}

TEST(WebLogins, SessionsExpireWhenIdleOrOldAndCloseOnLogout) {
  LoginTable table;
  const auto t0 = LoginTable::Clock::now();
  const auto a = table.open("alice", t0);
  EXPECT_EQ(a.token.size(), 64u);
  EXPECT_EQ(a.csrf.size(), 64u);
  EXPECT_NE(a.token, a.csrf);
  ASSERT_TRUE(table.find(a.token, t0 + std::chrono::minutes(29)));
  // Each use restarts the idle timer, up to the lifetime.
  EXPECT_TRUE(table.find(a.token, t0 + std::chrono::minutes(58)));
  EXPECT_FALSE(table.find(a.token, t0 + std::chrono::minutes(58 + 31)));
  auto t = t0;
  const auto b = table.open("bob", t);
  for (int i = 0; i < 24; ++i) {
    t += std::chrono::minutes(29);
    ASSERT_TRUE(table.find(b.token, t)) << i;
  }
  EXPECT_FALSE(table.find(b.token, t + std::chrono::minutes(29)));  // 12 h are up
  const auto c = table.open("carol", t);
  EXPECT_TRUE(table.close(c.token));
  EXPECT_FALSE(table.find(c.token, t));
  EXPECT_FALSE(table.close(c.token));
  EXPECT_FALSE(table.find("", t));
  std::set<std::string> tokens;
  for (int i = 0; i < 100; ++i) tokens.insert(random_token());
  EXPECT_EQ(tokens.size(), 100u);
}

TEST(WebLogins, FiveFailuresLockTheNameForAMinute) {
  LoginTable table;
  const auto t0 = LoginTable::Clock::now();
  for (int i = 0; i < 4; ++i) table.failed("alice", t0);
  EXPECT_EQ(table.locked_for("alice", t0), 0);
  table.failed("alice", t0);
  EXPECT_EQ(table.locked_for("alice", t0), 60);
  EXPECT_EQ(table.locked_for("alice", t0 + std::chrono::seconds(59)), 1);
  EXPECT_EQ(table.locked_for("alice", t0 + std::chrono::seconds(60)), 0);
  EXPECT_EQ(table.locked_for("bob", t0), 0);
  for (int i = 0; i < 4; ++i) table.failed("bob", t0);
  table.succeeded("bob");
  table.failed("bob", t0);
  EXPECT_EQ(table.locked_for("bob", t0), 0);  // a success clears the count
}

TEST(WebLogins, CookieValuesAreFoundAmongOthers) {
  EXPECT_EQ(cookie_value("a=1; tether_session=ab12; b=2", "tether_session"), "ab12");
  EXPECT_EQ(cookie_value("tether_session=x", "tether_session"), "x");
  EXPECT_EQ(cookie_value("xtether_session=x; a=1", "tether_session"), "");
  EXPECT_EQ(cookie_value("", "tether_session"), "");
}

}  // namespace
}  // namespace tether::local::web

// The console's requests that need no site, over a real WebSocket (the site's client points
// at a closed port): the shipped task library, a task command's set built without uploading
// it, and task texts that do not parse, refused with their line and column.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tether/local/web/web_server.h"
#include "web_client.h"

namespace tether::local::web {
namespace {

using testing::json;
using testing::WsClient;

class WebRequests : public ::testing::Test {
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

  std::unique_ptr<RemoteSiteClient> client_;
  std::unique_ptr<WebServer> server_;
};

TEST_F(WebRequests, TheLibraryListsTheShippedTasks) {
  WsClient c(server_->port());
  const json r = c.request({{"type", "library"}}, 1);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  bool door = false;
  for (const json& t : r["tasks"]) {
    if (t["name"] != "door_shared") continue;
    door = true;
    EXPECT_EQ(t["file"], "door_shared.textproto");
    EXPECT_EQ(t["scene"], "door");
    EXPECT_NE(t["summary"].get<std::string>().find("1 ms: "), std::string::npos) << t.dump();
    EXPECT_NE(t["text"].get<std::string>().find("teleoperation"), std::string::npos);
  }
  EXPECT_TRUE(door) << r.dump();
}

TEST_F(WebRequests, ACommandBuildsItsSetWithoutUploadingIt) {
  WsClient c(server_->port());
  const json r = c.request({{"type", "command"},
                            {"command", "open-door"},
                            {"site", "left"},
                            {"arguments", {{"mode", "spring"}, {"angle", 60}}}},
                           1);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["name"], "open-door_spring_angle60");
  EXPECT_EQ(r["scene"], "door");
  EXPECT_EQ(r["summary"], "1 ms: spring trajectory, force control");
  EXPECT_NE(r["text"].get<std::string>().find("name: \"open-door_spring_angle60\""),
            std::string::npos);
  // The text validates as the console's own editor would take it.
  const json v = c.request({{"type", "validate"}, {"text", r["text"]}, {"preview", false}}, 2);
  EXPECT_TRUE(v["ok"].get<bool>()) << v.dump();
}

TEST_F(WebRequests, ACommandsBadArgumentIsRefusedAtItsField) {
  WsClient c(server_->port());
  json r = c.request({{"type", "command"},
                      {"command", "open-door"},
                      {"arguments", {{"mode", "spring"}, {"angle", "120"}}}},
                     1);
  ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
  ASSERT_EQ(r["errors"].size(), 1u) << r.dump();
  EXPECT_EQ(r["errors"][0]["field"], "arguments.angle");
  EXPECT_NE(r["error"].get<std::string>().find("--angle = 120"), std::string::npos) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("[0, 90] deg"), std::string::npos) << r.dump();

  r = c.request({{"type", "command"}, {"command", "fly"}}, 2);
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["error"].get<std::string>().find("command = \"fly\""), std::string::npos);
  EXPECT_NE(r["error"].get<std::string>().find("open-door"), std::string::npos) << r.dump();
  r = c.request({{"type", "command"}, {"command", "open-door"}, {"arguments", {{"angle", {1}}}}},
                3);
  ASSERT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["error"].get<std::string>().find("arguments.angle = [1]"), std::string::npos)
      << r.dump();
}

// The editor marks the line: validate, upload and diff place a text that does not parse.
TEST_F(WebRequests, ATextThatDoesNotParseIsRefusedWithItsLineAndColumn) {
  WsClient c(server_->port());
  const std::string text = "name: \"x\"\nimpedance {\n  mass { bogus: 3 }\n}\n";
  int id = 0;
  for (const json& request :
       {json{{"type", "validate"}, {"text", text}},
        json{{"type", "upload"}, {"site", "left"}, {"task", "x"}, {"text", text}},
        json{{"type", "diff"}, {"site", "left"}, {"task", "x"}, {"text", text}}}) {
    const json r = c.request(request, ++id);
    ASSERT_FALSE(r["ok"].get<bool>()) << r.dump();
    ASSERT_EQ(r["errors"].size(), 1u) << r.dump();
    EXPECT_EQ(r["errors"][0]["line"], 3) << request["type"] << ": " << r.dump();
    EXPECT_EQ(r["errors"][0]["column"], 10) << request["type"] << ": " << r.dump();
  }
}

}  // namespace
}  // namespace tether::local::web

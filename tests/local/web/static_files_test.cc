// The console's HTTP side: MIME types, request targets mapped under the root with traversal
// refused, and a real WebServer serving a folder of files, /api/health and the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "tether/local/web/web_protocol.h"
#include "tether/local/web/web_server.h"
#include "web_client.h"

namespace tether::local::web {
namespace {

namespace fs = std::filesystem;

TEST(WebStaticFiles, MimeTypesOfABuiltFrontEnd) {
  EXPECT_EQ(mime_type("/x/index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(mime_type("assets/index-3f2a.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(mime_type("assets/index.CSS"), "text/css; charset=utf-8");
  EXPECT_EQ(mime_type("a.svg"), "image/svg+xml");
  EXPECT_EQ(mime_type("a.png"), "image/png");
  EXPECT_EQ(mime_type("a.woff2"), "font/woff2");
  EXPECT_EQ(mime_type("a.wasm"), "application/wasm");
  EXPECT_EQ(mime_type("a.js.map"), "application/json");
  EXPECT_EQ(mime_type("noextension"), "application/octet-stream");
}

TEST(WebStaticFiles, TargetsMapUnderTheRoot) {
  const fs::path root = "/srv/web";
  EXPECT_EQ(static_file_path(root, "/"), root / "index.html");
  EXPECT_EQ(static_file_path(root, "/assets/a.js?v=3#x"), root / "assets" / "a.js");
  EXPECT_EQ(static_file_path(root, "/a%20b.css"), root / "a b.css");
}

TEST(WebStaticFiles, TraversalIsRefused) {
  const fs::path root = "/srv/web";
  for (const char* target :
       {"/../etc/passwd", "/assets/../../etc/passwd", "/%2e%2e/etc/passwd", "/%2E%2E%2Fsecret",
        "/..", "/./index.html", "//etc/passwd", "/a\\..\\b", "relative.html", "", "/a%00.html",
        "/bad%zz", "/trailing%2"}) {
    EXPECT_FALSE(static_file_path(root, target).has_value()) << target;
  }
}

class WebServerStatic : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tether_web_static_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "root" / "assets");
    std::ofstream(dir_ / "root" / "index.html") << "<!doctype html><title>tether</title>";
    std::ofstream(dir_ / "root" / "assets" / "app.js") << "console.log('tether');";
    std::ofstream(dir_ / "root" / "assets" / "app.css") << "body{}";
    std::ofstream(dir_ / "secret.txt") << "outside the root";
    WebServerOptions options;
    options.port = 0;
    options.root = (dir_ / "root").string();
    server_ = std::make_unique<WebServer>(options, std::vector<WebSite>{});
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::unique_ptr<WebServer> server_;
};

TEST_F(WebServerStatic, ServesFilesWithTheirTypes) {
  ASSERT_GT(server_->port(), 0);
  EXPECT_EQ(server_->url(), "http://127.0.0.1:" + std::to_string(server_->port()) + "/");
  auto r = testing::http_get(server_->port(), "/");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, "<!doctype html><title>tether</title>");
  r = testing::http_get(server_->port(), "/assets/app.js");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.body, "console.log('tether');");
  r = testing::http_get(server_->port(), "/assets/app.css");
  EXPECT_EQ(r.content_type, "text/css; charset=utf-8");
  r = testing::http_get(server_->port(), "/assets/missing.js");
  EXPECT_EQ(r.status, 404u);
}

TEST_F(WebServerStatic, HealthAnswers) {
  const auto r = testing::http_get(server_->port(), "/api/health");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, "{\"ok\":true}");
}

TEST_F(WebServerStatic, TraversalOverHttpIsRefused) {
  for (const char* target : {"/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt",
                             "/assets/%2E%2E/%2E%2E/secret.txt"}) {
    const auto r = testing::http_get(server_->port(), target);
    EXPECT_EQ(r.status, 400u) << target;
    EXPECT_EQ(r.body.find("outside the root"), std::string::npos) << target;
  }
}

TEST_F(WebServerStatic, CrossSiteWebSocketIsRefused) {
  EXPECT_THROW(testing::WsClient(server_->port(), "http://evil.example"), std::exception);
  // The console's own page, and clients that send no Origin (not browsers), are let in.
  testing::WsClient own(server_->port(), "http://127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_EQ(own.next("hello")["version"], kProtocolVersion);
  testing::WsClient tool(server_->port());
  EXPECT_EQ(tool.next("hello")["version"], kProtocolVersion);
  testing::WsClient named(testing::Endpoint{server_->port(), ""},
                          {"http://localhost:" + std::to_string(server_->port()), 0, "/ws", "",
                           "localhost:" + std::to_string(server_->port())});
  EXPECT_EQ(named.next("hello")["version"], kProtocolVersion);
}

TEST_F(WebServerStatic, APageRebindingItsNameToLoopbackIsRefused) {
  // evil.example resolved to 127.0.0.1: its page's Origin matches its own Host header.
  const std::string evil = "evil.example:" + std::to_string(server_->port());
  EXPECT_THROW(testing::WsClient(testing::Endpoint{server_->port(), ""},
                                 {"http://" + evil, 0, "/ws", "", evil}),
               std::exception);
  const auto r =
      testing::http_request({server_->port(), ""}, "GET", "/api/health", "", {{"Host", evil}});
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body, "Host " + evil + " is not a loopback name (127.0.0.1, ::1, localhost)\n");
}

TEST(WebServerOptions, NonLoopbackWithoutHttpsAndLoginsIsRefusedNamingWhatIsMissing) {
  WebServerOptions options;
  options.host = "0.0.0.0";
  options.port = 0;
  try {
    WebServer server(options, {});
    FAIL() << "bound a non-loopback address";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--web 0.0.0.0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing: --web-tls and --web-users"), std::string::npos)
        << e.what();
  }
  options.tls_certificate = "console.pem";
  options.tls_key = "console.key";
  try {
    WebServer server(options, {});
    FAIL() << "bound a non-loopback address without logins";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("missing: --web-users"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.3.0.9"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("192.168.1.4"));
  EXPECT_FALSE(is_loopback_host("example.com"));
}

}  // namespace
}  // namespace tether::local::web

#pragma once

// A blocking HTTP(S) and WebSocket client for the web console tests (Boost.Beast, like the
// server, compiled once in web_client.cc): every read gives up after a generous deadline, so
// a server that never answers fails the test instead of hanging it.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tether::local::web::testing {

using json = nlohmann::json;

inline constexpr int kReadTimeoutSeconds = 20;

// Where the server is: 127.0.0.1:port, over TLS when `ca` names the CA file its certificate
// must chain to (the name checked is "localhost").
struct Endpoint {
  int port = 0;
  std::string ca;  // empty: plain HTTP
};

struct HttpReply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
  std::string set_cookie;  // the Set-Cookie header, if any
  std::string header(const std::string& name) const;
  std::vector<std::pair<std::string, std::string>> headers;
};

// `method` `target` (sent as given, not normalised) with `body` and extra `headers`.
HttpReply http_request(const Endpoint& to, const std::string& method, const std::string& target,
                       const std::string& body = "",
                       const std::vector<std::pair<std::string, std::string>>& headers = {});
inline HttpReply http_get(int port, const std::string& target) {
  return http_request({port, ""}, "GET", target);
}

// "name=value" of a Set-Cookie header (its attributes dropped), for a Cookie header.
std::string cookie_pair(const std::string& set_cookie);

struct WsOptions {
  std::string origin;      // sent as the Origin header when not empty
  int receive_buffer = 0;  // > 0 shrinks the socket's receive buffer first (a slow client)
  std::string target = "/ws";
  std::string cookie;  // sent as the Cookie header when not empty
  std::string host;    // the Host header; empty: 127.0.0.1:PORT
};

class WsClient {
 public:
  // Opens the WebSocket; throws when the upgrade is refused or the connection fails.
  WsClient(const Endpoint& to, const WsOptions& options);
  explicit WsClient(int port, const std::string& origin = "", int receive_buffer = 0)
      : WsClient(Endpoint{port, ""}, WsOptions{origin, receive_buffer, "/ws", "", ""}) {}
  ~WsClient();
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  void send(const json& message);
  // The next message; throws after kReadTimeoutSeconds without one, or on a closed socket.
  json next();
  // The next message of `type` (others skipped); for "reply", the one with `id`.
  json next(const std::string& type, int id = -1);
  // Sends `request` with `id` and returns its reply.
  json request(json request, int id);
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::local::web::testing

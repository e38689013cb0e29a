#pragma once

// The operator console's server in tether-ground (`--web HOST:PORT`): HTTP for the built
// front end (local_site/web/dist) and GET /api/health, and the WebSocket /ws of
// local_site/web/PROTOCOL.md — site states, telemetry, requests, teleoperation.
//
// Boost.Beast serves it on an io_context and a thread of its own: the rest of the ground
// (hand controllers, the teleoperation session) runs on standalone Asio and is not moved.
//
// Threads and what never waits for what:
//   * each site's telemetry thread hands its samples to publish_telemetry(): a triple
//     buffer per site (latest_slot.h), one atomic exchange, never a lock or a queue;
//   * the server thread takes the newest sample of each site every few milliseconds, and
//     sends it, serialised there, to each client whose own rate (1–60 Hz) makes it due and
//     whose socket is not still writing its previous message: a slow client skips samples
//     (counted in its "dropped"), it never makes anything queue;
//   * requests that call a site (gRPC, blocking, up to the call deadline) run on worker
//     threads — stop on one of its own, so a STOP never waits behind a slow call — and
//     their replies are posted back to the server thread;
//   * the browser's gamepad drives WebGamepad (web_gamepad.h) through atomics.
// Replies and state messages to one client are queued up to kMaxQueuedMessages; a client
// that lets more pile up is disconnected (a browser that stopped reading).
//
// Security. By default the console listens on loopback only, serves plain HTTP and has no
// logins: every call to a site is made with tether-ground's own identity. A WebSocket
// upgrade whose Origin header is present and is not this server's own (scheme://HOST:PORT
// as the Host header gives it) is refused with 403 (cross-site WebSocket hijacking).
//   * HTTPS (`tls_certificate`, `tls_key`): TLS 1.2 or newer only; responses carry HSTS.
//   * Logins (`users`, web_auth.h): POST /api/login checks the password (PBKDF2, on a
//     thread of its own, five failures lock the name for a minute) and sets an HttpOnly,
//     SameSite=Strict session cookie (Secure under HTTPS); its reply carries the session's
//     CSRF token, which /ws?csrf=TOKEN and POST /api/logout (X-CSRF-Token) must present.
//     Each person's requests go to the sites through a client with their own certificate
//     and key, so the sites' audit trails and leases name the person: the sites refuse
//     control (start, reset, set_parameter, upload, ...) to whoever does not hold the
//     lease, and the browser's teleoperation is refused here unless the person holds the
//     teleoperated site's lease. STOP stays open to every logged-in person.
//   * A non-loopback address needs both: it is refused at start-up without them.
// Static files are served to anyone (the login form is one of them); everything else under
// logins needs the session.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tether/local/link/remote_site_client.h"
#include "tether/local/web/web_auth.h"
#include "tether/local/web/web_gamepad.h"

namespace tether::local::web {

struct WebSite {
  std::string name;     // as --site names it
  std::string address;  // host:port
  std::string arm;      // the site's arm model (SiteStatus::arm); one the ground cannot
                        // model (not iiwa7 or panda) gets no points in its telemetry
  RemoteSiteClient* client = nullptr;  // outlives the server; called on worker threads
};

struct WebServerOptions {
  std::string host = "127.0.0.1";  // loopback unless HTTPS and logins are on (see above)
  int port = 8080;                 // 0: any free port (port() tells which)
  std::string root;                // built front end; empty: default_web_root()
  std::string operator_name;       // the identity the ground calls the sites with
  std::string teleop_site;         // the site the ground teleoperates (hello)
  // The browser's hand controller when tether-ground runs --device web, else null: teleop
  // requests are then refused, naming the device in use (`device`).
  std::shared_ptr<WebGamepad> gamepad;
  std::string device;
  int workers = 2;             // threads for requests that call a site, in [1, 16]
  double status_period = 1.0;  // [s] how often each site's status (lease, RTT) is polled
  // HTTPS: the console's certificate (chain) and key, PEM paths; both empty: plain HTTP.
  std::string tls_certificate;
  std::string tls_key;
  // Logins (web_auth.h); empty: none. `person_client` is how each person's clients reach
  // the sites (CA, server name, deadline; their certificate and key come from `users`; on
  // an insecure link the person's name is declared instead).
  std::vector<WebUser> users;
  ClientOptions person_client;
};

class WebServer {
 public:
  static constexpr std::size_t kMaxQueuedMessages = 256;
  static constexpr std::size_t kMaxRequestBody = 1 << 20;  // [bytes] HTTP and WebSocket
  static constexpr std::size_t kMaxInFlightRequests = 16;  // per client

  // Binds and starts serving. Throws std::invalid_argument for a non-loopback host without
  // HTTPS and logins, or a bad option (naming it, the value and what is allowed),
  // std::runtime_error when the address cannot be bound.
  WebServer(WebServerOptions options, const std::vector<WebSite>& sites);
  ~WebServer();  // closes every connection and joins the threads
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  int port() const;
  // "http://HOST:PORT/" or "https://HOST:PORT/" (IPv6 hosts in brackets).
  std::string url() const;
  const std::string& root() const;

  // Site `site`'s newest sample; to be called from one thread per site (its telemetry
  // reader). Never blocks; copies the sample into a reused buffer. `predicted`: the local
  // model's joints at the same moment, when the ground runs one for this site.
  void publish_telemetry(std::size_t site, const TelemetrySample& sample,
                         const JointVector* predicted = nullptr);

  struct Stats {
    std::uint64_t published = 0;   // samples handed to publish_telemetry, all sites
    std::uint64_t sent = 0;        // telemetry messages written to clients
    std::uint64_t skipped = 0;     // due telemetry not sent because the socket was busy
    std::size_t clients = 0;       // open WebSocket sessions
    std::size_t queued_bytes = 0;  // queued replies and state messages, all clients
  };
  Stats stats() const;

  // The person holding the browser's teleoperation and the credentials the ground calls
  // the teleoperated site with for them, while logins are on; "" and the ground's own
  // credentials otherwise. Any thread.
  std::string teleop_person() const;
  ClientOptions person_options(const std::string& person) const;
  // Releases the browser's teleoperation, telling every browser `reason` (the ground's
  // teleoperation stream ended under the holder). Any thread.
  void release_teleop(const std::string& reason);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

}  // namespace tether::local::web

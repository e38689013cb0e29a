#pragma once

// tether-ground, the operator service of the local site: connects to one or more remote
// sites, watches each one's executor (state changes and breaches, from its telemetry
// stream), and teleoperates one of them with a hand controller — increments out at the
// teleoperation rate, force reflection rendered on the hand controller's actuators.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tether/local/hand_controller/open.h"
#include "tether/local/hand_controller/operator_input.h"
#include "tether/local/link/remote_site_client.h"

namespace tether::local {

struct SiteAddress {
  std::string name;     // for messages
  std::string address;  // host:port
};

struct GroundOptions {
  std::vector<SiteAddress> sites;  // at least one
  std::string teleop_site;         // name of the site to teleoperate; empty = the first
  std::string device = "sim";      // hand controller spec (open.h); "none" = only watch
  HandControllerOptions device_options;
  OperatorInputConfig input;
  std::string operator_name;      // insecure only; empty: $USER@host
  ClientCredentials credentials;  // mutual TLS to every site (or insecure)
  double rate = 1000.0;           // [Hz] teleoperation rate
  double duration = 0.0;          // [s]; 0 = until SIGINT/SIGTERM or the device ends
  std::string start_task;         // start this stored task on the teleoperated site first
  std::string report_path;        // also write the summary as "key value" lines
  std::string plot_path;          // also write the session's figure (.png or .svg)
  std::string record_path;  // record the teleoperated site's session as MCAP (session_recorder.h)
  double settle = 0.5;      // [s] TeleopOptions::settle
  DataPlane plane = DataPlane::kDatagram;  // TeleopOptions::plane
  // Deadline of each remote call, connection included: a link of 1 s each way takes three
  // round trips (TLS, HTTP/2, the call) before the first reply.
  std::chrono::milliseconds timeout{5000};
  // With --start: run the task on a local model of the site too ("ARM:SCENE", LocalModel),
  // driven by the operator without delay; report predicted against actual. Empty: none.
  std::string predict;
  bool reflect_from_model = false;  // the hand feels the model's wrench (needs `predict`)
  // The browser operator console (web/web_server.h): "HOST:PORT" on loopback (port 0: any
  // free one), empty for none; the built front end in `web_root` (empty:
  // web::default_web_root()). Once listening the ground prints "console: http://HOST:PORT/".
  // `device` "web" is the browser's gamepad (needs `web`).
  std::string web;
  std::string web_root;
  // HTTPS (PEM paths, both or neither) and logins (a users file, web/web_auth.h) for the
  // console; a `web` address beyond loopback needs both.
  std::string web_tls_certificate;
  std::string web_tls_key;
  std::string web_users;
};

// The ground's default force reflection: the measured wrench, scaled so that the coupled
// loop hand → arm → environment → hand stays stable with a compliant grip. At 0.05 N·m per
// N·m the simulated operator hand (2 N·m/rad) and the stiff door grasp oscillated into the
// torque bound; 0.01 keeps the door-shared session stable with margin.
ForceReflectionConfig default_reflection();

// Parses a site given as NAME=HOST:PORT or HOST:PORT (the name is then HOST:PORT), PORT in
// [1, 65535]; throws std::invalid_argument quoting the text and the expected form.
SiteAddress parse_site(const std::string& text);

// The names tether-ground and `tether teleop` take for --mode and --reflect; empty for any
// other name. The k...Names list them for messages.
std::optional<TeleopMode> teleop_mode_from_name(std::string_view name);
inline constexpr const char* kTeleopModeNames = "tool, world or camera";
std::optional<ForceReflectionConfig::Source> reflection_source_from_name(std::string_view name);
inline constexpr const char* kReflectionSourceNames = "none, measured or error";

// With --start, the task starts only once the operator first enables (holds the deadman,
// or toggles it on with space on a keyboard): an enabling device gates motion, so a task
// waiting for its operator must not begin — and be stopped by a released switch — before.
//
// Runs until done; prints progress and a summary to `out`. Exit status: 0 ok, 1 error,
// 3 a site stopped its arm on a bound breach during the session, 6 a site unreachable.
int run_ground_station(const GroundOptions& options, std::ostream& out);

}  // namespace tether::local

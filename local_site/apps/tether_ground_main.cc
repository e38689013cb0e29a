// tether-ground: the local site's operator service (see ground/ground_station.h).
#include <chrono>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tether/cli/options.h"
#include "tether/local/ground/ground_station.h"
#include "tether/local/teleop/local_model.h"
#include "tether/local/web/web_auth.h"
#include "tether/local/web/web_server.h"

namespace {

using namespace tether;
using namespace tether::local;

constexpr int kExitBreach = 3;       // a site stopped its arm on a bound breach
constexpr int kExitUnreachable = 6;  // a site could not be reached

// The ranges OperatorInput and TeleopSession enforce (validate(ForceReflectionConfig),
// TeleopOptions::rate), checked here too so that the error names the option.
constexpr double kMaxForceScale = 10.0;               // rendered N per remote N
constexpr double kMaxTorqueScale = 10.0;              // rendered N·m per remote N·m
constexpr double kMaxRenderedForce = 100.0;           // [N]
constexpr double kMaxRenderedTorque = 10.0;           // [N·m]
constexpr double kMinRate = 10.0, kMaxRate = 5000.0;  // [Hz]

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "The local site's operator service: connects to one or more remote sites (tether-remote\n"
      "--serve), reports each site's executor state and breaches, and teleoperates one of them\n"
      "with a hand controller, rendering force reflection on the hand controller's actuators.\n"
      "Keyboard keys are listed in docs/operator-guide.md.");
  cli::configure(app, {"tether-ground",
                       {"tether-ground --site [NAME=]HOST:PORT [--site ...] [options]"},
                       {{cli::kExitOk, "ok"},
                        {cli::kExitFailure, "error"},
                        {cli::kExitUsage, "bad command line"},
                        {kExitBreach, "a site stopped its arm on a bound breach"},
                        {kExitUnreachable, "a site could not be reached"}}});
  GroundOptions options;
  options.input.reflection = default_reflection();
  const OperatorInputConfig input_defaults;
  std::vector<std::string> sites;
  std::string mode = "tool", reflect = "measured", scale;
  app.add_option("--site", sites, "a remote site (at least one); repeat for several")
      ->option_text("[NAME=]HOST:PORT")
      ->check(cli::ParsedBy([](const std::string& text) { parse_site(text); }))
      // One value per --site, every --site kept.
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--teleop", options.teleop_site, "the site to teleoperate (default: the first)")
      ->option_text("NAME");
  app.add_option("--device", options.device,
                 "hand controller: keyboard, evdev:/dev/input/eventN,\n"
                 "joystick:/dev/input/jsN, script:FILE, sim, sim:FILE, web (the\n"
                 "browser console's gamepad; needs --web), or none to only watch the\n"
                 "sites (default sim)")
      ->option_text("SPEC")
      ->check(cli::NonEmpty());
  app.add_option("--mode", mode, "teleoperation mode (default tool)")
      ->option_text("tool|world|camera")
      ->check(cli::OneOf([](std::string_view m) { return teleop_mode_from_name(m).has_value(); },
                         kTeleopModeNames));
  app.add_option("--scale", scale,
                 "translation and rotation scale, remote per hand (default 1,1; R\n"
                 "defaults to T)")
      ->option_text("T[,R]")
      ->check(cli::ParsedBy([&](const std::string& text) {
        const auto comma = text.find(',');
        cli::parse_number(text.substr(0, comma), input_defaults.min_scale,
                          input_defaults.max_scale);
        if (comma != std::string::npos) {
          cli::parse_number(text.substr(comma + 1), input_defaults.min_scale,
                            input_defaults.max_scale);
        }
      }));
  app.add_option("--reflect", reflect,
                 "force reflection of the measured wrench F_a or the tracking error\n"
                 "F_r - F_a (default measured)")
      ->option_text("none|measured|error")
      ->check(
          cli::OneOf([](std::string_view r) { return reflection_source_from_name(r).has_value(); },
                     kReflectionSourceNames));
  app.add_option("--force-scale", options.input.reflection.force_scale,
                 "rendered N per remote N (default 0.1)")
      ->option_text("S")
      ->transform(cli::Number(0.0, kMaxForceScale));
  app.add_option("--torque-scale", options.input.reflection.torque_scale,
                 "rendered N m per remote N m (default 0.01)")
      ->option_text("S")
      ->transform(cli::Number(0.0, kMaxTorqueScale));
  app.add_option("--coupling-damping", options.input.reflection.damping_ratio,
                 "damping on the hand against its motion, as a share of the reflected rate "
                 "coupling (torque or force scale x the task's teleoperation gain; default 0.15)")
      ->option_text("RATIO")
      ->transform(cli::Number(0.0, 10.0));
  app.add_option("--max-force", options.input.reflection.max_force,
                 "clamp on the rendered force [N] (default 5)")
      ->option_text("N")
      ->transform(cli::Number(0.0, kMaxRenderedForce));
  app.add_option("--max-torque", options.input.reflection.max_torque,
                 "clamp on the rendered torque [N m] (default 0.5)")
      ->option_text("NM")
      ->transform(cli::Number(0.0, kMaxRenderedTorque));
  app.add_option("--rate", options.rate, "increments per second (default 1000)")
      ->option_text("HZ")
      ->transform(cli::Number(kMinRate, kMaxRate));
  app.add_option("--duration", options.duration,
                 "stop after this long, e.g. 30 or 30s (default: until Ctrl-C or the\n"
                 "script ends)")
      ->option_text("T")
      ->transform(cli::Seconds());
  app.add_option("--start", options.start_task,
                 "start this stored task on the teleoperated site once streaming,\n"
                 "and stop it at the end")
      ->option_text("TASK");
  std::string plane = "datagram";
  app.add_option("--data-plane", plane,
                 "how increments and reflections travel: datagram (UDP sealed under keys the\n"
                 "mutual-TLS stream hands out, the stream the fallback; default) or stream\n"
                 "(the gRPC stream only)")
      ->option_text("PLANE")
      ->check(CLI::IsMember({"datagram", "stream"}));
  double timeout = 5.0;
  app.add_option("--timeout", timeout,
                 "least deadline of each remote call (default 5s); calls wait longer on a\n"
                 "slow path: up to 30s to connect, then four measured round trips)")
      ->option_text("T")
      ->transform(cli::Seconds(0.001, 3600.0));
  app.add_option("--settle", options.settle,
                 "after a script ends, keep the stream open until the remote has played\n"
                 "out every increment and this long more (default 0.5s)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(30.0));
  app.add_option("--plot", options.plot_path,
                 "write the session's figure (door angle, reflected torque, channel\n"
                 "energies against time) as PNG or SVG, by the name's extension")
      ->option_text("FILE");
  app.add_option("--predict", options.predict,
                 "with --start, also run the task on a local model of the site, driven\n"
                 "without delay (predictive display), and report predicted against actual")
      ->option_text("[ARM:]SCENE")
      ->check(cli::ParsedBy([](const std::string& t) { parse_local_model(t); }));
  std::string reflect_from = "remote";
  app.add_option("--reflect-from", reflect_from,
                 "whose wrench the hand feels: the remote's, delayed by the link, or the\n"
                 "local model's, at once (needs --predict; default remote)")
      ->option_text("remote|model")
      ->check(CLI::IsMember({"remote", "model"}));
  app.add_option("--web", options.web,
                 "serve the browser operator console on this address (port 0: any free\n"
                 "port) and print its URL, e.g. --web 127.0.0.1:8080; beyond loopback\n"
                 "only with --web-tls and --web-users")
      ->option_text("HOST:PORT")
      ->check(cli::ParsedBy([](const std::string& text) { cli::parse_address(text, 0); }));
  std::vector<std::string> web_tls;
  app.add_option("--web-tls", web_tls,
                 "serve the console over HTTPS only, with this certificate (chain) and key")
      ->option_text("CERT,KEY")
      ->delimiter(',')
      ->expected(2)
      ->check(CLI::ExistingFile);
  app.add_option("--web-users", options.web_users,
                 "console logins: lines NAME PASSWORD-HASH CERTIFICATE KEY; each person's\n"
                 "requests reach the sites with their own certificate (see docs/deployment.md)")
      ->option_text("FILE")
      ->check(CLI::ExistingFile);
  bool hash_password = false;
  app.add_flag("--hash-password", hash_password,
               "read a password from standard input, print its --web-users hash, exit");
  app.add_option("--web-root", options.web_root,
                 "the built front end to serve (default: local_site/web/dist in a build\n"
                 "tree, share/tether/web once installed; $TETHER_WEB_ROOT)")
      ->option_text("DIR")
      ->check(CLI::ExistingDirectory);
  cli::TlsFiles tls;
  cli::add_tls_options(app, tls, cli::TlsRole::kClient, "security", cli::default_client_config());
  app.add_option("--operator", options.operator_name,
                 "with --insecure: operator name for the control lease (default $USER@host)")
      ->option_text("NAME")
      ->check(cli::NonEmpty());
  app.add_option("--record", options.record_path,
                 "record the session as MCAP: the site's telemetry of every cycle, every\n"
                 "increment sent and reflection received, the task started (docs/recordings.md)")
      ->option_text("FILE.mcap");
  app.add_option("--report", options.report_path,
                 "write the session summary as \"key value\" lines")
      ->option_text("FILE");
  app.callback([&] {
    if (hash_password) return;
    if (sites.empty()) throw CLI::RequiredError("--site");
    if (!web_tls.empty()) {
      options.web_tls_certificate = web_tls[0];
      options.web_tls_key = web_tls[1];
    }
    if ((!web_tls.empty() || !options.web_users.empty()) && options.web.empty()) {
      throw CLI::ValidationError(web_tls.empty() ? "--web-users" : "--web-tls",
                                 "needs --web HOST:PORT");
    }
    if (!options.web.empty()) {
      const cli::Address address = cli::parse_address(options.web, 0);
      if (!web::is_loopback_host(address.host) && (web_tls.empty() || options.web_users.empty())) {
        throw CLI::ValidationError(
            "--web", "'" + options.web +
                         "': a console beyond loopback (127.0.0.1, ::1, localhost) needs "
                         "--web-tls CERT,KEY and --web-users FILE");
      }
    }
    options.credentials =
        ClientCredentials{tls.insecure, tls.ca, tls.cert, tls.key, tls.server_name};
    options.reflect_from_model = reflect_from == "model";
    options.timeout = std::chrono::milliseconds(std::llround(timeout * 1e3));
    options.plane = plane == "stream" ? tether::DataPlane::kStream : tether::DataPlane::kDatagram;
    if (options.device == "web" && options.web.empty()) {
      throw CLI::ValidationError("--device", "web needs --web HOST:PORT");
    }
    if (!options.web_root.empty() && options.web.empty()) {
      throw CLI::ValidationError("--web-root", "needs --web HOST:PORT");
    }
    if (options.reflect_from_model && options.predict.empty()) {
      throw CLI::ValidationError("--reflect-from", "model needs --predict [ARM:]SCENE");
    }
    for (const std::string& text : sites) options.sites.push_back(parse_site(text));
    if (options.teleop_site.empty()) return;
    for (const SiteAddress& site : options.sites) {
      if (site.name == options.teleop_site) return;
    }
    throw CLI::ValidationError("--teleop",
                               "'" + options.teleop_site + "': expected the NAME of a --site");
  });
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  if (hash_password) {
    std::string password;
    std::getline(std::cin, password);
    try {
      std::cout << web::hash_password(password) << '\n';
    } catch (const std::invalid_argument& e) {
      std::cerr << "tether-ground: --hash-password: " << e.what() << '\n';
      return cli::kExitUsage;
    }
    return 0;
  }

  // Validated while parsing, so these parse.
  options.input.mode = *teleop_mode_from_name(mode);
  options.input.reflection.source = *reflection_source_from_name(reflect);
  if (!scale.empty()) {
    const auto comma = scale.find(',');
    options.input.translation_scale = cli::parse_number(scale.substr(0, comma));
    options.input.rotation_scale = comma == std::string::npos
                                       ? options.input.translation_scale
                                       : cli::parse_number(scale.substr(comma + 1));
  }
  try {
    return run_ground_station(options, std::cout);
  } catch (const std::invalid_argument& e) {
    // Settings the session refuses (validate(OperatorInputConfig)) are the command line's.
    std::cerr << "tether-ground: " << e.what() << '\n';
    return cli::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tether-ground: " << e.what() << '\n';
    return cli::kExitFailure;
  }
}

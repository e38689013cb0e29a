// tether-linkem: the link emulator between a ground station and a remote site (or any TCP
// client and server). Runs until SIGINT or SIGTERM (or --duration), then prints what passed.

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "tether/cli/options.h"
#include "tether/linkem/link_emulator.h"
#include "tether/linkem/link_script.h"

namespace {

std::atomic<bool> stop{false};
extern "C" void on_signal(int /*signal*/) { stop.store(true); }

}  // namespace

int main(int argc, char** argv) {
  namespace cli = tether::cli;
  namespace linkem = tether::linkem;
  CLI::App app(
      "A TCP proxy that makes a link slow: per direction a delay with jitter (order kept as\n"
      "TCP keeps it), a bandwidth limit, stalls and cuts, optionally changing over time from a\n"
      "script. TLS passes through untouched (give clients --server-name if the proxy's\n"
      "address is not among the site's certificate names).");
  cli::configure(app, {"tether-linkem",
                       {"tether-linkem --listen HOST:PORT --target HOST:PORT [options]"},
                       {{cli::kExitOk, "ok"},
                        {cli::kExitFailure, "cannot listen, or a bad script"},
                        {cli::kExitUsage, "bad command line"}}});
  std::string listen = "127.0.0.1:0", target, script_path, port_file, distribution = "uniform";
  double delay = 0.0, jitter = 0.0, duration = 0.0;
  double up_delay = -1.0, down_delay = -1.0;
  std::string bandwidth;
  std::uint64_t seed = 1;
  app.add_option("--listen", listen, "where ground stations connect (default 127.0.0.1:0)")
      ->option_text("HOST:PORT")
      ->check(cli::HostPort(0));
  app.add_option("--target", target, "the remote site")
      ->option_text("HOST:PORT")
      ->check(cli::HostPort())
      ->required();
  app.add_option("--delay", delay, "one-way delay, both directions (default 0)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  app.add_option("--up-delay", up_delay, "ground -> site delay (default --delay)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  app.add_option("--down-delay", down_delay, "site -> ground delay (default --delay)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  app.add_option("--jitter", jitter, "jitter, both directions: uniform half-width or normal sigma")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  app.add_option("--distribution", distribution, "jitter distribution: uniform (default) or normal")
      ->check(CLI::IsMember({"uniform", "normal"}));
  app.add_option("--bandwidth", bandwidth, "rate limit, both directions, e.g. 1Mbit/s, 100kB/s")
      ->option_text("RATE")
      ->check(cli::ParsedBy([](const std::string& t) { linkem::parse_bandwidth(t); }));
  app.add_option("--script", script_path, "change the link over time (see link_script.h)")
      ->option_text("FILE");
  app.add_option("--seed", seed, "seed of the jitter (default 1)");
  app.add_option("--port-file", port_file, "also write the bound port to FILE")
      ->option_text("FILE");
  app.add_option("--duration", duration, "end after T (default: until SIGINT/SIGTERM)")
      ->option_text("T")
      ->transform(cli::Seconds());
  if (const auto status = cli::parse(app, argc, argv)) return *status;

  try {
    linkem::LinkProfile profile;
    for (linkem::DirectionProfile* d : {&profile.up, &profile.down}) {
      d->delay = delay;
      d->jitter = jitter;
      d->distribution =
          distribution == "normal" ? linkem::Jitter::kNormal : linkem::Jitter::kUniform;
      if (!bandwidth.empty()) d->bandwidth = linkem::parse_bandwidth(bandwidth);
    }
    if (up_delay >= 0.0) profile.up.delay = up_delay;
    if (down_delay >= 0.0) profile.down.delay = down_delay;
    std::vector<linkem::ScriptEvent> script;
    if (!script_path.empty()) {
      std::ifstream in(script_path);
      if (!in) throw std::runtime_error(script_path + ": cannot be read");
      std::ostringstream text;
      text << in.rdbuf();
      script = linkem::parse_link_script(text.str(), script_path);
    }
    linkem::LinkEmulator emulator(listen, target, profile, seed);
    const std::string host = listen.substr(0, listen.rfind(':'));
    std::printf("tether-linkem: listening on %s:%d, forwarding to %s\n", host.c_str(),
                emulator.port(), target.c_str());
    std::fflush(stdout);
    if (!port_file.empty()) std::ofstream(port_file) << emulator.port() << "\n";
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    std::thread player(
        [&] { linkem::play_link_script(emulator, script, [] { return stop.load(); }); });
    while (!stop.load() && (duration <= 0.0 || emulator.now() < duration)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop.store(true);
    player.join();
    const linkem::EmulatorStatistics s = emulator.statistics();
    std::printf(
        "tether-linkem: %llu connections (%llu cut); up %llu bytes, longest held %.1f ms; down "
        "%llu bytes, longest held %.1f ms\n",
        static_cast<unsigned long long>(s.connections), static_cast<unsigned long long>(s.cuts),
        static_cast<unsigned long long>(s.up.bytes), s.up.delay_max * 1e3,
        static_cast<unsigned long long>(s.down.bytes), s.down.delay_max * 1e3);
    return cli::kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "tether-linkem: " << e.what() << "\n";
    return cli::kExitFailure;
  }
}

// tether-linkem: the link emulator between a ground station and a remote site (or any TCP
// client and server). Runs until SIGINT or SIGTERM (or --duration), then prints what passed.
// Without a command it is a TCP proxy (byte streams); `tether-linkem packet` joins two
// network namespaces with a packet-level link instead (loss, bursts, queues; root).

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tether/cli/options.h"
#include "tether/linkem/link_emulator.h"
#include "tether/linkem/link_script.h"
#include "tether/linkem/packet_link.h"

namespace {

std::atomic<bool> stop{false};
extern "C" void on_signal(int /*signal*/) { stop.store(true); }

void handle_signals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The packet mode's settings as given on the command line.
struct PacketOptions {
  tether::linkem::PacketLinkConfig config;
  double delay = 0.0, up_delay = -1.0, down_delay = -1.0, jitter = 0.0, duration = 0.0;
  double burst = 1.0;
  std::string distribution = "uniform", loss, rate, queue, script_path, ready_file, stats_file;
  bool reorder = false;
};

// One line per direction, KEY=VALUE words: readable, and easy to pick apart in a script.
std::string packet_report(const tether::linkem::PacketLinkStatistics& s) {
  std::ostringstream out;
  for (const auto& [name, d] : {std::pair{"up (A->B)", &s.up}, std::pair{"down (B->A)", &s.down}}) {
    const tether::linkem::PacketCounters& c = d->counters;
    char mean_burst[32];
    std::snprintf(
        mean_burst, sizeof(mean_burst), "%.2f",
        c.bursts == 0 ? 0.0 : static_cast<double>(c.lost_burst) / static_cast<double>(c.bursts));
    char delays[96];
    std::snprintf(delays, sizeof(delays), "delay_p50_ms=%.3f delay_p99_ms=%.3f", d->delay_p50 * 1e3,
                  d->delay_p99 * 1e3);
    out << name << ": packets_in=" << c.packets_in << " bytes_in=" << c.bytes_in
        << " forwarded=" << c.forwarded << " bytes_forwarded=" << c.bytes_forwarded
        << " lost_random=" << c.lost_random << " lost_burst=" << c.lost_burst
        << " lost_outage=" << c.lost_outage << " dropped_queue=" << c.dropped_queue
        << " bursts=" << c.bursts << " mean_burst=" << mean_burst << " " << delays << "\n";
  }
  return out.str();
}

int run_packet(const PacketOptions& o) {
  namespace linkem = tether::linkem;
  linkem::PacketLinkProfile profile;
  for (linkem::PacketProfile* d : {&profile.up, &profile.down}) {
    d->delay = o.delay;
    d->jitter = o.jitter;
    d->distribution =
        o.distribution == "normal" ? linkem::Jitter::kNormal : linkem::Jitter::kUniform;
    d->reorder = o.reorder;
    if (!o.loss.empty()) d->loss = linkem::parse_probability(o.loss);
    d->burst = o.burst;
    if (!o.rate.empty()) d->rate = linkem::parse_bandwidth(o.rate);
    if (!o.queue.empty()) d->queue = linkem::parse_bytes(o.queue);
  }
  if (o.up_delay >= 0.0) profile.up.delay = o.up_delay;
  if (o.down_delay >= 0.0) profile.down.delay = o.down_delay;
  linkem::validate(profile);
  std::vector<linkem::PacketScriptEvent> script;
  if (!o.script_path.empty()) {
    script = linkem::parse_packet_script(read_file(o.script_path), o.script_path, profile);
  }
  handle_signals();
  linkem::PacketLink link(o.config, profile);
  std::printf("tether-linkem: packet link %s %s <-> %s %s on %s\n", o.config.ns_a.c_str(),
              o.config.addr_a.c_str(), o.config.ns_b.c_str(), o.config.addr_b.c_str(),
              o.config.device.c_str());
  std::fflush(stdout);
  if (!o.ready_file.empty()) std::ofstream(o.ready_file) << "ready\n";
  std::thread player([&] { linkem::play_packet_script(link, script, [] { return stop.load(); }); });
  while (!stop.load() && (o.duration <= 0.0 || link.now() < o.duration)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop.store(true);
  player.join();
  const std::string report = packet_report(link.statistics());
  std::printf("%s", report.c_str());
  if (!o.stats_file.empty()) {
    std::ofstream out(o.stats_file);
    out << report;
    if (!out) throw std::runtime_error(o.stats_file + ": cannot be written");
  }
  return tether::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = tether::cli;
  namespace linkem = tether::linkem;
  CLI::App app(
      "A TCP proxy that makes a link slow: per direction a delay with jitter (order kept as\n"
      "TCP keeps it), a bandwidth limit, stalls and cuts, optionally changing over time from a\n"
      "script. TLS passes through untouched (give clients --server-name if the proxy's\n"
      "address is not among the site's certificate names). The command `packet` emulates a\n"
      "link for IP packets between two network namespaces instead.");
  cli::configure(
      app,
      {"tether-linkem",
       {"tether-linkem --listen HOST:PORT --target HOST:PORT [options]",
        "tether-linkem packet --ns-a A --ns-b B [options]"},
       {{cli::kExitOk, "ok"},
        {cli::kExitFailure, "cannot listen, a bad script; packet: not root, or no such namespace"},
        {cli::kExitUsage, "bad command line"}}});
  std::string listen = "127.0.0.1:0", target, script_path, port_file, distribution = "uniform";
  double delay = 0.0, jitter = 0.0, duration = 0.0;
  double up_delay = -1.0, down_delay = -1.0;
  std::string bandwidth;
  std::uint64_t seed = 1;
  app.add_option("--listen", listen, "where ground stations connect (default 127.0.0.1:0)")
      ->option_text("HOST:PORT")
      ->check(cli::HostPort(0));
  // Required without a command only (checked in the callback below).
  CLI::Option* target_option = app.add_option("--target", target, "the remote site (required)")
                                   ->option_text("HOST:PORT")
                                   ->check(cli::HostPort());
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
  // The byte-stream options are the program's; listed in a group of their own so that
  // `packet --help`, which shows its program's options too, tells them apart.
  std::vector<CLI::Option*> stream_options;
  for (CLI::Option* option : app.get_options()) {
    if (option != app.get_help_ptr() && option->get_name() != "--version") {
      option->group("byte-stream options (without a command)");
      stream_options.push_back(option);
    }
  }

  PacketOptions packet_options;
  CLI::App* packet = cli::add_command(
      app, "packet", "packet --ns-a A --ns-b B [options]",
      "A packet-level link between two network namespaces (made with `ip netns add`): a TUN\n"
      "device in each (default 10.201.0.1 in A, 10.201.0.2 in B, point to point) and a\n"
      "forwarder between them that gives each direction (up: A -> B, down: B -> A) a delay\n"
      "with jitter (order kept unless --reorder), random or bursty loss (Gilbert-Elliott),\n"
      "a rate limit with a drop-tail queue, and outages from a script. Needs root. Prints\n"
      "per direction what became of the packets at the end.");
  for (CLI::Option* option : stream_options) packet->excludes(option);
  PacketOptions& o = packet_options;
  packet->add_option("--ns-a", o.config.ns_a, "network namespace A")
      ->option_text("NAME")
      ->required();
  packet->add_option("--ns-b", o.config.ns_b, "network namespace B")
      ->option_text("NAME")
      ->required();
  packet->add_option("--addr-a", o.config.addr_a, "A's IPv4 address (default 10.201.0.1)")
      ->option_text("IP");
  packet->add_option("--addr-b", o.config.addr_b, "B's IPv4 address (default 10.201.0.2)")
      ->option_text("IP");
  packet->add_option("--prefix", o.config.prefix, "netmask length of both (default 32)")
      ->option_text("N")
      ->transform(cli::Count(1, 32));
  packet->add_option("--device", o.config.device, "the TUN devices' name (default tlk0)")
      ->option_text("NAME");
  packet->add_option("--delay", o.delay, "one-way delay, both directions (default 0)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  packet->add_option("--up-delay", o.up_delay, "A -> B delay (default --delay)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  packet->add_option("--down-delay", o.down_delay, "B -> A delay (default --delay)")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  packet->add_option("--jitter", o.jitter, "uniform half-width or normal sigma, <= the delay")
      ->option_text("T")
      ->transform(cli::SecondsOrZero(100.0));
  packet->add_option("--distribution", o.distribution, "jitter: uniform (default) or normal")
      ->check(CLI::IsMember({"uniform", "normal"}));
  packet->add_flag("--reorder", o.reorder, "let packets overtake (default: order kept)");
  packet->add_option("--loss", o.loss, "loss probability, e.g. 1% or 0.01 (default 0)")
      ->option_text("P")
      ->check(cli::ParsedBy([](const std::string& t) { tether::linkem::parse_probability(t); }));
  packet->add_option("--burst", o.burst, "mean loss burst length in packets (default 1: random)")
      ->option_text("N")
      ->transform(cli::Number(1.0, 1e6));
  packet->add_option("--rate", o.rate, "rate limit, e.g. 2Mbit/s, 100kB/s (default none)")
      ->option_text("RATE")
      ->check(cli::ParsedBy([](const std::string& t) { tether::linkem::parse_bandwidth(t); }));
  packet->add_option("--queue", o.queue, "queue before the rate limit (default 64kB)")
      ->option_text("BYTES")
      ->check(cli::ParsedBy([](const std::string& t) { tether::linkem::parse_bytes(t); }));
  packet->add_option("--script", o.script_path, "change the link over time (see packet_link.h)")
      ->option_text("FILE");
  packet->add_option("--seed", o.config.seed, "seed of jitter and loss (default 1)");
  packet->add_option("--ready-file", o.ready_file, "write FILE once both devices forward")
      ->option_text("FILE");
  packet->add_option("--stats-file", o.stats_file, "also write the final statistics to FILE")
      ->option_text("FILE");
  packet->add_option("--duration", o.duration, "end after T (default: until SIGINT/SIGTERM)")
      ->option_text("T")
      ->transform(cli::Seconds());
  app.callback([&] {
    if (!packet->parsed() && target_option->count() == 0) throw CLI::RequiredError("--target");
  });
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  if (packet->parsed()) {
    try {
      return run_packet(packet_options);
    } catch (const std::exception& e) {
      std::cerr << "tether-linkem: " << e.what() << "\n";
      return cli::kExitFailure;
    }
  }

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
    if (!script_path.empty())
      script = linkem::parse_link_script(read_file(script_path), script_path);
    linkem::LinkEmulator emulator(listen, target, profile, seed);
    const std::string host = listen.substr(0, listen.rfind(':'));
    std::printf("tether-linkem: listening on %s:%d, forwarding to %s\n", host.c_str(),
                emulator.port(), target.c_str());
    std::fflush(stdout);
    if (!port_file.empty()) std::ofstream(port_file) << emulator.port() << "\n";
    handle_signals();
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

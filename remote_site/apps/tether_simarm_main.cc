// tether-simarm: the MuJoCo-simulated arm as its own process, behind the arm-link UDP
// protocol, so tether-remote (UdpArm) drives it as it would drive hardware.
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <thread>

#include "tether/common/urdf_loader.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/remote/arm_link/simarm_server.h"

namespace {

using namespace tether;
using namespace tether::remote;

constexpr const char* kUsage = R"(usage: tether-simarm [options]

Runs the MuJoCo-simulated arm in one of its scenes as a joint-servo process: it listens for
COMMAND datagrams (arm-link protocol, see remote_site/README.md) and sends a STATE to the
controller every servo period. Without commands it holds its position.

  --arm NAME|URDF          iiwa7 (default) or panda, or a URDF file (with --base/--tool)
  --base LINK --tool LINK  base and tool links of a URDF given with --arm
  --scene NAME             free (default), door, wall, obstacles, proximity
  --bind ADDRESS           address to listen on (default 127.0.0.1)
  --port N                 UDP port to listen on (default 50600; 0: any free port)
  --period T               servo period, e.g. 1ms (default), 500us
  --command-timeout T      hold position when commands stop this long (default 20ms)
  --duration T             stop after T of wall-clock time, e.g. 10s (default: run until
                           SIGINT or SIGTERM)
exit status: 0 ok, 1 runtime error (arm, scene, socket; or the simulation faulted), 2 usage
)";

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true); }

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tether-simarm: " << message << "\n\n" << kUsage;
  std::exit(2);
}

// "10s", "20ms", "500us" or a plain number of seconds.
double parse_time(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    usage_error(option + " '" + text + "' is not a time");
  }
  const std::string unit = text.substr(used);
  if (unit == "ms")
    value *= 1e-3;
  else if (unit == "us")
    value *= 1e-6;
  else if (!unit.empty() && unit != "s")
    usage_error(option + " unit must be s, ms or us");
  if (!(value > 0.0) || !std::isfinite(value)) usage_error(option + " must be > 0");
  return value;
}

std::uint16_t parse_port(const std::string& text) {
  std::size_t used = 0;
  unsigned long value = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    usage_error("--port '" + text + "' is not a number");
  }
  if (used != text.size() || value > 65535) usage_error("--port '" + text + "': expected 0…65535");
  return static_cast<std::uint16_t>(value);
}

void print_statistics(const SimArmServerStatistics& s) {
  std::printf("tether-simarm: %.3f s of arm time\n", s.arm_time);
  std::printf("  servo periods     %llu, %llu overruns, max %.1f us per period\n",
              static_cast<unsigned long long>(s.periods),
              static_cast<unsigned long long>(s.overruns), s.max_cycle_time * 1e6);
  std::printf(
      "  commands          %llu applied, %llu hellos, %llu stale, %llu corrupt, "
      "%llu foreign\n",
      static_cast<unsigned long long>(s.commands_applied),
      static_cast<unsigned long long>(s.hellos), static_cast<unsigned long long>(s.stale_dropped),
      static_cast<unsigned long long>(s.corrupt_dropped),
      static_cast<unsigned long long>(s.foreign_dropped));
  std::printf("  states sent       %llu (%llu send errors)\n",
              static_cast<unsigned long long>(s.states_sent),
              static_cast<unsigned long long>(s.send_errors));
  std::printf("  command timeouts  %llu%s\n", static_cast<unsigned long long>(s.command_timeouts),
              s.arm_fault ? "; the simulation FAULTED" : "");
}

}  // namespace

int main(int argc, char** argv) {
  std::string arm_name = "iiwa7", base, tool, scene_name = "free";
  SceneKind scene = SceneKind::kFreeSpace;
  SimArmServerOptions server_options;
  double duration = 0.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--arm")
      arm_name = value();
    else if (arg == "--base")
      base = value();
    else if (arg == "--tool")
      tool = value();
    else if (arg == "--scene") {
      scene_name = value();
      const auto kind = scene_from_name(scene_name);
      if (!kind) usage_error("--scene '" + scene_name + "': expected " + kSceneNames);
      scene = *kind;
    } else if (arg == "--bind")
      server_options.bind_address = value();
    else if (arg == "--port")
      server_options.port = parse_port(value());
    else if (arg == "--period")
      server_options.period = parse_time(arg, value());
    else if (arg == "--command-timeout")
      server_options.command_timeout = parse_time(arg, value());
    else if (arg == "--duration")
      duration = parse_time(arg, value());
    else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }

  try {
    UrdfLoadOptions urdf_options;
    if (!base.empty()) urdf_options.base_link = base;
    if (!tool.empty()) urdf_options.tool_link = tool;
    const ArmModel arm_model = load_arm_by_name(arm_name, urdf_options);
    SimulationOptions sim_options;
    sim_options.scene = scene;
    sim_options.initial_position = default_initial_position(scene, arm_model);
    SimulatedArm arm(arm_model, sim_options);
    SimArmServer server(arm, server_options);

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    spdlog::info(
        "tether-simarm: {} in the {} scene, listening on UDP {}:{}, servo period {} ms, "
        "command timeout {} ms",
        arm_model.name, scene_name, server_options.bind_address, server.port(),
        server_options.period * 1e3, server_options.command_timeout * 1e3);
    server.start();
    const auto start = std::chrono::steady_clock::now();
    SimArmServerStatistics last;
    while (!g_stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const SimArmServerStatistics s = server.statistics();
      // Log the link's transitions from here, never from the servo thread.
      if (s.states_sent > 0 && last.states_sent == 0) spdlog::info("controller connected");
      if (s.command_timeouts > last.command_timeouts) {
        spdlog::warn("commands stopped: holding the last commanded position");
      } else if (last.holding && !s.holding) {
        spdlog::info("commands resumed");
      }
      if (s.arm_fault && !last.arm_fault) spdlog::error("the simulation faulted");
      last = s;
      if (duration > 0.0 &&
          std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(duration)) {
        break;
      }
    }
    server.stop();
    if (g_stop.load()) spdlog::info("tether-simarm: stopping on signal");
    const SimArmServerStatistics s = server.statistics();
    print_statistics(s);
    return s.arm_fault ? 1 : 0;
  } catch (const std::exception& e) {
    spdlog::error("tether-simarm: {}", e.what());
    return 1;
  }
}

// tether-simarm: the MuJoCo-simulated arm as its own process, behind the arm-link UDP
// protocol, so tether-remote (UdpArm) drives it as it would drive hardware.
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "scene_option.h"
#include "tether/cli/options.h"
#include "tether/remote/arm_link/protocol.h"
#include "tether/remote/arm_link/simarm_server.h"
#include "tether/remote/camera_link/camera_link_server.h"
#include "tether/remote/sim/simulated_arm.h"

namespace {

using namespace tether;
using namespace tether::remote;

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop.store(true); }

void print_statistics(const SimArmServerStatistics& s) {
  std::printf("tether-simarm: %.3f s of arm time\n", s.arm_time);
  std::printf("  servo periods     %llu, %llu overruns, max %.1f us per period\n",
              static_cast<unsigned long long>(s.periods),
              static_cast<unsigned long long>(s.overruns), s.max_cycle_time * 1e6);
  std::printf(
      "  commands          %llu applied, %llu hellos, %llu stale, %llu corrupt, "
      "%llu foreign, %llu unauthenticated\n",
      static_cast<unsigned long long>(s.commands_applied),
      static_cast<unsigned long long>(s.hellos), static_cast<unsigned long long>(s.stale_dropped),
      static_cast<unsigned long long>(s.corrupt_dropped),
      static_cast<unsigned long long>(s.foreign_dropped),
      static_cast<unsigned long long>(s.unauthenticated_dropped));
  std::printf("  states sent       %llu (%llu send errors)\n",
              static_cast<unsigned long long>(s.states_sent),
              static_cast<unsigned long long>(s.send_errors));
  std::printf("  command timeouts  %llu%s\n", static_cast<unsigned long long>(s.command_timeouts),
              s.arm_fault ? "; the simulation FAULTED" : "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Runs the MuJoCo-simulated arm in one of its scenes as a joint-servo process: it listens\n"
      "for COMMAND datagrams (arm-link protocol, see remote_site/README.md) and sends a STATE to\n"
      "the controller every servo period. Without commands it holds its position. Packets are\n"
      "authenticated with the site's shared secret (--key, the file tether-remote reads with\n"
      "--arm-link-key). Its cameras, rendered when watched, are served on a TCP port of their\n"
      "own (--camera-port), as an IP camera's, to tether-remote --arm-cameras.");
  cli::configure(
      app, {"tether-simarm",
            {"tether-simarm [options]"},
            {{cli::kExitOk, "ok"},
             {cli::kExitFailure, "runtime error (arm, scene, socket; or the simulation faulted)"},
             {cli::kExitUsage, "bad command line"}}});
  cli::ArmOptions arm_choice;
  cli::add_arm_options(app, arm_choice);
  std::string scene_name = "free";
  add_scene_option(app, scene_name);
  WristComplianceParameters wrist;
  add_wrist_option(app, wrist);
  SimArmServerOptions server_options;
  app.add_option("--bind", server_options.bind_address, "address to listen on (default 127.0.0.1)")
      ->option_text("ADDRESS")
      ->check(cli::NonEmpty());
  app.add_option("--port", server_options.port,
                 "UDP port to listen on (default 50600; 0: any free port)")
      ->option_text("N")
      ->transform(cli::Count(0, 65535));
  app.add_option("--period", server_options.period, "servo period, e.g. 1ms (default), 500us")
      ->option_text("T")
      ->transform(cli::Seconds());
  app.add_option("--command-timeout", server_options.command_timeout,
                 "hold position when commands stop this long (default 20ms)")
      ->option_text("T")
      ->transform(cli::Seconds());
  app.add_option("--key", server_options.key_file,
                 "the arm link's shared secret, at least 16 bytes (required), e.g. made with\n"
                 "head -c 32 /dev/urandom > FILE")
      ->option_text("FILE")
      ->check(cli::NonEmpty());
  int camera_port = -2;  // -2: the arm link's port number, on TCP
  app.add_option("--camera-port", camera_port,
                 "TCP port the scene's cameras are served on, to tether-remote --arm-cameras\n"
                 "(default: --port's number; 0: any free port; -1: no cameras)")
      ->option_text("N")
      ->check(CLI::Range(-1, 65535));
  double duration = 0.0;
  app.add_option("--duration", duration,
                 "stop after T of wall-clock time, e.g. 10s (default: run until SIGINT or\n"
                 "SIGTERM)")
      ->option_text("T")
      ->transform(cli::Seconds());
  // Checked after the rest of the command line (an unknown option is reported first).
  app.callback([&] {
    if (server_options.key_file.empty()) throw CLI::RequiredError("--key");
  });
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  const SceneKind scene = *scene_from_name(scene_name);

  try {
    const ArmModel arm_model = arm_choice.load();
    SimulationOptions sim_options;
    sim_options.scene = scene;
    sim_options.wrist = wrist;
    sim_options.initial_position = default_initial_position(scene, arm_model);
    // The arm link carries no visual readings: a site tracks the target from the wrist
    // camera's images it takes over the camera link (CameraVisionArm). So the simulation's own
    // camera model is the geometric one, which costs no render and no detection here.
    sim_options.camera.source = CameraSource::kGeometric;
    SimulatedArm arm(arm_model, sim_options);
    SimArmServer server(arm, server_options);
    const SceneDescription scene_description = arm.scene_description();
    std::unique_ptr<camera_link::CameraLinkServer> cameras;
    if (camera_port != -1) {
      camera_link::CameraLinkServerOptions camera_options;
      camera_options.bind_address = server_options.bind_address;
      camera_options.port =
          static_cast<std::uint16_t>(camera_port == -2 ? server.port() : camera_port);
      camera_options.key_file = server_options.key_file;
      camera_options.arm_model = server.arm_model_id();
      cameras =
          std::make_unique<camera_link::CameraLinkServer>(arm, scene_description, camera_options);
    }

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    spdlog::info(
        "tether-simarm: {} (arm model id {:016x}) in the {} scene, listening on UDP {}:{}, "
        "servo period {} ms, command timeout {} ms, arm link protocol v{} keyed by {}",
        arm_model.name, server.arm_model_id(), scene_name, server_options.bind_address,
        server.port(), server_options.period * 1e3, server_options.command_timeout * 1e3,
        arm_link::kProtocolVersion, server_options.key_file);
    if (cameras) {
      spdlog::info("tether-simarm: {} camera(s) served on TCP {}:{}", arm.cameras().size(),
                   server_options.bind_address, cameras->port());
      cameras->start();
    }
    server.start();
    const auto start = std::chrono::steady_clock::now();
    SimArmServerStatistics last;
    SimArmServerStatistics refused;  // as of the last warning about refused COMMANDs
    std::chrono::steady_clock::time_point refused_logged{};
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
      // Refused senders, at most once a second (a stray sender must not flood the log).
      const auto now = std::chrono::steady_clock::now();
      if ((s.foreign_dropped > refused.foreign_dropped ||
           s.unauthenticated_dropped > refused.unauthenticated_dropped) &&
          now - refused_logged >= std::chrono::seconds(1)) {
        spdlog::warn(
            "refused {} foreign COMMAND(s) (another arm model, session or address) and {} "
            "unauthenticated (no or another key)",
            s.foreign_dropped - refused.foreign_dropped,
            s.unauthenticated_dropped - refused.unauthenticated_dropped);
        refused = s;
        refused_logged = now;
      }
      last = s;
      if (duration > 0.0 &&
          std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(duration)) {
        break;
      }
    }
    if (cameras) cameras->stop();
    server.stop();
    if (g_stop.load()) spdlog::info("tether-simarm: stopping on signal");
    const SimArmServerStatistics s = server.statistics();
    print_statistics(s);
    if (cameras) {
      const camera_link::CameraLinkServerStatistics c = cameras->statistics();
      std::printf(
          "  camera link       %llu connections (%llu refused), %llu images sent, %llu "
          "dropped for slow sites, %llu aims\n",
          static_cast<unsigned long long>(c.connections),
          static_cast<unsigned long long>(c.refused),
          static_cast<unsigned long long>(c.images_sent),
          static_cast<unsigned long long>(c.images_dropped),
          static_cast<unsigned long long>(c.aims));
    }
    return s.arm_fault ? cli::kExitFailure : cli::kExitOk;
  } catch (const std::exception& e) {
    spdlog::error("tether-simarm: {}", e.what());
    return cli::kExitFailure;
  }
}

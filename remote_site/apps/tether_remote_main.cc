// tether-remote: the remote-site executor on the embedded MuJoCo arm.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scene_option.h"
#include "tether/cli/options.h"
#include "tether/common/units.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/arm_link/protocol.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "tether/remote/camera_link/camera_vision_arm.h"
#include "tether/remote/camera_link/network_cameras.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/report/plot.h"
#include "tether/remote/server/remote_site_server.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/remote/task/validation.h"

namespace {

// A check of SCHEME:HOST:PORT (the arm link's and the camera link's endpoints).
std::function<void(const std::string&)> address_with_scheme(const std::string& scheme) {
  return [scheme](const std::string& spec) {
    if (spec.rfind(scheme + ":", 0) != 0) {
      throw std::invalid_argument("'" + spec + "': expected " + scheme + ":HOST:PORT");
    }
    tether::cli::parse_address(spec.substr(scheme.size() + 1));
  };
}

using namespace tether;
using namespace tether::remote;

constexpr int kExitBreach = 3;  // the task was stopped by a bound breach

// rotate-AXIS:DEG_PER_S:SECONDS, e.g. rotate-x:15:2: the handle turns about its x axis at
// 15 deg/s for 2 s. Throws std::invalid_argument naming the text and the format.
HandControllerScript parse_hand_controller(const std::string& spec) {
  const auto fail = [&](const std::string& problem) -> HandControllerScript {
    throw std::invalid_argument("'" + spec + "': " + problem +
                                " (expected rotate-AXIS:DEG_PER_S:SECONDS, e.g. rotate-x:15:2)");
  };
  const auto c1 = spec.find(':');
  const auto c2 = spec.find(':', c1 + 1);
  if (spec.rfind("rotate-", 0) != 0 || c1 != 8 || c2 == std::string::npos) {
    return fail("not a scripted rotation");
  }
  const char axis = spec[7];
  if (axis < 'x' || axis > 'z') return fail("the axis must be x, y or z");
  double rate = 0.0, seconds = 0.0;  // [rad/s], [s]
  try {
    rate = cli::parse_number(spec.substr(c1 + 1, c2 - c1 - 1)) * kDegToRad;
  } catch (const std::invalid_argument& e) {
    return fail(std::string("DEG_PER_S ") + e.what());
  }
  try {
    seconds = cli::parse_seconds(spec.substr(c2 + 1));
  } catch (const std::invalid_argument& e) {
    return fail(std::string("SECONDS ") + e.what());
  }
  const int index = 3 + (axis - 'x');
  return [=](double time, double dt) {
    HandControllerSample s;
    if (time < seconds) s.increment[index] = rate * dt;
    return s;
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Runs a task parameter set (.textproto or .json) on the embedded MuJoCo-simulated arm and\n"
      "prints a summary; or, with --serve, runs the remote site: the real-time control loop and\n"
      "executor behind the tether.v1.RemoteSite gRPC service (plus grpc.health.v1 and server\n"
      "reflection), driven by a ground station (tether, tether-ground).");
  cli::configure(
      app, {"tether-remote",
            {"tether-remote --task FILE [options]", "tether-remote --serve HOST:PORT [options]"},
            {{cli::kExitOk, "ok"},
             {cli::kExitFailure, "set-up error (file, task validation, address in use)"},
             {cli::kExitUsage, "bad command line"},
             {kExitBreach, "the task was stopped by a bound breach"}}});
  const std::string serve_group = "serve mode";
  const std::string task_group = "task mode";
  std::string serve_address, site = "remote", task_dir, port_file, arm_link_spec, arm_link_key;
  std::string arm_cameras_spec;
  double lease_timeout = 5.0;
  int datagram_port = 0;
  double link_timeout = 0.01;
  double duration = 10.0;
  auto* serve_option =
      app.add_option("--serve", serve_address,
                     "listen address, e.g. 127.0.0.1:50051 (port 0 picks a free port;\n"
                     "the line \"tether-remote: serving on HOST:PORT\" is printed)")
          ->option_text("HOST:PORT")
          ->check(cli::HostPort(0))
          ->group(serve_group);
  app.add_option("--site", site, "the site's name in status replies (default remote)")
      ->option_text("NAME")
      ->check(cli::NonEmpty())
      ->group(serve_group);
  app.add_option("--task-dir", task_dir,
                 "keep uploaded task sets in DIR as NAME.textproto (default: memory)")
      ->option_text("DIR")
      ->group(serve_group);
  app.add_option("--lease-timeout", lease_timeout,
                 "control lapses after T of silence from its operator (default 5s)")
      ->option_text("T")
      ->transform(cli::Seconds())
      ->group(serve_group);
  app.add_option("--datagram-port", datagram_port,
                 "UDP port of the teleoperation datagram plane, on the --serve host: 0 the\n"
                 "gRPC port's number (default), -1 none (increments on the stream only)")
      ->option_text("PORT")
      ->check(CLI::Range(-1, 65535))
      ->group(serve_group);
  app.add_option("--port-file", port_file, "also write the bound port to FILE")
      ->option_text("FILE")
      ->group(serve_group);
  auto* arm_link_option =
      app.add_option("--arm-link", arm_link_spec,
                     "drive an arm over the UDP joint-servo link (tether-simarm or a hardware\n"
                     "bridge) instead of the embedded simulation; needs --arm-link-key")
          ->option_text("udp:HOST:PORT")
          ->check(cli::ParsedBy(address_with_scheme("udp")))
          ->needs(serve_option)
          ->group(serve_group);
  auto* arm_link_key_option =
      app.add_option("--arm-link-key", arm_link_key,
                     "the arm link's shared secret, at least 16 bytes (the file tether-simarm\n"
                     "reads with --key), e.g. made with head -c 32 /dev/urandom > FILE")
          ->option_text("FILE")
          ->check(cli::NonEmpty())
          ->needs(arm_link_option)
          ->group(serve_group);
  arm_link_option->needs(arm_link_key_option);
  app.add_option("--arm-cameras", arm_cameras_spec,
                 "take the scene and its cameras from the camera server beside the arm\n"
                 "(tether-simarm --camera-port), authenticated with --arm-link-key; without\n"
                 "it a site on --arm-link reports no scene and no cameras")
      ->option_text("tcp:HOST:PORT")
      ->check(cli::ParsedBy(address_with_scheme("tcp")))
      ->needs(arm_link_option)
      ->group(serve_group);
  const std::string security_group = "security (serve mode)";
  cli::TlsFiles tls;
  std::string roles, audit;
  QuotaOptions quotas;
  cli::add_tls_options(app, tls, cli::TlsRole::kServer, security_group, "");
  app.add_option("--roles", roles,
                 "identity -> role file (lines 'alice operator'), reread on SIGHUP;\n"
                 "required with TLS")
      ->option_text("FILE")
      ->envname("TETHER_ROLES")
      ->group(security_group);
  app.add_option("--audit", audit,
                 "append the audit trail to FILE, one fsync'd JSON line per controlling\n"
                 "call, stop and breach (default: DIR/audit.jsonl with --task-dir)")
      ->option_text("FILE")
      ->group(security_group);
  std::string black_box_dir;
  BlackBoxOptions black_box;
  double black_box_minutes = 10.0;
  double black_box_budget_mib = 1024.0;
  const std::string record_group = "Black box (docs/recordings.md)";
  app.add_option("--black-box", black_box_dir,
                 "keep the last minutes of every cycle, increment, breach and audit line in\n"
                 "a ring of MCAP segments in DIR, fetched with `tether blackbox fetch`\n"
                 "(default: DIR/black-box with --task-dir; 'none': off)")
      ->option_text("DIR")
      ->group(record_group);
  app.add_option("--black-box-minutes", black_box_minutes, "history kept (default 10)")
      ->check(CLI::Range(0.5, 1440.0))
      ->group(record_group);
  app.add_option("--black-box-budget", black_box_budget_mib,
                 "disk budget [MiB], breaches' segments included (default 1024)")
      ->check(CLI::Range(16.0, 1048576.0))
      ->group(record_group);
  app.add_option("--black-box-segment", black_box.segment,
                 "seconds a segment is closed (summary, fsync) after (default 30)")
      ->check(CLI::Range(1.0, 3600.0))
      ->group(record_group);
  app.add_option("--black-box-sync", black_box.sync_interval,
                 "seconds between flushes of the open segment: the most a crash loses\n"
                 "(default 1)")
      ->check(CLI::Range(0.05, 60.0))
      ->group(record_group);
  app.add_option("--max-streams", quotas.max_streams,
                 "concurrent telemetry and teleoperation streams per identity (default 4)")
      ->check(CLI::Range(1, 1000))
      ->group(security_group);
  app.add_option("--max-camera-views", quotas.max_camera_views,
                 "concurrent camera views per identity (default 4)")
      ->check(CLI::Range(1, 64))
      ->group(security_group);
  app.add_option("--upload-rate", quotas.uploads_per_second,
                 "task uploads per second per identity, after a burst of 10 (default 2)")
      ->check(CLI::Range(0.01, 1000.0))
      ->group(security_group);
  app.add_option("--link-timeout", link_timeout,
                 "no arm state for T = lost arm link -> controlled stop (default 10ms)")
      ->option_text("T")
      ->transform(cli::Seconds())
      ->group(serve_group);

  RecoveryLimits recovery;
  app.add_option("--recovery-joint-speed", recovery.joint_speed,
                 "fastest a recovery moves a joint out of a stop (default 0.1 rad/s)")
      ->option_text("RAD_PER_S")
      ->check(CLI::Range(0.001, 1.0))
      ->group(serve_group);
  app.add_option("--recovery-tool-speed", recovery.tool_speed,
                 "fastest a recovery moves the tool out of a stop (default 0.02 m/s)")
      ->option_text("M_PER_S")
      ->check(CLI::Range(0.0001, 0.25))
      ->group(serve_group);

  std::string task_path, csv, plot, hand;
  bool validate_only = false;
  auto* task_option =
      app.add_option("--task", task_path, "task parameter set (protobuf text format or JSON)")
          ->option_text("FILE")
          ->group(task_group);
  auto* duration_option =
      app.add_option("--duration", duration,
                     "task time to run, e.g. 10s, 500ms (default 10s); with --serve: serve for T,\n"
                     "then stop (default: until SIGINT/SIGTERM)")
          ->option_text("T")
          ->transform(cli::Seconds())
          ->group(task_group);
  bool batch = false, realtime = false;
  auto* batch_flag =
      app.add_flag("--batch", batch, "run the cycles as fast as possible")->group(task_group);
  app.add_flag("--realtime", realtime, "pace cycles on the wall clock (the default)")
      ->excludes(batch_flag)
      ->group(task_group);
  app.add_option("--hand-controller", hand,
                 "scripted hand controller, rotate-AXIS:DEG_PER_S:SECONDS, e.g.\n"
                 "rotate-x:15:2 turns the handle about its x axis at 15 deg/s for 2 s")
      ->option_text("SPEC")
      ->check(cli::ParsedBy([](const std::string& spec) { parse_hand_controller(spec); }))
      ->group(task_group);
  app.add_option("--csv", csv, "every cycle's telemetry as CSV")
      ->option_text("FILE")
      ->group(task_group);
  app.add_option("--plot", plot, "plots (aux angle, force and torque magnitude vs time)")
      ->option_text("FILE.png")
      ->group(task_group);
  app.add_flag("--validate", validate_only, "only load and validate the task")->group(task_group);
  int loop_cpu = -1;
  app.add_option("--loop-cpu", loop_cpu,
                 "pin the real-time control loop to this CPU (default: not pinned); also\n"
                 "with --serve")
      ->option_text("N")
      ->check(CLI::Range(0, 1023))
      ->group(task_group);

  const std::string arm_group = "arm and scene (both modes)";
  cli::ArmOptions arm_choice;
  cli::add_arm_options(app, arm_choice);
  std::string scene_name = "free";
  add_scene_option(app, scene_name);
  WristComplianceParameters wrist;
  add_wrist_option(app, wrist);
  for (const char* name : {"--arm", "--base", "--tool", "--scene", "--wrist-stiffness"}) {
    app.get_option(name)->group(arm_group);
  }

  task_option->excludes(serve_option);
  app.callback([&] {
    if (task_path.empty() && serve_address.empty()) throw CLI::RequiredError("--task or --serve");
  });
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  const bool duration_given = duration_option->count() > 0;
  const SceneKind scene = *scene_from_name(scene_name);
  const Pacing pacing = batch ? Pacing::kBatch : Pacing::kRealTime;

  try {
    const ArmModel arm_model = arm_choice.load();
    if (!serve_address.empty()) {
      // Declared before the arm that may use them, so they outlive it.
      std::unique_ptr<ArmInterface> udp_arm;  // under a CameraVisionArm, if there is one
      std::unique_ptr<camera_link::NetworkCameras> network_cameras;
      std::unique_ptr<ArmInterface> arm;
      ServerOptions options;
      if (arm_link_spec.empty()) {
        SimulationOptions sim_options;
        sim_options.scene = scene;
        sim_options.wrist = wrist;
        sim_options.initial_position = default_initial_position(scene, arm_model);
        auto simulated = std::make_unique<SimulatedArm>(arm_model, sim_options);
        options.scene = simulated->scene_description();
        options.cameras = simulated.get();  // rendered when watched (WatchCamera)
        arm = std::move(simulated);
        options.arm_link = "embedded simulation, scene " + scene_name;
      } else {
        // Validated while parsing: udp:HOST:PORT.
        const cli::Address endpoint = cli::parse_address(arm_link_spec.substr(4));
        UdpArmOptions udp;
        udp.remote_host = endpoint.host;
        udp.remote_port = endpoint.port;
        udp.link_timeout = link_timeout;
        udp.key_file = arm_link_key;
        arm = std::make_unique<UdpArm>(arm_model, udp);
        options.arm_link = "UDP joint-servo link " + arm_link_spec.substr(4);
        if (!arm_cameras_spec.empty()) {
          const cli::Address at = cli::parse_address(arm_cameras_spec.substr(4));
          camera_link::NetworkCamerasOptions camera_options;
          camera_options.host = at.host;
          camera_options.port = at.port;
          camera_options.key_file = arm_link_key;
          camera_options.arm_model = arm_link::arm_model_id(arm_model);
          network_cameras = std::make_unique<camera_link::NetworkCameras>(camera_options);
          options.scene = network_cameras->scene();
          options.cameras = network_cameras.get();
          spdlog::info("cameras of scene '{}' from {}: {}", network_cameras->scene().name,
                       arm_cameras_spec.substr(4), network_cameras->cameras().size());
          // A scene with a visual target: the site finds its tag in the wrist camera's
          // images itself and hands the readings to visual tracking, as a real wrist camera
          // would. The tag's id and size are the scene's, as the served catalogue says.
          if (const auto vision = camera_link::vision_options_for(network_cameras->scene())) {
            udp_arm = std::move(arm);
            arm =
                std::make_unique<camera_link::CameraVisionArm>(*udp_arm, *network_cameras, *vision);
            spdlog::info(
                "visual tracking from the site's detection in '{}' images (tag36h11 "
                "id {}, {} m)",
                vision->camera, vision->tag_id, vision->tag_size);
          }
        }
      }
      options.address = serve_address;
      options.site_name = site;
      options.task_directory = task_dir;
      options.lease_timeout = lease_timeout;
      options.datagram_port = datagram_port;
      options.loop_cpu = loop_cpu;
      options.security = SecurityOptions{tls.insecure, tls.ca, tls.cert, tls.key, tls.crl, roles};
      options.audit_file = !audit.empty()      ? audit
                           : !task_dir.empty() ? task_dir + "/audit.jsonl"
                                               : std::string();
      options.quotas = quotas;
      options.recovery = recovery;
      black_box.directory = black_box_dir == "none"  ? std::string()
                            : !black_box_dir.empty() ? black_box_dir
                            : !task_dir.empty()      ? task_dir + "/black-box"
                                                     : std::string();
      black_box.window = black_box_minutes * 60.0;
      black_box.budget = static_cast<std::uint64_t>(black_box_budget_mib * 1048576.0);
      options.black_box = black_box;
      return serve_remote_site(*arm, options, duration_given ? duration : 0.0, [&](int port) {
        const std::string host = serve_address.substr(0, serve_address.rfind(':'));
        std::printf("tether-remote: serving on %s:%d\n", host.c_str(), port);
        std::fflush(stdout);
        if (!port_file.empty()) {
          std::FILE* f = std::fopen(port_file.c_str(), "w");
          if (f != nullptr) {
            std::fprintf(f, "%d\n", port);
            std::fclose(f);
          }
        }
      });
    }
    const TaskParameters task = proto::load_valid_task_file(task_path, KinematicModel(arm_model));
    if (validate_only) {
      std::printf("%s: task '%s' is valid for %s\n", task_path.c_str(), task.name.c_str(),
                  arm_model.name.c_str());
      return cli::kExitOk;
    }

    SimulationOptions sim_options;
    sim_options.scene = scene;
    sim_options.wrist = wrist;
    sim_options.initial_position = default_initial_position(scene, arm_model);
    // A batch run renders its cameras inside the physics step, so it comes out the same on
    // any machine; a real-time run renders on a thread of its own.
    sim_options.render_timing =
        pacing == Pacing::kBatch ? RenderTiming::kSynchronous : RenderTiming::kThread;
    SimulatedArm arm(arm_model, sim_options);

    TaskRunOptions run;
    run.duration = duration;
    run.pacing = pacing;
    run.loop_cpu = loop_cpu;
    if (!hand.empty()) run.hand_controller = parse_hand_controller(hand);
    std::printf("tether-remote: task '%s' on %s, scene %s, %s, period %.3g ms, %.3g s\n",
                task.name.c_str(), arm_model.name.c_str(), scene_name.c_str(),
                pacing == Pacing::kBatch ? "batch" : "real time", task.period * 1e3, duration);
    const TaskRunRecord record = run_task(arm, task, run);

    std::printf("  cycles            %llu\n", static_cast<unsigned long long>(record.cycles));
    std::printf("  final state       %s\n", to_string(record.final_state));
    if (record.breach) std::printf("  stopped by        %s\n", describe(record.breach).c_str());
    if (scene == SceneKind::kDoor && !record.aux0.empty()) {
      double peak = 0.0;
      for (double a : record.aux0) peak = std::max(peak, a);
      std::printf("  door angle        %.2f deg at the end, %.2f deg peak\n",
                  record.aux0.back() * kRadToDeg, peak * kRadToDeg);
    }
    std::printf("  peak force        %.2f N\n", record.peak_force);
    std::printf("  peak torque       %.2f N·m\n", record.peak_torque);
    if (!record.error.empty()) {
      const auto& e = record.error.back();
      std::printf("  final x_c - x_r   %.4f m, %.3f deg, arm angle %.3f deg\n", e.head<3>().norm(),
                  e.segment<3>(3).norm() * kRadToDeg, e[6] * kRadToDeg);
    }
    if (record.teleoperation.applied > 0) {
      std::printf("  hand controller   %llu samples applied, %llu lost, %llu duplicates\n",
                  static_cast<unsigned long long>(record.teleoperation.applied),
                  static_cast<unsigned long long>(record.teleoperation.lost),
                  static_cast<unsigned long long>(record.teleoperation.duplicates));
    }
    const LoopStatistics& st = record.statistics;
    std::printf("  cycle compute     p50 %.1f us, p99 %.1f us, max %.1f us (incl. physics)\n",
                st.compute_time.percentile(50) * 1e6, st.compute_time.percentile(99) * 1e6,
                st.compute_time.max() * 1e6);
    if (pacing == Pacing::kRealTime) {
      // Wake-up latency is what cyclictest measures (wake-up minus deadline); the period
      // error is |wake-to-wake − period|, up to twice that.
      std::printf("  wake-up latency   p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n",
                  st.wakeup_latency.percentile(50) * 1e6, st.wakeup_latency.percentile(99) * 1e6,
                  st.wakeup_latency.percentile(99.9) * 1e6, st.wakeup_latency.max() * 1e6);
      std::printf(
          "  period jitter     p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us; %llu "
          "overruns\n",
          st.period_jitter.percentile(50) * 1e6, st.period_jitter.percentile(99) * 1e6,
          st.period_jitter.percentile(99.9) * 1e6, st.period_jitter.max() * 1e6,
          static_cast<unsigned long long>(st.overruns));
    }
    if (!csv.empty()) {
      write_csv(record, csv);
      std::printf("  csv               %s\n", csv.c_str());
    }
    if (!plot.empty()) {
      report::Figure figure;
      figure.title = "tether: " + task.name + " (" + arm_model.name + ", scene " + scene_name + ")";
      std::vector<double> degrees(record.aux0.size());
      for (std::size_t k = 0; k < degrees.size(); ++k) degrees[k] = record.aux0[k] * kRadToDeg;
      if (scene == SceneKind::kDoor) {
        report::Panel angle;
        angle.title = "door angle";
        angle.x_label = "time [s]";
        angle.y_label = "angle [deg]";
        angle.series.push_back({"door angle", record.time, degrees, report::Rgb{31, 119, 180}});
        figure.panels.push_back(angle);
      }
      report::Panel wrench;
      wrench.title = "force and torque magnitude at the MOTION origin";
      wrench.x_label = "time [s]";
      wrench.y_label = "|f| [N], |tau| [N m]";
      wrench.series.push_back({"force [N]", record.time, record.force, report::Rgb{214, 39, 40}});
      wrench.series.push_back(
          {"torque [N m]", record.time, record.torque, report::Rgb{44, 160, 44}});
      figure.panels.push_back(wrench);
      report::write_png(figure, plot);
      std::printf("  plot              %s\n", plot.c_str());
    }
    return record.breach ? kExitBreach : cli::kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "tether-remote: " << e.what() << '\n';
    return cli::kExitFailure;
  }
}

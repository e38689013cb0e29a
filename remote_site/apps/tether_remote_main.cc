// tether-remote: the remote-site executor on the embedded MuJoCo arm.
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "tether/common/task/validation.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/remote/arm_link/udp_arm.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/report/plot.h"
#include "tether/remote/server/remote_site_server.h"

namespace {

using namespace tether;
using namespace tether::remote;

constexpr const char* kUsage = R"(usage: tether-remote --task FILE [options]
       tether-remote --serve HOST:PORT [options]

Runs a task parameter set (.textproto or .json) on the embedded MuJoCo-simulated arm and
prints a summary; or, with --serve, runs the remote site: the real-time control loop and
executor behind the tether.v1.RemoteSite gRPC service (plus grpc.health.v1 and server
reflection), driven by a ground station (tether, tether-ground).

serve mode:
  --serve HOST:PORT        listen address, e.g. 127.0.0.1:50051 (port 0 picks a free port;
                           the line "tether-remote: serving on HOST:PORT" is printed)
  --site NAME              the site's name in status replies (default remote)
  --task-dir DIR           keep uploaded task sets in DIR as NAME.textproto (default: memory)
  --lease-timeout T        control lapses after T of silence from its operator (default 5s)
  --port-file FILE         also write the bound port to FILE
  --duration T             serve for T, then stop (default: until SIGINT/SIGTERM)
  --arm-link udp:HOST:PORT drive an arm over the UDP joint-servo link (tether-simarm or a
                           hardware bridge) instead of the embedded simulation
  --link-timeout T         no arm state for T = lost arm link → controlled stop (default 10ms)
  --arm, --base, --tool, --scene as below

task mode:
  --task FILE              task parameter set (protobuf text format or JSON)
  --duration T             task time to run, e.g. 10s, 500ms (default 10s)
  --arm NAME|URDF          iiwa7 (default) or panda, or a URDF file (with --base/--tool)
  --base LINK --tool LINK  base and tool links of a URDF given with --arm
  --scene NAME             free (default), door, wall, obstacles, proximity
  --realtime | --batch     pace cycles on the wall clock (default) or run as fast as possible
  --hand-controller SPEC   scripted hand controller, rotate-AXIS:DEG_PER_S:SECONDS, e.g.
                           rotate-x:15:2 turns the handle about its x axis at 15 deg/s for 2 s
  --csv FILE               every cycle's telemetry as CSV
  --plot FILE.png          plots (aux angle, force and torque magnitude vs time)
  --validate               only load and validate the task
exit status: 0 ok, 1 set-up error (file, task validation, address in use), 2 usage, 3 the
task was stopped by a bound breach
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tether-remote: " << message << "\n\n" << kUsage;
  std::exit(2);
}

double parse_duration(const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    usage_error("--duration '" + text + "' is not a duration");
  }
  const std::string unit = text.substr(used);
  if (unit == "ms")
    value *= 1e-3;
  else if (!unit.empty() && unit != "s")
    usage_error("--duration unit must be s or ms");
  if (!(value > 0.0) || !std::isfinite(value)) usage_error("--duration must be > 0");
  return value;
}

SceneKind parse_scene(const std::string& name) {
  if (const auto scene = scene_from_name(name)) return *scene;
  usage_error("--scene '" + name + "': expected " + kSceneNames);
}

HandControllerScript parse_hand_controller(const std::string& spec) {
  // rotate-AXIS:DEG_PER_S:SECONDS
  const auto c1 = spec.find(':');
  const auto c2 = spec.find(':', c1 + 1);
  if (spec.rfind("rotate-", 0) != 0 || c1 == std::string::npos || c2 == std::string::npos ||
      c1 != 8) {
    usage_error("--hand-controller '" + spec + "': expected rotate-AXIS:DEG_PER_S:SECONDS");
  }
  const char axis = spec[7];
  if (axis < 'x' || axis > 'z') usage_error("--hand-controller axis must be x, y or z");
  double rate = 0.0, seconds = 0.0;
  try {
    rate = std::stod(spec.substr(c1 + 1, c2 - c1 - 1)) * M_PI / 180.0;
    seconds = std::stod(spec.substr(c2 + 1));
  } catch (const std::exception&) {
    usage_error("--hand-controller '" + spec + "': rate and duration must be numbers");
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
  std::string task_path, arm_name = "iiwa7", base, tool, csv, plot, hand;
  double duration = 10.0;
  bool duration_given = false;
  std::string serve_address, site = "remote", task_dir, port_file;
  double lease_timeout = 5.0;
  std::string arm_link_spec;
  double link_timeout = 0.01;
  SceneKind scene = SceneKind::kFreeSpace;
  std::string scene_name = "free";
  Pacing pacing = Pacing::kRealTime;
  bool validate_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--task")
      task_path = value();
    else if (arg == "--duration") {
      duration = parse_duration(value());
      duration_given = true;
    } else if (arg == "--serve")
      serve_address = value();
    else if (arg == "--site")
      site = value();
    else if (arg == "--task-dir")
      task_dir = value();
    else if (arg == "--lease-timeout")
      lease_timeout = parse_duration(value());
    else if (arg == "--port-file")
      port_file = value();
    else if (arg == "--arm-link")
      arm_link_spec = value();
    else if (arg == "--link-timeout")
      link_timeout = parse_duration(value());
    else if (arg == "--arm")
      arm_name = value();
    else if (arg == "--base")
      base = value();
    else if (arg == "--tool")
      tool = value();
    else if (arg == "--scene")
      scene = parse_scene(scene_name = value());
    else if (arg == "--realtime")
      pacing = Pacing::kRealTime;
    else if (arg == "--batch")
      pacing = Pacing::kBatch;
    else if (arg == "--hand-controller")
      hand = value();
    else if (arg == "--csv")
      csv = value();
    else if (arg == "--plot")
      plot = value();
    else if (arg == "--validate")
      validate_only = true;
    else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }
  if (task_path.empty() && serve_address.empty()) usage_error("--task or --serve is required");
  if (!arm_link_spec.empty() && serve_address.empty()) usage_error("--arm-link needs --serve");
  if (!task_path.empty() && !serve_address.empty()) {
    usage_error("--task and --serve exclude each other: upload tasks to a serving site");
  }

  try {
    UrdfLoadOptions urdf_options;
    if (!base.empty()) urdf_options.base_link = base;
    if (!tool.empty()) urdf_options.tool_link = tool;
    const ArmModel arm_model = load_arm_by_name(arm_name, urdf_options);
    if (!serve_address.empty()) {
      std::unique_ptr<ArmInterface> arm;
      ServerOptions options;
      if (arm_link_spec.empty()) {
        SimulationOptions sim_options;
        sim_options.scene = scene;
        sim_options.initial_position = default_initial_position(scene, arm_model);
        arm = std::make_unique<SimulatedArm>(arm_model, sim_options);
        options.arm_link = "embedded simulation, scene " + scene_name;
      } else {
        if (arm_link_spec.rfind("udp:", 0) != 0) {
          usage_error("--arm-link '" + arm_link_spec + "': expected udp:HOST:PORT");
        }
        UdpArmOptions udp;
        try {
          udp = parse_udp_endpoint(arm_link_spec.substr(4));
        } catch (const std::invalid_argument& e) {
          usage_error(std::string("--arm-link: ") + e.what());
        }
        udp.link_timeout = link_timeout;
        arm = std::make_unique<UdpArm>(arm_model, udp);
        options.arm_link = "UDP joint-servo link " + arm_link_spec.substr(4);
      }
      options.address = serve_address;
      options.site_name = site;
      options.task_directory = task_dir;
      options.lease_timeout = lease_timeout;
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
      return 0;
    }

    SimulationOptions sim_options;
    sim_options.scene = scene;
    sim_options.initial_position = default_initial_position(scene, arm_model);
    SimulatedArm arm(arm_model, sim_options);

    TaskRunOptions run;
    run.duration = duration;
    run.pacing = pacing;
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
                  record.aux0.back() * 180.0 / M_PI, peak * 180.0 / M_PI);
    }
    std::printf("  peak force        %.2f N\n", record.peak_force);
    std::printf("  peak torque       %.2f N·m\n", record.peak_torque);
    if (!record.error.empty()) {
      const auto& e = record.error.back();
      std::printf("  final x_c - x_r   %.4f m, %.3f deg, arm angle %.3f deg\n", e.head<3>().norm(),
                  e.segment<3>(3).norm() * 180.0 / M_PI, e[6] * 180.0 / M_PI);
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
      std::printf("  period jitter     p50 %.1f us, p99 %.1f us, max %.1f us; %llu overruns\n",
                  st.period_jitter.percentile(50) * 1e6, st.period_jitter.percentile(99) * 1e6,
                  st.period_jitter.max() * 1e6, static_cast<unsigned long long>(st.overruns));
    }
    if (!csv.empty()) {
      write_csv(record, csv);
      std::printf("  csv               %s\n", csv.c_str());
    }
    if (!plot.empty()) {
      report::Figure figure;
      figure.title = "tether: " + task.name + " (" + arm_model.name + ", scene " + scene_name + ")";
      std::vector<double> degrees(record.aux0.size());
      for (std::size_t k = 0; k < degrees.size(); ++k) degrees[k] = record.aux0[k] * 180.0 / M_PI;
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
    return record.breach ? 3 : 0;
  } catch (const std::exception& e) {
    std::cerr << "tether-remote: " << e.what() << '\n';
    return 1;
  }
}

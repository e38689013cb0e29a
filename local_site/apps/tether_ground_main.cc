// tether-ground: the local site's operator service (see ground/ground_station.h).
#include <cstdlib>
#include <iostream>
#include <string>

#include "tether/local/ground/ground_station.h"

namespace {

using namespace tether;
using namespace tether::local;

constexpr const char* kUsage =
    R"(usage: tether-ground --site [NAME=]HOST:PORT [--site ...] [options]

The local site's operator service: connects to one or more remote sites (tether-remote
--serve), reports each site's executor state and breaches, and teleoperates one of them with
a hand controller, rendering force reflection on the hand controller's actuators.

  --site [NAME=]HOST:PORT   a remote site; repeat for several
  --teleop NAME             the site to teleoperate (default: the first)
  --device SPEC             hand controller: keyboard, evdev:/dev/input/eventN,
                            joystick:/dev/input/jsN, script:FILE, sim, sim:FILE, or none to
                            only watch the sites (default sim)
  --mode tool|world|camera  teleoperation mode (default tool)
  --scale T[,R]             translation and rotation scale, remote per hand (default 1,1)
  --reflect none|measured|error
                            force reflection of the measured wrench F_a or the tracking error
                            F_r - F_a (default measured)
  --force-scale S           rendered N per remote N (default 0.1)
  --torque-scale S          rendered N m per remote N m (default 0.01)
  --max-force N             clamp on the rendered force [N] (default 5)
  --max-torque NM           clamp on the rendered torque [N m] (default 0.5)
  --rate HZ                 increments per second (default 1000)
  --duration SECONDS        stop after this long (default: until Ctrl-C or the script ends)
  --start TASK              start this stored task on the teleoperated site once streaming,
                            and stop it at the end
  --operator NAME           operator name for the control lease (default $USER@host)
  --report FILE             write the session summary as "key value" lines
  --help                    this text

Keyboard keys are listed in local_site/README.md.
exit status: 0 ok, 1 error, 2 usage, 3 a site stopped its arm on a bound breach, 6 a site
could not be reached
)";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tether-ground: " << message << "\n\n" << kUsage;
  std::exit(2);
}

double number(const std::string& option, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  usage_error(option + " '" + text + "' is not a number");
}

}  // namespace

int main(int argc, char** argv) {
  GroundOptions options;
  options.input.reflection = default_reflection();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--help" || arg == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (arg == "--site") {
        options.sites.push_back(parse_site(value()));
      } else if (arg == "--teleop") {
        options.teleop_site = value();
      } else if (arg == "--device") {
        options.device = value();
      } else if (arg == "--mode") {
        const std::string m = value();
        if (m == "tool")
          options.input.mode = TeleopMode::kTool;
        else if (m == "world")
          options.input.mode = TeleopMode::kWorld;
        else if (m == "camera")
          options.input.mode = TeleopMode::kCamera;
        else
          usage_error("--mode '" + m + "': expected tool, world or camera");
      } else if (arg == "--scale") {
        const std::string v = value();
        const auto comma = v.find(',');
        options.input.translation_scale = number(arg, v.substr(0, comma));
        options.input.rotation_scale = comma == std::string::npos
                                           ? options.input.translation_scale
                                           : number(arg, v.substr(comma + 1));
      } else if (arg == "--reflect") {
        const std::string v = value();
        using Source = ForceReflectionConfig::Source;
        if (v == "none")
          options.input.reflection.source = Source::kNone;
        else if (v == "measured")
          options.input.reflection.source = Source::kMeasured;
        else if (v == "error")
          options.input.reflection.source = Source::kTrackingError;
        else
          usage_error("--reflect '" + v + "': expected none, measured or error");
      } else if (arg == "--force-scale") {
        options.input.reflection.force_scale = number(arg, value());
      } else if (arg == "--torque-scale") {
        options.input.reflection.torque_scale = number(arg, value());
      } else if (arg == "--max-force") {
        options.input.reflection.max_force = number(arg, value());
      } else if (arg == "--max-torque") {
        options.input.reflection.max_torque = number(arg, value());
      } else if (arg == "--rate") {
        options.rate = number(arg, value());
      } else if (arg == "--duration") {
        options.duration = number(arg, value());
      } else if (arg == "--start") {
        options.start_task = value();
      } else if (arg == "--operator") {
        options.operator_name = value();
      } else if (arg == "--report") {
        options.report_path = value();
      } else {
        usage_error("unknown option '" + arg + "'");
      }
    } catch (const std::invalid_argument& e) {
      usage_error(e.what());
    }
  }
  if (options.sites.empty()) usage_error("give at least one --site");
  try {
    return run_ground_station(options, std::cout);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "tether-ground: " << e.what() << '\n';
    return 1;
  }
}

#include "tether/local/console/cli.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "tether/cli/options.h"
#include "tether/common/kinematics.h"
#include "tether/common/units.h"
#include "tether/local/commands/task_command.h"
#include "tether/local/console/camera_watch.h"
#include "tether/local/console/p_warning.h"
#include "tether/local/console/preview.h"
#include "tether/local/console/recording.h"
#include "tether/local/console/replay.h"
#include "tether/local/ground/ground_station.h"
#include "tether/local/link/recording_file.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/local/link/session_recorder.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_diff.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/task/validation.h"

namespace tether::local::console {
namespace {

// The console's exit statuses extend those every tether program shares.
static_assert(kExitOk == cli::kExitOk && kExitError == cli::kExitFailure &&
              kExitUsage == cli::kExitUsage);

// A task that failed to load or validate, already reported to the operator.
struct InvalidTask {};

struct Globals {
  std::string remote;
  std::string operator_name;
  std::chrono::milliseconds timeout{5000};
  ClientCredentials credentials;
};

struct Parsed {
  std::map<std::string, std::string> options;  // --name -> value ("" for flags)
  std::vector<std::string> positional;
  ArgumentValues task_arguments;  // `tether do`: the task command's arguments, name -> value
  bool has(const std::string& name) const { return options.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const {
    const auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
  }
  // Values of options with a Seconds or Count check, so they parse.
  double seconds(const std::string& name, double fallback) const {
    return has(name) ? cli::parse_seconds(get(name)) : fallback;
  }
  std::int64_t count(const std::string& name, std::int64_t fallback) const {
    return has(name) ? cli::parse_count(get(name), 0, std::numeric_limits<std::int64_t>::max())
                     : fallback;
  }
};

// What `tether do` needs before the command line is parsed: the options of `do COMMAND` are
// COMMAND's arguments, which only the commands folder knows.
struct DoCommands {
  bool active = false;    // the command line's command is `do`
  std::string directory;  // --commands DIR, else default_commands_directory()
  std::string name;       // the task command named, if any
  std::optional<CommandLibrary> library;
  std::exception_ptr error;  // the folder could not be used (CommandFileError, or a file
                             // system error)

  const TaskCommand* command() const {
    return library && !name.empty() ? library->find(name) : nullptr;
  }
};

struct Context {
  Globals globals;
  Parsed args;
  std::ostream& out;
  std::ostream& err;
  const DoCommands* do_commands = nullptr;
};

// A command's option: a flag (no value_name) or an option with one value, which `check`
// validates while parsing, so a bad value is a usage error before any work is done.
struct Option {
  const char* name;        // with the leading "--"
  const char* value_name;  // in the help ("--duration T"); nullptr: a flag
  const char* help;
  CLI::Validator check = {};
};

// A required positional argument.
struct Argument {
  const char* name;  // in CLI11's messages ("FILE is required")
  const char* help;
  CLI::Validator check = {};
};

struct Command {
  const char* name;
  const char* synopsis;  // after "tether "
  const char* help;      // what it does; the options are listed from `options`
  std::vector<Argument> arguments;
  std::vector<Option> options;
  std::function<int(Context&)> run;
};

// ---- configuration ----

std::string remote_from_environment() {
  if (const char* env = std::getenv("TETHER_REMOTE"); env != nullptr && *env != '\0') return env;
  if (auto saved = load_saved_remote()) return *saved;
  return kDefaultRemote;
}

void save_remote(const std::string& address) {
  const std::filesystem::path path = saved_remote_path();
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << address << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// ---- shared output ----

void print_issues(std::ostream& err, const std::string& origin, const TaskValidationError& e) {
  const auto& issues = e.issues();
  err << "tether: " << origin << ": task is invalid (" << issues.size()
      << (issues.size() == 1 ? " problem" : " problems") << "):\n";
  for (const auto& issue : issues) err << "  " << issue.message << '\n';
}

void print_indented(std::ostream& os, const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    if (!line.empty()) os << "  " << line << '\n';
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

std::string behaviour_list(const std::vector<Behaviour>& behaviours) {
  std::string out;
  for (Behaviour b : behaviours) out += (out.empty() ? "" : ", ") + std::string(to_string(b));
  return out.empty() ? "-" : out;
}

// Loads and validates a task file; problems are reported to `err`, each at its place in the
// file (file:line:column), and end in InvalidTask.
TaskParameters load_valid_task(const std::string& path, const std::string& arm_name,
                               std::ostream& err) {
  try {
    return proto::load_valid_task_file(path, KinematicModel(load_preview_arm(arm_name)));
  } catch (const proto::ConversionError& e) {
    err << "tether: " << e.what() << '\n';
  } catch (const TaskValidationError& e) {
    print_issues(err, path, e);
  }
  throw InvalidTask{};
}

PreviewOptions preview_options(const Parsed& args) {
  PreviewOptions options;
  options.arm = args.get("--arm", "iiwa7");
  options.scene = args.get("--scene", "free");
  if (args.has("--duration")) options.duration = args.seconds("--duration", 0.0);
  return options;
}

RemoteSiteClient client(const Context& c) {
  return RemoteSiteClient(c.globals.remote,
                          {c.globals.operator_name, c.globals.timeout, c.globals.credentials});
}

// ---- commands ----

int cmd_connect(Context& c) {
  c.globals.remote = c.args.positional[0];
  const SiteStatus s = client(c).status();
  save_remote(c.globals.remote);
  c.out << "connected to site '" << s.site << "' at " << c.globals.remote << ": arm " << s.arm
        << " (" << s.arm_link << "), " << to_string(s.state) << '\n'
        << "saved as the default remote in " << saved_remote_path() << '\n';
  return kExitOk;
}

int cmd_status(Context& c) {
  const SiteStatus s = client(c).status();
  char line[256];
  c.out << "remote       " << c.globals.remote << " (site '" << s.site << "')\n";
  c.out << "arm          " << s.arm << " (" << s.arm_link << ")\n";
  c.out << "state        " << to_string(s.state) << '\n';
  c.out << "task         " << (s.task_name.empty() ? std::string("-") : "'" + s.task_name + "'")
        << " (id " << s.task_id << ")\n";
  c.out << "breach       " << (s.breach ? to_string(s.breach.cause) : "none");
  if (s.breach && !s.breach.description.empty()) c.out << ": " << s.breach.description;
  c.out << '\n';
  c.out << "controller   " << (s.controller.empty() ? "free" : s.controller) << '\n';
  std::snprintf(line, sizeof line,
                "loop         period %.3f ms, %llu cycles, %llu overruns, compute %.1f us, "
                "wake-up latency %.1f us\n",
                s.timing.period * 1e3, static_cast<unsigned long long>(s.timing.cycles),
                static_cast<unsigned long long>(s.timing.overruns), s.timing.compute_time * 1e6,
                s.timing.wakeup_latency * 1e6);
  c.out << line;
  std::snprintf(line, sizeof line,
                "teleop       %llu applied, %llu lost, %llu duplicates, last sequence %llu\n",
                static_cast<unsigned long long>(s.teleoperation.applied),
                static_cast<unsigned long long>(s.teleoperation.lost),
                static_cast<unsigned long long>(s.teleoperation.duplicates),
                static_cast<unsigned long long>(s.teleoperation.last_sequence));
  c.out << line;
  if (s.has_measured_joints) {
    c.out << "joints [deg]";
    for (int i = 0; i < kArmDof; ++i) {
      std::snprintf(line, sizeof line, " %.2f", s.measured_joints[i] * kRadToDeg);
      c.out << line;
    }
    c.out << '\n';
  }
  if (!s.last_reset.empty()) c.out << "last reset   " << s.last_reset << '\n';
  if (s.recovery.outcome != "none") {
    c.out << "recovery     " << s.recovery.outcome << " (" << s.recovery.motion << ")\n";
  }
  if (!s.scene.name.empty()) {
    c.out << "scene        " << s.scene.name << " (" << s.scene.bodies.size() << " bodies, "
          << s.scene.joints.size() << " joints)\n";
    if (!s.scene.cameras.empty()) {
      c.out << "cameras     ";
      for (const SceneCamera& cam : s.scene.cameras) {
        c.out << ' ' << cam.name << " (" << cam.width << 'x' << cam.height << ", " << cam.frame_rate
              << " Hz)";
      }
      c.out << '\n';
    }
  }
  if (s.timing.sample_unix_ns > 0) {
    // The sample's own time, so a value read late is never shown as current.
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    std::snprintf(line, sizeof line, "sampled      %.1f ms ago (cycle %llu)\n",
                  static_cast<double>(now - s.timing.sample_unix_ns) * 1e-6,
                  static_cast<unsigned long long>(s.timing.cycles));
    c.out << line;
  }
  return kExitOk;
}

int cmd_preview(Context& c) {
  const PreviewOptions options = preview_options(c.args);
  const TaskParameters task = load_valid_task(c.args.positional[0], options.arm, c.err);
  const PreviewReport report = preview_task(task, options);
  c.out << format_preview(report);
  return report.breach ? kExitBreachPredicted : kExitOk;
}

// Previews a validated task (unless --no-preview) and stores it on the remote site as
// `name` (--replace overwrites): `tether upload` and `tether do --upload`. A predicted
// breach refuses the upload unless `force`; `overrides` tells the operator how to proceed.
// `scene_from_site`: preview in the scene the site reports, when it names one.
int upload_task(Context& c, const TaskParameters& task, const std::string& name,
                PreviewOptions options, bool force, const char* overrides,
                bool scene_from_site = false) {
  if (!c.args.has("--no-preview")) {
    // Without --scene the preview runs in the scene the site reports, so it predicts what the
    // site's arm will meet (a door task previewed in free space predicts no breach).
    if (scene_from_site) {
      const SiteStatus site = client(c).status();
      if (remote::scene_from_name(site.scene.name)) {
        options.scene = site.scene.name;
        c.out << "previewing in the site's scene '" << site.scene.name << "'\n";
      }
    }
    const PreviewReport report = preview_task(task, options);
    c.out << format_preview(report);
    if (report.breach && !force) {
      c.err << "tether: not uploading '" << name << "': the preview predicts a bound breach ("
            << overrides << ")\n";
      return kExitBreachPredicted;
    }
  }
  const UploadResult result = client(c).upload(name, task, c.args.has("--replace"));
  c.out << "uploaded '" << result.name << "' (revision " << result.revision << ") to "
        << c.globals.remote << '\n';
  return kExitOk;
}

int cmd_upload(Context& c) {
  const std::string& path = c.args.positional[0];
  const PreviewOptions options = preview_options(c.args);
  TaskParameters task = load_valid_task(path, options.arm, c.err);
  std::string name = c.args.get("--name", task.name);
  if (name.empty()) name = std::filesystem::path(path).stem().string();
  if (task.name.empty()) task.name = name;
  return upload_task(c, task, name, options, c.args.has("--force"),
                     "--force uploads anyway, --no-preview skips the preview",
                     !c.args.has("--scene"));
}

int cmd_list(Context& c) {
  const std::vector<TaskSummary> tasks = client(c).list();
  if (tasks.empty()) {
    c.out << "no tasks stored on " << c.globals.remote << '\n';
    return kExitOk;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %8s %10s  %s\n", "NAME", "REVISION", "PERIOD",
                "BEHAVIOURS");
  c.out << line;
  for (const auto& t : tasks) {
    std::snprintf(line, sizeof line, "%-24s %8llu %7.3f ms  %s\n", t.name.c_str(),
                  static_cast<unsigned long long>(t.revision), t.period * 1e3,
                  behaviour_list(t.behaviours).c_str());
    c.out << line;
  }
  return kExitOk;
}

int cmd_show(Context& c) {
  const auto [summary, task] = client(c).get(c.args.positional[0]);
  c.out << "# task '" << summary.name << "' revision " << summary.revision << " on "
        << c.globals.remote << "; behaviours: " << behaviour_list(summary.behaviours) << '\n';
  c.out << (c.args.has("--json") ? proto::to_json(task) : proto::to_text(task));
  return kExitOk;
}

int cmd_delete(Context& c) {
  client(c).remove(c.args.positional[0]);
  c.out << "deleted '" << c.args.positional[0] << "' from " << c.globals.remote << '\n';
  return kExitOk;
}

// Starts the stored task `name`; with --wait-seconds, watches it and reports the outcome:
// `tether start` and `tether do --start`.
int start_task(Context& c, const std::string& name) {
  RemoteSiteClient site = client(c);
  const std::uint64_t id = site.start(name);
  c.out << "started '" << name << "' as task " << id << '\n';
  if (!c.args.has("--wait-seconds")) return kExitOk;
  const double wait = c.args.seconds("--wait-seconds", 0.0);
  const auto begin = std::chrono::steady_clock::now();
  const auto end = begin + std::chrono::duration<double>(wait);
  // The loop picks the task up at its next cycle, so the first replies may still show the
  // previous state; only a stop of this task ends the wait early.
  ExecutorState state = ExecutorState::kUnspecified;
  SiteStatus s = site.status();
  for (;;) {
    const bool this_task = s.task_id == id;
    if (this_task) state = s.state;
    // A stop ends the wait once the arm is at rest (its ramp takes the task's stop time).
    if ((this_task && s.state == ExecutorState::kStopped) ||
        std::chrono::steady_clock::now() >= end) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s = site.status();
  }
  char line[128];
  std::snprintf(line, sizeof line, "after %.3g s: ",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  if (s.task_id != id) {
    c.err << "tether: after " << wait << " s the remote site still reports task " << s.task_id
          << ", not " << id << '\n';
    return kExitError;
  }
  c.out << line << "task " << id << " '" << s.task_name << "' is " << to_string(state);
  if (s.breach) {
    c.out << ", stopped by " << to_string(s.breach.cause);
    if (!s.breach.description.empty()) c.out << ": " << s.breach.description;
    c.out << '\n';
    return kExitError;
  }
  c.out << '\n';
  return kExitOk;
}

int cmd_start(Context& c) { return start_task(c, c.args.positional[0]); }

int cmd_stop(Context& c) {
  RemoteSiteClient site = client(c);
  ExecutorState state = site.stop();
  // The reply may predate the loop's next cycle; give it a moment to take the stop.
  for (int k = 0; k < 10 && state == ExecutorState::kRunning; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state = site.status().state;
  }
  c.out << "stop requested; the arm is " << to_string(state) << " (latched until `tether reset`)\n";
  return kExitOk;
}

int cmd_reset(Context& c) {
  const ResetResult result = client(c).reset();
  if (!result.accepted) {
    c.err << "tether: reset refused: " << result.message << '\n';
    return kExitRefused;
  }
  c.out << "reset accepted" << (result.message.empty() ? "" : ": " + result.message) << '\n';
  return kExitOk;
}

// Moves a stopped arm out of the breach that keeps it stopped, waits for the motion to end
// and, with --reset, resets: a pendant's "move out of limit".
int cmd_recover(Context& c) {
  RecoveryMotion motion;
  const bool jog = c.args.has("--joint");
  if (jog == c.args.has("--retreat") || jog != c.args.has("--by")) {
    c.err << "tether: recover needs either --joint J --by RAD (a joint-limit stop) or "
             "--retreat D (a proximity or singularity stop)\n";
    return kExitUsage;
  }
  if (jog) {
    motion.joint = static_cast<int>(cli::parse_count(c.args.get("--joint"), 1, kArmDof));
    motion.distance = cli::parse_number(c.args.get("--by"));
  } else {
    motion.distance = cli::parse_number(c.args.get("--retreat"));
  }
  if (c.args.has("--speed")) motion.speed = cli::parse_number(c.args.get("--speed"));
  RemoteSiteClient site = client(c);
  RecoveryStatus r;
  try {
    r = site.recover(motion);
  } catch (const RemoteError& e) {
    if (e.code() != RemoteCode::kFailedPrecondition) throw;
    c.err << "tether: " << e.message() << '\n';
    return kExitRefused;
  }
  c.out << "recovering: " << r.motion << '\n';
  // The motion takes its amount over the speed, plus the ramps; the wait allows for more.
  const double speed = motion.speed > 0.0 ? motion.speed : 0.001;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration<double>(std::abs(motion.distance) / speed + 10.0);
  SiteStatus s = site.status();
  while (s.state == ExecutorState::kRecovering && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s = site.status();
  }
  char line[160];
  std::snprintf(line, sizeof line, "recovery %s after %.4g of %.4g; the arm is %s\n",
                s.recovery.outcome.c_str(), s.recovery.moved,
                s.recovery.moved + s.recovery.remaining, to_string(s.state));
  c.out << line;
  if (s.recovery.outcome != "done") {
    if (s.breach && !s.breach.description.empty())
      c.err << "tether: " << s.breach.description << '\n';
    return kExitError;
  }
  if (!c.args.has("--reset")) return kExitOk;
  const ResetResult result = site.reset();
  if (!result.accepted) {
    c.err << "tether: reset refused: " << result.message << '\n';
    return kExitRefused;
  }
  c.out << "reset accepted\n";
  return kExitOk;
}

int cmd_set(Context& c) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {c.args.positional[0], c.args.positional[1]}};
  if (c.args.has("--and")) {
    const std::string& other = c.args.options.at("--and");
    const std::size_t equals = other.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw std::invalid_argument("--and '" + other + "': expected PATH=VALUE");
    }
    fields.emplace_back(other.substr(0, equals), other.substr(equals + 1));
  }
  const std::uint64_t id = client(c).set_parameters(fields);
  for (const auto& [path, value] : fields) {
    c.out << "task " << id << ": " << path << " = " << value << '\n';
  }
  return kExitOk;
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `tether record FILE.mcap`: every cycle, as the site sent it, with what replay needs.
int record_mcap(Context& c, const std::string& path, double duration) {
  if (c.args.has("--decimation")) {
    throw std::invalid_argument(
        "--decimation: an MCAP recording keeps every cycle (tether export --csv thins it out)");
  }
  RemoteSiteClient site = client(c);
  const SiteStatus status = site.status();
  SessionRecorder recorder(path, "tether record",
                           {{"site", status.site},
                            {"arm", status.arm},
                            {"arm_link", status.arm_link},
                            {"scene", status.scene.name}});
  site.set_recorder(&recorder);
  TelemetrySubscription stream = site.record_telemetry(recorder);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(duration);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (recorder.messages() == 0 && std::chrono::steady_clock::now() - start > c.globals.timeout) {
      throw RemoteError("StreamTelemetry", c.globals.remote, RemoteCode::kDeadlineExceeded,
                        "no telemetry within the call timeout");
    }
  }
  stream.cancel();
  site.set_recorder(nullptr);
  recorder.close();
  c.out << "recorded " << recorder.messages() << " messages (every cycle) to " << path << " ("
        << recorder.bytes() << " bytes, MCAP; docs/recordings.md)\n";
  return recorder.messages() > 0 ? kExitOk : kExitError;
}

// Watches a camera for a while and reports what arrived (camera_watch.h).
int cmd_camera(Context& c) {
  CameraWatchOptions options;
  options.camera = c.args.positional[0];
  options.duration = c.args.seconds("--duration", 10.0);
  options.bit_rate_kbps = static_cast<int>(c.args.count("--bit-rate", 0));
  if (c.args.has("--ivf")) options.ivf_path = c.args.get("--ivf");
  RemoteSiteClient site = client(c);
  const CameraWatchReport report = watch_camera_for(site, options);
  print_report(c.out, report);
  if (report.decoded == 0) {
    c.err << "tether: camera '" << options.camera << "': no frame arrived in " << options.duration
          << " s\n";
    return kExitError;
  }
  return kExitOk;
}

// Aims the pan-tilt head carrying a camera.
int cmd_aim(Context& c) {
  const std::string& camera = c.args.positional[0];
  const double pan = c.args.has("--pan") ? cli::parse_number(c.args.get("--pan")) : 0.0;
  const double tilt = c.args.has("--tilt") ? cli::parse_number(c.args.get("--tilt")) : 0.0;
  client(c).aim_camera(camera, pan, tilt);
  c.out << "aimed the head of " << camera << ": pan " << pan << "°, tilt " << tilt << "°\n";
  return kExitOk;
}

int cmd_record(Context& c) {
  const std::string& path = c.args.positional[0];
  const double duration = c.args.seconds("--duration", 10.0);
  if (ends_with(path, ".mcap")) return record_mcap(c, path, duration);
  const auto decimation = static_cast<std::uint32_t>(c.args.count("--decimation", 10));
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write " + path);
  RemoteSiteClient site = client(c);
  TelemetrySubscription stream = site.subscribe_telemetry(decimation);
  RecordingWriter writer(file);
  AchievedFractionWarning p_warning;
  TelemetrySample sample;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(duration);
  // A site that never sends anything is as unreachable as one that refuses the connection.
  const auto first_sample_deadline = start + c.globals.timeout;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) break;
    if (writer.rows() == 0 && now >= first_sample_deadline) {
      throw RemoteError("StreamTelemetry", c.globals.remote, RemoteCode::kDeadlineExceeded,
                        "no telemetry within the call timeout");
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(end - now) +
                      std::chrono::milliseconds(1);
    const auto result = stream.next(sample, std::min(wait, std::chrono::milliseconds(200)));
    if (result == TelemetrySubscription::Next::kEnded) break;
    if (result == TelemetrySubscription::Next::kSample) {
      writer.write(sample);
      if (auto line = p_warning.update(sample)) c.err << "tether: " << *line << '\n';
    }
  }
  stream.cancel();
  file.flush();
  if (!file) throw std::runtime_error("error writing " + path);
  c.out << "recorded " << writer.rows() << " samples (every " << decimation << ". cycle) to "
        << path;
  if (stream.dropped() > 0) c.out << "; " << stream.dropped() << " dropped";
  if (p_warning.warnings() > 0) {
    c.out << "; p fell below its threshold " << p_warning.warnings() << " time(s), lowest "
          << p_warning.lowest();
  }
  c.out << '\n';
  return writer.rows() > 0 ? kExitOk : kExitError;
}

int cmd_teleop(Context& c) {
  GroundOptions options;
  options.sites.push_back(SiteAddress{c.globals.remote, c.globals.remote});
  options.operator_name = c.globals.operator_name;
  options.credentials = c.globals.credentials;
  options.device = c.args.get("--device", "keyboard");
  options.input.mode = *teleop_mode_from_name(c.args.get("--mode", "tool"));
  options.input.reflection = default_reflection();
  options.input.reflection.source =
      *reflection_source_from_name(c.args.get("--reflect", "measured"));
  options.duration = c.args.seconds("--duration", options.duration);
  options.start_task = c.args.get("--start");
  options.timeout = c.globals.timeout;
  const int status = run_ground_station(options, c.out);
  return status == 6 ? kExitUnreachable : status == 0 ? kExitOk : kExitError;
}

int cmd_acquire(Context& c) {
  const std::string holder = client(c).acquire_control(c.args.has("--force"));
  c.out << "control of the arm held by '" << holder << "'\n";
  return kExitOk;
}

int cmd_release(Context& c) {
  client(c).release_control();
  c.out << "control released\n";
  return kExitOk;
}

// One audit line for people: time, who (role), call, task@revision, outcome, detail.
std::string audit_row(const std::string& line) {
  const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
  if (entry.is_discarded() || !entry.is_object()) return line;
  const auto text = [&](const char* key) {
    const auto it = entry.find(key);
    return it == entry.end() ? std::string()
           : it->is_string() ? it->get<std::string>()
                             : it->dump();
  };
  std::string row = text("time") + "  " + text("identity") + " (" + text("role") +
                    (entry.value("authenticated", false) ? "" : ", unauthenticated") + ")  " +
                    text("call");
  if (!text("task").empty()) {
    row += "  " + text("task") + (text("revision").empty() ? "" : "@" + text("revision"));
  }
  row += "  " + text("outcome");
  if (!text("detail").empty()) row += "  " + text("detail");
  return row;
}

int cmd_audit(Context& c) {
  RemoteSiteClient site = client(c);
  std::vector<std::string> lines;
  std::uint64_t first = 0;
  while (true) {
    std::uint64_t next = first;
    std::vector<std::string> page = site.audit(first, 1000, next);
    if (page.empty()) break;
    lines.insert(lines.end(), std::make_move_iterator(page.begin()),
                 std::make_move_iterator(page.end()));
    first = next;
  }
  std::size_t from = 0;
  if (c.args.has("--last")) {
    const auto last = static_cast<std::size_t>(
        cli::parse_count(c.args.get("--last"), 1, std::numeric_limits<std::int32_t>::max()));
    from = lines.size() > last ? lines.size() - last : 0;
  }
  for (std::size_t i = from; i < lines.size(); ++i) {
    c.out << (c.args.has("--json") ? lines[i] : audit_row(lines[i])) << '\n';
  }
  return kExitOk;
}

int cmd_export(Context& c) {
  const std::string& path = c.args.positional[0];
  const std::string csv = c.args.get("--csv");
  if (csv.empty()) throw std::invalid_argument("export: --csv OUT.csv is required");
  std::ofstream file(csv);
  if (!file) throw std::runtime_error("cannot write " + csv);
  RecordingWriter writer(file);
  const auto every = static_cast<std::uint64_t>(c.args.count("--decimation", 1));
  std::uint64_t n = 0;
  for_each_telemetry(path, [&](const TelemetrySample& sample) {
    if (n++ % every == 0) writer.write(sample);
  });
  file.flush();
  if (!file) throw std::runtime_error("error writing " + csv);
  c.out << "exported " << writer.rows() << " of " << n << " cycles from " << path << " to " << csv
        << '\n';
  return writer.rows() > 0 ? kExitOk : kExitError;
}

// A time on the command line: Unix seconds, or ISO 8601 UTC (2026-11-28T09:40:00Z).
std::int64_t parse_time(const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && std::isfinite(seconds) && seconds > 0) {
    return static_cast<std::int64_t>(seconds * 1e9);
  }
  std::tm tm{};
  double fraction = 0.0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) == 6) {
    std::string rest = text.substr(static_cast<std::size_t>(used));
    if (!rest.empty() && rest[0] == '.') {
      std::size_t digits = 1;
      while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
        ++digits;
      }
      fraction = std::strtod(("0" + rest.substr(0, digits)).c_str(), nullptr);
      rest = rest.substr(digits);
    }
    if (rest == "Z") {
      tm.tm_year -= 1900;
      tm.tm_mon -= 1;
      return static_cast<std::int64_t>(timegm(&tm)) * 1000000000LL +
             static_cast<std::int64_t>(fraction * 1e9);
    }
  }
  throw std::invalid_argument("--around '" + text +
                              "': expected a breach id (B...), Unix seconds or an ISO 8601 UTC "
                              "time such as 2026-11-28T09:40:00Z");
}

std::string iso_time(std::int64_t unix_ns) {
  const std::time_t t = unix_ns / 1000000000LL;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>((unix_ns / 1000000) % 1000));
  return text;
}

int cmd_blackbox(Context& c) {
  const std::string& action = c.args.positional[0];
  BlackBoxQuery query;
  query.list_only = action == "list";
  query.all = c.args.has("--all");
  if (c.args.has("--around")) {
    const std::string around = c.args.get("--around");
    if (!around.empty() && around[0] == 'B') {
      query.breach_id = around;
    } else {
      query.unix_ns = parse_time(around);
    }
  }
  query.before = c.args.seconds("--before", 0.0);
  query.after = c.args.seconds("--after", 0.0);
  RemoteSiteClient site = client(c);
  if (query.list_only) {
    std::uint64_t total = 0;
    std::size_t n = 0;
    site.fetch_black_box(query,
                         [&](const BlackBoxSegmentInfo& s) {
                           ++n;
                           total += s.bytes;
                           c.out << s.name << "  " << iso_time(s.start_unix_ns) << " .. "
                                 << iso_time(s.end_unix_ns) << "  " << s.bytes << " bytes"
                                 << (s.complete ? "" : " (open or recovered)");
                           for (const std::string& id : s.breaches) c.out << "  " << id;
                           c.out << '\n';
                         },
                         {});
    c.out << n << " segments, " << total << " bytes\n";
    return kExitOk;
  }
  const std::string out_dir = c.args.get("--out", "blackbox");
  std::filesystem::create_directories(out_dir);
  std::ofstream file;
  std::string name;
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  site.fetch_black_box(
      query,
      [&](const BlackBoxSegmentInfo& s) {
        // A site's file name, written only inside the chosen directory.
        name = std::filesystem::path(s.name).filename().string();
        if (name.empty() || name == "." || name == ".." || !ends_with(name, ".mcap")) {
          throw std::runtime_error("the site sent a segment named '" + s.name + "'");
        }
        file.open(std::filesystem::path(out_dir) / name, std::ios::binary | std::ios::trunc);
        if (!file) throw std::runtime_error("cannot write " + out_dir + "/" + name);
        ++files;
        c.out << name;
        for (const std::string& id : s.breaches) c.out << "  " << id;
        c.out << '\n';
      },
      [&](const std::string& data, bool last) {
        file.write(data.data(), static_cast<std::streamsize>(data.size()));
        bytes += data.size();
        if (last) {
          file.close();
          if (!file) throw std::runtime_error("error writing " + out_dir + "/" + name);
        }
      });
  c.out << "fetched " << files << " segments (" << bytes << " bytes) into " << out_dir
        << "; open them in Foxglove, or: tether replay " << out_dir << '\n';
  return files > 0 ? kExitOk : kExitError;
}

int cmd_replay(Context& c) {
  const RecordingContents recording = read_mcap_recording({c.args.positional[0]});
  ReplayOptions options;
  options.arm = c.args.get("--arm");
  options.scene = c.args.get("--scene");
  if (c.args.has("--tolerance")) options.tolerance = std::stod(c.args.get("--tolerance"));
  const ReplayReport r = replay(recording, options);
  char line[256];
  c.out << "replay of " << c.args.positional[0] << " (" << recording.files.size() << " file(s)"
        << (recording.truncated ? ", recovered after a crash" : "") << ")\n";
  c.out << "  task              '" << r.task << "' from cycle " << r.first_cycle << ", arm "
        << r.arm << ", scene " << r.scene << '\n';
  c.out << "  cycles replayed   " << r.cycles << (r.ended.empty() ? "" : " (" + r.ended + ")")
        << '\n';
  std::snprintf(line, sizeof line,
                "  departure         joints max %.3g rad (last %.3g), commands max %.3g rad, "
                "force max %.3g N",
                r.max_joint_error, r.final_joint_error, r.max_command_error, r.max_wrench_error);
  c.out << line;
  if (r.scene == "door") {
    std::snprintf(line, sizeof line, ", door max %.3g rad", r.max_door_error);
    c.out << line;
  }
  c.out << '\n';
  const auto breach_text = [](const std::optional<ReplayedBreach>& b) {
    if (!b) return std::string("none");
    char text[160];
    std::snprintf(text, sizeof text, "%s in cycle %llu (task time %.3f s)", b->cause.c_str(),
                  static_cast<unsigned long long>(b->cycle), b->task_time);
    return std::string(text);
  };
  if (r.departed_at) {
    c.out << "  departs           from cycle " << *r.departed_at << " after the first\n";
  }
  c.out << "  breach            recorded " << breach_text(r.recorded_breach) << "; replayed "
        << breach_text(r.replayed_breach) << '\n';
  const bool same = r.within_tolerance && r.same_breach;
  std::snprintf(line, sizeof line, "  verdict           %s (tolerance %.3g rad)\n",
                same ? "the same run" : "DEPARTS from the recording", options.tolerance);
  c.out << line;
  return same ? kExitOk : kExitError;
}

int cmd_plot(Context& c) {
  const Recording recording = read_recording(c.args.positional[0]);
  std::string tasks;
  for (const auto& name : recording.text("task")) {
    if (!name.empty() && tasks.find("'" + name + "'") == std::string::npos) {
      tasks += (tasks.empty() ? "" : ", ") + ("'" + name + "'");
    }
  }
  const std::string title = c.args.get(
      "--title", "tether: " + (tasks.empty() ? std::string("recording") : tasks) + " (" +
                     std::filesystem::path(c.args.positional[0]).filename().string() + ")");
  plot_recording(recording, title, c.args.positional[1]);
  c.out << "plotted " << recording.rows << " samples to " << c.args.positional[1] << '\n';
  return kExitOk;
}

// Expands a task command (task_command.h) and prints, diffs, previews, uploads and starts
// the set. Without an action it prints the set.
int cmd_do(Context& c) {
  const DoCommands& d = *c.do_commands;
  if (d.error) {
    try {
      std::rethrow_exception(d.error);
    } catch (const CommandFileError& e) {
      c.err << "tether: the task commands in " << d.directory << " cannot be used ("
            << e.problems().size() << (e.problems().size() == 1 ? " problem" : " problems")
            << "):\n";
      for (const std::string& problem : e.problems()) c.err << "  " << problem << '\n';
      return kExitError;
    }
  }
  if (!d.library) throw std::logic_error("tether do: the task commands were not looked for");
  const CommandLibrary& library = *d.library;
  if (c.args.has("--list")) {
    c.out << format_command_list(library);
    return kExitOk;
  }
  if (c.args.positional.empty()) {
    c.err << "tether: do: name a task command (`tether do --list` lists them)\n";
    return kExitUsage;
  }
  const std::string& name = c.args.positional[0];
  const TaskCommand* command = d.command();
  if (command == nullptr) {
    c.err << "tether: do: no task command '" << name << "' in " << library.directory()
          << "; commands: " << (library.commands().empty() ? "none" : library.names()) << '\n';
    return kExitUsage;
  }
  const std::string arm = c.args.get("--arm", "iiwa7");
  Expansion expansion;
  try {
    expansion = expand(*command, c.args.task_arguments, KinematicModel(load_preview_arm(arm)),
                       c.args.get("--name"));
  } catch (const CommandArgumentError& e) {
    c.err << "tether: do " << name << ": " << e.what() << '\n';
    return kExitUsage;
  } catch (const TaskValidationError& e) {
    print_issues(c.err, "do " + name + " (arm " + arm + ")", e);
    return kExitInvalidTask;
  } catch (const proto::ConversionError& e) {
    c.err << "tether: do " << name << ": " << e.what() << '\n';
    return kExitInvalidTask;
  } catch (const std::invalid_argument& e) {  // --name
    c.err << "tether: do " << name << ": " << e.what() << '\n';
    return kExitUsage;
  }
  const TaskParameters& task = expansion.task;

  PreviewOptions options;
  options.arm = arm;
  options.scene = c.args.get("--scene", command->scene);
  if (c.args.has("--duration")) {
    options.duration = c.args.seconds("--duration", 0.0);
  } else if (command->preview_duration) {
    options.duration = *command->preview_duration;
  }
  const bool upload = c.args.has("--upload") || c.args.has("--start");
  if (c.args.has("--print") || !(c.args.has("--preview") || c.args.has("--diff") || upload)) {
    c.out << "# tether do " << expansion.command_line << '\n' << proto::to_text(task);
  }
  if (c.args.has("--diff")) {
    const std::string& file = c.args.get("--diff");
    const TaskParameters other = proto::load_task_file(file);
    c.out << "--- " << file << "\n+++ tether do " << expansion.command_line << '\n'
          << proto::format_differences(proto::diff_tasks(other, task));
  }
  if (!upload) {
    if (!c.args.has("--preview")) return kExitOk;
    const PreviewReport report = preview_task(task, options);
    c.out << format_preview(report);
    return report.breach ? kExitBreachPredicted : kExitOk;
  }
  // The upload previews (once) unless --no-preview, and a predicted breach refuses it.
  const int status =
      upload_task(c, task, task.name, options, false, "--no-preview skips the preview");
  if (status != kExitOk || !c.args.has("--start")) return status;
  return start_task(c, task.name);
}

// ---- the command line ----

// Checks of option values shared by several commands.
CLI::Validator seconds_check() { return cli::Seconds(); }
CLI::Validator scene_check() {
  return cli::OneOf([](std::string_view name) { return remote::scene_from_name(name).has_value(); },
                    remote::kSceneNames);
}
CLI::Validator preview_arm_check() {
  return cli::ParsedBy([](const std::string& name) { load_preview_arm(name); });
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"connect",
       "connect HOST:PORT",
       "Checks that the remote site answers (GetStatus) and saves HOST:PORT as the default\n"
       "remote in $XDG_CONFIG_HOME/tether/remote (~/.config/tether/remote).\n",
       {{"ADDRESS", "the remote site, HOST:PORT", cli::HostPort()}},
       {},
       cmd_connect},
      {"status",
       "status",
       "Prints the remote site's state: executor state, task, latched breach, the operator\n"
       "holding control, loop timing, teleoperation counters, measured joints, last reset.\n",
       {},
       {},
       cmd_status},
      {"upload",
       "upload FILE [--name N] [--replace] [--no-preview] [--force] [--arm A] [--scene S] "
       "[--duration T]",
       "Loads a task file (.textproto/.txtpb/.pbtxt or .json), validates it locally against\n"
       "the arm, previews it on the local simulated arm (see `tether preview`) and stores it\n"
       "on the remote site. Every problem is printed with its field, value and allowed range.\n",
       {{"FILE", "the task file"}},
       {{"--name", "N", "name on the remote site (default: the task's name, else the\nfile's)"},
        {"--replace", nullptr, "overwrite a stored task of the same name"},
        {"--no-preview", nullptr, "skip the local preview"},
        {"--force", nullptr, "upload even if the preview predicts a bound breach"},
        {"--arm", "A", "arm to validate and preview against: iiwa7 (default) or panda",
         preview_arm_check()},
        {"--scene", "S",
         "preview scene: free, door, wall, obstacles, proximity, target (default: the\nsite's "
         "scene, else "
         "free)",
         scene_check()},
        {"--duration", "T", "preview duration (default: last waypoint + 1 s, else 5 s)",
         seconds_check()}},
       cmd_upload},
      {"list", "list", "Lists the tasks stored on the remote site.\n", {}, {}, cmd_list},
      {"show",
       "show NAME [--json]",
       "Prints a stored task in protobuf text format (or JSON with --json).\n",
       {{"NAME", "the stored task"}},
       {{"--json", nullptr, "print it as JSON"}},
       cmd_show},
      {"delete",
       "delete NAME",
       "Deletes a stored task.\n",
       {{"NAME", "the stored task"}},
       {},
       cmd_delete},
      {"start",
       "start NAME [--wait-seconds T]",
       "Starts a stored task from the arm's current pose.\n",
       {{"NAME", "the stored task"}},
       {{"--wait-seconds", "T",
         "then watch it for T seconds and print the outcome; exit 1 if a\nbound breach stopped it",
         seconds_check()}},
       cmd_start},
      {"stop",
       "stop",
       "Controlled stop of whatever runs, latched until `tether reset` (any operator may stop).\n",
       {},
       {},
       cmd_stop},
      {"reset",
       "reset",
       "Clears a latched stop; the remote refuses while the breach persists (exit 3).\n",
       {},
       {},
       cmd_reset},
      {"recover",
       "recover (--joint J --by RAD | --retreat D) [--speed V] [--reset]",
       "Moves a stopped arm out of the breach that keeps it stopped (a pendant's \"move out\n"
       "of limit\"), at the site's recovery speed (default 0.1 rad/s, 0.02 m/s) or slower,\n"
       "with every other bound armed. A joint-limit stop: jog that joint away from its limit,\n"
       "e.g. `tether recover --joint 6 --by -0.1`; a proximity stop: retreat D metres along\n"
       "the sensor's beam back into the window; a singular resolver: D radians up the\n"
       "manipulability gradient. A motion that would deepen the breach is refused (exit 3).\n"
       "Waits for the motion to end; --reset then clears the stop.\n",
       {},
       {{"--joint", "J", "the joint to jog, 1-7", cli::Count(1, kArmDof)},
        {"--by", "RAD", "signed angle to jog it by [rad], at most 0.5", cli::Number(-0.5, 0.5)},
        {"--retreat", "D", "distance along the gradient, [m] (proximity) or [rad]",
         cli::Number(0.0, 0.5)},
        {"--speed", "V", "slower than the site's recovery speed [rad/s] or [m/s]",
         cli::Number(0.0, 1.0)},
        {"--reset", nullptr, "reset once the motion is done"}},
       cmd_recover},
      {"set",
       "set PATH VALUE [--and PATH=VALUE]",
       "Changes one parameter of the running task without restarting it. PATH is dot-separated\n"
       "in tether.v1.TaskParameters, VALUE in protobuf text format, e.g.\n"
       "  tether set force_control.reference_wrench.torque.x 12\n"
       "  tether set impedance.damping 'translation { x: 350 y: 350 z: 350 }'\n"
       "  tether set teleoperation.world_R_eye 'rpy { yaw_deg: 30 }' \\\n"
       "      --and teleoperation.eye_time_ns=1234567890\n",
       {{"PATH", "the field, e.g. impedance.damping"},
        {"VALUE", "its value in protobuf text format"}},
       {{"--and", "PATH=VALUE",
         "a second field set in the same update (the loop takes both in one cycle)"}},
       cmd_set},
      {"camera",
       "camera NAME [--duration T] [--bit-rate KBPS] [--ivf FILE]",
       "Watches one of the site's cameras (`tether status` lists them) as\n"
       "the console does, on the datagram plane, decodes every frame and prints what arrived\n"
       "as \"key value\" lines: frames decoded, lost and held back, frames per second, the bit\n"
       "rate received and each frame's age on arrival (capture to complete, through the link's\n"
       "clock estimate). --ivf writes the VP9 frames as they arrived to FILE (ffplay, VLC).\n"
       "Observers and up. Exit 1 if no frame arrived.\n",
       {{"NAME", "the camera, e.g. overview"}},
       {{"--duration", "T", "how long to watch (default 10s)", seconds_check()},
        {"--bit-rate", "KBPS", "the encoder's target [kbit/s] (default: the site's, 1000)",
         cli::Count(100, 8000)},
        {"--ivf", "FILE", "write the frames to FILE (IVF container, VP9)"}},
       cmd_camera},
      {"aim",
       "aim CAMERA [--pan DEG] [--tilt DEG]",
       "Aims the pan-tilt head that carries CAMERA (the stereo pair's): absolute angles from\n"
       "the head's initial aim, pan about the base's vertical (+ left), tilt about the camera's\n"
       "x axis (+ up); 0 0 recentres it. Needs the lease (operators and admins).\n",
       {{"CAMERA", "a camera on the head, e.g. stereo_left"}},
       {{"--pan", "DEG", "[-90, 90] (default 0)", cli::Number(-90.0, 90.0)},
        {"--tilt", "DEG", "[-45, 45] (default 0)", cli::Number(-45.0, 45.0)}},
       cmd_aim},
      {"record",
       "record FILE [--duration T] [--decimation N]",
       "FILE.mcap: records every cycle as MCAP, with what `tether replay` needs (open it in\n"
       "Foxglove or PlotJuggler; docs/recordings.md). Any other FILE:\n"
       "writes the telemetry stream to FILE as CSV with a header row (columns: time_s,\n"
       "arm_time_s, task_time_s, cycle, state, task_id, task, aux0..aux3 (door angle [rad] in\n"
       "aux0), force_n, torque_nm, fx..tz, x, y, z, arm_angle_rad, error0..error6, q1..q7,\n"
       "measured_q1..measured_q7, breach, overruns, compute_s; local_site/README.md).\n",
       {{"FILE", "FILE.mcap, or the CSV file to write"}},
       {{"--duration", "T", "how long to record (default 10s)", seconds_check()},
        {"--decimation", "N", "every N-th control cycle (default 10)", cli::Count(1, 1000000)}},
       cmd_record},
      {"export",
       "export FILE.mcap --csv OUT.csv [--decimation N]",
       "Exports the telemetry of an MCAP recording (tether record, tether-ground --record, a\n"
       "black-box segment) as the CSV `tether record FILE.csv` writes. Needs no remote.\n",
       {{"FILE.mcap", "the recording"}},
       {{"--csv", "OUT.csv", "the CSV file to write"},
        {"--decimation", "N", "every N-th cycle (default 1)", cli::Count(1, 1000000)}},
       cmd_export},
      {"blackbox",
       "blackbox list|fetch [--around TIME|BREACH-ID] [--before T] [--after T] [--all] "
       "[--out DIR]",
       "The remote site's black box: the last minutes of every cycle, increment, breach and\n"
       "audit line, a ring of MCAP segments on the site (tether-remote --black-box).\n"
       "`list` shows the segments kept and the breaches they are kept for; `fetch` copies the\n"
       "segments around a breach or a time (default: now) into DIR (default ./blackbox), whole\n"
       "files to open in Foxglove or to replay (`tether replay DIR`). Operators and admins.\n",
       {{"ACTION", "list or fetch",
         cli::OneOf([](std::string_view a) { return a == "list" || a == "fetch"; },
                    "list or fetch")}},
       {{"--around", "TIME|BREACH-ID",
         "a breach id as `list` prints it, Unix seconds or an ISO 8601 UTC time"},
        {"--before", "T", "history wanted before it (default 120s)", seconds_check()},
        {"--after", "T", "and after it (default 30s)", seconds_check()},
        {"--all", nullptr, "every segment kept"},
        {"--out", "DIR", "where fetched segments go (default ./blackbox)"}},
       cmd_blackbox},
      {"replay",
       "replay PATH [--arm A] [--scene S] [--tolerance RAD]",
       "Runs a recording again offline through the site's executor on the simulated arm, from\n"
       "the first task it saw start from rest (the arm's recorded state, door angle included),\n"
       "with every cycle's recorded inputs, and reports how far the replay departs from the\n"
       "recording: joints, commands, force and the breach. PATH: an MCAP file or a directory\n"
       "of them (fetched black-box segments). Needs no remote; exit 1 when it departs.\n",
       {{"PATH", "FILE.mcap or a directory of .mcap files"}},
       {{"--arm", "A", "the arm, if the recording does not say (iiwa7 or panda)"},
        {"--scene", "S", "the scene, if the recording does not say"},
        {"--tolerance", "RAD", "joint departure still the same run (default 1e-6)",
         cli::Number(0.0, 1.0)}},
       cmd_replay},
      {"teleop",
       "teleop [--device SPEC] [--mode M] [--reflect R] [--start TASK] [--duration T]",
       "Teleoperates the remote site with a hand controller, force reflection rendered on its\n"
       "actuators (the same session as tether-ground; see `tether-ground --help`).\n",
       {},
       {{"--device", "SPEC",
         "keyboard (default), evdev:/dev/input/eventN, joystick:/dev/input/jsN,\n"
         "script:FILE, sim or sim:FILE"},
        {"--mode", "M", "tool (default), world or camera",
         cli::OneOf([](std::string_view m) { return teleop_mode_from_name(m).has_value(); },
                    kTeleopModeNames)},
        {"--reflect", "R", "measured (default), error or none",
         cli::OneOf([](std::string_view r) { return reflection_source_from_name(r).has_value(); },
                    kReflectionSourceNames)},
        {"--start", "TASK", "start this stored task once streaming, stop it at the end"},
        {"--duration", "T", "stop after T (default: until Ctrl-C or the script ends)",
         seconds_check()}},
       cmd_teleop},
      {"acquire",
       "acquire [--force]",
       "Takes the control lease of the arm (an operator's right). --force takes it from\n"
       "another holder (admins only): logged in the audit trail, the holder's teleoperation\n"
       "stream ends, and a running task is stopped.\n",
       {},
       {{"--force", nullptr, "take the lease from its holder (admin)"}},
       cmd_acquire},
      {"release", "release", "Gives the control lease up.\n", {}, {}, cmd_release},
      {"audit",
       "audit [--last N] [--json]",
       "Prints the remote site's audit trail, oldest first: time, identity (role), call,\n"
       "task@revision, outcome and detail of every controlling call, stop and breach.\n",
       {},
       {{"--last", "N", "only the newest N entries", cli::Count(1, 1000000000)},
        {"--json", nullptr, "print the JSON lines as stored"}},
       cmd_audit},
      {"plot",
       "plot FILE.csv OUT.png [--title TEXT]",
       "Plots a recording: door angle (aux0) when present, force and torque magnitude and the\n"
       "measured joint positions against time, as PNG. Needs no remote.\n",
       {{"FILE.csv", "a recording (tether record)"}, {"OUT.png", "the plot to write"}},
       {{"--title", "TEXT", "the plot's title"}},
       cmd_plot},
      {"preview",
       "preview FILE [--arm A] [--scene S] [--duration T]",
       "Dry run: runs the task on a local MuJoCo-simulated arm with the remote site's executor\n"
       "code, as fast as possible, and reports the first predicted bound breach (or none), the\n"
       "peak force and torque, the largest x_c - x_r and the smallest joint-limit margin.\n"
       "Teleoperation runs with the hand controller held still. Needs no remote; exit 5 when\n"
       "a breach is predicted.\n",
       {{"FILE", "the task file"}},
       {{"--arm", "A", "iiwa7 (default) or panda", preview_arm_check()},
        {"--scene", "S", "free (default), door, wall, obstacles, proximity, target", scene_check()},
        {"--duration", "T", "task time to simulate (default: last waypoint + 1 s, else 5 s)",
         seconds_check()}},
       cmd_preview},
      {"do",
       "do [--list] COMMAND [--ARG VALUE ...] [--print] [--preview] [--diff FILE] [--upload] "
       "[--start]",
       "Runs a task command: COMMAND's arguments expand its template, shipped as data, into a\n"
       "whole task parameter set, validated for the arm (task_command.h). --list lists the\n"
       "commands with their arguments, `tether do COMMAND --help` one command's, each with its\n"
       "unit, default and allowed range. Without an action the set is printed. --upload\n"
       "previews it on COMMAND's scene first (as `tether upload`); --start uploads and starts.\n"
       "A bad argument is a usage error naming it, its value and what is allowed.\n",
       {},
       {{"--list", nullptr, "list the task commands and their arguments"},
        {"--commands", "DIR",
         "the task commands' folder (default: $TETHER_COMMANDS_DIR, else the\n"
         "shipped local_site/commands, installed in share/tether/commands)"},
        {"--name", "N",
         "name of the task (default: from the command and its arguments,\ne.g. "
         "open-door_spring_angle40)"},
        {"--print", nullptr, "print the expanded set in protobuf text format"},
        {"--diff", "FILE", "print what the expanded set changes from the task in FILE"},
        {"--preview", nullptr, "preview the set on the local simulated arm (see `tether preview`)"},
        {"--upload", nullptr, "preview the set, then store it on the remote site"},
        {"--start", nullptr, "upload, then start it"},
        {"--replace", nullptr, "overwrite a stored task of the same name"},
        {"--no-preview", nullptr, "upload without the preview"},
        {"--wait-seconds", "T", "with --start: watch the task T seconds (see `tether start`)",
         seconds_check()},
        {"--arm", "A", "arm to validate and preview against: iiwa7 (default) or panda",
         preview_arm_check()},
        {"--scene", "S", "preview scene (default: the command's)", scene_check()},
        {"--duration", "T", "preview duration (default: the command's, else as `tether preview`)",
         seconds_check()}},
       cmd_do},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& command : commands()) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

std::string command_names() {
  std::string names;
  for (const auto& command : commands())
    names += (names.empty() ? "" : ", ") + std::string(command.name);
  return names;
}

// Reads enough of the command line to know whether the command is `do` and which task
// command it names: the command is the first word that is neither an option nor a global
// option's value, the task command the first such word after it (so it comes before its own
// arguments, whose options are not known yet). Loads the commands folder (--commands DIR).
DoCommands find_do_command(const std::vector<std::string>& args) {
  static const std::set<std::string> global_values = {"--remote", "--operator",   "--timeout",
                                                      "--ca",     "--cert",       "--key",
                                                      "--config", "--server-name"};
  static const std::set<std::string> do_values = {
      "--commands", "--name", "--arm", "--scene", "--diff", "--duration", "--wait-seconds"};
  DoCommands d;
  std::size_t i = 0;
  while (i < args.size() && args[i].starts_with("-")) i += global_values.count(args[i]) ? 2 : 1;
  if (i >= args.size() || args[i] != "do") return d;
  d.active = true;
  std::string directory;
  for (++i; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.starts_with("--commands=")) {
      directory = arg.substr(std::string_view("--commands=").size());
    } else if (arg == "--commands" && i + 1 < args.size()) {
      directory = args[++i];
    } else if (arg.starts_with("-")) {
      if (global_values.count(arg) || do_values.count(arg)) ++i;
    } else if (d.name.empty()) {
      d.name = arg;
    }
  }
  d.directory = directory.empty() ? default_commands_directory() : directory;
  try {
    d.library = CommandLibrary::load(d.directory);
  } catch (const std::exception&) {  // reported by `do` itself, which may be only --help
    d.error = std::current_exception();
  }
  return d;
}

// `do COMMAND` takes COMMAND's arguments as options, listed in its help with their units,
// defaults and ranges. When the folder cannot be used or names no such command, the line is
// taken as it is, so that `do` itself reports what is wrong.
void add_do_arguments(CLI::App& sub, const DoCommands& d) {
  sub.add_option("COMMAND", CLI::callback_t{}, "the task command (see --list)");
  const TaskCommand* command = d.command();
  if (d.active && (d.error || (!d.name.empty() && command == nullptr))) {
    sub.fallthrough(false);
    sub.allow_extras();
    return;
  }
  if (command == nullptr) return;
  sub.description(sub.get_description() + "\n" + command->name + ": " + command->summary +
                  " (preview scene " + command->scene + ")\n");
  for (const CommandArgument& argument : command->arguments) {
    sub.add_option("--" + argument.name, CLI::callback_t{}, describe_argument(argument))
        ->option_text(argument.value_name)
        ->group("arguments of " + command->name);
  }
}

int dispatch(std::vector<std::string> args, std::ostream& out, std::ostream& err) {
  // CLI11 takes "-5" and "-0.5" for values but "-.5" for an option; a negative number is a
  // value (`tether set force_control.reference_wrench.force.z -.5`).
  for (std::string& arg : args) {
    if (arg.size() > 2 && arg[0] == '-' && arg[1] == '.') {
      try {
        cli::parse_number(arg);
        arg.insert(1, "0");
      } catch (const std::invalid_argument&) {
      }
    }
  }

  CLI::App app("The operator console of a tether remote site.");
  cli::configure(
      app, {"tether",
            {"tether [global options] COMMAND [options] [arguments]"},
            {{kExitOk, "ok"},
             {kExitError, "runtime or remote error"},
             {kExitUsage, "usage error"},
             {kExitRefused,
              "the remote refused (FAILED_PRECONDITION, NOT_FOUND, ALREADY_EXISTS,\n"
              "     PERMISSION_DENIED, RESOURCE_EXHAUSTED, ABORTED)"},
             {kExitInvalidTask, "invalid task (local validation or the remote's INVALID_ARGUMENT)"},
             {kExitBreachPredicted, "the preview predicts a bound breach"},
             {kExitUnreachable, "could not reach the remote (UNAVAILABLE, DEADLINE_EXCEEDED)"}},
            "global options (before or after the command)"});
  std::string remote, operator_name, timeout;
  const CLI::Option* remote_option =
      app.add_option("--remote", remote,
                     "remote site (default: $TETHER_REMOTE, else the address saved by\n"
                     "`tether connect`, else 127.0.0.1:50051)")
          ->option_text("HOST:PORT")
          ->check(cli::HostPort());
  cli::TlsFiles tls;
  cli::add_tls_options(app, tls, cli::TlsRole::kClient,
                       "global options (before or after the command)",
                       cli::default_client_config());
  app.add_option("--operator", operator_name,
                 "with --insecure: operator name sent with every call (default:\n"
                 "$USER@hostname)")
      ->option_text("NAME")
      ->check(cli::NonEmpty());
  const CLI::Option* timeout_option =
      app.add_option("--timeout", timeout,
                     "deadline of each remote call, e.g. 5s, 500ms (default 5s)")
          ->option_text("T")
          ->check(cli::Seconds());

  const DoCommands do_commands = find_do_command(args);
  for (const Command& command : commands()) {
    CLI::App* sub = cli::add_command(app, command.name, command.synopsis, command.help);
    if (std::string_view(command.name) == "do") add_do_arguments(*sub, do_commands);
    for (const Argument& argument : command.arguments) {
      sub->add_option(argument.name, CLI::callback_t{}, argument.help)
          ->required()
          ->check(argument.check);
    }
    for (const Option& option : command.options) {
      if (option.value_name == nullptr) {
        const std::string help = option.help;
        sub->add_flag(option.name, help)->disable_flag_override();
      } else {
        sub->add_option(option.name, CLI::callback_t{}, option.help)
            ->option_text(option.value_name)
            ->check(option.check);
      }
    }
  }
  // `tether help upload` is `tether upload --help`.
  CLI::App* help = cli::add_command(app, "help", "help [COMMAND]",
                                    "Prints the help of COMMAND, or this overview.\n");
  std::string topic;
  help->add_option("COMMAND", topic, "a command")
      ->check(cli::OneOf([](std::string_view name) { return find_command(name) != nullptr; },
                         command_names()));
  app.callback([&app] {
    if (app.get_subcommands().empty()) throw CLI::RequiredError("a command");
  });

  if (const auto status = cli::parse(app, std::move(args), out, err)) return *status;
  const CLI::App* given = app.get_subcommands().front();
  if (given == help) {
    out << cli::help_text(topic.empty() ? app : *app.get_subcommand(topic));
    return kExitOk;
  }
  const Command& command = *find_command(given->get_name());
  Parsed parsed;
  for (const Argument& argument : command.arguments) {
    parsed.positional.push_back(given->get_option(argument.name)->results().back());
  }
  for (const Option& option : command.options) {
    const CLI::Option* o = given->get_option(option.name);
    if (o->count() > 0) parsed.options[option.name] = option.value_name ? o->results().back() : "";
  }
  if (std::string_view(command.name) == "do") {
    if (const CLI::Option* o = given->get_option("COMMAND"); o->count() > 0) {
      parsed.positional.push_back(o->results().back());
    }
    if (const TaskCommand* task_command = do_commands.command()) {
      for (const CommandArgument& argument : task_command->arguments) {
        const CLI::Option* o = given->get_option_no_throw("--" + argument.name);
        if (o != nullptr && o->count() > 0) {
          parsed.task_arguments[argument.name] = o->results().back();
        }
      }
    }
  }
  Globals globals;
  globals.remote = remote_option->count() > 0 ? remote : remote_from_environment();
  globals.operator_name = operator_name;
  globals.credentials = ClientCredentials{tls.insecure, tls.ca, tls.cert, tls.key, tls.server_name};
  if (timeout_option->count() > 0) {
    globals.timeout = std::chrono::milliseconds(std::llround(cli::parse_seconds(timeout) * 1e3));
  }
  Context context{globals, parsed, out, err, &do_commands};
  return command.run(context);
}

}  // namespace

std::string saved_remote_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return (std::filesystem::path(xdg) / "tether" / "remote").string();
  }
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home != nullptr ? home : ".") / ".config" / "tether" / "remote")
      .string();
}

std::optional<std::string> load_saved_remote() {
  std::ifstream in(saved_remote_path());
  std::string address;
  if (!in || !std::getline(in, address) || address.empty()) return std::nullopt;
  return address;
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    return dispatch(args, out, err);
  } catch (const InvalidTask&) {
    return kExitInvalidTask;
  } catch (const RemoteError& e) {
    switch (e.code()) {
      case RemoteCode::kUnavailable:
      case RemoteCode::kDeadlineExceeded:
        err << "tether: cannot reach the remote site (" << e.what() << ")\n";
        if (e.message().find("Socket closed") != std::string::npos ||
            e.message().find("Handshake") != std::string::npos) {
          err << "tether: if the site is up, it refused this connection's TLS handshake: "
                 "check --ca, and that the certificate is from the site's CA, unexpired and "
                 "not revoked (the site logs each refusal)\n";
        }
        return kExitUnreachable;
      case RemoteCode::kInvalidArgument:
        err << "tether: the remote site refused the request as invalid (" << e.code_name()
            << "):\n";
        print_indented(err, e.message());
        return kExitInvalidTask;
      case RemoteCode::kFailedPrecondition:
      case RemoteCode::kNotFound:
      case RemoteCode::kAlreadyExists:
      case RemoteCode::kPermissionDenied:
      case RemoteCode::kResourceExhausted:
      case RemoteCode::kAborted:
        err << "tether: the remote site refused: " << e.code_name() << ": " << e.message() << '\n';
        return kExitRefused;
      default:
        err << "tether: " << e.what() << '\n';
        return kExitError;
    }
  } catch (const TaskValidationError& e) {
    print_issues(err, "task", e);
    return kExitInvalidTask;
  } catch (const proto::ConversionError& e) {
    err << "tether: " << e.what() << '\n';
    return kExitInvalidTask;
  } catch (const std::exception& e) {
    err << "tether: " << e.what() << '\n';
    return kExitError;
  }
}

}  // namespace tether::local::console

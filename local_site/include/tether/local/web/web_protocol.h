#pragma once

// The operator console's wire format and static files, as pure functions the web server
// (web_server.h) uses and the tests check: local_site/web/PROTOCOL.md is the specification.
//
// Units are SI (m, rad, N, N·m, s) unless a name says otherwise (_ms, _us, _hz); positions
// and orientations are in the site's BASE frame; quaternions are [w, x, y, z].

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/scene_description.h"
#include "tether/local/commands/task_command.h"
#include "tether/local/link/site_types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::proto {
class ConversionError;  // tether/proto/convert.h
}  // namespace tether::proto

namespace tether::local::web {

inline constexpr int kProtocolVersion = 1;
inline constexpr double kMinTelemetryRate = 1.0;   // [Hz] a client may ask for
inline constexpr double kMaxTelemetryRate = 60.0;  // [Hz]
inline constexpr double kDefaultTelemetryRate = 30.0;
// Capsule radius of every link when the running task gives none (its obstacle_avoidance
// link_radius): that behaviour's own default, which encloses the iiwa7's and the panda's
// links (both about 0.06 m in radius).
inline constexpr double kDefaultLinkRadius = 0.06;  // [m]

// "text/html; charset=utf-8" for .html, and so on for the types a vite build emits (js,
// mjs, css, json, map, svg, png, jpg, gif, ico, webp, woff, woff2, ttf, wasm, txt, glb,
// gltf); "application/octet-stream" for anything else.
std::string_view mime_type(std::string_view path);

// The file under `root` that the request target names ("/" and "/index.html" are
// root/index.html; a query "?..." or fragment is ignored; %XX escapes are decoded first).
// nullopt — refused, the server answers 400 — when the decoded path is not absolute, has an
// empty, "." or ".." segment, a backslash or a NUL: nothing outside `root` can be named.
std::optional<std::filesystem::path> static_file_path(const std::filesystem::path& root,
                                                      std::string_view target);

// Where tether-ground finds the built front end without --web-root: $TETHER_WEB_ROOT when
// set; else the first folder of the source tree's local_site/web/dist (a build tree),
// <install prefix>/share/tether/web and ../share/tether/web beside the running program;
// else the install prefix's, for the message that it is missing.
std::string default_web_root();

// An arm for the 3-D view: its joints and, by forward kinematics of a configuration, the
// points its capsules join.
class ArmView {
 public:
  // `arm` is a shipped arm's name (iiwa7 or panda, console/preview.h); throws
  // std::invalid_argument naming it otherwise.
  explicit ArmView(const std::string& arm);

  const std::string& name() const { return name_; }
  const KinematicModel& model() const { return model_; }
  // BASE origin, each joint frame's origin base to tip, then the tool (flange) origin: 9
  // points, so 8 capsules [m, BASE].
  static constexpr int kPoints = kArmDof + 2;
  nlohmann::json points(const JointVector& q) const;
  // The tool frame at q, in BASE.
  Frame tool(const JointVector& q) const;

 private:
  std::string name_;
  KinematicModel model_;
};

// Capsule radii of the kPoints − 1 links [m]: the task's obstacle_avoidance.link_radius
// (one per joint; the base link takes joint 0's) when a task is given, else
// kDefaultLinkRadius.
std::vector<double> link_radii(const TaskParameters* task);

// The scene a site reports, as the `site` message's `scene` (PROTOCOL.md): its bodies (shape,
// half sizes or radius, BASE pose at the scene joints' zero, the joint that carries it) and
// its joints, each with the `label` its reading has among the telemetry's `aux` entries.
nlohmann::json scene_json(const SceneDescription& scene);

// `arm` message (PROTOCOL.md).
nlohmann::json arm_message(const std::string& site, const ArmView& arm,
                           const std::vector<double>& radii);

// `telemetry` message of one sample, without the per-client "dropped" count. `arm` may be
// null (an arm the ground cannot model: no points, motion, reference, deviation); `task` is
// the running task's parameters when the ground has fetched them (bounds, obstacles, the
// MOTION frame, deviation), else null; link_rtt_ms < 0 when unknown.
// `predicted`: the ground's local model's joints for this moment (teleoperation across a
// delayed link with --predict), drawn as the predicted arm; null: none.
// `scene`: what the site reports its arm works in (status); its joints that report in the
// sample's aux name the "aux" entries and give their ranges. Null: none known, no entries.
nlohmann::json telemetry_message(const std::string& site, const TelemetrySample& sample,
                                 const ArmView* arm, const TaskParameters* task, double link_rtt_ms,
                                 const JointVector* predicted = nullptr,
                                 const SceneDescription* scene = nullptr);

// The "bounds" member of a telemetry message: the running task's BoundsParameters, each
// bound null where it is off (PROTOCOL.md).
nlohmann::json bounds_json(const BoundsParameters& bounds);

// "RUNNING", "STOPPED", ... (the executor state as the protocol spells it).
std::string state_name(ExecutorState state);

// One problem of a task text, for a `reply`'s "errors": the field path without any
// position (empty for a problem of the whole text) and the whole message.
struct FieldError {
  std::string field;
  std::string message;
  // Where the text is at fault, 1-based; 0 when unknown (a validation issue is placed by
  // its field, a parse error by the spot the parser reports).
  int line = 0;
  int column = 0;
};

// A parse or conversion error of a task text as a field error, with its line and column
// when the error is placed in the text.
FieldError field_error_of(const proto::ConversionError& error);

// Parses `text` (protobuf text format) and validates it for `arm` (iiwa7 or panda) with the
// console's own checks (tether::proto::parse_task_text, validate_task). Returns the task,
// or nullopt with every problem in `errors`.
std::optional<TaskParameters> parse_and_validate(const std::string& text, const std::string& arm,
                                                 std::vector<FieldError>& errors);

// The remote site's INVALID_ARGUMENT message, one problem a line ("path = value: ..."), as
// field errors.
std::vector<FieldError> field_errors_of(const std::string& message);

nlohmann::json to_json(const std::vector<FieldError>& errors);

// "1 ms: force control, trajectory" ("-" for no behaviour): a task's summary as list_tasks
// and the library give it.
std::string task_summary(double period, const std::vector<Behaviour>& behaviours);

// Where the console finds the task files tether ships (remote_site/tasks/*.textproto):
// $TETHER_TASKS_DIR when set; else the source tree's remote_site/tasks (a build tree),
// <install prefix>/share/tether/tasks and ../share/tether/tasks beside the running program;
// else the install prefix's, for the message that it is missing (as
// default_commands_directory()).
std::string default_tasks_directory();

// The scene a shipped task file is written for: the `--scene NAME` (or `--predict ARM:NAME`)
// of its comments, else its file name's first word ("door_force.textproto": door) when that
// names a scene; "" when neither says.
std::string task_file_scene(const std::string& file_name, const std::string& text);

// The `library` reply's "tasks": every *.textproto of `directory` (not recursing), sorted
// by file name, each {"name","file","summary","scene","text"}; a file that does not parse
// is listed with "error" (the parser's message) and an empty summary. Throws
// std::runtime_error naming a directory that cannot be read.
nlohmann::json task_library(const std::string& directory);

// The `command` reply's fields for `command` expanded with `arguments` for `arm` (iiwa7 or
// panda), as `tether do` builds the set: {"name","text","scene","summary"}. Throws what
// expand() throws: CommandArgumentError for a bad argument, TaskValidationError for a set
// the arm cannot run.
nlohmann::json command_task(const TaskCommand& command, const ArgumentValues& arguments,
                            const std::string& arm);
}  // namespace tether::local::web

#include "tether/local/web/web_protocol.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <utility>

#include "tether/common/arm_angle.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/local/console/preview.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/task/validation.h"
#include "tether/remote/vision/tag_detector.h"

namespace tether::local::web {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    const char c = text[text.size() - suffix.size() + i];
    if (std::tolower(static_cast<unsigned char>(c)) != suffix[i]) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

nlohmann::json vec3(const Vector3& v) { return nlohmann::json::array({v.x(), v.y(), v.z()}); }

nlohmann::json quat(const Matrix3& R) {
  const Eigen::Quaterniond q(R);
  return nlohmann::json::array({q.w(), q.x(), q.y(), q.z()});
}

// JSON has no infinity or NaN: a bound that is off, or a value not measured, is null.
nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace

std::string_view mime_type(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 19> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".ico", "image/x-icon"},
      {".webp", "image/webp"},
      {".woff", "font/woff"},
      {".woff2", "font/woff2"},
      {".ttf", "font/ttf"},
      {".wasm", "application/wasm"},
      {".txt", "text/plain; charset=utf-8"},
      {".glb", "model/gltf-binary"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (ends_with(path, extension)) return type;
  }
  if (ends_with(path, ".gltf")) return "model/gltf+json";
  return "application/octet-stream";
}

std::optional<std::filesystem::path> static_file_path(const std::filesystem::path& root,
                                                      std::string_view target) {
  const std::size_t end = target.find_first_of("?#");
  if (end != std::string_view::npos) target = target.substr(0, end);
  std::string path;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == '%') {
      if (i + 2 >= target.size()) return std::nullopt;
      const int hi = hex_value(target[i + 1]), lo = hex_value(target[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      path.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      path.push_back(target[i]);
    }
  }
  if (path.empty() || path.front() != '/') return std::nullopt;
  if (path.find('\\') != std::string::npos || path.find('\0') != std::string::npos) {
    return std::nullopt;
  }
  if (path == "/") path = "/index.html";
  std::filesystem::path out = root;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    const std::string segment = path.substr(start, slash - start);
    // An empty segment ("//", a trailing "/") is refused too: it never names a built file.
    if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
    out /= segment;
    start = slash + 1;
  }
  return out;
}

std::string default_web_root() {
  return shipped_directory("TETHER_WEB_ROOT", TETHER_SOURCE_WEB_DIR, TETHER_INSTALL_WEB_DIR, "web");
}

ArmView::ArmView(const std::string& arm) : name_(arm), model_(load_preview_arm(arm)) {}

nlohmann::json ArmView::points(const JointVector& q) const {
  KinematicState state;
  forward_kinematics(model_, q, state);
  nlohmann::json out = nlohmann::json::array();
  out.push_back(vec3(Vector3::Zero()));
  for (int i = 0; i < kArmDof; ++i) {
    out.push_back(vec3(state.joint_frame(model_, i).p));
  }
  out.push_back(vec3(state.tool.p));
  return out;
}

Frame ArmView::tool(const JointVector& q) const {
  KinematicState state;
  forward_kinematics(model_, q, state);
  return state.tool;
}

std::vector<double> link_radii(const TaskParameters* task) {
  std::vector<double> radii(ArmView::kPoints - 1, kDefaultLinkRadius);
  if (task == nullptr) return radii;
  const JointVector& r = task->obstacle_avoidance.link_radius;
  radii[0] = r[0];
  for (int i = 0; i < kArmDof; ++i) radii[static_cast<std::size_t>(i) + 1] = r[i];
  return radii;
}

nlohmann::json arm_message(const std::string& site, const ArmView& arm,
                           const std::vector<double>& radii) {
  nlohmann::json joints = nlohmann::json::array();
  const KinematicModel& m = arm.model();
  for (int i = 0; i < kArmDof; ++i) {
    joints.push_back({{"name", m.arm().joints[static_cast<std::size_t>(i)].name},
                      {"lower", m.lower_limits()[i]},
                      {"upper", m.upper_limits()[i]}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (double r : radii) links.push_back({{"radius", r}});
  return {
      {"type", "arm"}, {"site", site}, {"name", arm.name()}, {"joints", joints}, {"links", links}};
}

std::string state_name(ExecutorState state) {
  std::string name = to_string(state);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

nlohmann::json bounds_json(const BoundsParameters& b) {
  nlohmann::json margin = nullptr;
  if (!b.joint_limit_margin.isZero()) {
    margin = nlohmann::json::array();
    for (int i = 0; i < kArmDof; ++i) margin.push_back(b.joint_limit_margin[i]);
  }
  return {
      {"force", finite_or_null(b.max_force)},
      {"torque", finite_or_null(b.max_torque)},
      {"translation", finite_or_null(b.max_translation_deviation)},
      {"rotation", finite_or_null(b.max_rotation_deviation)},
      {"arm_angle", finite_or_null(b.max_arm_angle_deviation)},
      {"joint_margin", margin},
      // A minimum distance of 0 keeps nothing away: off, as an infinite maximum is.
      {"min_proximity", b.min_proximity_distance > 0.0 ? finite_or_null(b.min_proximity_distance)
                                                       : nlohmann::json(nullptr)},
      {"max_proximity", finite_or_null(b.max_proximity_distance)},
      {"max_consecutive_overruns", b.max_consecutive_overruns}};
}

namespace {

// "door_hinge" → "door angle": what an operator calls a scene joint's reading.
std::string aux_label(const std::string& joint) {
  std::string name = joint;
  for (const char* suffix : {"_hinge", "_joint"}) {
    const std::string_view s(suffix);
    if (name.size() > s.size() && name.ends_with(s)) name.resize(name.size() - s.size());
  }
  std::replace(name.begin(), name.end(), '_', ' ');
  return name + " angle";
}

nlohmann::json aux_entries(const std::vector<double>& aux, const SceneDescription* scene) {
  nlohmann::json out = nlohmann::json::array();
  if (scene == nullptr) return out;
  for (const SceneJoint& joint : scene->joints) {
    if (joint.aux_index < 0 || static_cast<std::size_t>(joint.aux_index) >= aux.size()) continue;
    // A joint whose range the scene leaves empty has no bounds to show.
    const bool ranged = joint.lower < joint.upper;
    out.push_back({{"name", aux_label(joint.name)},
                   {"value", finite_or_null(aux[static_cast<std::size_t>(joint.aux_index)])},
                   {"unit", "rad"},
                   {"min", ranged ? nlohmann::json(joint.lower) : nlohmann::json(nullptr)},
                   {"max", ranged ? nlohmann::json(joint.upper) : nlohmann::json(nullptr)}});
  }
  return out;
}

}  // namespace

nlohmann::json scene_json(const SceneDescription& scene) {
  nlohmann::json bodies = nlohmann::json::array();
  for (const SceneBody& b : scene.bodies) {
    const char* shape = b.shape == SceneBody::Shape::kBox      ? "box"
                        : b.shape == SceneBody::Shape::kSphere ? "sphere"
                                                               : "cylinder";
    bodies.push_back({{"name", b.name},
                      {"shape", shape},
                      {"size", vec3(b.size)},
                      {"p", vec3(b.pose.p)},
                      {"quat", quat(b.pose.R)},
                      {"joint", b.joint},
                      {"obstacle", b.obstacle},
                      {"contact", b.contact}});
    if (b.tag) {
      // The printed cells, so the 3-D view shows the fiducial the cameras see: 100 characters,
      // row by row from the tag's top (the rows along the body's -y, the columns along its +x,
      // read on its +z face), '0' black and '1' white; the white margin is the outer ring.
      const std::vector<std::uint8_t> grey = remote::vision::tag36h11_image(b.tag->id, 1);
      std::string cells;
      cells.reserve(grey.size());
      for (const std::uint8_t g : grey) cells.push_back(g > 127 ? '1' : '0');
      bodies.back()["tag"] = {{"id", b.tag->id}, {"size", b.tag->size}, {"cells", cells}};
    }
  }
  nlohmann::json joints = nlohmann::json::array();
  for (const SceneJoint& j : scene.joints) {
    joints.push_back({{"name", j.name},
                      {"label", aux_label(j.name)},
                      {"position", vec3(j.position)},
                      {"axis", vec3(j.axis)}});
  }
  nlohmann::json cameras = nlohmann::json::array();
  for (const SceneCamera& c : scene.cameras) {
    cameras.push_back({{"name", c.name},
                       {"mount", c.mount},
                       {"p", vec3(c.pose.p)},
                       {"quat", quat(c.pose.R)},
                       {"field_of_view", c.field_of_view},
                       {"width", c.width},
                       {"height", c.height},
                       {"frame_rate", c.frame_rate},
                       {"stereo_partner", c.stereo_partner}});
  }
  return {{"name", scene.name}, {"bodies", bodies}, {"joints", joints}, {"cameras", cameras}};
}

nlohmann::json telemetry_message(const std::string& site, const TelemetrySample& s,
                                 const ArmView* arm, const TaskParameters* task, double link_rtt_ms,
                                 const JointVector* predicted, const SceneDescription* scene) {
  const auto joints = [](const JointVector& q) {
    nlohmann::json out = nlohmann::json::array();
    for (int i = 0; i < kArmDof; ++i) out.push_back(q[i]);
    return out;
  };
  nlohmann::json m = {
      {"type", "telemetry"},
      {"site", site},
      {"cycle", s.cycle},
      {"t", s.arm_time},
      {"task_t", s.task_time},
      // The site's wall clock when its loop sampled the cycle: the page shows the value's age.
      {"sample_unix_ms", s.timing.sample_unix_ns != 0
                             ? nlohmann::json(static_cast<double>(s.timing.sample_unix_ns) * 1e-6)
                             : nlohmann::json(nullptr)},
      {"state", state_name(s.state)},
      {"task", {{"name", s.task_name}, {"id", s.task_id}}},
      {"q", joints(s.measured_joints)},
      {"q_cmd", joints(s.commanded_joints)},
      {"psi", s.arm_angle},
      {"p_achieved", s.resolver.achieved_fraction},
      {"p_warn_below", s.resolver.warn_below},
      {"clearance", finite_or_null(s.resolver.obstacle_clearance)},
      {"wrench", {s.wrench[0], s.wrench[1], s.wrench[2], s.wrench[3], s.wrench[4], s.wrench[5]}},
      {"timing",
       {{"period_error_us", s.timing.wakeup_latency * 1e6},
        {"compute_us", s.timing.compute_time * 1e6},
        {"overruns", s.timing.overruns}}},
      {"link_rtt_ms", link_rtt_ms >= 0.0 ? nlohmann::json(link_rtt_ms) : nlohmann::json(nullptr)},
      // A stop released the operator's enable: nothing moves until it is pressed afresh.
      {"awaiting_release", s.teleoperation.awaiting_release},
      // The teleoperation data plane of the newest increment ("stream", "datagram", or
      // "none") and the increments recovered from its redundancy.
      {"plane", to_string(s.teleoperation.plane)},
      {"concealed", s.teleoperation.concealed},
      {"predicted", nullptr}};
  if (predicted != nullptr && arm != nullptr) {
    m["predicted"] = {{"q", joints(*predicted)}, {"points", arm->points(*predicted)}};
  }
  if (s.breach) {
    m["breach"] = {{"cause", to_string(s.breach.cause)}, {"detail", s.breach.description}};
  } else {
    m["breach"] = nullptr;
  }
  if (arm != nullptr) {
    m["points"] = arm->points(s.measured_joints);
    // The commanded MOTION frame: position as the site reports it, orientation from the
    // commanded joints and the task's tool_T_motion (identity until the task is known).
    const Frame tool = arm->tool(s.commanded_joints);
    const Matrix3 Rc = tool.R * (task != nullptr ? task->tool_T_motion.R : Matrix3::Identity());
    const Vector3 pc = s.motion_position;
    m["motion"] = {{"p", vec3(pc)}, {"quat", quat(Rc)}};
    // x_c − x_r is (Rcᵀ(p_c − p_r), Rcᵀ log(Rc Rrᵀ), ψ_c − ψ_r) (motion_reference.cc), so
    // p_r = p_c − Rc e_t and Rr = exp(−Rc e_r) Rc. The site clamps the error it reports to
    // the task's largest spring, so a reference further away shows at that distance.
    const Vector3 et = s.error.head<3>();
    const Vector3 er = s.error.segment<3>(3);
    const bool moving = s.state == ExecutorState::kRunning || s.state == ExecutorState::kStopping;
    m["deviation"] = nullptr;
    if (moving) {
      const Vector3 pr = pc - Rc * et;
      const Matrix3 Rr = so3_exp(-(Rc * er)) * Rc;
      m["reference"] = {{"p", vec3(pr)}, {"quat", quat(Rr)}};
      // What the site's bounds monitor compares (bounds_monitor.cc): the actual MOTION pose
      // from the measured joints against x_r. Without the task the MOTION frame is unknown,
      // and a deviation of the flange would be a wrong number rather than none.
      if (task != nullptr) {
        KinematicState state;
        forward_kinematics(arm->model(), s.measured_joints, state);
        const Frame actual = motion_frame_pose(state, task->tool_T_motion);
        // ψ_r = ψ_c − (ψ_c − ψ_r); ψ_actual from the measured joints, where it is defined
        // (arm_angle.h: not with the elbow on the shoulder-wrist line).
        double psi = 0.0;
        const bool psi_defined =
            ArmAngleModel(task->arm_angle_reference).angle(state, psi) == ArmAngleStatus::kOk;
        const double psi_r = s.arm_angle - s.error[6];
        m["deviation"] = {
            {"translation", (actual.p - pr).norm()},
            {"rotation", orientation_error(actual.R, Rr).norm()},
            {"arm_angle", psi_defined ? finite_or_null(std::abs(wrap_angle(psi - psi_r)))
                                      : nlohmann::json(nullptr)}};
      }
    } else {
      m["reference"] = nullptr;
    }
  } else {
    m["points"] = nlohmann::json::array();
    m["motion"] = nullptr;
    m["reference"] = nullptr;
    m["deviation"] = nullptr;
  }
  m["wrench_bounds"] = nullptr;
  m["bounds"] = task != nullptr ? bounds_json(task->bounds) : nlohmann::json(nullptr);
  m["aux"] = aux_entries(s.aux, scene);
  m["obstacles"] = nlohmann::json::array();
  if (task != nullptr) {
    if (std::isfinite(task->bounds.max_force) || std::isfinite(task->bounds.max_torque)) {
      m["wrench_bounds"] = {{"force", finite_or_null(task->bounds.max_force)},
                            {"torque", finite_or_null(task->bounds.max_torque)}};
    }
    const ObstacleAvoidanceParameters& o = task->obstacle_avoidance;
    if (o.enabled) {
      // Obstacles are given in WORLD; the view draws BASE (as the executor converts them).
      const Frame base_T_world = task->world_T_base.inverse();
      for (const ObstacleSphereParameters& sphere : o.obstacles) {
        m["obstacles"].push_back({{"c", vec3(base_T_world * sphere.centre)},
                                  {"r", sphere.radius},
                                  {"influence", sphere.influence}});
      }
    }
  }
  return m;
}

std::optional<TaskParameters> parse_and_validate(const std::string& text, const std::string& arm,
                                                 std::vector<FieldError>& errors) {
  errors.clear();
  TaskParameters task;
  try {
    task = proto::parse_task_text(text, "task");
  } catch (const proto::ConversionError& e) {
    errors.push_back(field_error_of(e));
    return std::nullopt;
  }
  const std::vector<ValidationIssue> issues =
      validate_task(task, KinematicModel(load_preview_arm(arm)));
  for (const ValidationIssue& issue : issues) errors.push_back({issue.field, issue.message});
  if (!errors.empty()) return std::nullopt;
  return task;
}

std::vector<FieldError> field_errors_of(const std::string& message) {
  std::vector<FieldError> out;
  std::size_t start = 0;
  while (start < message.size()) {
    std::size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (line.empty()) continue;
    // "path = value: what is allowed" or "path: what is wrong"; the path is the text before
    // the first of " = " and ": " when it spells a path.
    const std::size_t cut = std::min(line.find(" = "), line.find(": "));
    std::string field;
    if (cut != std::string::npos && FieldPath::parse(line.substr(0, cut))) {
      field = line.substr(0, cut);
    }
    out.push_back({field, line});
  }
  return out;
}

FieldError field_error_of(const proto::ConversionError& error) {
  FieldError out{error.path().unplaced().to_string(), error.what()};
  if (const auto& at = error.path().position(); at && at->line > 0) {
    out.line = at->line;
    out.column = at->column;
  }
  return out;
}

nlohmann::json to_json(const std::vector<FieldError>& errors) {
  nlohmann::json out = nlohmann::json::array();
  for (const FieldError& e : errors) {
    nlohmann::json entry = {{"field", e.field}, {"message", e.message}};
    // Only a problem placed in the text has a line; its column may be unknown (null).
    if (e.line > 0) {
      entry["line"] = e.line;
      entry["column"] = e.column > 0 ? nlohmann::json(e.column) : nlohmann::json(nullptr);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::string task_summary(double period, const std::vector<Behaviour>& behaviours) {
  char text[64];
  std::snprintf(text, sizeof text, "%g ms: ", period * 1e3);
  std::string list;
  for (Behaviour b : behaviours) list += (list.empty() ? "" : ", ") + std::string(to_string(b));
  return text + (list.empty() ? std::string("-") : list);
}

std::string default_tasks_directory() {
  return shipped_directory("TETHER_TASKS_DIR", TETHER_SOURCE_TASKS_DIR, TETHER_INSTALL_TASKS_DIR,
                           "tasks");
}

std::string task_file_scene(const std::string& file_name, const std::string& text) {
  // The comments of a shipped task show how to run it: "tether-remote --scene door ...",
  // or, for a task run against the ground's local model, "--predict iiwa7:door".
  static const std::regex kScene(R"(^\s*#.*--scene[ =]([A-Za-z]+))");
  static const std::regex kPredict(R"(^\s*#.*--predict[ =][A-Za-z0-9_]+:([A-Za-z]+))");
  std::size_t start = 0;
  std::string predicted;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    std::smatch match;
    if (std::regex_search(line, match, kScene) && remote::scene_from_name(match[1].str())) {
      return match[1];
    }
    if (predicted.empty() && std::regex_search(line, match, kPredict) &&
        remote::scene_from_name(match[1].str())) {
      predicted = match[1];
    }
  }
  if (!predicted.empty()) return predicted;
  const std::string stem = std::filesystem::path(file_name).stem().string();
  const std::string word = stem.substr(0, stem.find('_'));
  return remote::scene_from_name(word) ? word : std::string();
}

nlohmann::json task_library(const std::string& directory) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".textproto" && it->is_regular_file(error)) {
      files.push_back(it->path());
    }
  }
  if (error) {
    throw std::runtime_error("tasks directory '" + directory + "': " + error.message() +
                             " (set TETHER_TASKS_DIR to the folder of tether's task files)");
  }
  std::sort(files.begin(), files.end());
  nlohmann::json out = nlohmann::json::array();
  for (const std::filesystem::path& path : files) {
    const std::string file = path.filename().string();
    std::ifstream in(path, std::ios::binary);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    nlohmann::json entry = {{"name", path.stem().string()},
                            {"file", file},
                            {"summary", ""},
                            {"scene", task_file_scene(file, text)},
                            {"text", text}};
    if (!in.good() && !in.eof()) {
      entry["error"] = file + ": cannot be read";
    } else {
      try {
        const TaskParameters task = proto::parse_task_text(text, file);
        if (!task.name.empty()) entry["name"] = task.name;
        entry["summary"] = task_summary(task.period, enabled_behaviours(task));
      } catch (const proto::ConversionError& e) {
        // Listed, not dropped: a broken shipped file is something to see, not to miss.
        entry["error"] = e.what();
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

nlohmann::json command_task(const TaskCommand& command, const ArgumentValues& arguments,
                            const std::string& arm) {
  const Expansion expansion = expand(command, arguments, KinematicModel(load_preview_arm(arm)));
  const TaskParameters& task = expansion.task;
  return {{"name", task.name},
          {"text", "# tether do " + expansion.command_line + "\n" + proto::to_text(task)},
          {"scene", command.scene},
          {"summary", task_summary(task.period, enabled_behaviours(task))},
          {"command_line", expansion.command_line}};
}

}  // namespace tether::local::web

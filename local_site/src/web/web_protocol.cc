#include "tether/local/web/web_protocol.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/local/console/preview.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

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

nlohmann::json telemetry_message(const std::string& site, const TelemetrySample& s,
                                 const ArmView* arm, const TaskParameters* task, double link_rtt_ms,
                                 const JointVector* predicted) {
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
    if (moving) {
      m["reference"] = {{"p", vec3(pc - Rc * et)}, {"quat", quat(so3_exp(-(Rc * er)) * Rc)}};
    } else {
      m["reference"] = nullptr;
    }
  } else {
    m["points"] = nlohmann::json::array();
    m["motion"] = nullptr;
    m["reference"] = nullptr;
  }
  m["wrench_bounds"] = nullptr;
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
    errors.push_back({e.path().unplaced().to_string(), e.what()});
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

nlohmann::json to_json(const std::vector<FieldError>& errors) {
  nlohmann::json out = nlohmann::json::array();
  for (const FieldError& e : errors) out.push_back({{"field", e.field}, {"message", e.message}});
  return out;
}

}  // namespace tether::local::web

#include "tether/common/arm_yaml.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace tether {
namespace {

std::string format_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Reads one file's YAML tree; every message starts with "FILE:LINE: ".
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  YAML::Node load(std::string_view text) const {
    try {
      return YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      // yaml-cpp's own message carries its line and column ("yaml-cpp: error at line 3,
      // column 5: ..."); ours names the file too.
      std::string text = source_;
      text.append(":").append(std::to_string(e.mark.line + 1)).append(": not valid YAML: ");
      throw ArmModelError(text.append(e.msg));
    }
  }

  static int line_of(const YAML::Node& node) {
    const YAML::Mark mark = node.Mark();
    return mark.line >= 0 ? mark.line + 1 : 0;
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
    std::string text = source_;
    if (const int line = line_of(node); line > 0) text.append(":").append(std::to_string(line));
    text.append(": ").append(what);
    throw ArmModelError(text);
  }

  // `path = value: allowed`, the value as written.
  [[noreturn]] void bad_value(const YAML::Node& node, const std::string& path,
                              const std::string& allowed) const {
    fail(node, path + " = " + shown(node) + ": " + allowed);
  }

  static std::string shown(const YAML::Node& node) {
    if (node.IsScalar()) return "'" + node.Scalar() + "'";
    if (node.IsMap()) return "(a map)";
    if (node.IsSequence()) return "(a list)";
    return "(nothing)";
  }

  void require_map(const YAML::Node& node, const std::string& path) const {
    if (!node.IsMap()) bad_value(node, path, "must be a map of keys to values");
  }

  std::string key_of(const YAML::Node& key, const std::string& parent) const {
    if (!key.IsScalar()) fail(key, parent + ": a key must be a plain name, not " + shown(key));
    return key.Scalar();
  }

  // A finite number in [min, max] (exclusive where `*_open`), as YAML writes one.
  double number(const YAML::Node& node, const std::string& path, double min, double max,
                bool min_open, const std::string& allowed) const {
    if (!node.IsScalar()) bad_value(node, path, allowed);
    const std::string& text = node.Scalar();
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    if (text.empty() || end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(value) ||
        (min_open ? !(value > min) : !(value >= min)) || !(value <= max)) {
      bad_value(node, path, allowed);
    }
    return value;
  }

  bool boolean(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar()) {
      const std::string& t = node.Scalar();
      if (t == "true" || t == "True" || t == "TRUE") return true;
      if (t == "false" || t == "False" || t == "FALSE") return false;
    }
    bad_value(node, path, "must be true or false");
  }

 private:
  std::string source_;
};

const std::string kAccelerationRange = "must be a finite number > 0 [rad/s^2]";
const std::string kVelocityRange = "must be a finite number > 0 [rad/s]";
std::string position_range() {
  return "must be a finite number in [" + format_double(-kMaxYamlPosition) + ", " +
         format_double(kMaxYamlPosition) + "] [rad] (radians, not degrees)";
}

double position(const Reader& r, const YAML::Node& node, const std::string& path) {
  return r.number(node, path, -kMaxYamlPosition, kMaxYamlPosition, false, position_range());
}

void check_range(const Reader& r, const YAML::Node& at, const std::string& path,
                 const JointLimitEntry& entry) {
  if (entry.lower && entry.upper && !(*entry.lower < *entry.upper)) {
    r.fail(at, path + ": lower " + format_double(*entry.lower) + " >= upper " +
                   format_double(*entry.upper) + ": needs lower < upper [rad]");
  }
}

// MoveIt's per-joint keys that tether has no use for: accepted so a maker's file loads as
// published, never read.
const std::set<std::string>& ignored_moveit_keys() {
  static const std::set<std::string> keys = {"has_jerk_limits",
                                             "max_jerk",
                                             "has_effort_limits",
                                             "max_effort",
                                             "has_deceleration_limits",
                                             "max_deceleration",
                                             "has_soft_limits",
                                             "k_position",
                                             "k_velocity",
                                             "soft_lower_limit",
                                             "soft_upper_limit",
                                             "angle_wraparound"};
  return keys;
}

JointLimitEntry moveit_joint(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.require_map(node, path);
  std::map<std::string, YAML::Node> fields;
  for (const auto& kv : node) {
    const std::string key = r.key_of(kv.first, path);
    const std::string field = std::string(path).append(".").append(key);
    static const std::set<std::string> used = {"has_position_limits", "min_position",
                                               "max_position",        "has_velocity_limits",
                                               "max_velocity",        "has_acceleration_limits",
                                               "max_acceleration"};
    if (used.count(key) == 0 && ignored_moveit_keys().count(key) == 0) {
      r.fail(kv.first, field +
                           ": unknown key (MoveIt's keys: has_position_limits, min_position, "
                           "max_position, has_velocity_limits, max_velocity, "
                           "has_acceleration_limits, max_acceleration, and jerk, effort, "
                           "deceleration and soft limits, which tether ignores)");
    }
    if (!kv.second.IsScalar()) r.bad_value(kv.second, field, "must be a single value");
    fields[key] = kv.second;
  }
  JointLimitEntry entry;
  entry.line = Reader::line_of(node);
  // A max_* value counts only under its true flag, as in MoveIt; but a value that is there
  // must still be a number, so a typo does not hide behind a false flag.
  const auto flagged = [&](const char* flag, const char* value,
                           auto read) -> std::optional<double> {
    std::optional<double> out;
    const auto v = fields.find(value);
    if (v != fields.end()) out = read(v->second, path + "." + value);
    const auto f = fields.find(flag);
    if (f == fields.end() || !r.boolean(f->second, path + "." + flag)) return std::nullopt;
    if (!out) {
      r.fail(f->second, path + "." + flag + " is true but " + path + "." + value +
                            " is missing: give the limit or set the flag false");
    }
    return out;
  };
  entry.velocity = flagged("has_velocity_limits", "max_velocity",
                           [&](const YAML::Node& n, const std::string& p) {
                             return r.number(n, p, 0.0, HUGE_VAL, true, kVelocityRange);
                           });
  entry.acceleration = flagged("has_acceleration_limits", "max_acceleration",
                               [&](const YAML::Node& n, const std::string& p) {
                                 return r.number(n, p, 0.0, HUGE_VAL, true, kAccelerationRange);
                               });
  const auto pos = [&](const YAML::Node& n, const std::string& p) { return position(r, n, p); };
  entry.lower = flagged("has_position_limits", "min_position", pos);
  entry.upper = flagged("has_position_limits", "max_position", pos);
  if (entry.lower.has_value() != entry.upper.has_value()) {
    r.fail(node, path + ": has_position_limits is true but " + path +
                     (entry.lower ? ".max_position" : ".min_position") +
                     " is missing: give both min_position and max_position [rad]");
  }
  check_range(r, node, path, entry);
  return entry;
}

std::string read_text(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArmModelError(path + ": cannot open " + what);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ProfilePoint profile_point(const Reader& r, const YAML::Node& node, const std::string& path) {
  r.require_map(node, path);
  ProfilePoint point;
  point.line = Reader::line_of(node);
  bool has_link = false, has_xyz = false;
  for (const auto& kv : node) {
    const std::string key = r.key_of(kv.first, path);
    const std::string field = std::string(path).append(".").append(key);
    if (key == "link") {
      if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
        r.bad_value(kv.second, field, "must be the name of a <link> of the URDF");
      }
      point.link = kv.second.Scalar();
      has_link = true;
    } else if (key == "xyz") {
      if (!kv.second.IsSequence() || kv.second.size() != 3) {
        r.bad_value(kv.second, field, "must be a list of 3 numbers [x, y, z] [m]");
      }
      for (std::size_t i = 0; i < 3; ++i) {
        point.xyz[static_cast<Eigen::Index>(i)] =
            r.number(kv.second[i], field + "[" + std::to_string(i) + "]", -10.0, 10.0, false,
                     "must be a finite number in [-10, 10] [m]");
      }
      has_xyz = true;
    } else {
      r.fail(kv.first, field + ": unknown key (a point has link and xyz)");
    }
  }
  if (!has_link) r.fail(node, path + ".link is missing: name the link that carries the point");
  if (!has_xyz) point.xyz.setZero();  // the link's origin
  return point;
}

}  // namespace

JointLimitsYaml parse_joint_limits_yaml(std::string_view text, const std::string& source) {
  const Reader r(source);
  const YAML::Node root = r.load(text);
  JointLimitsYaml out;
  out.source = source;
  if (!root.IsMap()) {
    throw ArmModelError(source +
                        ": not a MoveIt joint_limits.yaml: expected a map with the key "
                        "joint_limits at the top");
  }
  YAML::Node limits;
  bool found = false;  // a default YAML::Node is a defined null: it cannot say "absent"
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "joint_limits") {
      limits = kv.second;
      found = true;
    }
  }
  if (!found) {
    throw ArmModelError(source +
                        ": not a MoveIt joint_limits.yaml: no joint_limits key at the top");
  }
  if (limits.IsNull()) return out;  // "joint_limits:" with nothing under it
  r.require_map(limits, "joint_limits");
  for (const auto& kv : limits) {
    const std::string name = r.key_of(kv.first, "joint_limits");
    if (name.empty()) r.fail(kv.first, "joint_limits: empty joint name");
    JointLimitEntry entry = moveit_joint(r, kv.second, "joint_limits." + name);
    entry.line = Reader::line_of(kv.first);
    if (!out.joints.emplace(name, entry).second) {
      r.fail(kv.first, "joint_limits." + name + ": joint listed twice");
    }
  }
  return out;
}

JointLimitsYaml load_joint_limits_yaml(const std::string& path) {
  return parse_joint_limits_yaml(read_text(path, "joint limits file"), path);
}

ArmProfile parse_arm_profile(std::string_view text, const std::string& source) {
  const Reader r(source);
  const YAML::Node root = r.load(text);
  ArmProfile out;
  out.source = source;
  if (!root.IsMap()) {
    throw ArmModelError(source +
                        ": not a tether arm profile: expected a map starting with "
                        "'tether_arm_profile: 1'");
  }
  bool versioned = false;
  for (const auto& kv : root) {
    const std::string key = r.key_of(kv.first, "(top level)");
    if (key == "tether_arm_profile") {
      if (!kv.second.IsScalar() || kv.second.Scalar() != "1") {
        r.bad_value(kv.second, key, "must be 1 (the only schema version)");
      }
      versioned = true;
    } else if (key == "joints") {
      if (kv.second.IsNull()) continue;
      r.require_map(kv.second, "joints");
      for (const auto& joint : kv.second) {
        const std::string name = r.key_of(joint.first, "joints");
        if (name.empty()) r.fail(joint.first, "joints: empty joint name");
        const std::string path = "joints." + name;
        r.require_map(joint.second, path);
        JointLimitEntry entry;
        entry.line = Reader::line_of(joint.first);
        for (const auto& field : joint.second) {
          const std::string f = r.key_of(field.first, path);
          const std::string fpath = std::string(path).append(".").append(f);
          if (f == "acceleration") {
            entry.acceleration =
                r.number(field.second, fpath, 0.0, HUGE_VAL, true, kAccelerationRange);
          } else if (f == "lower") {
            entry.lower = position(r, field.second, fpath);
          } else if (f == "upper") {
            entry.upper = position(r, field.second, fpath);
          } else {
            r.fail(field.first, fpath + ": unknown key (a joint has acceleration, lower, upper)");
          }
        }
        if (entry.lower.has_value() != entry.upper.has_value()) {
          r.fail(joint.first, path + ": " + (entry.lower ? "upper" : "lower") +
                                  " is missing: give both lower and upper [rad]");
        }
        check_range(r, joint.first, path, entry);
        if (!out.joints.emplace(name, entry).second) {
          r.fail(joint.first, path + ": joint listed twice");
        }
      }
    } else if (key == "points") {
      if (kv.second.IsNull()) continue;
      r.require_map(kv.second, "points");
      for (const auto& p : kv.second) {
        const std::string name = r.key_of(p.first, "points");
        const std::string path = "points." + name;
        std::optional<ProfilePoint>* slot = name == "shoulder" ? &out.shoulder
                                            : name == "elbow"  ? &out.elbow
                                            : name == "wrist"  ? &out.wrist
                                                               : nullptr;
        if (slot == nullptr) {
          r.fail(p.first, path + ": unknown point (shoulder, elbow or wrist)");
        }
        if (slot->has_value()) r.fail(p.first, path + ": point given twice");
        *slot = profile_point(r, p.second, path);
      }
    } else if (key == "point_tolerance") {
      out.point_tolerance =
          r.number(kv.second, key, 0.0, kMaxPointTolerance, true,
                   "must be a finite number in (0, " + format_double(kMaxPointTolerance) + "] [m]");
    } else {
      r.fail(kv.first, key +
                           ": unknown key (a tether arm profile has tether_arm_profile, joints, "
                           "points, point_tolerance)");
    }
  }
  if (!versioned) {
    throw ArmModelError(source +
                        ": not a tether arm profile: 'tether_arm_profile: 1' is missing (for "
                        "MoveIt's joint_limits.yaml use --joint-limits)");
  }
  return out;
}

ArmProfile load_arm_profile(const std::string& path) {
  return parse_arm_profile(read_text(path, "arm profile"), path);
}

}  // namespace tether

#include "tether/common/urdf_loader.h"

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_model/model.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "tether/common/arm_yaml.h"

#ifndef TETHER_SOURCE_DATA_DIR
#define TETHER_SOURCE_DATA_DIR ""
#endif
#ifndef TETHER_INSTALL_DATA_DIR
#define TETHER_INSTALL_DATA_DIR ""
#endif

namespace tether {
namespace {

// urdfdom reports why it rejects a file through console_bridge; collect those lines so the
// exception carries them instead of leaving them on stderr.
class CapturingOutput : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN) {
      if (!messages.empty()) messages += "; ";
      messages += text;
    }
  }
  std::string messages;
};

Frame to_frame(const urdf::Pose& pose) {
  Frame f;
  const auto& r = pose.rotation;
  f.R = Eigen::Quaterniond(r.w, r.x, r.y, r.z).normalized().toRotationMatrix();
  f.p = Vector3(pose.position.x, pose.position.y, pose.position.z);
  return f;
}

// Line numbers and tether's `acceleration` attribute, which urdfdom does not keep.
struct JointXml {
  int line = 0;
  bool has_limit = false;
  bool has_velocity = false;
  bool has_acceleration = false;
  std::string acceleration;
};

std::string where(const std::string& source, const std::string& what, int line) {
  return source + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what;
}

std::string format_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Mass properties of several rigidly connected bodies about one frame.
struct InertiaSum {
  double mass = 0.0;
  Vector3 first_moment = Vector3::Zero();
  Matrix3 second_moment = Matrix3::Zero();  // Σ (R I Rᵀ + m (|c|² I − c cᵀ)) about the origin

  void add(const urdf::Inertial& inertial, const Frame& frame_of_link) {
    const Frame inertial_frame = frame_of_link * to_frame(inertial.origin);
    Matrix3 I;
    I << inertial.ixx, inertial.ixy, inertial.ixz, inertial.ixy, inertial.iyy, inertial.iyz,
        inertial.ixz, inertial.iyz, inertial.izz;
    const Vector3 c = inertial_frame.p;
    mass += inertial.mass;
    first_moment += inertial.mass * c;
    second_moment += inertial_frame.R * I * inertial_frame.R.transpose() +
                     inertial.mass * (c.squaredNorm() * Matrix3::Identity() - c * c.transpose());
  }

  LinkInertia about_com() const {
    LinkInertia out;
    out.mass = mass;
    if (mass <= 0.0) return out;
    out.com = first_moment / mass;
    const Vector3& c = out.com;
    out.inertia =
        second_moment - mass * (c.squaredNorm() * Matrix3::Identity() - c * c.transpose());
    return out;
  }
};

class Loader {
 public:
  Loader(const std::string& xml, std::string source, const UrdfLoadOptions& options)
      : xml_(xml), source_(std::move(source)), options_(options) {}

  LoadedArm load() {
    // The files first: a broken file is reported as such, before the URDF's own problems.
    if (!options_.joint_limits_file.empty())
      yaml_ = load_joint_limits_yaml(options_.joint_limits_file);
    if (!options_.arm_profile_file.empty()) profile_ = load_arm_profile(options_.arm_profile_file);
    return load_with_files();
  }

 private:
  LoadedArm load_with_files() {
    scan_xml();
    parse_model();
    check_file_joints();
    LoadedArm loaded;
    ArmModel& arm = loaded.arm;
    arm.name = model_->getName();
    arm.source = source_;
    arm.base_link = options_.base_link.empty() ? model_->getRoot()->name : options_.base_link;
    arm.tool_link = options_.tool_link;
    if (arm.tool_link.empty()) {
      throw ArmModelError(source_ + ": no tool link given (UrdfLoadOptions::tool_link)");
    }
    base_link_ = arm.base_link;
    tool_link_ = arm.tool_link;
    require_link(arm.base_link, "base link");
    require_link(arm.tool_link, "tool link");
    build_chain(arm);
    apply_limits(arm, loaded.report);
    attach_rigid_links(arm);
    const double tolerance = profile_ && profile_->point_tolerance ? *profile_->point_tolerance
                                                                   : options_.point_tolerance;
    if (!(tolerance > 0.0) || !std::isfinite(tolerance)) {
      throw ArmModelError(source_ + ": point tolerance " + format_double(tolerance) +
                          " m: must be finite and > 0");
    }
    std::vector<std::string> problems;
    const auto point = [&](const char* role, const std::string& marker_link,
                           const std::optional<ProfilePoint>* from_profile, int first,
                           ArmPoint& out, ArmPointReport& report) {
      try {
        report = find_point(arm, role, marker_link, from_profile, first, tolerance);
        out = report.point;
      } catch (const ArmModelError& e) {
        problems.push_back(e.what());
      }
    };
    point("shoulder", options_.shoulder_link, profile_ ? &profile_->shoulder : nullptr, 0,
          arm.shoulder, loaded.report.shoulder);
    point("elbow", options_.elbow_link, profile_ ? &profile_->elbow : nullptr, 2, arm.elbow,
          loaded.report.elbow);
    point("wrist", options_.wrist_link, profile_ ? &profile_->wrist : nullptr, 4, arm.wrist,
          loaded.report.wrist);
    throw_if_any(problems);
    count_meshes(loaded.report);
    loaded.report.notes.insert(loaded.report.notes.end(), notes_.begin(), notes_.end());
    return loaded;
  }

  void throw_if_any(const std::vector<std::string>& problems) const {
    if (problems.empty()) return;
    if (problems.size() == 1) throw ArmModelError(problems.front());
    std::string text = source_ + ": " + std::to_string(problems.size()) + " problems:";
    for (const auto& p : problems) text += "\n  " + p;
    throw ArmModelError(text);
  }

  // Joint names in the files must be joints of the URDF: a name that is not is a typo or
  // the file of another arm. Joints of the URDF that are off the chain (a gripper's) are
  // noted and left alone.
  void check_file_joints() {
    std::vector<std::string> problems;
    const auto check = [&](const std::map<std::string, JointLimitEntry>& joints,
                           const std::string& file, const std::string& prefix) {
      for (const auto& [name, entry] : joints) {
        if (model_->getJoint(name)) continue;
        std::string known;
        for (const auto& [jn, j] : model_->joints_) {
          if (j->type == urdf::Joint::FIXED) continue;
          if (!known.empty()) known += ", ";
          known += jn;
        }
        std::string what = prefix;
        what.append(name).append(": no joint named '").append(name).append("' in robot '");
        what.append(model_->getName()).append("' (its movable joints: ").append(known) += ")";
        problems.push_back(where(file, what, entry.line));
      }
    };
    if (yaml_) check(yaml_->joints, yaml_->source, "joint_limits.");
    if (profile_) check(profile_->joints, profile_->source, "joints.");
    throw_if_any(problems);
  }

  void scan_xml() {
    TiXmlDocument doc;
    doc.Parse(xml_.c_str());
    if (doc.Error()) {
      throw ArmModelError(
          where(source_, std::string("malformed XML: ") + doc.ErrorDesc(), doc.ErrorRow()));
    }
    const TiXmlElement* robot = doc.FirstChildElement("robot");
    if (robot == nullptr) {
      throw ArmModelError(source_ + ": not a URDF file: no <robot> root element");
    }
    for (const TiXmlElement* j = robot->FirstChildElement("joint"); j != nullptr;
         j = j->NextSiblingElement("joint")) {
      const char* name = j->Attribute("name");
      if (name == nullptr) continue;
      JointXml info;
      info.line = j->Row();
      if (const TiXmlElement* limit = j->FirstChildElement("limit")) {
        info.has_limit = true;
        info.has_velocity = limit->Attribute("velocity") != nullptr;
        if (const char* a = limit->Attribute("acceleration")) {
          info.has_acceleration = true;
          info.acceleration = a;
        }
      }
      joint_xml_[name] = info;
      // urdfdom refuses this too, but without saying where; say it with the line.
      const char* type = j->Attribute("type");
      if (!info.has_limit && type != nullptr && std::string(type) == "revolute") {
        throw ArmModelError(
            where(source_, std::string("<joint name=\"") + name + "\">: missing <limit> element",
                  info.line));
      }
    }
    // Meshes, for the report only: kinematics never needs them.
    for (const TiXmlElement* link = robot->FirstChildElement("link"); link != nullptr;
         link = link->NextSiblingElement("link")) {
      for (const char* part : {"visual", "collision"}) {
        for (const TiXmlElement* v = link->FirstChildElement(part); v != nullptr;
             v = v->NextSiblingElement(part)) {
          const TiXmlElement* geometry = v->FirstChildElement("geometry");
          const TiXmlElement* mesh =
              geometry != nullptr ? geometry->FirstChildElement("mesh") : nullptr;
          if (mesh == nullptr) continue;
          const char* file = mesh->Attribute("filename");
          mesh_uris_.push_back(file != nullptr ? file : "");
        }
      }
    }
  }

  // package://PKG/PATH is PKG/PATH under one of the package path's directories (ROS's
  // convention). Not finding it is no error: tether's kinematics does not use meshes.
  void count_meshes(ArmLoadReport& report) const {
    report.meshes = static_cast<int>(mesh_uris_.size());
    const std::string scheme = "package://";
    std::string first_missing;
    for (const std::string& uri : mesh_uris_) {
      if (uri.rfind(scheme, 0) != 0) continue;
      ++report.package_meshes;
      const std::string relative = uri.substr(scheme.size());
      bool found = false;
      for (const std::string& dir : options_.package_paths) {
        std::error_code error;
        if (!relative.empty() &&
            std::filesystem::is_regular_file(std::filesystem::path(dir) / relative, error)) {
          found = true;
          break;
        }
      }
      if (found) {
        ++report.resolved_meshes;
      } else if (first_missing.empty()) {
        first_missing = uri;
      }
    }
    if (!first_missing.empty()) {
      report.notes.push_back(
          std::to_string(report.package_meshes - report.resolved_meshes) + " of " +
          std::to_string(report.package_meshes) +
          " package:// meshes not found in the package path (--package-path), e.g. " +
          first_missing + ": not needed for kinematics, ignored");
    }
  }

  void parse_model() {
    static std::mutex console_mutex;  // console_bridge's handler is process-global
    std::lock_guard<std::mutex> lock(console_mutex);
    CapturingOutput capture;
    console_bridge::useOutputHandler(&capture);
    model_ = urdf::parseURDF(xml_);
    console_bridge::restorePreviousOutputHandler();
    if (!model_) {
      throw ArmModelError(source_ + ": urdfdom rejected the URDF: " +
                          (capture.messages.empty() ? "no reason given" : capture.messages));
    }
  }

  void require_link(const std::string& name, const char* role) const {
    if (!model_->getLink(name)) {
      throw ArmModelError(source_ + ": " + role + " '" + name + "' is not a <link> of robot '" +
                          model_->getName() + "'");
    }
  }

  int line_of(const std::string& joint) const {
    const auto it = joint_xml_.find(joint);
    return it == joint_xml_.end() ? 0 : it->second.line;
  }

  std::string joint_where(const urdf::Joint& joint, const std::string& what) const {
    return where(source_, "<joint name=\"" + joint.name + "\">: " + what, line_of(joint.name));
  }

  static const char* type_name(int type) {
    switch (type) {
      case urdf::Joint::REVOLUTE:
        return "revolute";
      case urdf::Joint::CONTINUOUS:
        return "continuous";
      case urdf::Joint::PRISMATIC:
        return "prismatic";
      case urdf::Joint::FLOATING:
        return "floating";
      case urdf::Joint::PLANAR:
        return "planar";
      case urdf::Joint::FIXED:
        return "fixed";
      default:
        return "unknown";
    }
  }

  // Walks from the tool link up to the base link and builds the movable-joint chain.
  void build_chain(ArmModel& arm) {
    std::vector<urdf::JointConstSharedPtr> path;
    urdf::LinkConstSharedPtr link = model_->getLink(arm.tool_link);
    while (link->name != arm.base_link) {
      const urdf::JointConstSharedPtr parent = link->parent_joint;
      if (!parent) {
        throw ArmModelError(source_ + ": tool link '" + arm.tool_link +
                            "' is not below base link '" + arm.base_link + "'");
      }
      path.push_back(parent);
      link = model_->getLink(parent->parent_link_name);
    }
    std::reverse(path.begin(), path.end());

    on_chain_.insert({arm.base_link, {-1, Frame::Identity()}});
    Frame pending = Frame::Identity();  // fixed joints since the last movable joint
    for (const auto& joint : path) {
      check_no_movable_branch(*joint, path);
      const Frame origin = to_frame(joint->parent_to_joint_origin_transform);
      if (joint->type == urdf::Joint::FIXED) {
        pending = pending * origin;
        on_chain_.insert({joint->child_link_name, {arm.dof() - 1, pending}});
        continue;
      }
      if (joint->type != urdf::Joint::REVOLUTE && joint->type != urdf::Joint::CONTINUOUS) {
        throw ArmModelError(joint_where(
            *joint, std::string("type '") + type_name(joint->type) +
                        "' is not supported: tether drives chains of revolute and continuous "
                        "joints"));
      }
      ArmJoint out;
      out.name = joint->name;
      out.child_link = joint->child_link_name;
      out.origin = pending * origin;
      out.axis = Vector3(joint->axis.x, joint->axis.y, joint->axis.z);
      if (!(out.axis.norm() > 0.5)) {
        throw ArmModelError(joint_where(*joint, "<axis> is zero"));
      }
      out.axis.normalize();
      arm.joints.push_back(out);
      chain_joints_.push_back(joint);
      pending = Frame::Identity();
      on_chain_.insert({joint->child_link_name, {arm.dof() - 1, Frame::Identity()}});
    }
    arm.tool = pending;
    if (arm.joints.empty()) {
      throw ArmModelError(source_ + ": no revolute joint between '" + arm.base_link + "' and '" +
                          arm.tool_link + "'");
    }
  }

  // A movable joint that leaves the chain makes the arm a tree: refuse it rather than
  // ignore part of the mechanism.
  void check_no_movable_branch(const urdf::Joint& on_path,
                               const std::vector<urdf::JointConstSharedPtr>& path) const {
    const urdf::LinkConstSharedPtr parent = model_->getLink(on_path.parent_link_name);
    for (const auto& child : parent->child_joints) {
      if (child->type == urdf::Joint::FIXED) continue;
      const bool is_on_path = std::any_of(path.begin(), path.end(),
                                          [&](const auto& j) { return j->name == child->name; });
      if (!is_on_path) {
        throw ArmModelError(joint_where(
            *child, "not a serial chain: link '" + parent->name + "' has a second movable joint '" +
                        child->name + "' besides '" + on_path.name +
                        "' (tether drives one serial chain; fix or remove the branch)"));
      }
    }
  }

  // The where-to-add-it part of a message about a missing value.
  std::string yaml_name() const {
    return yaml_ ? yaml_->source : std::string("a MoveIt joint_limits.yaml");
  }
  std::string profile_name() const {
    return profile_ ? profile_->source : std::string("a tether arm profile");
  }

  static const JointLimitEntry* entry_of(const std::map<std::string, JointLimitEntry>& joints,
                                         const std::string& name) {
    const auto it = joints.find(name);
    return it == joints.end() ? nullptr : &it->second;
  }

  // Every chain joint's limits from the URDF and the two files (precedence in
  // urdf_loader.h). All problems are collected and reported together.
  void apply_limits(ArmModel& arm, ArmLoadReport& report) const {
    std::vector<std::string> problems;
    report.joints.assign(arm.joints.size(), {});
    std::set<std::string> on_chain;
    for (std::size_t i = 0; i < arm.joints.size(); ++i) {
      const urdf::Joint& joint = *chain_joints_[i];
      on_chain.insert(joint.name);
      try {
        arm.joints[i].limits = limits_of(joint, report.joints[i]);
      } catch (const ArmModelError& e) {
        problems.push_back(e.what());
      }
    }
    throw_if_any(problems);
    const auto note_off_chain = [&](const std::map<std::string, JointLimitEntry>& joints,
                                    const std::string& file) {
      for (const auto& [name, entry] : joints) {
        if (on_chain.count(name) == 0) {
          notes_.push_back(where(file,
                                 "joint '" + name + "' is not on the chain from '" + arm.base_link +
                                     "' to '" + arm.tool_link + "': its limits are not used",
                                 entry.line));
        }
      }
    };
    if (yaml_) note_off_chain(yaml_->joints, yaml_->source);
    if (profile_) note_off_chain(profile_->joints, profile_->source);
  }

  JointLimits limits_of(const urdf::Joint& joint, JointLimitSources& sources) const {
    const auto it = joint_xml_.find(joint.name);
    const bool continuous = joint.type == urdf::Joint::CONTINUOUS;
    const bool has_limit = joint.limits && it != joint_xml_.end() && it->second.has_limit;
    if (!continuous && !has_limit) {
      throw ArmModelError(joint_where(joint, "missing <limit> element"));
    }
    const JointLimitEntry* from_yaml = yaml_ ? entry_of(yaml_->joints, joint.name) : nullptr;
    const JointLimitEntry* from_profile =
        profile_ ? entry_of(profile_->joints, joint.name) : nullptr;
    const std::string quoted = "joint \"" + joint.name + "\"";
    const auto at_joint = [&](const std::string& what) {
      return where(source_, what, line_of(joint.name));
    };
    JointLimits limits;
    if (has_limit) limits.effort = joint.limits->effort;

    // Position.
    if (continuous) {
      if (from_profile && from_profile->lower) {
        limits.lower = *from_profile->lower;
        limits.upper = *from_profile->upper;
        sources.position = "arm profile";
      } else if (from_yaml && from_yaml->lower) {
        limits.lower = *from_yaml->lower;
        limits.upper = *from_yaml->upper;
        sources.position = "joint_limits.yaml";
      } else {
        throw ArmModelError(
            at_joint(quoted +
                     " is continuous and has no position range [rad]: add "
                     "has_position_limits: true, min_position and max_position to " +
                     yaml_name() + " (--joint-limits) or lower and upper to " + profile_name() +
                     " (--arm-profile)"));
      }
    } else {
      limits.lower = joint.limits->lower;
      limits.upper = joint.limits->upper;
      if (!(limits.lower < limits.upper)) {
        throw ArmModelError(joint_where(joint, "<limit> lower=" + format_double(limits.lower) +
                                                   " upper=" + format_double(limits.upper) +
                                                   ": needs lower < upper (missing attributes "
                                                   "default to 0)"));
      }
      sources.position = "urdf";
      // A file may narrow the maker's range, never widen it.
      const auto narrow = [&](const JointLimitEntry* entry, const std::string& file,
                              const std::string& lower_key, const std::string& upper_key,
                              const char* name) {
        if (entry == nullptr || !entry->lower) return false;
        constexpr double kSlack = 1e-9;  // rounding in copied values
        const std::string range =
            "[" + format_double(limits.lower) + ", " + format_double(limits.upper) + "]";
        if (*entry->lower < limits.lower - kSlack || *entry->upper > limits.upper + kSlack) {
          throw ArmModelError(where(
              file,
              lower_key + ", " + upper_key + " = " + format_double(*entry->lower) + ", " +
                  format_double(*entry->upper) + ": must lie within the URDF's range " + range +
                  " rad of revolute " + quoted + " (a limits file may narrow it, not widen it)",
              entry->line));
        }
        limits.lower = std::max(*entry->lower, limits.lower);
        limits.upper = std::min(*entry->upper, limits.upper);
        sources.position = name;
        return true;
      };
      if (profile_) {
        narrow(from_profile, profile_->source, "joints." + joint.name + ".lower",
               "joints." + joint.name + ".upper", "arm profile");
      }
      if (sources.position == "urdf" && yaml_) {
        narrow(from_yaml, yaml_->source, "joint_limits." + joint.name + ".min_position",
               "joint_limits." + joint.name + ".max_position", "joint_limits.yaml");
      }
    }

    // Velocity.
    if (from_yaml && from_yaml->velocity) {
      limits.velocity = *from_yaml->velocity;
      sources.velocity = "joint_limits.yaml";
    } else if (has_limit && it->second.has_velocity) {
      limits.velocity = joint.limits->velocity;
      sources.velocity = "urdf";
      if (!(limits.velocity > 0.0) || !std::isfinite(limits.velocity)) {
        throw ArmModelError(
            joint_where(joint, "<limit> velocity=" + format_double(limits.velocity) +
                                   ": must be finite and > 0 [rad/s]"));
      }
    } else {
      throw ArmModelError(at_joint(quoted +
                                   ": no velocity limit [rad/s]: add velocity to its <limit>, or "
                                   "has_velocity_limits: true and max_velocity to " +
                                   yaml_name() + " (--joint-limits)"));
    }

    // Acceleration.
    if (from_profile && from_profile->acceleration) {
      limits.acceleration = *from_profile->acceleration;
      sources.acceleration = "arm profile";
    } else if (from_yaml && from_yaml->acceleration) {
      limits.acceleration = *from_yaml->acceleration;
      sources.acceleration = "joint_limits.yaml";
    } else if (has_limit && it->second.has_acceleration) {
      char* end = nullptr;
      const std::string& text = it->second.acceleration;
      limits.acceleration = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(limits.acceleration > 0.0) ||
          !std::isfinite(limits.acceleration)) {
        throw ArmModelError(joint_where(
            joint, "<limit> acceleration=\"" + text + "\": must be a finite number > 0 [rad/s^2]"));
      }
      sources.acceleration = "urdf";
    } else {
      throw ArmModelError(
          at_joint(quoted +
                   ": no acceleration limit [rad/s^2]: add has_acceleration_limits: true "
                   "and max_acceleration to " +
                   yaml_name() + " (--joint-limits), or acceleration to " + profile_name() +
                   " (--arm-profile), or tether's acceleration attribute to its <limit>"));
    }
    return limits;
  }

  // Every link rigidly attached (through fixed joints only) to a chain link, with its
  // pose in that joint's frame; used for markers and merged mass properties.
  void attach_rigid_links(ArmModel& arm) {
    std::vector<std::pair<std::string, std::pair<int, Frame>>> stack(on_chain_.begin(),
                                                                     on_chain_.end());
    while (!stack.empty()) {
      const auto [name, attachment] = stack.back();
      stack.pop_back();
      rigid_.insert({name, attachment});
      for (const auto& child : model_->getLink(name)->child_joints) {
        if (child->type != urdf::Joint::FIXED || on_chain_.count(child->child_link_name)) continue;
        stack.push_back({child->child_link_name,
                         {attachment.first,
                          attachment.second * to_frame(child->parent_to_joint_origin_transform)}});
      }
    }
    std::vector<InertiaSum> sums(static_cast<std::size_t>(arm.dof()) + 1);
    for (const auto& [name, attachment] : rigid_) {
      const auto link = model_->getLink(name);
      if (link->inertial)
        sums[static_cast<std::size_t>(attachment.first) + 1].add(*link->inertial,
                                                                 attachment.second);
    }
    arm.base_link_inertia = sums[0].about_com();
    for (std::size_t i = 0; i < arm.joints.size(); ++i)
      arm.joints[i].link = sums[i + 1].about_com();
  }

  // A link's pose in a chain joint's frame, or an error naming the link and `what`.
  std::pair<int, Frame> rigid_link(const std::string& link_name, const std::string& what,
                                   const std::string& file, int line) const {
    const auto it = rigid_.find(link_name);
    if (it != rigid_.end()) return it->second;
    if (!model_->getLink(link_name)) {
      throw ArmModelError(where(file,
                                what + " = '" + link_name + "': no <link> of that name in robot '" +
                                    model_->getName() + "'",
                                line));
    }
    throw ArmModelError(where(file,
                              what + " = '" + link_name +
                                  "': not rigidly attached to the chain from '" + base_link_ +
                                  "' to '" + tool_link_ + "'",
                              line));
  }

  // Pose of every chain joint's frame in the base frame at q = 0.
  static std::vector<Frame> joint_frames_at_zero(const ArmModel& arm) {
    std::vector<Frame> out;
    Frame f = Frame::Identity();
    for (const ArmJoint& j : arm.joints) {
      f = f * j.origin;
      out.push_back(f);
    }
    return out;
  }

  static double distance_to_axis(const Frame& joint_frame, const Vector3& axis, const Vector3& x) {
    const Vector3 a = joint_frame.R * axis;
    const Vector3 r = x - joint_frame.p;
    return (r - r.dot(a) * a).norm();
  }

  // The shoulder (first = 0), elbow (2) or wrist (4) point: from the profile, else the
  // marker link, else where the axes of joints first+1 and first+2 (1-based) meet.
  ArmPointReport find_point(const ArmModel& arm, const char* role, const std::string& marker_link,
                            const std::optional<ProfilePoint>* from_profile, int first,
                            double tolerance) const {
    const int second = first + 1;
    const int next = first + 2;
    const std::vector<Frame> frames = joint_frames_at_zero(arm);
    const auto at = [&](int k) { return frames[static_cast<std::size_t>(k)]; };
    const auto axis = [&](int k) { return arm.joints[static_cast<std::size_t>(k)].axis; };
    const auto in_base = [&](const ArmPoint& p) {
      return p.joint < 0 ? p.offset : Vector3(at(p.joint) * p.offset);
    };
    ArmPointReport report;
    report.first_joint = first;
    report.second_joint = second;
    if (from_profile != nullptr && from_profile->has_value()) {
      const ProfilePoint& p = **from_profile;
      const auto [joint, pose] =
          rigid_link(p.link, std::string("points.") + role + ".link", profile_->source, p.line);
      report.source = ArmPointReport::Source::kProfile;
      report.detail = profile_->source;
      report.point = ArmPoint{joint, pose * p.xyz};
    } else if (model_->getLink(marker_link)) {
      const auto [joint, pose] =
          rigid_link(marker_link, std::string(role) + " marker link", source_, 0);
      report.source = ArmPointReport::Source::kMarkerLink;
      report.detail = marker_link;
      report.point = ArmPoint{joint, pose.p};
    } else {
      if (arm.dof() <= second) {
        throw ArmModelError(source_ + ": " + role + " point: the chain has only " +
                            std::to_string(arm.dof()) + " joints; tether drives 7-joint arms");
      }
      // Closest points of the lines p1 + s a1 and p2 + t a2; the point is taken on the
      // second axis, in the second joint's frame, as tether's marker links place it.
      const Vector3 a1 = at(first).R * axis(first), a2 = at(second).R * axis(second);
      const Vector3 w0 = at(first).p - at(second).p;
      const double b = a1.dot(a2), d = a1.dot(w0), e = a2.dot(w0);
      const double denominator = 1.0 - b * b;
      const std::string joints = "joints " + std::to_string(first + 1) + " ('" +
                                 arm.joints[static_cast<std::size_t>(first)].name + "') and " +
                                 std::to_string(second + 1) + " ('" +
                                 arm.joints[static_cast<std::size_t>(second)].name + "')";
      const std::string remedy = std::string("give points.") + role + " in the arm profile (" +
                                 profile_name() + ", --arm-profile) or add a marker link '" +
                                 marker_link + "' to the URDF";
      if (denominator < 1e-12) {
        throw ArmModelError(source_ + ": " + role + " point: the axes of " + joints +
                            " are parallel at q = 0 and never meet: " + remedy);
      }
      const double t = (e - b * d) / denominator;
      const double s = (b * e - d) / denominator;
      const Vector3 on_second = at(second).p + t * a2;
      const Vector3 on_first = at(first).p + s * a1;
      const double residual = (on_second - on_first).norm();
      if (residual > tolerance) {
        std::ostringstream text;
        text << std::setprecision(4) << source_ << ": " << role << " point: the axes of " << joints
             << " pass " << residual * 1e3 << " mm apart at q = 0, more than the "
             << tolerance * 1e3 << " mm tolerance: " << remedy
             << ", or raise point_tolerance in the arm profile";
        throw ArmModelError(text.str());
      }
      report.source = ArmPointReport::Source::kAutomatic;
      report.point = ArmPoint{second, at(second).R.transpose() * (on_second - at(second).p)};
    }
    // Residuals for the joints the chain has (a shorter chain is refused by the kinematics,
    // with its own message).
    const Vector3 x = in_base(report.point);
    for (int k : {first, second}) {
      if (k < arm.dof()) {
        report.residual = std::max(report.residual, distance_to_axis(at(k), axis(k), x));
      }
    }
    if (next < arm.dof()) report.next_axis_distance = distance_to_axis(at(next), axis(next), x);
    return report;
  }

  const std::string& xml_;
  std::string source_;
  UrdfLoadOptions options_;
  std::map<std::string, JointXml> joint_xml_;
  urdf::ModelInterfaceSharedPtr model_;
  std::map<std::string, std::pair<int, Frame>> on_chain_;  // link -> (joint index, pose)
  std::map<std::string, std::pair<int, Frame>> rigid_;
  std::vector<urdf::JointConstSharedPtr> chain_joints_;  // the movable joints, in order
  std::optional<JointLimitsYaml> yaml_;
  std::optional<ArmProfile> profile_;
  std::vector<std::string> mesh_uris_;
  mutable std::vector<std::string> notes_;
  std::string base_link_, tool_link_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArmModelError(path + ": cannot open URDF file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

LoadedArm load_arm_with_report_from_string(const std::string& xml, const std::string& source_name,
                                           const UrdfLoadOptions& options) {
  return Loader(xml, source_name, options).load();
}

LoadedArm load_arm_with_report(const std::string& path, const UrdfLoadOptions& options) {
  return load_arm_with_report_from_string(read_file(path), path, options);
}

ArmModel load_arm_from_urdf_string(const std::string& xml, const std::string& source_name,
                                   const UrdfLoadOptions& options) {
  return load_arm_with_report_from_string(xml, source_name, options).arm;
}

ArmModel load_arm_from_urdf(const std::string& path, const UrdfLoadOptions& options) {
  return load_arm_with_report(path, options).arm;
}

std::string format_load_report(const LoadedArm& loaded) {
  const ArmModel& arm = loaded.arm;
  const ArmLoadReport& r = loaded.report;
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  const auto joint_name = [&](int k) {
    return std::to_string(k + 1) + " (" + arm.joints[static_cast<std::size_t>(k)].name + ")";
  };
  const auto point = [&](const char* role, const ArmPointReport& p) {
    out << "  " << role << ": ";
    switch (p.source) {
      case ArmPointReport::Source::kProfile:
        out << "from the arm profile " << p.detail;
        break;
      case ArmPointReport::Source::kMarkerLink:
        out << "from the marker link '" << p.detail << "'";
        break;
      case ArmPointReport::Source::kAutomatic:
        out << "automatic, where the axes of joints " << joint_name(p.first_joint) << " and "
            << joint_name(p.second_joint) << " meet";
        break;
    }
    out << "; " << p.residual * 1e3 << " mm off the axes of joints " << p.first_joint + 1 << " and "
        << p.second_joint + 1 << ", " << p.next_axis_distance * 1e3 << " mm off the axis of joint "
        << p.second_joint + 2 << "\n";
  };
  out << "arm-angle points (residuals at q = 0):\n";
  point("shoulder", r.shoulder);
  point("elbow", r.elbow);
  point("wrist", r.wrist);
  out << "limits from (position, velocity, acceleration):\n";
  for (std::size_t i = 0; i < r.joints.size() && i < arm.joints.size(); ++i) {
    out << "  " << arm.joints[i].name << ": " << r.joints[i].position << ", "
        << r.joints[i].velocity << ", " << r.joints[i].acceleration << "\n";
  }
  out << "meshes: " << r.meshes << " (" << r.package_meshes << " package://, " << r.resolved_meshes
      << " found; not used for kinematics)\n";
  for (const auto& note : r.notes) out << "note: " << note << "\n";
  return out.str();
}

// <directory of this program>/../share/tether: where a relocated install (the Debian
// package's /usr) keeps its data, whatever prefix the build was configured with.
std::string beside_program() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return (exe.parent_path().parent_path() / "share" / "tether").string();
}

std::string shipped_directory(const char* env_var, const std::string& source_dir,
                              const std::string& install_dir, const std::string& share_subdir) {
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') return env;
  const std::string relocated = beside_program();
  std::error_code error;
  for (const std::string& candidate :
       {source_dir, install_dir, relocated.empty() ? relocated : relocated + "/" + share_subdir}) {
    if (!candidate.empty() && std::filesystem::is_directory(candidate, error)) return candidate;
  }
  return install_dir;
}

std::string data_path(const std::string& relative) {
  const std::string relocated = beside_program();
  const char* roots[] = {std::getenv("TETHER_DATA_DIR"), TETHER_SOURCE_DATA_DIR,
                         TETHER_INSTALL_DATA_DIR, relocated.c_str()};
  for (const char* root : roots) {
    if (root == nullptr || *root == '\0') continue;
    std::string candidate = std::string(root) + "/" + relative;
    if (std::ifstream(candidate).good()) return candidate;
  }
  throw ArmModelError("data file '" + relative +
                      "' not found (set TETHER_DATA_DIR to the folder holding arms/)");
}

namespace {

struct ShippedArm {
  const char* name;
  const char* urdf;
  const char* base;
  const char* tool;
  const char* joint_limits;  // "" for none
  const char* profile;       // "" for none
};

constexpr ShippedArm kShippedArms[] = {
    {"iiwa7", "arms/iiwa7.urdf", "iiwa_link_0", "iiwa_flange", "", ""},
    {"panda", "arms/panda.urdf", "panda_link0", "panda_flange", "", ""},
    {"gen3", "arms/gen3.urdf", "base_link", "end_effector_link", "arms/gen3_joint_limits.yaml",
     "arms/gen3_profile.yaml"},
};

const ShippedArm* shipped(const std::string& name) {
  for (const ShippedArm& arm : kShippedArms) {
    if (name == arm.name) return &arm;
  }
  return nullptr;
}

LoadedArm load_shipped(const ShippedArm& arm, const UrdfLoadOptions& given) {
  UrdfLoadOptions options;
  options.base_link = arm.base;
  options.tool_link = arm.tool;
  options.package_paths = given.package_paths;
  options.joint_limits_file = !given.joint_limits_file.empty() ? given.joint_limits_file
                              : *arm.joint_limits != '\0'      ? data_path(arm.joint_limits)
                                                               : std::string();
  options.arm_profile_file = !given.arm_profile_file.empty() ? given.arm_profile_file
                             : *arm.profile != '\0'          ? data_path(arm.profile)
                                                             : std::string();
  return load_arm_with_report(data_path(arm.urdf), options);
}

}  // namespace

ArmModel load_default_arm() { return load_shipped(*shipped("iiwa7"), {}).arm; }

ArmModel load_panda_arm() { return load_shipped(*shipped("panda"), {}).arm; }

ArmModel load_gen3_arm() { return load_shipped(*shipped("gen3"), {}).arm; }

LoadedArm load_arm_by_name_with_report(const std::string& name, const UrdfLoadOptions& options) {
  if (const ShippedArm* arm = shipped(name)) return load_shipped(*arm, options);
  return load_arm_with_report(name, options);
}

ArmModel load_arm_by_name(const std::string& name, const UrdfLoadOptions& options) {
  return load_arm_by_name_with_report(name, options).arm;
}

}  // namespace tether

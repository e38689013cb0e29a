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
#include <map>
#include <mutex>
#include <sstream>

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

  ArmModel load() {
    scan_xml();
    parse_model();
    ArmModel arm;
    arm.name = model_->getName();
    arm.source = source_;
    arm.base_link = options_.base_link.empty() ? model_->getRoot()->name : options_.base_link;
    arm.tool_link = options_.tool_link;
    if (arm.tool_link.empty()) {
      throw ArmModelError(source_ + ": no tool link given (UrdfLoadOptions::tool_link)");
    }
    require_link(arm.base_link, "base link");
    require_link(arm.tool_link, "tool link");
    build_chain(arm);
    attach_rigid_links(arm);
    arm.shoulder = marker(options_.shoulder_link, "shoulder");
    arm.elbow = marker(options_.elbow_link, "elbow");
    arm.wrist = marker(options_.wrist_link, "wrist");
    return arm;
  }

 private:
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
      if (joint->type != urdf::Joint::REVOLUTE) {
        throw ArmModelError(joint_where(
            *joint, std::string("type '") + type_name(joint->type) +
                        "' is not supported: tether drives chains of revolute joints with "
                        "position limits"));
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
      out.limits = limits_of(*joint);
      arm.joints.push_back(out);
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

  JointLimits limits_of(const urdf::Joint& joint) const {
    const auto it = joint_xml_.find(joint.name);
    if (!joint.limits || it == joint_xml_.end() || !it->second.has_limit) {
      throw ArmModelError(joint_where(joint, "missing <limit> element"));
    }
    JointLimits limits;
    limits.lower = joint.limits->lower;
    limits.upper = joint.limits->upper;
    limits.velocity = joint.limits->velocity;
    limits.effort = joint.limits->effort;
    if (!(limits.lower < limits.upper)) {
      throw ArmModelError(joint_where(joint, "<limit> lower=" + format_double(limits.lower) +
                                                 " upper=" + format_double(limits.upper) +
                                                 ": needs lower < upper (missing attributes "
                                                 "default to 0)"));
    }
    if (!(limits.velocity > 0.0) || !std::isfinite(limits.velocity)) {
      throw ArmModelError(joint_where(joint, "<limit> velocity=" + format_double(limits.velocity) +
                                                 ": must be finite and > 0 [rad/s]"));
    }
    if (!it->second.has_acceleration) {
      throw ArmModelError(
          joint_where(joint,
                      "<limit> has no 'acceleration' attribute: tether needs every joint's maximum "
                      "acceleration [rad/s^2]"));
    }
    char* end = nullptr;
    const std::string& text = it->second.acceleration;
    limits.acceleration = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !(limits.acceleration > 0.0) ||
        !std::isfinite(limits.acceleration)) {
      throw ArmModelError(joint_where(
          joint, "<limit> acceleration=\"" + text + "\": must be a finite number > 0 [rad/s^2]"));
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

  ArmPoint marker(const std::string& link_name, const char* role) const {
    const auto it = rigid_.find(link_name);
    if (it == rigid_.end()) {
      if (!model_->getLink(link_name)) {
        throw ArmModelError(source_ + ": " + role + " marker link '" + link_name +
                            "' is missing: add <link name=\"" + link_name +
                            "\"/> with a fixed joint to the link that carries the " + role +
                            " point");
      }
      throw ArmModelError(source_ + ": " + role + " marker link '" + link_name +
                          "' is not rigidly attached to the chain from '" + options_.base_link +
                          "' to '" + options_.tool_link + "'");
    }
    return ArmPoint{it->second.first, it->second.second.p};
  }

  const std::string& xml_;
  std::string source_;
  UrdfLoadOptions options_;
  std::map<std::string, JointXml> joint_xml_;
  urdf::ModelInterfaceSharedPtr model_;
  std::map<std::string, std::pair<int, Frame>> on_chain_;  // link -> (joint index, pose)
  std::map<std::string, std::pair<int, Frame>> rigid_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArmModelError(path + ": cannot open URDF file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ArmModel load_arm_from_urdf_string(const std::string& xml, const std::string& source_name,
                                   const UrdfLoadOptions& options) {
  return Loader(xml, source_name, options).load();
}

ArmModel load_arm_from_urdf(const std::string& path, const UrdfLoadOptions& options) {
  return load_arm_from_urdf_string(read_file(path), path, options);
}

// <directory of this program>/../share/tether: where a relocated install (the Debian
// package's /usr) keeps its data, whatever prefix the build was configured with.
std::string beside_program() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return (exe.parent_path().parent_path() / "share" / "tether").string();
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

ArmModel load_default_arm() {
  UrdfLoadOptions options;
  options.base_link = "iiwa_link_0";
  options.tool_link = "iiwa_flange";
  return load_arm_from_urdf(data_path("arms/iiwa7.urdf"), options);
}

ArmModel load_panda_arm() {
  UrdfLoadOptions options;
  options.base_link = "panda_link0";
  options.tool_link = "panda_flange";
  return load_arm_from_urdf(data_path("arms/panda.urdf"), options);
}

ArmModel load_arm_by_name(const std::string& name, const UrdfLoadOptions& options) {
  if (name == "iiwa7") return load_default_arm();
  if (name == "panda") return load_panda_arm();
  return load_arm_from_urdf(name, options);
}

}  // namespace tether

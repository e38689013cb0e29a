#include "kdl_chain.h"

#include <urdf_parser/urdf_parser.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace tether::testing {
namespace {

KDL::Frame to_kdl(const urdf::Pose& pose) {
  return KDL::Frame(
      KDL::Rotation::Quaternion(pose.rotation.x, pose.rotation.y, pose.rotation.z, pose.rotation.w),
      KDL::Vector(pose.position.x, pose.position.y, pose.position.z));
}

}  // namespace

KDL::Chain kdl_chain_from_urdf(const std::string& path, const std::string& base_link,
                               const std::string& tip_link) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(text.str());
  if (!model) throw std::runtime_error("urdfdom could not parse " + path);

  std::vector<urdf::JointConstSharedPtr> path_joints;
  for (auto link = model->getLink(tip_link); link && link->name != base_link;
       link = model->getLink(link->parent_joint->parent_link_name)) {
    path_joints.insert(path_joints.begin(), link->parent_joint);
  }
  KDL::Chain chain;
  for (const auto& joint : path_joints) {
    const KDL::Frame origin = to_kdl(joint->parent_to_joint_origin_transform);
    if (joint->type == urdf::Joint::REVOLUTE || joint->type == urdf::Joint::CONTINUOUS) {
      const KDL::Vector axis(joint->axis.x, joint->axis.y, joint->axis.z);
      chain.addSegment(KDL::Segment(
          joint->child_link_name,
          KDL::Joint(joint->name, origin.p, origin.M * axis, KDL::Joint::RotAxis), origin));
    } else {
      chain.addSegment(
          KDL::Segment(joint->child_link_name, KDL::Joint(joint->name, KDL::Joint::None), origin));
    }
  }
  return chain;
}

Frame to_frame(const KDL::Frame& f) {
  Frame out;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out.R(r, c) = f.M(r, c);
    out.p[r] = f.p[r];
  }
  return out;
}

}  // namespace tether::testing

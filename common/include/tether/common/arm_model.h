#pragma once

// Description of a serial revolute arm, as loaded from its URDF (see urdf_loader.h).
// Set-up data: built once, never touched by the control cycle.

#include <string>
#include <vector>

#include "tether/common/types.h"

namespace tether {

struct JointLimits {
  double lower = 0.0;         // [rad]
  double upper = 0.0;         // [rad]
  double velocity = 0.0;      // maximum |q̇| [rad/s]
  double acceleration = 0.0;  // maximum |q̈| [rad/s²]
  double effort = 0.0;        // maximum |τ| [N·m]
};

// Mass properties of the link a joint moves, in that joint's frame.
struct LinkInertia {
  double mass = 0.0;                  // [kg]
  Vector3 com = Vector3::Zero();      // centre of mass [m]
  Matrix3 inertia = Matrix3::Zero();  // about the centre of mass, joint-frame axes [kg·m²]
};

struct ArmJoint {
  std::string name;
  std::string child_link;
  // Pose of this joint's frame in the previous joint's frame (the arm base frame
  // for the first joint), at q = 0. Fixed joints in between are folded in.
  Frame origin;
  Vector3 axis = Vector3::UnitZ();  // unit rotation axis in this joint's frame
  JointLimits limits;
  LinkInertia link;  // the moving link, fixed children merged in
};

// A point rigidly attached to the arm: `joint` is the index of the last joint that moves
// it (-1: fixed in the base frame) and `offset` its position in that joint's frame [m].
struct ArmPoint {
  int joint = -1;
  Vector3 offset = Vector3::Zero();
};

struct ArmModel {
  std::string name;       // URDF robot name
  std::string source;     // file it was loaded from, for messages
  std::string base_link;  // frame all kinematics is expressed in
  std::string tool_link;
  std::vector<ArmJoint> joints;
  LinkInertia base_link_inertia;
  Frame tool;  // tool frame in the last joint's frame
  // Shoulder, elbow and wrist points that define the arm angle (the extended-task-space patent):
  // marker links in the URDF, attached by fixed joints to links of the chain.
  ArmPoint shoulder;
  ArmPoint elbow;
  ArmPoint wrist;

  int dof() const { return static_cast<int>(joints.size()); }
};

}  // namespace tether

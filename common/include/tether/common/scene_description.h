#pragma once

// What a remote site's arm works in, as both sites speak of it: the scene's name and the
// geometry a client needs to draw it and to preview a task in it (tether.v1.SceneDescription,
// converted in tether::proto). The embedded simulation describes its scene from the same
// numbers it builds the physics from (remote_site/sim); a real arm's site may say nothing
// (an empty name) or describe its cell.
//
// Frames and units: every pose is in the arm's BASE frame [m], at the auxiliary joints' zero.

#include <cstdint>
#include <string>
#include <vector>

#include "tether/common/types.h"

namespace tether {

struct SceneBody {
  enum class Shape : std::uint8_t {
    kBox,       // size: half extents along the body's x, y, z [m]
    kSphere,    // size.x(): radius [m]
    kCylinder,  // size.x(): radius, size.z(): half length along the body's z [m]
  };
  std::string name;
  Shape shape = Shape::kBox;
  Vector3 size = Vector3::Zero();
  Frame pose;             // BASE
  std::string joint;      // the auxiliary joint that carries the body; empty: fixed
  bool obstacle = false;  // a sphere obstacle avoidance may be told about
  bool contact = false;   // the arm collides with it (otherwise it is only seen or sensed)
  friend bool operator==(const SceneBody& a, const SceneBody& b) {
    return a.name == b.name && a.shape == b.shape && a.size == b.size && a.pose.R == b.pose.R &&
           a.pose.p == b.pose.p && a.joint == b.joint && a.obstacle == b.obstacle &&
           a.contact == b.contact;
  }
};

// An auxiliary revolute joint of the scene (the door's hinge).
struct SceneJoint {
  std::string name;
  Vector3 position = Vector3::Zero();  // a point on the axis, BASE [m]
  Vector3 axis = Vector3::UnitZ();     // unit, BASE; positive angle by the right-hand rule
  double lower = 0.0;                  // [rad]
  double upper = 0.0;                  // [rad]
  int aux_index = -1;                  // where telemetry's aux reports its angle; −1: nowhere
  friend bool operator==(const SceneJoint&, const SceneJoint&) = default;
};

struct SceneDescription {
  std::string name;  // as `tether-remote --scene` names it: "free", "door", ...
  std::vector<SceneBody> bodies;
  std::vector<SceneJoint> joints;
  friend bool operator==(const SceneDescription&, const SceneDescription&) = default;
};

}  // namespace tether

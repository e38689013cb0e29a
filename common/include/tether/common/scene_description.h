#pragma once

// What a remote site's arm works in, as both sites speak of it: the scene's name and the
// geometry a client needs to draw it and to preview a task in it (tether.v1.SceneDescription,
// converted in tether::proto). The embedded simulation describes its scene from the same
// numbers it builds the physics from (remote_site/sim); a real arm's site may say nothing
// (an empty name) or describe its cell.
//
// Frames and units: every pose is in the arm's BASE frame [m], at the auxiliary joints' zero.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tether/common/types.h"

namespace tether {

// tag36h11, the AprilTag family tether's detector reads, has ids 0 … 586.
inline constexpr int kTag36h11Count = 587;

// A tag36h11 AprilTag printed on a body's +z face, centred, its sides along the body's x and
// y: what a site needs to find the body in a camera's images and to measure its pose.
struct SceneTag {
  int id = 0;         // 0 … kTag36h11Count − 1
  double size = 0.0;  // [m] side of the tag's black square (the white margin is outside it)
  friend bool operator==(const SceneTag&, const SceneTag&) = default;
};

struct SceneBody {
  enum class Shape : std::uint8_t {
    kBox,       // size: half extents along the body's x, y, z [m]
    kSphere,    // size.x(): radius [m]
    kCylinder,  // size.x(): radius, size.z(): half length along the body's z [m]
  };
  std::string name;
  Shape shape = Shape::kBox;
  Vector3 size = Vector3::Zero();
  Frame pose;                   // BASE
  std::string joint;            // the auxiliary joint that carries the body; empty: fixed
  bool obstacle = false;        // a sphere obstacle avoidance may be told about
  bool contact = false;         // the arm collides with it (otherwise it is only seen or sensed)
  std::optional<SceneTag> tag;  // the fiducial it carries, if any
  friend bool operator==(const SceneBody& a, const SceneBody& b) {
    return a.name == b.name && a.shape == b.shape && a.size == b.size && a.pose.R == b.pose.R &&
           a.pose.p == b.pose.p && a.joint == b.joint && a.obstacle == b.obstacle &&
           a.contact == b.contact && a.tag == b.tag;
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

// A camera of the site that an operator may watch. Its frame C: z along the optical axis
// out of the lens, x right and y down in the image; `pose` is C in BASE at the initial
// configuration (a camera on the gripper moves with it, one on the camera mount with the
// mount). A pinhole with square pixels and its principal point at the image centre.
struct SceneCamera {
  std::string name;   // "wrist", "overview", "stereo_left", ...
  std::string mount;  // "" fixed in the cell, "gripper", "camera_mount" (the pan-tilt head)
  Frame pose;
  double field_of_view = 1.0471975511965976;  // [rad] horizontal
  int width = 640;                            // [px]
  int height = 480;                           // [px]
  double frame_rate = 15.0;                   // [Hz] when watched
  // The other camera of a stereo pair (empty: none); the pair's EYE frame lies midway
  // between them, oriented as they are.
  std::string stereo_partner;
  friend bool operator==(const SceneCamera& a, const SceneCamera& b) {
    return a.name == b.name && a.mount == b.mount && a.pose.R == b.pose.R && a.pose.p == b.pose.p &&
           a.field_of_view == b.field_of_view && a.width == b.width && a.height == b.height &&
           a.frame_rate == b.frame_rate && a.stereo_partner == b.stereo_partner;
  }
};

struct SceneDescription {
  std::string name;  // as `tether-remote --scene` names it: "free", "door", ...
  std::vector<SceneBody> bodies;
  std::vector<SceneJoint> joints;
  std::vector<SceneCamera> cameras;
  friend bool operator==(const SceneDescription&, const SceneDescription&) = default;
};

}  // namespace tether

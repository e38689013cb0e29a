#pragma once

// The two YAML files that complete a URDF as its maker publishes it (see urdf_loader.h):
//
// 1. MoveIt's joint_limits.yaml (--joint-limits), as MoveIt reads it:
//
//      default_velocity_scaling_factor: 1        # any other top-level key: ignored
//      joint_limits:                             # required
//        joint_1:                                # a <joint> name of the URDF
//          has_velocity_limits: true
//          max_velocity: 1.33                    # [rad/s]
//          has_acceleration_limits: true
//          max_acceleration: 4.94                # [rad/s²]
//          has_position_limits: true
//          min_position: -6.283                  # [rad]
//          max_position: 6.283                   # [rad]
//
//    A max_* value counts only when its has_*_limits flag is true (MoveIt ignores it
//    otherwise); a true flag without its value is an error. MoveIt's other per-joint keys
//    (jerk, effort, deceleration, soft limits, angle_wraparound) are accepted and ignored;
//    any other key is refused, so a misspelt key is not silently dropped.
//
// 2. The tether arm profile (--arm-profile), tether's own file for what neither the URDF nor
//    MoveIt describes:
//
//      tether_arm_profile: 1                     # required: the schema version
//      joints:                                   # optional
//        joint_1:
//          acceleration: 4.94                    # [rad/s²], > 0
//          lower: -6.283                         # [rad], both or neither; a continuous
//          upper: 6.283                          #   joint's range, or a narrower range
//      points:                                   # optional, each point optional
//        shoulder: {link: half_arm_1_link, xyz: [0, 0, 0]}   # [m] in that link's frame
//        elbow:    {link: forearm_link, xyz: [0, 0, 0]}
//        wrist:    {link: spherical_wrist_2_link, xyz: [0, 0, 0]}
//      point_tolerance: 0.001                    # [m], optional: how far apart two joint
//                                                #   axes may pass and still be taken to meet
//
// Both parsers check what they can without the URDF (types, signs, ranges, known keys);
// joint names and links are checked against the URDF by the loader. Every problem throws
// tether::ArmModelError naming the file, the line, the field path, the value and what is
// allowed, e.g.
//   "limits.yaml:12: joint_limits.joint_3.max_acceleration = '-2': must be a finite number > 0
//   [rad/s^2]".

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tether/common/types.h"
#include "tether/common/urdf_loader.h"

namespace tether {

// Largest |position| a limits file may give [rad]: two turns each way. Larger values are
// almost surely degrees.
inline constexpr double kMaxYamlPosition = 4.0 * 3.14159265358979323846;
// Largest point_tolerance an arm profile may set [m]: beyond it two axes do not "meet".
inline constexpr double kMaxPointTolerance = 0.1;

// One joint's entries from either file; an absent value is std::nullopt.
struct JointLimitEntry {
  std::optional<double> lower;         // [rad]
  std::optional<double> upper;         // [rad]
  std::optional<double> velocity;      // [rad/s]
  std::optional<double> acceleration;  // [rad/s²]
  int line = 0;                        // 1-based line of the joint's key, for messages
};

struct JointLimitsYaml {
  std::string source;                             // the file, for messages
  std::map<std::string, JointLimitEntry> joints;  // by URDF joint name
};

// Parses MoveIt joint_limits.yaml text; `source` names it in messages.
JointLimitsYaml parse_joint_limits_yaml(std::string_view text, const std::string& source);
JointLimitsYaml load_joint_limits_yaml(const std::string& path);

// A point rigidly attached to a link of the arm.
struct ProfilePoint {
  std::string link;
  Vector3 xyz = Vector3::Zero();  // [m] in the link's frame
  int line = 0;
};

struct ArmProfile {
  std::string source;
  std::map<std::string, JointLimitEntry> joints;  // acceleration, lower, upper only
  std::optional<ProfilePoint> shoulder;
  std::optional<ProfilePoint> elbow;
  std::optional<ProfilePoint> wrist;
  std::optional<double> point_tolerance;  // [m] in (0, kMaxPointTolerance]
};

ArmProfile parse_arm_profile(std::string_view text, const std::string& source);
ArmProfile load_arm_profile(const std::string& path);

}  // namespace tether

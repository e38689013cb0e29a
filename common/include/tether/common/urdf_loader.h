#pragma once

// Loads a serial revolute arm from URDF with urdfdom. Every failure throws
// tether::ArmModelError whose message names the file and the offending element.
//
// A URDF is taken as its maker publishes it (xacro already expanded), completed by two
// optional YAML files (formats in arm_yaml.h): MoveIt's joint_limits.yaml and tether's arm
// profile. Per joint, in base-link coordinates and SI units:
//   position range [rad]   revolute: the URDF's <limit lower upper>, narrowed by the
//                          profile's lower/upper, else the yaml's min/max_position (which
//                          may not widen it); continuous: the profile's, else the yaml's,
//                          else an error;
//   velocity [rad/s]       the yaml's max_velocity, else the URDF's <limit velocity>;
//   acceleration [rad/s²]  the profile's acceleration, else the yaml's max_acceleration,
//                          else tether's `acceleration` attribute in the URDF's <limit>,
//                          else an error naming the joint and both files.
// The shoulder, elbow and wrist points that define the arm angle come, each on its own,
// from the profile's points, else from marker links (tether_shoulder, ...) in the URDF,
// else automatically: at q = 0, the point on the axis of joint 2 (4, 6) closest to the axis
// of joint 1 (3, 5), provided the two axes pass within the point tolerance (1 mm unless
// the options or the profile say otherwise). For an S-R-S arm this is where the axes meet:
// the shoulder and wrist centres and the elbow on joint 4's axis, as tether's marker links
// place them. Meshes are not needed for kinematics: package:// URIs are looked up in the
// package path and reported, never an error. Either everything loads or nothing does.

#include <stdexcept>
#include <string>
#include <vector>

#include "tether/common/arm_model.h"

namespace tether {

class ArmModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct UrdfLoadOptions {
  std::string base_link;  // empty: the URDF's root link
  std::string tool_link;  // required: the chain runs from base_link to tool_link
  std::string shoulder_link = "tether_shoulder";
  std::string elbow_link = "tether_elbow";
  std::string wrist_link = "tether_wrist";
  std::string joint_limits_file;           // MoveIt joint_limits.yaml; empty: none
  std::string arm_profile_file;            // tether arm profile; empty: none
  std::vector<std::string> package_paths;  // directories holding ROS packages, for package://
  double point_tolerance = 1e-3;           // [m]; the profile's point_tolerance wins
};

// Where one of the shoulder, elbow and wrist points came from, and how well the joint axes
// that define it meet.
struct ArmPointReport {
  enum class Source { kProfile, kMarkerLink, kAutomatic };
  Source source = Source::kAutomatic;
  std::string detail;  // the profile file, or the marker link's name
  ArmPoint point;
  // Automatic points: the two joints (0-based) whose axes define it, and the closest
  // distance between those axes at q = 0 [m]. For every point: its distance from the axis of
  // the joint after them (3, 5, 7: zero for an S-R-S arm) [m].
  int first_joint = -1;
  int second_joint = -1;
  double residual = 0.0;
  double next_axis_distance = 0.0;
};

// Where each joint's limits came from ("urdf", "joint_limits.yaml", "arm profile").
struct JointLimitSources {
  std::string position;
  std::string velocity;
  std::string acceleration;
};

struct ArmLoadReport {
  ArmPointReport shoulder;
  ArmPointReport elbow;
  ArmPointReport wrist;
  std::vector<JointLimitSources> joints;  // in chain order
  int meshes = 0;                         // <mesh> elements in the URDF
  int package_meshes = 0;                 // of those, package:// URIs
  int resolved_meshes = 0;                // package:// URIs found in the package path
  std::vector<std::string> notes;         // what was accepted but not used, one line each
};

struct LoadedArm {
  ArmModel arm;
  ArmLoadReport report;
};

// Every movable joint between base_link and tool_link must be revolute or continuous, with
// its limits from the URDF and the two files as above.
ArmModel load_arm_from_urdf(const std::string& path, const UrdfLoadOptions& options);
ArmModel load_arm_from_urdf_string(const std::string& xml, const std::string& source_name,
                                   const UrdfLoadOptions& options);
LoadedArm load_arm_with_report(const std::string& path, const UrdfLoadOptions& options);
LoadedArm load_arm_with_report_from_string(const std::string& xml, const std::string& source_name,
                                           const UrdfLoadOptions& options);

// The report as an operator reads it: one line per point (source, residuals in mm), per
// joint (sources of its limits), the meshes and the notes.
std::string format_load_report(const LoadedArm& loaded);

// The arms shipped with tether, from the data directory (see data_path()).
std::string data_path(const std::string& relative);
// A directory tether ships (task commands, the console's front end): $env_var when set,
// else the first of source_dir (a build tree), install_dir (the configured prefix) and
// <program>/../share/tether/<share_subdir> (a relocated install, the Debian package's /usr)
// that exists, else install_dir.
std::string shipped_directory(const char* env_var, const std::string& source_dir,
                              const std::string& install_dir, const std::string& share_subdir);
ArmModel load_default_arm();  // KUKA LBR iiwa 7 R800 kinematics
ArmModel load_panda_arm();    // Franka Emika Panda kinematics (link offsets)
// Kinova Gen3 7-DOF as Kinova publishes it (arms/gen3.urdf), with Kinova's MoveIt limits
// (arms/gen3_joint_limits.yaml) and tether's profile for its continuous joints
// (arms/gen3_profile.yaml).
ArmModel load_gen3_arm();
// What the command-line tools accept as --arm: "iiwa7", "panda", "gen3", or a URDF path
// loaded with `options`. For a shipped arm, only the options' joint limits file and arm
// profile count: each replaces the shipped one.
ArmModel load_arm_by_name(const std::string& name, const UrdfLoadOptions& options);
LoadedArm load_arm_by_name_with_report(const std::string& name, const UrdfLoadOptions& options);

}  // namespace tether

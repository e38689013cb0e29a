#pragma once

// Loads a serial revolute arm from URDF with urdfdom. Every failure throws
// tether::ArmModelError whose message names the file and the offending element.

#include <stdexcept>
#include <string>

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
};

// Every movable joint between base_link and tool_link must be revolute with
// <limit lower upper velocity effort> and tether's `acceleration` attribute
// (URDF has no acceleration limit; urdfdom ignores the extra attribute).
ArmModel load_arm_from_urdf(const std::string& path, const UrdfLoadOptions& options);
ArmModel load_arm_from_urdf_string(const std::string& xml, const std::string& source_name,
                                   const UrdfLoadOptions& options);

// The arms shipped with tether, from the data directory (see data_path()).
std::string data_path(const std::string& relative);
ArmModel load_default_arm();  // KUKA LBR iiwa 7 R800 kinematics
ArmModel load_panda_arm();    // Franka Emika Panda kinematics (link offsets)
// What the command-line tools accept as --arm: "iiwa7", "panda", or a URDF path loaded with
// `options` (base and tool links).
ArmModel load_arm_by_name(const std::string& name, const UrdfLoadOptions& options);

}  // namespace tether

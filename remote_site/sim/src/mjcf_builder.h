#pragma once

// Builds the MJCF (MuJoCo XML) text of the simulated arm and its scene from a tether
// ArmModel. Private to the simulated arm: callers resolve every scene object to a BASE
// pose first (simulated_arm.cc), this unit only writes XML.
//
// Model layout the simulated arm relies on (names are part of the contract):
//   bodies   arm_link_<i> (i = 0…6, moved by joint i), gripper (frame = TOOL when the
//            wrist compliance is relaxed), door
//   joints   arm_joint_<i> (dofs 0…6, in order), then wrist_<x|y|z>, wrist_r<x|y|z> (the
//            wrist compliance, when enabled: slides then hinges along TOOL axes, on the
//            gripper), then door_hinge (door scene only)
//   cameras  as MjcfScene lists them (wrist on the gripper, overview, stereo_left/right)
//   mocap    visual_target (visual-target scene: the tag, moved along its path), camera_mount
//            (when it carries cameras: the pan-tilt head, its frame the stereo pair's EYE)
//   sites    ft_sensor (TOOL origin and axes, on the gripper), proximity (frame L)
//   sensors  ft_force, ft_torque at ft_sensor: the wrench the arm applies to the gripper
//            subtree, in site axes, about the site
//   servos   arm_servo_<i>: general actuators, force = gain·ctrl + bias1·q + bias2·q̇,
//            clamped to ±effort; gains written by the simulated arm after compiling
//   groups   geom group 1: the arm and the gripper (ignored by the proximity beams);
//            group 0: the scene
//   contact  arm and gripper geoms collide with scene obstacles only (no self-collision)

#include <optional>
#include <string>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/scene_description.h"
#include "tether/common/types.h"
#include "tether/remote/sim/scene.h"

namespace tether::remote::detail {

// A camera on a body: `pose` is its frame C (z out of the lens, x right and y down in the
// image) in the body's frame.
struct MjcfCamera {
  std::string name;
  Frame pose;
  double fov_x = 1.0471975511965976;  // [rad] horizontal field of view
  int width = 640;                    // [px]
  int height = 480;                   // [px]
};

// The visual target's texture: the tag's 10 × 10 cells, 20 px each.
inline constexpr int kTagTexturePixels = 200;

struct MjcfScene {
  SceneKind kind = SceneKind::kFreeSpace;
  double timestep = 0.0005;  // [s]
  GripperParameters gripper;
  WristComplianceParameters wrist;
  // TOOL pose at the initial configuration (the door weld's relative pose follows from it).
  Frame base_T_tool;
  DoorParameters door;
  Frame base_T_hinge;           // HINGE frame (scene.h, door_hinge_in_tool), door scene
  Frame base_T_wall;            // WALL frame (scene.h, wall_in_tool), wall scene
  std::vector<Sphere> spheres;  // obstacles scene
  ProximityTargetParameters target;
  Frame base_T_plate;   // PLATE frame (scene.h, proximity_target_in_sensor), target scene
  Frame tool_T_sensor;  // proximity sensor frame L
  // Cameras on the gripper (poses in TOOL), fixed in the cell (in BASE) and on the pan-tilt
  // camera mount (in the mount's frame), a mocap body at base_T_camera_mount.
  std::vector<MjcfCamera> gripper_cameras;
  std::vector<MjcfCamera> world_cameras;
  std::vector<MjcfCamera> mount_cameras;
  Frame base_T_camera_mount;
  double tag_size = 0.1;       // [m] the visual target tag's black square
  Frame base_T_target;         // the visual target's tag at the start: z towards the camera
  int offscreen_width = 640;   // [px] the largest image a camera renders
  int offscreen_height = 480;  // [px]
};

// Reflected rotor inertia per joint [kg·m²]: effort / 400 s⁻², within [0.02, 0.5]. A drive
// whose rotor alone would reach 400 rad/s² at full torque (iiwa7: 0.44 at the base, 0.1 at
// the wrist; Panda: 0.22 and 0.03).
JointVector rotor_inertia(const ArmModel& arm);

// Viscous joint friction [N·m·s/rad]: effort / 100 s (iiwa7 1.76 … 0.4).
JointVector joint_damping(const ArmModel& arm);

// Radius of the collision capsule of the link moved by joint i [m].
double link_radius(int joint);

// Throws std::invalid_argument if the arm is not a 7-joint chain or has non-finite data.
std::string build_mjcf(const ArmModel& arm, const MjcfScene& scene);

// The scene's bodies and auxiliary joints as a client draws them (scene_description.h), from
// the same numbers build_mjcf() writes: `name` as the command-line tools spell it.
SceneDescription describe_scene(const MjcfScene& scene, const std::string& name);

}  // namespace tether::remote::detail

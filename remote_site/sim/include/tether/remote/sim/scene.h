#pragma once

// Scenes and options of the embedded MuJoCo arm (simulated_arm.h). Set-up data only: nothing
// here is touched by the control cycle.
//
// Every scene object is placed relative to the arm's INITIAL configuration
// (SimulationOptions::initial_position, default default_initial_position()), so task files
// can state their frames in TOOL coordinates:
//
//   kFreeSpace        the arm and its gripper, nothing else.
//   kDoor             a hinged door whose handle the gripper holds rigidly (the extended-task-space
//   patent, FIGS.
//                     4-10). Its geometry is fixed in TOOL coordinates (hinge_in_tool()); the
//                     initial TOOL x axis must point down (BASE −z) so the hinge is vertical.
//   kWall             a stiff flat wall across the TOOL z axis, `clearance` beyond the
//                     gripper tip, and a sphere beside the elbow (WallParameters).
//   kObstacles        spheres that collide with the arm's links (default: beside the elbow
//                     and forearm, default_obstacles()).
//   kProximityTarget  a plate across the proximity sensor's beam, slightly tilted.
//   kVisualTarget     a square marker in front of the wrist camera that moves sideways
//                     (VisualTargetParameters); the camera (CameraParameters) images it.
//
// Frames: BASE (gravity −z), TOOL (the arm's flange frame), L (the proximity sensor frame:
// its z axis points from the surface to the sensor, the beam travels along −z).

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/kinematics.h"
#include "tether/common/scene_description.h"
#include "tether/common/types.h"

namespace tether::remote {

enum class SceneKind { kFreeSpace, kDoor, kWall, kObstacles, kProximityTarget, kVisualTarget };

const char* to_string(SceneKind kind);

// The scene names of the command-line tools: free, door, wall, obstacles, proximity; empty
// for any other name. kSceneNames lists them for error messages.
std::optional<SceneKind> scene_from_name(std::string_view name);
inline constexpr const char* kSceneNames = "free, door, wall, obstacles, proximity or target";
// The command-line name of a scene, the inverse of scene_from_name: "free", "door", ...
const char* scene_name(SceneKind kind);

// The gripper hangs below the wrist force/torque sensor, whose frame is the TOOL frame. It
// is part of what the sensor measures (its weight is not compensated by the arm), and of the
// load the joint servos' gravity compensation carries. Its inertia is that of a solid
// cylinder of `radius` and `length` around the TOOL z axis, about its centre of mass.
struct GripperParameters {
  double mass = 0.8;                                 // [kg]
  Vector3 center_of_mass = Vector3(0.0, 0.0, 0.05);  // [m] TOOL coordinates
  double radius = 0.035;                             // [m] collision capsule
  double length = 0.12;       // [m] TOOL origin to the gripper tip, along TOOL +z
  double grasp_depth = 0.10;  // [m] grasp point (between the fingers) along TOOL +z
};

// The compliance between the flange and the gripper: the wrist force/torque sensor's own
// elasticity, the gripper's mount and a servoed gripper's grasp (fingers, pads, its drive),
// lumped into one 6-D spring-damper at the TOOL origin along TOOL axes, so the gripper (and
// what it holds) deflects from the TOOL frame the arm's kinematics reports. The wrist sensor
// measures the wrench carried through it. Springs and dampers are per axis, uncoupled.
//
// Why it matters: an admittance loop of period Δt and mass M is stable only against an
// environment stiffness below roughly M/Δt² (the extended-task-space patent's door at 20 ms,
// M = 10 kg, 2 kg·m²: 25 kN/m and 5 kN·m/rad). A welded grasp behind stiff joint servos is
// far stiffer; this compliance sets the stiffness the loop meets. The defaults come from the
// stiffness sweep in docs/performance.md (deploy/compliance-sweep.sh), a margin below
// the stability edge at 20 ms, within published figures for a servoed gripper's grasp.
struct WristComplianceParameters {
  bool enabled = true;
  double translational_stiffness = 5000.0;  // [N/m]
  double rotational_stiffness = 500.0;      // [N·m/rad]
  double translational_damping = 60.0;      // [N·s/m]
  double rotational_damping = 1.0;          // [N·m·s/rad]
};

// The wrist compliance the command-line tools' --wrist-stiffness takes: "rigid" (disabled),
// "default", or "K_T:K_R" — translational [N/m] within [100, 1e7] and rotational [N·m/rad]
// within [1, 1e5] stiffness, the dampings scaled with √K from the defaults (the same
// damping ratio). Throws std::invalid_argument naming the part, its value and its range.
WristComplianceParameters wrist_compliance_from_spec(std::string_view spec);

// A door that opens towards the robot (a "pull" door). Its hinge axis is vertical, the
// panel's mid-plane is perpendicular to the initial TOOL z axis and `handle_standoff`
// beyond the grasp point, and the hinge lies `handle_to_hinge` from the grasp point along
// TOOL −y. Positive hinge angle (right-hand rotation about BASE +z) opens the door.
struct DoorParameters {
  double handle_to_hinge = 0.55;       // [m] grasp point to hinge axis, in the panel plane
  double handle_standoff = 0.06;       // [m] grasp point in front of the panel mid-plane
  double panel_width = 0.65;           // [m] hinge axis to the panel's free edge
  double panel_height = 0.9;           // [m]; the handle is 0.05 m above the panel's centre
  double panel_thickness = 0.03;       // [m]
  double mass = 6.0;                   // [kg] panel and handle
  double hinge_damping = 3.0;          // [N·m·s/rad] viscous
  double hinge_friction = 0.02;        // [N·m] dry friction (MuJoCo frictionloss); no spring
  double lower_limit = -0.0872664626;  // [rad] −5°: the door frame stop
  double upper_limit = 1.7453292520;   // [rad] 100°
};

// A rigid wall (a box 1 m × 1 m × 0.05 m) whose surface is perpendicular to the initial
// TOOL z axis, `clearance` beyond the gripper tip. Contact is stiff (2 ms time constant).
struct WallParameters {
  double clearance = 0.03;  // [m] gripper tip to wall surface along TOOL +z
  // A sphere beside the elbow (the first of default_obstacles()), as a workcell has: the
  // polishing task keeps the arm off it with obstacle avoidance.
  bool elbow_obstacle = true;
};

struct Sphere {
  Vector3 center = Vector3::Zero();  // [m] BASE coordinates
  double radius = 0.05;              // [m]
};

struct ObstacleParameters {
  std::vector<Sphere> spheres;  // empty: default_obstacles() at the initial configuration
};

// A square plate (5 mm thick) whose surface crosses the proximity sensor's central beam at
// `distance` from L's origin, its normal tilted from L's z axis by `tilt_x` about L's x
// axis, then `tilt_y` about the resulting y axis (n_L = R_x(tilt_x) R_y(tilt_y) e_z).
struct ProximityTargetParameters {
  double distance = 0.15;         // [m]
  double tilt_x = 0.0523598776;   // [rad] 3°
  double tilt_y = -0.0349065850;  // [rad] −2°
  double size = 0.3;              // [m] side of the plate
};

// The proximity sensor: four parallel beams along −z of L, one on L's z axis (the reported
// distance) and three at `beam_offset` around it, 120° apart (the surface normal, from the
// plane through the hits). Beams ignore the arm and its gripper.
struct ProximitySensorParameters {
  // L on the tool: beside the gripper, looking along TOOL +z (L z = TOOL −z).
  Frame tool_T_sensor{(Matrix3() << 1, 0, 0, 0, -1, 0, 0, 0, -1).finished(),
                      Vector3(0.0, 0.06, 0.08)};
  double range = 0.5;         // [m] nothing beyond it is seen
  double beam_offset = 0.01;  // [m]
};

// Joint servo loops (simulated_arm.h): per joint, stiffness K_p = I ω², damping
// K_d = 2 ζ I ω, with I the joint's largest effective inertia (link inertia seen by that
// joint, plus the rotor's reflected inertia) over the arm's workspace and ω = 2π bandwidth.
// Where a joint sees less inertia its loop is faster and more damped.
struct ServoParameters {
  double bandwidth = 25.0;     // [Hz]
  double damping_ratio = 1.0;  // at the largest inertia
};

// How the wrist camera sees the target (CameraParameters::source):
//   kRendered   as a real camera does: MuJoCo renders the image, an AprilTag detector finds
//               the target's tag36h11 tag in it and estimates its pose (rendered_camera.h).
//   kGeometric  the target's corners projected through the pinhole model plus Gaussian
//               pixel noise (simulated_camera.h): the oracle the rendered camera is tested
//               against, and the ground's preview, which has no images of the site.
enum class CameraSource { kRendered, kGeometric };

// When a rendered camera renders (SimulationOptions::render_timing):
//   kThread       on a niced thread of its own from a copy of the state at capture time,
//                 never inside the physics step: what a real-time site runs.
//   kSynchronous  inside the physics step at capture time: batch runs and tests, so that a
//                 run is the same whatever the machine's speed.
enum class RenderTiming { kThread, kSynchronous };

// What a rendered camera did so far (SimulatedArm::camera_statistics()).
struct CameraStatistics {
  std::uint64_t images = 0;           // rendered and searched
  std::uint64_t detected = 0;         // of which the tag was found in
  std::uint64_t skipped = 0;          // captures the render thread fell behind on
  double mean_render_time = 0.0;      // [s] render and read back, per image
  double mean_detection_time = 0.0;   // [s] tag detection and pose, per image
  double worst_detection_time = 0.0;  // [s]
};

// A camera on the gripper, the visual-tracking behaviour's sensor: a pinhole camera whose
// images are taken at `frame_rate` and whose readings (the target's centre in C) are
// delivered `latency` after they were taken, or when the detection is done if later. Its
// frame C: z along the optical axis, out of the lens; x right and y down in the image. An
// image in which the target is not found (kGeometric: does not hold all four corners) is
// delivered as not valid (out of view).
struct CameraParameters {
  // Default: 6 cm beside the gripper (TOOL +y), 5 cm along it, looking along TOOL z, with
  // the image's y along TOOL x (down at the initial posture).
  Frame tool_T_camera{(Matrix3() << 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0).finished(),
                      Vector3(0.0, 0.06, 0.05)};
  int width = 640;                            // [px]
  int height = 480;                           // [px]
  double field_of_view = 1.0471975511965976;  // [rad] horizontal: 60°
  double frame_rate = 30.0;                   // [Hz]
  CameraSource source = CameraSource::kRendered;
  double pixel_noise = 1.0;       // [px] kGeometric: standard deviation per corner coordinate
  double latency = 0.05;          // [s] from capture to delivery
  std::uint64_t seed = 20260611;  // the noise's
};

// The visual-tracking target: a tag36h11 AprilTag (`tag_id`) whose black square's side is
// `size`, printed with its white margin (a tenth of the tag on each side) on a mocap body,
// facing the camera `distance` ahead of it at
// the initial posture, at rest until `start`, then moving at the speed of `velocity` (BASE)
// back and forth along it over `travel`, centred on where it started (first along
// `velocity`), so a served scene keeps it in view however late a task starts; at `leave_at`
// it jumps 1 m along the initial image x, out of the camera's view.
struct VisualTargetParameters {
  double size = 0.1;                           // [m] side of the tag's black square
  int tag_id = 0;                              // tag36h11, 0 … 586
  double distance = 0.3;                       // [m] along the optical axis at the start
  Vector3 velocity = Vector3(0.0, 0.05, 0.0);  // [m/s] BASE
  double start = 1.0;                          // [s]
  double travel = 0.2;                         // [m] end to end; infinity: one way, for ever
  double leave_at = std::numeric_limits<double>::infinity();  // [s]
};

struct SimulationOptions {
  SceneKind scene = SceneKind::kFreeSpace;
  // Joint configuration the simulation starts in and the scene is built around [rad];
  // empty: default_initial_position(scene, arm).
  std::optional<JointVector> initial_position;
  double timestep = 0.0005;  // [s] physics step, one servo update per step
  GripperParameters gripper;
  WristComplianceParameters wrist;
  DoorParameters door;
  WallParameters wall;
  ObstacleParameters obstacles;
  ProximityTargetParameters proximity_target;
  CameraParameters camera;
  VisualTargetParameters visual_target;
  ProximitySensorParameters proximity_sensor;
  ServoParameters servo;
  RenderTiming render_timing = RenderTiming::kThread;
};

// Converges `q` (seed in, solution out) to the joint configuration whose TOOL frame is
// `base_T_tool` and whose arm angle (vertical reference plane) is `arm_angle` [rad], by
// damped least-squares steps kept inside the joint limits. Returns false if the pose error
// is not below 1e-9 (m and rad) after 300 steps. Set-up helper; does not allocate.
bool solve_tool_pose(const KinematicModel& model, const Frame& base_T_tool, double arm_angle,
                     JointVector& q);

// The shared initial posture of every scene: TOOL z horizontal along BASE +x ("pointing at
// the door"), TOOL x pointing down (BASE −z), elbow up (arm angle 0). The TOOL position is
// chosen among 40 candidates scaled by the arm's shoulder–wrist reach as the one whose door
// arc (default door and gripper, 0…55° every 5°, solved at constant arm angle) keeps the
// largest min(joint-limit margin [rad], 3 × smallest singular value of the composite
// Jacobian), less 0.1 per reach of height offset from the shoulder (a handle near shoulder
// height). iiwa7: q = (0, 1.392, 0, −0.795, 0, −0.616, 0), TOOL at (0.846, 0, 0.18) m.
// Deterministic; takes ~15-50 ms. Throws std::runtime_error if no candidate works.
JointVector default_initial_position(SceneKind scene, const ArmModel& arm);

// Three spheres near the elbow and forearm at configuration q (BASE coordinates), clear of
// the links at q: beside the elbow and the forearm on either side of the arm plane, and one
// above the elbow.
std::vector<Sphere> default_obstacles(const ArmModel& arm, const JointVector& q);

// The cameras of a scene an operator may watch (scene_description.h SceneCamera), placed from
// the TOOL pose at the initial configuration:
//   wrist         on the gripper (`wrist`'s pose, field of view and size), every scene;
//   overview      fixed in the cell, 1.7 m from the arm's reach, looking at its middle;
//   stereo_left,  a stereo pair 10 cm apart on the pan-tilt camera mount (the seed's camera
//   stereo_right  arm reduced to what moves the EYE frame: the mount's frame is EYE), behind and
//                 beside the tool looking just beyond it; door and target scenes.
// Watched at 15 Hz, 640 × 480 (the wrist camera at its own size).
std::vector<SceneCamera> scene_cameras(SceneKind scene, const Frame& base_T_tool0,
                                       const CameraParameters& wrist);

// The C frame (z out of the lens, x right, y down in the image) of a camera at `eye` looking
// at `target` with BASE +z up in its image.
Frame look_at(const Vector3& eye, const Vector3& target);

// The stereo pair's baseline [m].
inline constexpr double kStereoBaseline = 0.10;

// Pose of the HINGE frame in TOOL coordinates at the initial configuration: origin on the
// hinge axis at the height of the grasp point, X along the hinge axis with positive rotation
// opening the door (BASE +z = TOOL −x), Y horizontal from the hinge towards the handle side.
Frame door_hinge_in_tool(const DoorParameters& door, const GripperParameters& gripper);

// Pose of the WALL frame in TOOL coordinates at the initial configuration: origin where the
// TOOL z axis meets the wall surface, z the surface normal pointing out of the wall (towards
// the arm, TOOL −z), x along TOOL x.
Frame wall_in_tool(const WallParameters& wall, const GripperParameters& gripper);

// Pose of the PLATE frame in L coordinates at the initial configuration: origin where L's
// −z axis (the central beam) meets the plate surface, z the surface normal pointing at the
// sensor.
Frame proximity_target_in_sensor(const ProximityTargetParameters& target);

}  // namespace tether::remote

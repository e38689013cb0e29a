#pragma once

// The embedded simulated arm: any 7-joint ArmModel with a gripper, in one of the scenes of
// scene.h, simulated by MuJoCo behind the ArmInterface the executor drives.
//
// Model. The MJCF is built in memory from the ArmModel: one body per joint with the link's
// mass properties (tiny or zero ones raised to 1 g / 1e-6 kg·m²), hinge joints with the
// model's axes, origins and position limits, the rotor's reflected inertia as armature
// (effort / 400 s⁻², within [0.02, 0.5] kg·m²: iiwa7 0.44 at the base, 0.1 at the wrist) and
// a small viscous friction (effort / 100 s). Links are capsules between joint origins; they
// collide with scene objects, never with each other. The gripper (GripperParameters) hangs
// below a wrist force/torque sensor at the TOOL origin, on a 6-D spring-damper that lumps the
// compliance of the sensor, the gripper's mount and its grasp (WristComplianceParameters,
// default on; the door's handle is welded to the gripper, so the grasp yields through it).
//
// Joint servos, as a manufacturer's controller would run them. At every physics step
// (default 0.5 ms, implicit integration) each joint applies
//   τ = K_p (q_ref − q) + K_d (q̇_ff − q̇) + b(q, q̇),   clamped to ±effort,
// with b the gravity, Coriolis and centrifugal torques of the arm and gripper (MuJoCo's bias
// forces). q_ref moves linearly from the previous command to the one written, over the
// interval from write() to the next advance_to() time; q̇_ff is the written velocity.
// K_p = I ω², K_d = 2 ζ I ω (ServoParameters, default 25 Hz, ζ = 1) with I the joint's
// largest effective inertia (link inertia plus armature, the mass-matrix diagonal) over 64
// seeded configurations, so every joint is critically damped or overdamped. iiwa7:
// K_p ≈ (1.3e5, 1.4e5, 3.3e4, 3.3e4, 7.8e3, 3.4e3, 2.5e3) N·m/rad and K_d ≈ (1680, 1730,
// 420, 420, 99, 43, 32) N·m·s/rad; a 3 N·m steady load deflects the base joints by 0.02 mrad
// and the last wrist joint by 1.2 mrad. Panda: K_p ≈ (9.8e4, 9.6e4, 4.2e4, 3.2e4, 2.2e3,
// 2.2e3, 870). Within the effort limits a step settles within ~50 ms without overshoot; a step
// large enough to saturate a drive overshoots, as a real one would (the executor's commands
// are velocity and acceleration limited). One physics step costs ~17 µs on the project's
// machine (door scene): advance_to() over a 1 ms control period takes ~35 µs.
//
// Measurements (read()), all taken at the end of the last physics step:
//   position, velocity  joint q [rad], q̇ [rad/s]
//   wrench              the wrench the robot applies to its environment, about the TOOL
//                       origin in TOOL axes [N, N·m], INCLUDING the gripper's weight and
//                       inertia: at rest in free space f = R_toolᵀ (0, 0, m_g·9.81) and
//                       τ = c × f (c the gripper's centre of mass, GripperParameters);
//                       pushing the gripper into a wall adds the force INTO the wall.
//                       Forces are those of the last step's dynamics (0.5 ms old).
//   proximity           ProximityReading in the sensor frame L (ProximitySensorParameters)
//   aux[0], aux[1]      door scene: hinge angle [rad] (positive = open) and rate [rad/s]
//   aux[2]              number of contacts between the arm (links, gripper) and the scene
//   visual              visual-target scene: the wrist camera's latest delivered reading
//                       (VisualReading): the tag found in a rendered image
//                       (rendered_camera.h), or the geometric oracle (simulated_camera.h)
//
// Time: the arm's clock starts at 0 and only advance_to() moves it, in whole physics steps
// (lock-step; a batch run goes as fast as the physics allows). read(), write() and
// advance_to() neither allocate nor throw. If the physics diverges, every later read()
// returns ArmStatus::kFault and the simulation stops.

#include <memory>
#include <string>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/scene_description.h"
#include "tether/common/types.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/camera/camera_device.h"
#include "tether/remote/sim/scene.h"

namespace tether::remote {

// Its cameras (scene.h scene_cameras(): wrist, overview, the stereo pair) are rendered by
// MuJoCo when watched (camera::CameraDevices), on a render thread of their own.
class SimulatedArm final : public ArmInterface, public camera::CameraDevices {
 public:
  // Throws std::invalid_argument for bad options or an arm that is not 7-DOF, and
  // std::runtime_error (with MuJoCo's message) if the MJCF does not compile.
  explicit SimulatedArm(const ArmModel& arm, const SimulationOptions& options = {});
  ~SimulatedArm() override;
  SimulatedArm(const SimulatedArm&) = delete;
  SimulatedArm& operator=(const SimulatedArm&) = delete;

  const ArmModel& model() const override;
  ArmStatus read(ArmState& state) noexcept override;
  // A non-finite command is refused (kFault) and the previous one kept; positions are
  // clamped to the joint limits.
  ArmStatus write(const JointCommand& command) noexcept override;
  void advance_to(double time) noexcept override;
  // The physics state before the last step (time, qpos, qvel, act, the solver's warm start,
  // controls) and the servo's command interpolation; restore() puts it back and runs that
  // step again, so every reading (the last step's forces, contacts) comes back bit for bit.
  // Not for the visual-target scene, whose camera keeps images in flight (false).
  bool checkpoint(ArmCheckpoint& out) const noexcept override;
  bool restore(const ArmCheckpoint& state) override;

  const SimulationOptions& options() const;
  const JointVector& initial_position() const;  // [rad]
  const Frame& initial_tool_pose() const;       // TOOL in BASE at the initial position
  double time() const;                          // [s] arm clock
  double timestep() const;                      // [s]

  // Scene geometry at the initial configuration (scene.h). Each throws std::logic_error
  // when the scene has no such object.
  Frame hinge_in_tool() const;                   // kDoor: HINGE frame in TOOL
  Frame wall_in_tool() const;                    // kWall: WALL frame in TOOL
  const std::vector<Sphere>& obstacles() const;  // kObstacles, kWall: spheres, BASE
  Frame proximity_target_in_sensor() const;      // kProximityTarget: PLATE frame in L

  // What hangs below the wrist sensor: a task compensates its weight with these.
  const GripperParameters& gripper() const;
  // Servo gains K_p [N·m/rad] and K_d [N·m·s/rad] per joint.
  const JointVector& servo_stiffness() const;
  const JointVector& servo_damping() const;

  // The gripper's deflection on its wrist compliance [m, rad]: translation then rotation
  // (small-angle, about TOOL axes) of the gripper from the TOOL frame, in TOOL axes; zero
  // when the compliance is off (WristComplianceParameters::enabled).
  Vector6 wrist_deflection() const;

  // kVisualTarget: the target's centre in the camera frame C now, exactly (the camera's
  // readings are estimates from noisy, late images) [m]; std::logic_error in other scenes.
  Vector3 visual_target_in_camera() const;

  // The scene's cameras and watching them (tether/remote/camera/camera_device.h).
  const std::vector<SceneCamera>& cameras() const override;
  std::unique_ptr<camera::CameraWatch> watch(const std::string& name,
                                             camera::ImageSink sink) override;
  // The door and target scenes' pan-tilt head (camera_device.h): the physics step turns it
  // towards the aim at kAimRate.
  std::string aim(const std::string& name, double pan, double tilt) override;

  // The rendered wrist camera's counts and times so far (all zero without one).
  CameraStatistics camera_statistics() const;

  // Wall-clock time the last advance_to() spent in the physics [s].
  double physics_step_time() const;

  // The generated MJCF text, for inspection (e.g. in MuJoCo's viewer).
  const std::string& mjcf() const;
  // The scene as clients draw it and preview tasks in it (tether/common/scene_description.h),
  // from the numbers the physics is built from, at the initial configuration.
  const SceneDescription& scene_description() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::remote

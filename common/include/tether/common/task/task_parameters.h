#pragma once

// A task parameter set (the extended-task-space patent, "fixed software, data-driven"): everything
// the remote-site executor does comes from one of these. It is a plain domain type: the wire and
// file form is tether.v1.TaskParameters (proto/tether/v1/task.proto), converted in proto/ only, and
// every set is validated (task/validation.h) before it is applied.
//
// Frames:
//   BASE     the arm's base frame (kinematics.h). Gravity is −z of BASE.
//   WORLD    the remote site's world frame; `world_T_base` places BASE in it.
//   TOOL     the arm's tool (flange) frame.
//   MOTION   rigidly attached to TOOL (`tool_T_motion`); eq. 1 is evaluated in its axes,
//            about its origin. Motion-space vectors are (translation, rotation, arm angle).
// Disabled numeric bounds are +infinity.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tether/common/types.h"

namespace tether {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// Which discrete impedance update runs (the extended-task-space patent).
enum class Formulation {
  kAcceleration,  // eq. 7-9: ẍ_c from M⁻¹(ΣF − B(ẋ_c − ẋ_r) − K(x_c − x_r))
  kVelocity,      // eq. 27-31: ẋ_c = ẋ_r + B⁻¹(ΣF − K(x_c − x_r)) with inertia as ẋ_M
};

// How a velocity-producing behaviour enters the impedance law: as a velocity added to the
// reference (a term of ẋ_r, eq. 6) or as a force B·ẋ through its own damping (eq. 1).
enum class InputKind { kVelocity, kForce };

// Diagonals of eq. 1, in MOTION axes. Units per row: mass [kg | kg·m² | kg·m²],
// damping [N·s/m | N·m·s/rad | N·m·s/rad], stiffness [N/m | N·m/rad | N·m/rad].
struct ImpedanceParameters {
  Formulation formulation = Formulation::kAcceleration;
  MotionVector mass = MotionVector::Constant(10.0);
  MotionVector damping = MotionVector::Constant(350.0);
  MotionVector stiffness = MotionVector::Constant(100.0);
};

// Which redundancy resolver turns the impedance law's ẋ_c (7-D, MOTION axes) into joint
// velocities each cycle (remote_site/resolvers/<name>/). Every resolver honours
// obstacle_avoidance when its constrain_resolver is set.
enum class ResolverKind {
  kDls,  // eq. 13 on the composite Jacobian (the extended-task-space patent); the default
  kConfigurationControl,     // augmented Jacobian of user kinematic functions (the
                             // configuration-control patent)
  kConstrainedOptimisation,  // per-cycle optimisation with achieved fraction p (the
                             // constrained-optimisation patent)
  kShake,                    // SHAKE + annealing on the S-R-S point chain (the SHAKE patent)
};

// A kinematic function φ(q) of configuration control (the configuration-control patent). Its rows
// are stacked under the 6 MOTION-pose rows of the hand; each row asks φ̇ = φ̇_d.
enum class KinematicFunctionKind {
  kArmAngle,       // ψ, the elbow plane: 1 row, φ̇_d = ẋ_c[6] from the impedance law
  kGravityTorque,  // G = ½ Σ τ_g,i² (gravity torques of the arm's own links) minimised:
                   // 1 row, the optimality condition n_Jᵀ ∇G driven to 0 at `gain`
  kArmPoint,       // location of a point on the arm: rows of `axes`, driven to `target`
  kJointVelocity,  // √w_i q̇_i = √w_i q̇_d,i: one row per joint with w_i(t) > 0
  kJointAngle,     // √w_i q̇_i = √w_i gain (q_d,i − q_i): one row per joint with w_i > 0
  kJointLock,      // q̇_joint = 0: 1 row
  kJointLimitAvoidance,  // H = Σ (u−l)²/((u−q)(q−l)) minimised: 1 row, optimality condition
  kManipulability,       // w = √det(J₆ J₆ᵀ) maximised: 1 row, optimality condition
};

// Per-joint weights w_i(t) of kJointVelocity / kJointAngle at task time `time`; linear in
// between, constant outside the knots.
struct JointWeightKnot {
  double time = 0.0;                          // [s] since the task started; strictly increasing
  JointVector weights = JointVector::Ones();  // ≥ 0
};

struct KinematicFunctionParameters {
  KinematicFunctionKind kind = KinematicFunctionKind::kArmAngle;
  // W_t of the function's rows in the augmented weighted DLS, ≥ 0. With exactly 7 rows
  // it only matters when an obstacle constraint binds: a low weight (1e-3) on the arm-angle
  // function lets the constraint take the self-motion and the hand keep its path.
  double weight = 1.0;
  double gain = 1.0;  // [1/s] rate at which the function's error is driven to zero
  // kArmPoint: the point (joint index 0-6 and offset in that URDF joint frame [m]), its
  // target in BASE [m], and which BASE axes are controlled (1 = row present).
  int joint = 3;  // also the locked joint of kJointLock
  Vector3 offset = Vector3::Zero();
  Vector3 target = Vector3::Zero();
  Vector3 axes = Vector3::Ones();
  // kJointVelocity: q̇_d [rad/s]; kJointAngle: q_d [rad].
  JointVector desired = JointVector::Zero();
  std::vector<JointWeightKnot> weights;  // empty: w_i = 1
};

struct ConfigurationControlParameters {
  // r functions; when their rows and the hand's 6 outnumber the joints the stack is
  // over-determined and solved by weighted DLS with resolver.task_weights[0..5] on the hand
  // rows, each function's weight on its rows and resolver.joint_weights as damping.
  std::vector<KinematicFunctionParameters> functions;
};

// Per-cycle constrained optimisation (the constrained-optimisation patent). Units per sample of the
// control period.
struct ConstrainedOptimisationParameters {
  enum class Mode { kLexicographic, kWeighted };
  JointVector alpha = JointVector::Ones();  // energy (step size) weight, ≥ 0
  JointVector beta = JointVector::Zero();   // reference-posture weight, ≥ 0
  JointVector gamma = JointVector::Zero();  // acceleration weight, ≥ 0
  JointVector q_ref = JointVector::Zero();  // reference posture [rad]
  double max_translation = 0.002;           // Δx_max, translation per sample [m], > 0
  double max_rotation = 0.01;               // Δx_max, rotation per sample [rad], > 0
  double max_arm_angle = 0.01;              // arm-angle row per sample [rad], > 0
  bool track_arm_angle = true;              // 7 task rows (pose + ψ); false: 6, ψ free
  Mode mode = Mode::kLexicographic;
  double weight_p = 1e3;                 // w_p, kWeighted only, > 0
  double tolerance = 1e-12;              // step norm [rad] treated as zero, > 0
  double feasibility_tolerance = 1e-10;  // task-row residual still feasible, > 0
  int max_iterations = 100;              // per phase, ≥ 1
  double warn_below_p = 0.5;             // the operator is warned while p < this, [0, 1]
};

// SHAKE + simulated annealing (the SHAKE patent) on the S-R-S arm's shoulder–elbow–wrist chain: the
// hand pose fixes shoulder and wrist, the elbow is searched on its circle and the joint
// angles are recovered from the three points and the hand orientation.
struct ShakeParameters {
  std::uint64_t seed = 1;         // of the resolver's RNG: runs are reproducible
  int trials = 16;                // random elbow moves tried per cycle, ≥ 1
  double step = 0.0005;           // [m] size of a random elbow displacement, > 0
  double temperature = 0.0;       // Metropolis temperature; 0 = random search, ≥ 0
  double shake_tolerance = 1e-9;  // [m] link-length constraint tolerance, > 0
  int shake_iterations = 50;      // SHAKE sweeps, ≥ 1
  // Scaled for 1 kHz: the chain's squared angular velocities are ~1 rad²/s², the
  // reciprocal clearances ~10 1/m and the squared arm-angle error per cycle ~1e-6 rad².
  double obstacle_weight = 1e-2;  // reciprocal clearance to the obstacle_avoidance spheres
  double velocity_weight = 1e-3;  // squared joint angular velocities of the chain
  double acceleration_weight = 0.0;
  double reference_weight = 0.0;  // squared elbow distance from its place at q_reference
  JointVector q_reference = JointVector::Zero();  // [rad]
  double arm_angle_weight = 1.0;                  // squared distance from the impedance law's ψ
  double period = 0.0;                            // [s] periodic-trajectory term; 0 = off
  double periodic_weight = 0.0;
  double periodic_ramp = 1.0;  // [s] smooth switch-on after the first period
};

struct ResolverParameters {
  ResolverKind kind = ResolverKind::kDls;
  // Weighted damped least squares, eq. 13: diagonals of W_t (MOTION rows, unitless
  // priorities) and W_v (joints, added to the normal matrix).
  MotionVector task_weights = MotionVector::Ones();
  JointVector joint_weights = JointVector::Zero();
  ConfigurationControlParameters configuration_control;
  ConstrainedOptimisationParameters constrained_optimisation;
  ShakeParameters shake;
};

// The wrist force/torque sensor. The arm reports the wrench the robot applies to its
// environment at the TOOL origin in TOOL axes, including the weight of whatever hangs
// below the sensor; the executor removes that weight with this load model and low-pass
// filters the result.
struct WrenchSensorParameters {
  double tool_mass = 0.0;                         // [kg] mass below the sensor
  Vector3 tool_center_of_mass = Vector3::Zero();  // [m] in TOOL axes
  double filter_cutoff = 0.0;                     // [Hz] first-order low pass; 0 = off
  bool zero_on_start = false;                     // subtract the compensated wrench at task start
};

// A waypoint of the MOTION frame: pose in BASE (or relative to the start pose) and ψ.
struct Waypoint {
  double time = 0.0;       // [s] since the task started; strictly increasing
  Frame pose;              // MOTION frame pose
  double arm_angle = 0.0;  // [rad]
};

// Timed waypoints, quintic blends between consecutive ones (rest at each waypoint).
struct TrajectoryParameters {
  bool enabled = false;
  // Relative: each pose is start_T_waypoint, composed onto the MOTION pose at task start,
  // and arm_angle is added to the start arm angle. Absolute: BASE pose and ψ.
  bool relative = true;
  std::vector<Waypoint> waypoints;
};

// Spring trajectory: x_r = destination, ẋ_r = ẍ_r = 0, and the spring (x_c − x_r) limited
// per component to a maximum length so the motion neither jumps nor crawls.
struct SpringTrajectoryParameters {
  bool enabled = false;
  bool relative = true;    // destination is start_T_destination (see TrajectoryParameters)
  Frame destination;       // MOTION frame pose
  double arm_angle = 0.0;  // [rad] destination ψ (added to the start ψ if relative)
  Vector3 max_translation = Vector3::Constant(kUnbounded);  // [m] per MOTION axis
  double max_rotation = kUnbounded;                         // [rad] equivalent angle
  double max_arm_angle = kUnbounded;                        // [rad]
};

// Teleoperation (eq. 14, 32-36): F_t = B_t ẋ_h with ẋ_h the hand-controller velocity in the
// TELEOP frame. Samples are increments (remote/arm/arm_interface.h, HandControllerSample).
enum class TeleopMode {
  kTool,    // handle frame HH → TELEOP
  kWorld,   // hand-controller base HB → local WORLD ≡ remote WORLD → TELEOP
  kCamera,  // HB → local WORLD → stereo screen ST ≡ remote EYE → remote WORLD → TELEOP
};

struct TeleoperationParameters {
  bool enabled = false;
  TeleopMode mode = TeleopMode::kTool;
  // B_t diagonal in TELEOP axes [N·s/m | N·m·s/rad | N·m·s/rad]; zero rows are directions the
  // operator may not drive. Row 6 maps the trigger's arm-angle rate.
  MotionVector gain = MotionVector::Zero();
  Frame tool_T_teleop;                             // TELEOP frame on the tool
  Matrix3 teleop_R_handle = Matrix3::Identity();   // tool mode: HH axes in TELEOP axes
  Matrix3 world_R_hc_base = Matrix3::Identity();   // world mode: HB axes in WORLD axes
  Matrix3 screen_R_hc_base = Matrix3::Identity();  // camera mode: HB axes in ST axes
  Matrix3 world_R_eye = Matrix3::Identity();       // camera mode: EYE (≡ ST) axes in WORLD
  double stall_timeout = 0.1;  // [s] no sample for this long while enabled → stop
};

// Force control (eq. 15-17): F_r, the wrench the robot should apply, MOTION frame.
struct ForceControlParameters {
  bool enabled = false;
  Vector6 reference_wrench = Vector6::Zero();  // [N, N·m]
};

// Joint-limit avoidance (eq. 18-19). Within `zone` of a limit, q̇_i = k_i (1/d_i − 1/zone_i)
// away from it, d_i the distance to the limit (the seed's k_i/(q_i − q_lim) shifted so the
// push starts from zero at the zone edge). Mapped to MOTION by J.
struct JointLimitAvoidanceParameters {
  bool enabled = false;
  JointVector zone = JointVector::Constant(0.2);   // [rad]
  JointVector gain = JointVector::Constant(0.02);  // k_i [rad²/s]
  InputKind input = InputKind::kForce;
  MotionVector damping = MotionVector::Constant(350.0);  // B_j, for kForce
};

// Singularity avoidance (eq. 20-21): P = the wrist point (tether_wrist) relative to the
// joint-1 frame origin, as the seed's "joint-7 frame relative to joint-1 frame". Outside
// [r_min, r_max] a force K_s·(violation) along ±P̂ pushes back, rotated into MOTION axes.
struct SingularityAvoidanceParameters {
  bool enabled = false;
  double r_min = 0.2;    // [m]
  double r_max = 1.1;    // [m]
  double gain = 1000.0;  // K_s [N/m]
};

// Singularity robustness (eq. 22-23): W_v = K_rob·(violation)·I inside the singular regions.
struct SingularityRobustnessParameters {
  bool enabled = false;
  double r_min = 0.2;  // [m]
  double r_max = 1.1;  // [m]
  double gain = 1.0;   // K_rob [1/m]
};

// Dither: triangular velocity wave of the given peak amplitude and period, in a DITHER
// frame attached to the MOTION frame.
struct DitherParameters {
  bool enabled = false;
  Vector6 amplitude = Vector6::Zero();  // peak twist [m/s, rad/s] in DITHER axes
  double period = 0.1;                  // [s]
  Frame motion_T_dither;
  InputKind input = InputKind::kVelocity;
  MotionVector damping = MotionVector::Constant(350.0);
};

// Proximity (eq. 24-26). Sensor frame L on the tool: its z axis points from the surface to
// the sensor (the beam goes along −z), so eq. 25 as written, v_z = k_d (d_r − d_a), backs
// away when too close. Tilt: rotation (axis k, angle θ) from L's z to the surface normal,
// ω = k_θ θ k.
struct ProximityParameters {
  bool enabled = false;
  double reference_distance = 0.1;  // d_r [m]
  double distance_gain = 2.0;       // k_d [1/s]
  double tilt_gain = 2.0;           // k_θ [1/s]
  Frame tool_T_sensor;              // L
  InputKind input = InputKind::kVelocity;
  MotionVector damping = MotionVector::Constant(350.0);
};

// Manipulability: drives ψ (the self-motion) up the gradient of w = √det(J Jᵀ) of the
// 6-D MOTION Jacobian, ψ̇ = k ∂w/∂ψ at constant pose.
struct ManipulabilityParameters {
  bool enabled = false;
  double gain = 1.0;  // k [rad/s per unit of ∂w/∂ψ]
  InputKind input = InputKind::kVelocity;
  double damping = 10.0;  // [N·m·s/rad], for kForce
};

// Execution bounds: leaving any stops the arm (controlled stop) until reset.
struct BoundsParameters {
  // Deviation of the actual MOTION pose (measured joints) from the reference x_r.
  double max_translation_deviation = kUnbounded;  // [m]
  double max_rotation_deviation = kUnbounded;     // [rad]
  double max_arm_angle_deviation = kUnbounded;    // [rad]
  // Compensated wrench at the MOTION origin.
  double max_force = kUnbounded;   // [N]
  double max_torque = kUnbounded;  // [N·m]
  // Proximity sensor distance window (needs a proximity reading).
  double min_proximity_distance = 0.0;                   // [m]
  double max_proximity_distance = kUnbounded;            // [m]
  JointVector joint_limit_margin = JointVector::Zero();  // [rad] keep this far inside
  int max_consecutive_overruns = 3;                      // control-loop deadline misses in a row
  double stop_time = 0.2;  // [s] joint velocities ramp to zero within this
};

// Obstacle avoidance with spheres of influence (the spheres-of-influence patent). The links are
// capsules; each link's critical point and distance to each obstacle are found every cycle
// (common/obstacles.h).
struct ObstacleSphereParameters {
  Vector3 centre = Vector3::Zero();  // WORLD [m]
  double radius = 0.0;               // the obstacle's own extent [m]
  double influence = 0.1;            // radius of the sphere of influence beyond it [m]
};

struct ObstacleAvoidanceParameters {
  bool enabled = false;
  std::vector<ObstacleSphereParameters> obstacles;        // at most 8
  JointVector link_radius = JointVector::Constant(0.06);  // capsule radius per link [m]
  // In the resolver: once a critical distance reaches its radius of influence, the critical
  // point may not approach further (an inequality constraint) while the motion-space task
  // keeps what the remaining redundancy allows.
  bool constrain_resolver = true;
  double recovery = 2.0;  // [1/s] push-back of a point already inside; 0 only stops it
  // As a behaviour of the impedance law: inside the sphere of influence a force
  // gain·(influence − d) along the obstacle→point normal acts at the critical point, mapped
  // into MOTION space by virtual work. 0 = off.
  double behaviour_gain = 0.0;  // [N/m]
};

struct TaskParameters {
  std::string name;
  double period = 0.001;  // [s] control period
  Frame world_T_base;
  Frame tool_T_motion;
  Vector3 arm_angle_reference = Vector3::UnitZ();  // V, BASE coordinates
  ImpedanceParameters impedance;
  ResolverParameters resolver;
  WrenchSensorParameters wrench_sensor;
  TrajectoryParameters trajectory;
  SpringTrajectoryParameters spring_trajectory;
  TeleoperationParameters teleoperation;
  ForceControlParameters force_control;
  JointLimitAvoidanceParameters joint_limit_avoidance;
  SingularityAvoidanceParameters singularity_avoidance;
  SingularityRobustnessParameters singularity_robustness;
  DitherParameters dither;
  ProximityParameters proximity;
  ManipulabilityParameters manipulability;
  ObstacleAvoidanceParameters obstacle_avoidance;
  BoundsParameters bounds;
};

}  // namespace tether

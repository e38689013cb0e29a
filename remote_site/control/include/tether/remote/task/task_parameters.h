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
// Disabled numeric bounds are +infinity (kUnbounded, parameter_types.h).
//
// The sections of the task itself (period, frames, impedance, resolver, wrench sensor,
// bounds) are defined here; each behaviour's section is defined in its own folder
// (tether/remote/behaviours/<field>/parameters.h) and becomes a member through the list of
// behaviours (behaviours/list.h).

#include <cstdint>
#include <string>
#include <vector>

#include "tether/common/types.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/behaviours/list.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

// Which discrete impedance update runs (the extended-task-space patent).
enum class Formulation {
  kAcceleration,  // eq. 7-9: ẍ_c from M⁻¹(ΣF − B(ẋ_c − ẋ_r) − K(x_c − x_r))
  kVelocity,      // eq. 27-31: ẋ_c = ẋ_r + B⁻¹(ΣF − K(x_c − x_r)) with inertia as ẋ_M
};

// Diagonals of eq. 1, in MOTION axes. Units per row: mass [kg | kg·m² | kg·m²],
// damping [N·s/m | N·m·s/rad | N·m·s/rad], stiffness [N/m | N·m/rad | N·m/rad].
struct ImpedanceParameters {
  Formulation formulation = Formulation::kAcceleration;
  MotionVector mass = MotionVector::Constant(10.0);
  MotionVector damping = MotionVector::Constant(350.0);
  MotionVector stiffness = MotionVector::Constant(100.0);
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

struct TaskParameters {
  std::string name;
  double period = 0.001;  // [s] control period
  Frame world_T_base;
  Frame tool_T_motion;
  Vector3 arm_angle_reference = Vector3::UnitZ();  // V, BASE coordinates
  ImpedanceParameters impedance;
  ResolverParameters resolver;
  WrenchSensorParameters wrench_sensor;
  // One member per behaviour, `<Name>Parameters <field>;`, in the order of the list.
#define TETHER_BEHAVIOUR_MEMBER(field, Name, ENUM, label) Name##Parameters field;
  TETHER_BEHAVIOURS(TETHER_BEHAVIOUR_MEMBER)
#undef TETHER_BEHAVIOUR_MEMBER
  BoundsParameters bounds;
};

// The behaviours `task` enables, in the order of the list. Allocates.
std::vector<Behaviour> enabled_behaviours(const TaskParameters& task);

}  // namespace tether

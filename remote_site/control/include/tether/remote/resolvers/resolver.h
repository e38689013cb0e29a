#pragma once

// The redundancy-resolver contract. Each cycle the executor hands the selected resolver
// (task.resolver.kind) the same problem: the motion-space velocity ẋ_c the impedance law
// commands (eq. 9 / 31) at the commanded configuration q_c, and asks for the joint velocity
// to command. The executor then applies the joint velocity, acceleration and position
// limits to whatever the resolver returns (a resolver that honours them itself returns a
// q̇ those limits leave unchanged) and feeds J q̇ back into the impedance state, so a
// resolver that cannot deliver ẋ_c exactly never winds the impedance law up.
//
// Adding a resolver: a folder under resolvers/ with a class implementing Resolver, an
// enumerator of ResolverKind (remote/task/task_parameters.h) with its parameters, and one
// line in ResolverSet (resolver_set.h).
//
// Threading and allocation: reset() runs on the control-loop thread at task start and
// may not allocate either (buffers are sized in the constructor, Model/Data style, for the
// largest task the validator admits); resolve() is called every cycle and never
// allocates, locks, logs or throws.

#include <cstdint>
#include <span>

#include "tether/common/kinematics.h"
#include "tether/common/obstacles.h"
#include "tether/common/types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

enum class ResolverStatus : std::uint8_t {
  kOk,
  kSingular,        // no usable solution: the executor stops the arm (kResolverSingular)
  kInfeasible,      // constraints could not all be met: best effort returned, keeps running
  kNotConverged,    // iteration limit: feasible but not optimal, keeps running
  kNonFiniteInput,  // NaN/inf in: the executor stops the arm (kNonFinite)
};

const char* to_string(ResolverStatus status) noexcept;

// What every resolver sees; all pointers are valid for the duration of the call.
struct ResolverInput {
  const KinematicModel* model = nullptr;
  const KinematicState* state = nullptr;  // forward kinematics of q (BASE frame)
  // Composite Jacobian at q: rows 0-5 the MOTION frame's twist (translation about its
  // origin, rotation) in MOTION axes, row 6 the arm angle ψ.
  const CompositeJacobian* jacobian = nullptr;
  Frame motion_pose;  // MOTION frame in BASE
  Frame tool_T_motion;
  double arm_angle = 0.0;                         // ψ at q [rad]
  JointVector q = JointVector::Zero();            // commanded joints q_c[n] [rad]
  JointVector qd_previous = JointVector::Zero();  // joint velocity commanded last cycle [rad/s]
  MotionVector xd = MotionVector::Zero();         // ẋ_c[n+1], MOTION axes [m/s | rad/s | rad/s]
  // W_v of eq. 13 for this cycle: resolver.joint_weights plus what behaviours add
  // (singularity robustness).
  JointVector joint_weights = JointVector::Zero();
  double time = 0.0;  // task time [s]
  double dt = 0.001;  // control period [s]
  // Critical points of the spheres of influence (the spheres-of-influence patent), BASE frame, when
  // obstacle_avoidance.enabled and constrain_resolver; empty otherwise. The obstacles
  // themselves (BASE frame) for resolvers that search configurations.
  std::span<const CriticalPoint> critical_points;
  std::span<const SphereObstacle> obstacles;
  LinkRadii link_radius = LinkRadii::Zero();
  double obstacle_recovery = 0.0;  // [1/s]
};

struct ResolverResult {
  JointVector qd = JointVector::Zero();  // joint velocity to command [rad/s]
  ResolverStatus status = ResolverStatus::kOk;
  // Fraction of the commanded motion the resolver achieved (the constrained-optimisation patent's
  // p; the others report |J q̇ − ẋ_c| through it as 1 when exact). Shown to the operator.
  double achieved_fraction = 1.0;
  int active_constraints = 0;  // obstacle or limit constraints enforced this cycle
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Task start (or restart): forget history, take the task's parameters.
  virtual void reset(const TaskParameters& task, const ResolverInput& input) noexcept = 0;
  virtual void resolve(const TaskParameters& task, const ResolverInput& input,
                       ResolverResult& result) noexcept = 0;
};

}  // namespace tether::remote

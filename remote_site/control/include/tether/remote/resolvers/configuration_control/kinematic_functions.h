#pragma once

// The user kinematic functions φ(q) of configuration control (the configuration-control patent):
// each one yields rows J_φ (∂φ/∂q) and desired rates φ̇_d that the resolver stacks under the hand's
// six MOTION rows. The row semantics are those of KinematicFunctionKind
// (remote/task/task_parameters.h).
//
// A criterion C(q) to minimise (gravity torques, joint-limit proximity) or maximise
// (manipulability) becomes a task through its optimality condition
//   φ = n̂ᵀ ∇C,   n̂ = n / |n|,   n_i = (−1)^i det(J₆ with column i removed),
// n the hand Jacobian's null vector by cofactors: it is an analytic function of q, so its
// sign is the same at q and at every finite-difference neighbour (no SVD sign to align),
// and |n| = √det(J₆ J₆ᵀ) is the manipulability itself (Cauchy–Binet). Neither n nor w
// depends on the Jacobian's reference point or axes (those map J₆ by a 6×6 matrix of
// determinant 1), so the tool Jacobian in BASE axes stands for the MOTION one.
// ∂φ/∂q is a central finite difference of φ (15 forward-kinematics evaluations).
//
// φ = 0 holds at minima and maxima alike, and φ = dC/ds along the self-motion q̇ = n̂ ṡ,
// which changes φ at c ṡ (c = J_φ n̂, the curvature of C along it). Driving φ to zero with
// φ̇_d = −gain·φ is a Newton step, ṡ = −gain·φ/c: it climbs towards a maximum where c has
// the wrong sign, and its speed is unbounded where c → 0 (an inflection of C). So the row
// asks for the self-motion
//   ṡ_d = −sign(φ) · min(gain·|φ| / |c|, ṡ_max)     (minimise; +sign(φ) for maximise),
//   φ̇_d = c · ṡ_d,
// ṡ_max the arm's smallest joint velocity limit (|q̇| = |ṡ|, faster self-motion the
// executor would clip anyway). Near the wanted stationary point this is the seed's
// φ̇_d = −gain·φ exactly; elsewhere it goes downhill (uphill for a maximum) at ṡ_max.
//
// Frames: BASE throughout; gravity is −z of BASE (9.81 m/s²). Allocation-free after
// construction; evaluate() is called every control cycle.

#include <array>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/common/types.h"
#include "tether/remote/resolvers/resolver.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote::configuration_control {

inline constexpr double kStandardGravity = 9.81;  // [m/s²]
// The joint-weight functions have one row per joint; no function has more.
inline constexpr int kMaxFunctionRows = kArmDof;
// Central-difference step of ∂φ/∂q for the optimality conditions [rad].
inline constexpr double kDifferenceStep = 1e-5;
// Below this manipulability (of J₆ in m and rad) the null vector, hence an optimality
// condition, is undefined: the function adds no rows.
inline constexpr double kSingularManipulability = 1e-9;

// The rows one function adds. `value` is what the rows differentiate (φ per row, scaled
// like the row), so value(q + δq) ≈ value(q) + jacobian δq.
struct FunctionRows {
  int count = 0;
  Eigen::Matrix<double, kMaxFunctionRows, kArmDof> jacobian =
      Eigen::Matrix<double, kMaxFunctionRows, kArmDof>::Zero();
  Eigen::Matrix<double, kMaxFunctionRows, 1> desired =
      Eigen::Matrix<double, kMaxFunctionRows, 1>::Zero();  // φ̇_d
  Eigen::Matrix<double, kMaxFunctionRows, 1> value =
      Eigen::Matrix<double, kMaxFunctionRows, 1>::Zero();
};

// w_i(t): linear between the knots, constant outside them, 1 without knots.
JointVector joint_weights_at(const std::vector<JointWeightKnot>& knots, double time) noexcept;

// n (see above) of a 6×7 hand Jacobian; returns |n| = √det(J Jᵀ).
double hand_null_vector(const Jacobian6& jacobian, JointVector& n) noexcept;

// w = √det(J₆ J₆ᵀ) of the tool Jacobian at `state` and ∂w/∂q = w·tr(∂J₆/∂q_j · J₆⁺), with
// the analytic derivative of the geometric Jacobian. Returns w; the gradient is zero when
// w ≤ kSingularManipulability.
double manipulability(const KinematicState& state, JointVector* gradient) noexcept;

// H = Σ (u−l)² / ((u−q)(q−l)) (n per joint at mid-range, → ∞ at a limit) and ∂H/∂q. q is
// taken at least 1e-9 of the range inside the limits so H stays finite.
double joint_limit_cost(const JointVector& q, const JointVector& lower, const JointVector& upper,
                        JointVector* gradient) noexcept;

// Gravity torques of the arm's own links: τ_g,i = Σ_{k≥i} z_i · ((c_k − p_i) × m_k g), the
// torque gravity exerts about joint i's axis (a holding motor applies −τ_g) [N·m], and
// G = ½ Σ τ_g,i² with its analytic gradient.
class GravityTorqueModel {
 public:
  explicit GravityTorqueModel(const KinematicModel& model);

  // τ_g and, if asked, ∂τ_g/∂q (row i = joint torque, column j = joint angle) [N·m/rad].
  void torques(const KinematicState& state, JointVector& tau, Matrix7* derivative) const noexcept;
  // G [N²·m²] and ∇G = (∂τ_g/∂q)ᵀ τ_g.
  double cost(const KinematicState& state, JointVector* gradient) const noexcept;

  double total_mass() const { return total_mass_; }

 private:
  std::array<double, kArmDof> mass_{};
  // Centre of mass of each link in its aligned joint frame (the one KinematicState::R
  // holds), so the cycle needs no URDF-frame products.
  std::array<Vector3, kArmDof> com_{};
  double total_mass_ = 0.0;
};

class KinematicFunctionEvaluator {
 public:
  explicit KinematicFunctionEvaluator(const KinematicModel& model);

  // The rows of `function` at input.q (input.state, input.jacobian, input.arm_angle,
  // input.time as the resolver sees them). False, with no rows, where the function is
  // undefined: an optimality condition at a hand singularity, a joint index outside 0-6, a
  // degenerate arm angle.
  bool evaluate(const KinematicFunctionParameters& function, const ResolverInput& input,
                FunctionRows& rows) noexcept;

  // φ = n̂ᵀ∇C of kGravityTorque, kJointLimitAvoidance or kManipulability at q; false where
  // n̂ is undefined or `kind` is none of those.
  bool optimality_condition(KinematicFunctionKind kind, const JointVector& q, double& phi) noexcept;

  const GravityTorqueModel& gravity() const { return gravity_; }

 private:
  bool optimality_rows(const KinematicFunctionParameters& function, const JointVector& q,
                       FunctionRows& rows) noexcept;

  const KinematicModel* model_;
  GravityTorqueModel gravity_;
  KinematicState scratch_;
  Jacobian6 scratch_jacobian_ = Jacobian6::Zero();
  double self_motion_speed_;  // ṡ_max [rad/s]
};

}  // namespace tether::remote::configuration_control

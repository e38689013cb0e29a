#pragma once

// Per-cycle constrained-optimisation redundancy resolver (the constrained-optimisation patent).
// Each sample i turns a commanded end-effector shift Δx_c into the next joint position q_{i+1}:
//
//   1. Clamp: translation (rows 0-2, [m]) and rotation (rows 3-5, [rad]) are limited
//      separately to Δx_max per sample, keeping their direction; the optional arm-angle row
//      (6, [rad]) is limited to its own maximum → Δx_d.
//   2. Solve over the 8 unknowns z = (Δq, p), Δq = q − q_i:
//        min  Δqᵀ diag(α) Δq + (q − q_ref)ᵀ diag(β) (q − q_ref)
//             + (q − 2q_i + q_{i−1})ᵀ diag(γ) (q − 2q_i + q_{i−1})      (− w_p·p, weighted mode)
//        s.t. J(q_i) Δq = p Δx_d            (the 6 pose rows)
//             0 ≤ p ≤ 1
//             lo ≤ Δq ≤ hi                   (one box per joint, see below)
//             a_kᵀ Δq ≥ b_k, k < inequality_count   (general rows, e.g. obstacles)
//
// The box. Position, velocity and acceleration limits are all bounds on each joint's step,
// so they are intersected into one box per joint:
//   lo = max(q_min − q_i, −q̇_max Δt, v − q̈_max Δt², −s(q_i − q_min))
//   hi = min(q_max − q_i, +q̇_max Δt, v + q̈_max Δt², +s(q_max − q_i))
// with v = q_i − q_{i−1} the previous step. s(D) = −δ/2 + √(δ²/4 + 2δD), δ = q̈_max Δt², is
// the largest step from which the joint can still stop within the remaining travel D while
// decelerating by δ per sample; without it the acceleration and position boxes can become
// disjoint near a stop (the joint arrives too fast). With it, if q_i satisfied the box last
// sample, this sample's box is non-empty: the seed's "acceleration limits maintained
// reliably while approaching the stops". Should the box still be empty (inconsistent input
// history, q_i already beyond a stop), the acceleration window wins, the step is the point
// of that window nearest the position box, and the status is kInfeasible.
//
// The general rows are in STEP form: a_k [1/rad], b_k [–], e.g. a linearised obstacle with
// clearance d ≥ 0 and outward normal n at a point with positional Jacobian J_p gives
// a = J_pᵀ n, b = −d. Δq = 0 satisfies every such row. As for the stops, a row is tightened
// to the braking step: aᵀΔq ≥ max(b, −s_row(−b)), δ_row = ½ Σ_j |a_j| q̈_max,j Δt² (half:
// a turns between samples and saturated joints cannot help brake). If the
// acceleration window still forces a step that violates a row (the obstacle appeared inside
// the stopping distance) — Δq = clamp(0, lo, hi) violates it — a phase 0 first pushes the
// row as far as the box allows (a linear programme per such row); a row that still cannot be
// met holds at that best value for this sample and the status is kInfeasible.
//
// p (the attained fraction of Δx_d, shown to the operator as a warning) must dominate the
// secondary criteria. Mode::kLexicographic (default) guarantees it: first the largest
// feasible p is found (a linear programme), then p is fixed and the quadratic minimised.
// A finite weight cannot guarantee it: the cost of attaining p grows without bound near a
// singularity (dΔq/dp ∝ 1/σ_min), so any fixed w_p loses to the quadratic somewhere.
// Mode::kWeighted is the seed's literal single objective with −w_p·p, kept for comparison.
//
// Method: active-set gradient projection (the constrained-optimisation patent, claim 1 d1-d7), run
// in up to three phases (four with phase 0 above) on the same machinery: (1) from Δq = clamp(0, lo,
// hi), p = 0, minimise ‖J Δq − p Δx_d‖² inside the box (finds a point satisfying the task rows;
// kInfeasible and that best-effort point if none exists), then (2) max p, then (3) the quadratic.
// Each iteration: the active constraints (task rows, bounds and rows attained) define the tangent
// space; the gradient is projected onto it and scaled by the inverse reduced Hessian (the projected
// Newton step; along zero-curvature directions the projected steepest descent); the step is
// shortened so no inactive constraint is violated, and the one that blocks it becomes active. At a
// stationary point of the tangent space the Lagrange multipliers of the active inequalities are
// computed; the most negative one is released, or, if none is negative, the point is the minimum.
//
// The real-time path (solve()). The task rows are equalities, so every solution lies in the null
// space of A = [J  −Δx_d] (m × 8): z = N y with N (8 × k) an orthonormal basis from a
// column-pivoted QR of Aᵀ. With A of full rank, k = 2 (6 rows: p and the self-motion) or k = 1
// (7 rows). In y every remaining constraint is a half-plane (or an interval) and:
//   - phase 2, max p, is a linear programme in k ≤ 2 unknowns, solved by Seidel's incremental
//     algorithm. It is warm-started: last cycle's active constraints are tried first, so when
//     the active set has not changed the optimum is found on the first of them and every other
//     row is only checked;
//   - phase 3, p frozen, leaves a segment (k = 2) or a point (k = 1): on it the arm-angle row
//     (task_rows = 7) or else the strictly convex quadratic has a closed-form minimum, clamped
//     to the segment. First the segment is narrowed by the preferred bounds b'_k, row by row
//     while it stays non-empty (a row it cannot meet leaves the segment's nearest end): the
//     self-motion starts to turn away from a row before the row binds, while it still has
//     the acceleration to do so, and p never pays for a preference. The iterative method adds the
//     arm-angle row to its quadratic as a penalty 10⁶ times the criteria's largest weight.
// Nothing is iterated to convergence, so the cost is bounded: one 8 × 7 QR plus O(rows²) in the
// worst case. Where that structure is missing — A rank-deficient at a singularity (k > 2), no
// point satisfying the rows inside the box (phase 1 or phase 0 needed), Mode::kWeighted — the
// solve falls back to the active-set gradient projection below, which is exact but iterates.
//
// Model/Data split as elsewhere: the Parameters are validated once (throws), every buffer
// lives in the object, solve() allocates nothing, never throws and does not log.

#include <Eigen/QR>
#include <array>
#include <cstdint>
#include <limits>

#include "tether/common/types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

// The parameters are the task schema's (remote/task/task_parameters.h).
using ConstrainedOptimisationParameters = ::tether::ConstrainedOptimisationParameters;

struct ConstrainedOptimisationProblem {
  static constexpr int kMaxInequalities = 8;

  // 6: the pose rows 0-5 (the seed's form, ψ free to the criteria). 7: the pose, then the arm
  // angle (row 6) as the next priority: met exactly wherever the pose at its largest p and the
  // constraints leave room, else as nearly as they allow, and the criteria decide nothing.
  // As an equality it would take the self-motion from the obstacle rows, and p with it.
  int task_rows = 6;
  // J(q_i): rows as types.h's motion space (translation, rotation, arm angle); only the
  // first task_rows rows are read.
  Matrix7 jacobian = Matrix7::Zero();
  MotionVector commanded_shift = MotionVector::Zero();   // Δx_c [m | rad]
  JointVector q = JointVector::Zero();                   // q_i [rad]
  JointVector q_previous = JointVector::Zero();          // q_{i−1} [rad]
  double dt = 0.001;                                     // sample time Δt [s], > 0
  JointVector lower = JointVector::Constant(-1.0);       // q_min [rad]
  JointVector upper = JointVector::Constant(1.0);        // q_max [rad]
  JointVector velocity_limit = JointVector::Ones();      // q̇_max [rad/s], > 0
  JointVector acceleration_limit = JointVector::Ones();  // q̈_max [rad/s²], > 0
  int inequality_count = 0;                              // 0 … kMaxInequalities
  Eigen::Matrix<double, kMaxInequalities, kArmDof> inequality_normals =
      Eigen::Matrix<double, kMaxInequalities, kArmDof>::Zero();  // a_k
  Eigen::Matrix<double, kMaxInequalities, 1> inequality_bounds =
      Eigen::Matrix<double, kMaxInequalities, 1>::Zero();  // b_k
  // b'_k ≥ b_k, or −∞ for none: the step each general row should keep to where p* and the
  // hard rows leave the self-motion free, e.g. a velocity damper that starts turning the
  // elbow away before its hard row binds (see phase 3 below). Rows are honoured in order.
  Eigen::Matrix<double, kMaxInequalities, 1> inequality_preferred =
      Eigen::Matrix<double, kMaxInequalities, 1>::Constant(
          -std::numeric_limits<double>::infinity());
};

struct ConstrainedOptimisationResult {
  enum class Status {
    kOk,
    kMaxIterations,  // a phase hit max_iterations: q is feasible but not optimal
    kInfeasible,     // no step satisfies every constraint: best effort (see header)
    kNonFinite       // NaN/inf or invalid sizes in the problem: q = q_i, p = 0
  };

  JointVector q = JointVector::Zero();                // q_{i+1} [rad]
  double p = 0.0;                                     // attained fraction of Δx_d
  MotionVector desired_shift = MotionVector::Zero();  // Δx_d after the clamp
  double task_residual = 0.0;                         // ‖J Δq − p Δx_d‖
  int iterations = 0;                                 // over all phases
  // Dimension k of the null space the real-time path solved in (1 or 2); 0 when the solve
  // fell back to the iterative active-set method.
  int null_space_dimension = 0;
  // Active set at the solution: bit j set when joint j's step sits on lo_j / hi_j, bit k
  // when general row k holds with equality.
  std::uint8_t joints_at_lower = 0;
  std::uint8_t joints_at_upper = 0;
  std::uint8_t inequalities_active = 0;
  Status status = Status::kOk;
};

const char* to_string(ConstrainedOptimisationResult::Status status) noexcept;

class ConstrainedOptimisationResolver {
 public:
  using Parameters = ConstrainedOptimisationParameters;
  using Problem = ConstrainedOptimisationProblem;
  using Result = ConstrainedOptimisationResult;
  static constexpr int kVars = kArmDof + 1;  // Δq, p
  static constexpr int kMaxRows = kMotionDim + Problem::kMaxInequalities;

  // Throws std::invalid_argument naming the field, value and allowed range.
  explicit ConstrainedOptimisationResolver(const Parameters& params);

  const Parameters& parameters() const { return params_; }
  // Takes new parameters between solves. They must have passed the constructor's checks
  // (task validation applies the same rules); copies only, so usable at task start.
  void reconfigure(const Parameters& params) noexcept { params_ = params; }

  // The box the last solve() used for Δq = q − q_i [rad] (diagnostics and tests).
  JointVector step_lower() const { return lo_.head<kArmDof>(); }
  JointVector step_upper() const { return hi_.head<kArmDof>(); }

  Result solve(const Problem& problem) noexcept;
  // The iterative active-set gradient projection alone: the fallback of solve() and, in tests
  // and benchmarks, its reference.
  Result solve_with_active_set(const Problem& problem) noexcept;

 private:
  using VarVector = Eigen::Matrix<double, kVars, 1>;
  using VarMatrix = Eigen::Matrix<double, kVars, kVars>;
  enum class Bound : std::uint8_t { kFree, kLower, kUpper, kFixed };
  enum class Outcome { kOptimal, kMaxIterations, kUnbounded };

  bool build(const Problem& problem, Result& result) noexcept;
  // build() with the status set; false (kNonFinite, q = q_i, p = 0) when the problem is bad.
  bool start(const Problem& problem, Result& result) noexcept;
  // Minimises ½ zᵀ Q z + cᵀ z over the current constraints from the feasible z_.
  Outcome minimise(const VarMatrix& Q, const VarVector& c, bool task_rows_active,
                   int& iterations) noexcept;
  int active_rows(bool task_rows_active) noexcept;  // fills rows_, returns the count
  void finish(const Problem& problem, Result& result) const noexcept;
  Result solve_general(const Problem& problem, Result result) noexcept;
  // The real-time path; false leaves the problem to solve_general().
  bool solve_reduced(const Problem& problem, Result& result) noexcept;
  // Phase 3: narrows the segment w + t v, t ∈ [t_lo, t_hi], by the preferred bounds b'_k.
  void narrow_to_preferred(const VarVector& w, const VarVector& v, double& t_lo,
                           double& t_hi) const noexcept;

  static constexpr int kMaxReducedRows = 2 * kVars + Problem::kMaxInequalities;
  Eigen::ColPivHouseholderQR<Eigen::Matrix<double, kVars, kMotionDim>> qr_;
  VarMatrix basis_;  // Q of the QR: the last k columns span the null space of A
  Eigen::Matrix<double, kMaxReducedRows, 2> reduced_rows_;  // g_r, unit: g_rᵀ y ≥ h_r
  Eigen::Matrix<double, kMaxReducedRows, 1> reduced_bounds_;
  std::array<int, kMaxReducedRows> order_{};
  std::array<int, 2> warm_{-1, -1};  // last cycle's active rows, tried first

  Parameters params_;
  // Per-solve data, all fixed-size.
  VarVector lo_, hi_, z_;
  std::array<Bound, kVars> bound_{};
  int m_ = 6;  // equality rows: the pose
  bool track_arm_angle_ = false;
  Eigen::Matrix<double, kMotionDim, kVars> task_ = Eigen::Matrix<double, kMotionDim, kVars>::Zero();
  int n_ineq_ = 0;
  Eigen::Matrix<double, Problem::kMaxInequalities, kVars> ineq_;
  Eigen::Matrix<double, Problem::kMaxInequalities, 1> ineq_b_;
  Eigen::Matrix<double, Problem::kMaxInequalities, 1> ineq_target_;     // b_k after braking
  Eigen::Matrix<double, Problem::kMaxInequalities, 1> ineq_preferred_;  // b'_k
  std::array<bool, Problem::kMaxInequalities> ineq_active_{};
  std::array<bool, Problem::kMaxInequalities> ineq_relaxed_{};
  Eigen::Matrix<double, kMaxRows, kVars> rows_;  // active rows, unit norm
  std::array<int, kMaxRows> row_id_{};           // < kMotionDim: task row, else kMotionDim+k
  VarMatrix Q_;
  VarVector c_;
};

}  // namespace tether::remote

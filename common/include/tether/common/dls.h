#pragma once

// Weighted damped least squares (the extended-task-space patent, eq. 13):
//   q̇ = (Jᵀ W_t J + W_v)⁻¹ Jᵀ W_t ẋ
// W_t: diagonal task weights (relative priority of each motion-space row, ≥ 0).
// W_v: diagonal joint-velocity weights (singularity robustness, ≥ 0); W_t = I, W_v = 0
// gives the exact inverse of a square, non-singular J.
//
// Solved through a Cholesky factorisation of the 7×7 normal matrix. Allocation-free for
// any fixed row count; usable in the control cycle.

#include <cmath>

#include "tether/common/types.h"

namespace tether {

enum class DlsStatus {
  kOk,
  kSingular,       // normal matrix not positive definite: q̇ set to zero
  kNonFiniteInput  // NaN/inf in J, weights or ẋ: q̇ set to zero
};

namespace detail {

// Solves A x = b for a symmetric positive definite 7×7 A by an unrolled Cholesky
// factorisation, in place (A's lower triangle becomes L, b becomes x). Returns false,
// leaving x undefined, when a pivot falls to `relative_tolerance` × the largest diagonal
// entry or below: the matrix is numerically singular (for A = JᵀJ, cond(J) ≳ 1/√tol).
// Eigen's general LLT plus its rcond estimate cost ~1 µs here; this costs ~0.1 µs.
inline bool cholesky_solve(Matrix7& A, JointVector& b, double relative_tolerance) {
  const double threshold = relative_tolerance * A.diagonal().maxCoeff();
  if (!(threshold > 0.0)) return false;
  double inv_diag[7];
#pragma GCC unroll 7
  for (int j = 0; j < 7; ++j) {
    double d = A(j, j);
#pragma GCC unroll 7
    for (int k = 0; k < j; ++k) d -= A(j, k) * A(j, k);
    if (!(d > threshold)) return false;
    inv_diag[j] = 1.0 / std::sqrt(d);
#pragma GCC unroll 7
    for (int i = j + 1; i < 7; ++i) {
      double v = A(i, j);
#pragma GCC unroll 7
      for (int k = 0; k < j; ++k) v -= A(i, k) * A(j, k);
      A(i, j) = v * inv_diag[j];
    }
  }
#pragma GCC unroll 7
  for (int i = 0; i < 7; ++i) {
    double v = b[i];
#pragma GCC unroll 7
    for (int k = 0; k < i; ++k) v -= A(i, k) * b[k];
    b[i] = v * inv_diag[i];
  }
#pragma GCC unroll 7
  for (int i = 6; i >= 0; --i) {
    double v = b[i];
#pragma GCC unroll 7
    for (int k = i + 1; k < 7; ++k) v -= A(k, i) * b[k];
    b[i] = v * inv_diag[i];
  }
  return true;
}

}  // namespace detail

template <int Rows>
DlsStatus weighted_dls(const Eigen::Matrix<double, Rows, kArmDof>& jacobian,
                       const Eigen::Matrix<double, Rows, 1>& task_weights,
                       const JointVector& velocity_weights,
                       const Eigen::Matrix<double, Rows, 1>& xdot, JointVector& qdot) {
  static_assert(Rows > 0, "weighted_dls needs a fixed row count");
  if (!jacobian.allFinite() || !task_weights.allFinite() || !velocity_weights.allFinite() ||
      !xdot.allFinite()) {
    qdot.setZero();
    return DlsStatus::kNonFiniteInput;
  }
  // Jᵀ W_t, formed once and used for both the normal matrix and the right-hand side.
  const Eigen::Matrix<double, kArmDof, Rows> jt_w =
      jacobian.transpose() * task_weights.asDiagonal();
  Matrix7 normal = jt_w.lazyProduct(jacobian);
  normal.diagonal() += velocity_weights;
  qdot = jt_w * xdot;
  // A vanishing pivot would still give an unbounded q̇ (W_v = 0 at a singularity).
  if (!detail::cholesky_solve(normal, qdot, 1e-14) || !qdot.allFinite()) {
    qdot.setZero();
    return DlsStatus::kSingular;
  }
  return DlsStatus::kOk;
}

}  // namespace tether

#pragma once

// Weighted damped least squares (seed 004, eq. 13):
//   q̇ = (Jᵀ W_t J + W_v)⁻¹ Jᵀ W_t ẋ
// W_t: diagonal task weights (relative priority of each motion-space row, ≥ 0).
// W_v: diagonal joint-velocity weights (singularity robustness, ≥ 0); W_t = I, W_v = 0
// gives the exact inverse of a square, non-singular J.
//
// Solved through a Cholesky factorisation of the 7×7 normal matrix. Allocation-free for
// any fixed row count; usable in the control cycle.

#include <Eigen/Cholesky>

#include "tether/common/types.h"

namespace tether {

enum class DlsStatus {
  kOk,
  kSingular,       // normal matrix not positive definite: q̇ set to zero
  kNonFiniteInput  // NaN/inf in J, weights or ẋ: q̇ set to zero
};

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
  Matrix7 normal = jt_w * jacobian;
  normal.diagonal() += velocity_weights;
  const Eigen::LLT<Matrix7> llt(normal);
  // A positive but vanishing pivot would still "succeed" and return an unbounded q̇;
  // rcond catches a numerically singular normal matrix (W_v = 0 at a singularity).
  if (llt.info() != Eigen::Success || llt.rcond() < 1e-15) {
    qdot.setZero();
    return DlsStatus::kSingular;
  }
  qdot = llt.solve(jt_w * xdot);
  if (!qdot.allFinite()) {
    qdot.setZero();
    return DlsStatus::kSingular;
  }
  return DlsStatus::kOk;
}

}  // namespace tether

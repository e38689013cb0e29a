#include "tether/remote/behaviours/manipulability/manipulability.h"

#include <cmath>

#include "tether/common/dls.h"

namespace tether::remote {

namespace {

// Solves A X = B for a symmetric positive definite 6×6 A by an unrolled Cholesky
// factorisation A = L Lᵀ, in place (A's lower triangle becomes L, B becomes X), and returns
// √det A = Π L_ii. Returns a negative value when a pivot falls to 1e-14 × the largest
// diagonal entry (cond(J₆) ≳ 1e7): w is then numerically zero and its gradient round-off.
// Eigen's general LLT and solve alone took ~1 µs here; with this (the scheme of dls.h) the
// whole gradient takes ~0.5 µs.
double cholesky_solve6(Matrix6& A, Jacobian6& B) {
  const double threshold = 1e-14 * A.diagonal().maxCoeff();
  if (!(threshold > 0.0)) return -1.0;
  double inv_diag[6];
  double det_root = 1.0;
#pragma GCC unroll 6
  for (int j = 0; j < 6; ++j) {
    double d = A(j, j);
#pragma GCC unroll 6
    for (int k = 0; k < j; ++k) d -= A(j, k) * A(j, k);
    if (!(d > threshold)) return -1.0;
    const double l = std::sqrt(d);
    det_root *= l;
    inv_diag[j] = 1.0 / l;
#pragma GCC unroll 6
    for (int i = j + 1; i < 6; ++i) {
      double v = A(i, j);
#pragma GCC unroll 6
      for (int k = 0; k < j; ++k) v -= A(i, k) * A(j, k);
      A(i, j) = v * inv_diag[j];
    }
  }
  for (int c = 0; c < kArmDof; ++c) {
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) {
      double v = B(i, c);
#pragma GCC unroll 6
      for (int k = 0; k < i; ++k) v -= A(i, k) * B(k, c);
      B(i, c) = v * inv_diag[i];
    }
#pragma GCC unroll 6
    for (int i = 5; i >= 0; --i) {
      double v = B(i, c);
#pragma GCC unroll 6
      for (int k = i + 1; k < 6; ++k) v -= A(k, i) * B(k, c);
      B(i, c) = v * inv_diag[i];
    }
  }
  return det_root;
}

}  // namespace

// Gradient of w = √det(A), A = J Jᵀ (J = J₆, 6×7, columns J_i = (v_i, ω_i)).
//
// Jacobi's formula d det A = det A · tr(A⁻¹ dA) with dA = dJ Jᵀ + J dJᵀ, and
// tr(A⁻¹ J dJᵀ) = tr(dJ Jᵀ A⁻¹) = tr(A⁻¹ dJ Jᵀ) (A⁻¹ symmetric), give
//   ∂w/∂q_k = (1 / 2w) ∂det A/∂q_k = w · tr(A⁻¹ ∂_k J Jᵀ) = w · Σ_i x_iᵀ ∂_k J_i,
// where x_i = A⁻¹ J_i is column i of X = A⁻¹ J (row i of the pseudo-inverse J⁺ = Jᵀ A⁻¹).
//
// Derivatives of a geometric Jacobian about a point r fixed on the last link, in fixed
// axes: ω_i = z_i (joint axis), v_i = z_i × (r − p_i).
//  * k ≤ i: joint k rotates joint i's axis and frame origin and r rigidly about z_k, so
//    ∂z_i = z_k × z_i and ∂(r − p_i) = z_k × (r − p_i); with the Jacobi identity
//    ∂v_i = (z_k × z_i) × (r − p_i) + z_i × (z_k × (r − p_i)) = z_k × v_i:
//        ∂_k J_i = (ω_k × v_i, ω_k × ω_i)
//  * k > i: joint k does not move z_i or p_i, only r, at the velocity v_k:
//        ∂_k J_i = (ω_i × v_k, 0)
// (These are derivatives of the Jacobian in fixed axes. Expressed in rotating axes, such as
// MOTION, they are the same cross products of the rotated columns, and because w and the
// trace are unchanged by rotating J, ∂_k J and A together, the gradient is the same.)
//
// With x_i = (a_i, b_i) and the scalar triple product a·(b × c) = b·(c × a):
//   k ≤ i:  a_i·(ω_k × v_i) + b_i·(ω_k × ω_i) = ω_k · (v_i × a_i + ω_i × b_i) = ω_k · c_i
//   k > i:  a_i·(ω_i × v_k)                   = v_k · (a_i × ω_i)               = v_k · d_i
// so ∂w/∂q_k = w (ω_k · Σ_{i≥k} c_i + v_k · Σ_{i<k} d_i): one suffix and one prefix sum,
// O(n) after the 6×6 factorisation instead of the O(n²) double loop.
bool manipulability_gradient(const Jacobian6& jacobian, double& w, RowJacobian& gradient) noexcept {
  w = 0.0;
  gradient.setZero();
  if (!jacobian.allFinite()) return false;
  Matrix6 A;
  A.noalias() = jacobian.lazyProduct(jacobian.transpose());
  Jacobian6 X = jacobian;  // becomes A⁻¹ J
  const double det_root = cholesky_solve6(A, X);
  if (!(det_root > 0.0)) return false;

  Eigen::Matrix<double, 3, kArmDof> c, d;
  for (int i = 0; i < kArmDof; ++i) {
    const Vector3 v = jacobian.col(i).head<3>();
    const Vector3 omega = jacobian.col(i).tail<3>();
    const Vector3 a = X.col(i).head<3>();
    const Vector3 b = X.col(i).tail<3>();
    c.col(i) = v.cross(a) + omega.cross(b);
    d.col(i) = a.cross(omega);
  }
  Vector3 suffix = Vector3::Zero();
  for (int k = kArmDof - 1; k >= 0; --k) {
    suffix += c.col(k);
    gradient[k] = jacobian.col(k).tail<3>().dot(suffix);
  }
  Vector3 prefix = Vector3::Zero();
  for (int k = 0; k < kArmDof; ++k) {
    gradient[k] += jacobian.col(k).head<3>().dot(prefix);
    prefix += d.col(k);
  }
  gradient *= det_root;
  if (!gradient.allFinite()) {
    gradient.setZero();
    return false;
  }
  w = det_root;
  return true;
}

void Manipulability::clear_state() {
  w_ = 0.0;
  dw_dpsi_ = 0.0;
  psi_rate_ = 0.0;
  valid_ = false;
}

void Manipulability::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  clear_state();
}

void Manipulability::update(const Params& params, const BehaviourContext& context,
                            BehaviourOutput& out) noexcept {
  clear_state();
  if (!params.enabled) return;
  const CompositeJacobian& J = *context.jacobian;
  RowJacobian gradient;
  double w = 0.0;
  if (!manipulability_gradient(J.topRows<6>(), w, gradient)) return;

  // Self-motion at constant pose: J q̇ = e_ψ, exact (W_t = I, W_v = 0) so the pose rows
  // stay still; a singular composite J (degenerate ψ) is reported by the solver.
  MotionVector unit_psi = MotionVector::Zero();
  unit_psi[6] = 1.0;
  JointVector self_motion;
  if (weighted_dls<kMotionDim>(J, MotionVector::Ones(), JointVector::Zero(), unit_psi,
                               self_motion) != DlsStatus::kOk) {
    return;
  }
  w_ = w;
  dw_dpsi_ = gradient.dot(self_motion);
  psi_rate_ = params.gain * dw_dpsi_;
  valid_ = std::isfinite(psi_rate_);
  if (!valid_) {
    clear_state();
    return;
  }
  MotionVector xdot = MotionVector::Zero();
  xdot[6] = psi_rate_;
  add_velocity_input(params.input, MotionVector::Constant(params.damping), xdot, out);
}

}  // namespace tether::remote

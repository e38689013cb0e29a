#include "tether/remote/resolvers/configuration_control/kinematic_functions.h"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>

namespace tether::remote::configuration_control {
namespace {

const Vector3 kGravityVector(0.0, 0.0, -kStandardGravity);

bool is_optimality_condition(KinematicFunctionKind kind) {
  return kind == KinematicFunctionKind::kGravityTorque ||
         kind == KinematicFunctionKind::kJointLimitAvoidance ||
         kind == KinematicFunctionKind::kManipulability;
}

}  // namespace

JointVector joint_weights_at(const std::vector<JointWeightKnot>& knots, double time) noexcept {
  if (knots.empty()) return JointVector::Ones();
  if (time <= knots.front().time) return knots.front().weights;
  if (time >= knots.back().time) return knots.back().weights;
  const auto after =
      std::upper_bound(knots.begin(), knots.end(), time,
                       [](double t, const JointWeightKnot& knot) { return t < knot.time; });
  const JointWeightKnot& b = *after;
  const JointWeightKnot& a = *(after - 1);
  const double s = (time - a.time) / (b.time - a.time);
  return a.weights + s * (b.weights - a.weights);
}

double hand_null_vector(const Jacobian6& jacobian, JointVector& n) noexcept {
  Matrix6 minor;
  for (int i = 0; i < kArmDof; ++i) {
    minor.leftCols(i) = jacobian.leftCols(i);
    minor.rightCols(6 - i) = jacobian.rightCols(6 - i);
    const double det = minor.determinant();
    n[i] = (i % 2 == 0) ? det : -det;
  }
  return n.norm();
}

double manipulability(const KinematicState& state, JointVector* gradient) noexcept {
  Jacobian6 J;
  tool_jacobian(state, J);
  const Matrix6 jjt = J * J.transpose();
  const double w = std::sqrt(std::max(0.0, jjt.determinant()));
  if (gradient == nullptr) return w;
  gradient->setZero();
  if (!(w > kSingularManipulability)) return w;
  // J⁺ = Jᵀ (J Jᵀ)⁻¹; ∂w/∂q_j = w · Σ_{a,i} (∂J/∂q_j)(a, i) J⁺(i, a).
  const Eigen::LDLT<Matrix6> ldlt(jjt);
  const Eigen::Matrix<double, 6, kArmDof> pinv_t = ldlt.solve(J);  // (J⁺)ᵀ
  for (int j = 0; j < kArmDof; ++j) {
    const Vector3 zj = J.col(j).tail<3>();
    double trace = 0.0;
    for (int i = 0; i < kArmDof; ++i) {
      // Geometric-Jacobian derivative: joints up to i rotate column i rigidly; a later
      // joint j only moves the tool point, i.e. column i's lever arm.
      Vector6 dcol;
      if (j <= i) {
        dcol.head<3>() = zj.cross(Vector3(J.col(i).head<3>()));
        dcol.tail<3>() = zj.cross(Vector3(J.col(i).tail<3>()));
      } else {
        dcol.head<3>() = Vector3(J.col(i).tail<3>()).cross(Vector3(J.col(j).head<3>()));
        dcol.tail<3>().setZero();
      }
      trace += dcol.dot(pinv_t.col(i));
    }
    (*gradient)[j] = w * trace;
  }
  return w;
}

double joint_limit_cost(const JointVector& q, const JointVector& lower, const JointVector& upper,
                        JointVector* gradient) noexcept {
  double cost = 0.0;
  for (int i = 0; i < kArmDof; ++i) {
    const double range = upper[i] - lower[i];
    const double margin = 1e-9 * range;
    const double x = std::clamp(q[i], lower[i] + margin, upper[i] - margin);
    const double to_upper = upper[i] - x;
    const double to_lower = x - lower[i];
    const double product = to_upper * to_lower;
    cost += range * range / product;
    if (gradient != nullptr) {
      (*gradient)[i] = range * range * (2.0 * x - upper[i] - lower[i]) / (product * product);
    }
  }
  return cost;
}

GravityTorqueModel::GravityTorqueModel(const KinematicModel& model) {
  KinematicState state;
  forward_kinematics(model, JointVector::Zero(), state);
  for (int k = 0; k < kArmDof; ++k) {
    const auto s = static_cast<std::size_t>(k);
    const LinkInertia& link = model.arm().joints[s].link;
    mass_[s] = link.mass;
    const Vector3 com_base = state.joint_frame(model, k) * link.com;
    com_[s] = state.R[s].transpose() * (com_base - state.p[s]);
    total_mass_ += link.mass;
  }
}

void GravityTorqueModel::torques(const KinematicState& state, JointVector& tau,
                                 Matrix7* derivative) const noexcept {
  // r_i = Σ_{k≥i} m_k (c_k − p_i), the mass-weighted lever arm of everything joint i carries,
  // from suffix sums of m_k c_k and m_k.
  std::array<Vector3, kArmDof> lever;
  Vector3 moment = Vector3::Zero();
  double mass = 0.0;
  for (int k = kArmDof - 1; k >= 0; --k) {
    const auto s = static_cast<std::size_t>(k);
    moment += mass_[s] * (state.R[s] * com_[s] + state.p[s]);
    mass += mass_[s];
    lever[s] = moment - mass * state.p[s];
  }
  for (int i = 0; i < kArmDof; ++i) {
    const auto s = static_cast<std::size_t>(i);
    tau[i] = state.R[s].col(2).dot(lever[s].cross(kGravityVector));
  }
  if (derivative == nullptr) return;
  for (int i = 0; i < kArmDof; ++i) {
    const auto si = static_cast<std::size_t>(i);
    const Vector3 zi = state.R[si].col(2);
    for (int j = 0; j < kArmDof; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      const Vector3 zj = state.R[sj].col(2);
      if (j < i) {
        // Joint j turns z_i and r_i together.
        (*derivative)(i, j) = zj.cross(zi).dot(lever[si].cross(kGravityVector)) +
                              zi.dot(zj.cross(lever[si]).cross(kGravityVector));
      } else {
        // Joint j moves only the links from j on: r_i changes by z_j × r_j.
        (*derivative)(i, j) = zi.dot(zj.cross(lever[sj]).cross(kGravityVector));
      }
    }
  }
}

double GravityTorqueModel::cost(const KinematicState& state, JointVector* gradient) const noexcept {
  JointVector tau;
  if (gradient == nullptr) {
    torques(state, tau, nullptr);
    return 0.5 * tau.squaredNorm();
  }
  Matrix7 derivative;
  torques(state, tau, &derivative);
  *gradient = derivative.transpose() * tau;
  return 0.5 * tau.squaredNorm();
}

KinematicFunctionEvaluator::KinematicFunctionEvaluator(const KinematicModel& model)
    : model_(&model), gravity_(model), self_motion_speed_(model.velocity_limits().minCoeff()) {}

bool KinematicFunctionEvaluator::optimality_condition(KinematicFunctionKind kind,
                                                      const JointVector& q, double& phi) noexcept {
  if (!is_optimality_condition(kind)) return false;
  forward_kinematics(*model_, q, scratch_);
  tool_jacobian(scratch_, scratch_jacobian_);
  JointVector n;
  const double w = hand_null_vector(scratch_jacobian_, n);
  if (!(w > kSingularManipulability)) return false;
  JointVector gradient;
  switch (kind) {
    case KinematicFunctionKind::kGravityTorque:
      gravity_.cost(scratch_, &gradient);
      break;
    case KinematicFunctionKind::kJointLimitAvoidance:
      joint_limit_cost(q, model_->lower_limits(), model_->upper_limits(), &gradient);
      break;
    case KinematicFunctionKind::kManipulability:
      manipulability(scratch_, &gradient);
      break;
    default:
      return false;
  }
  phi = n.dot(gradient) / w;
  return std::isfinite(phi);
}

bool KinematicFunctionEvaluator::optimality_rows(const KinematicFunctionParameters& function,
                                                 const JointVector& q,
                                                 FunctionRows& rows) noexcept {
  double phi = 0.0;
  if (!optimality_condition(function.kind, q, phi)) return false;
  // n̂ at q again (scratch_ holds q's kinematics after the call above) for the curvature.
  JointVector n;
  const double w = hand_null_vector(scratch_jacobian_, n);
  RowJacobian row;
  JointVector perturbed = q;
  for (int j = 0; j < kArmDof; ++j) {
    double plus = 0.0, minus = 0.0;
    perturbed[j] = q[j] + kDifferenceStep;
    const bool ok_plus = optimality_condition(function.kind, perturbed, plus);
    perturbed[j] = q[j] - kDifferenceStep;
    const bool ok_minus = optimality_condition(function.kind, perturbed, minus);
    perturbed[j] = q[j];
    if (!ok_plus || !ok_minus) return false;
    row[j] = (plus - minus) / (2.0 * kDifferenceStep);
  }
  // Self-motion q̇ = n̂ ṡ changes φ at c ṡ and C at φ ṡ.
  const double curvature = row.dot(n) / w;
  const bool maximise = function.kind == KinematicFunctionKind::kManipulability;
  const double uphill = phi >= 0.0 ? 1.0 : -1.0;
  const double push = function.gain * std::abs(phi);
  const double speed = push < self_motion_speed_ * std::abs(curvature) ? push / std::abs(curvature)
                                                                       : self_motion_speed_;
  rows.count = 1;
  rows.jacobian.row(0) = row;
  rows.value[0] = phi;
  rows.desired[0] = curvature * (maximise ? uphill : -uphill) * speed;
  return true;
}

bool KinematicFunctionEvaluator::evaluate(const KinematicFunctionParameters& function,
                                          const ResolverInput& input, FunctionRows& rows) noexcept {
  rows.count = 0;
  const JointVector& q = input.q;
  const auto single_joint = [&](int joint, double value, double desired) {
    rows.jacobian.row(0).setZero();
    rows.jacobian(0, joint) = 1.0;
    rows.value[0] = value;
    rows.desired[0] = desired;
    rows.count = 1;
  };
  switch (function.kind) {
    case KinematicFunctionKind::kArmAngle: {
      const auto psi_row = input.jacobian->row(6);
      if (!(psi_row.squaredNorm() > 0.0)) return false;  // ψ undefined here
      rows.jacobian.row(0) = psi_row;
      rows.value[0] = input.arm_angle;
      rows.desired[0] = input.xd[6];
      rows.count = 1;
      return true;
    }
    case KinematicFunctionKind::kGravityTorque:
    case KinematicFunctionKind::kJointLimitAvoidance:
    case KinematicFunctionKind::kManipulability:
      return optimality_rows(function, q, rows);
    case KinematicFunctionKind::kArmPoint: {
      if (function.joint < 0 || function.joint >= kArmDof) return false;
      const KinematicState& state = *input.state;
      const Vector3 point = state.joint_frame(*model_, function.joint) * function.offset;
      Jacobian6 J;
      point_jacobian(state, function.joint, point, J);
      for (int a = 0; a < 3; ++a) {
        if (!(function.axes[a] > 0.5)) continue;
        rows.jacobian.row(rows.count) = J.row(a);
        rows.value[rows.count] = point[a];
        rows.desired[rows.count] = function.gain * (function.target[a] - point[a]);
        ++rows.count;
      }
      return rows.count > 0;
    }
    case KinematicFunctionKind::kJointVelocity:
    case KinematicFunctionKind::kJointAngle: {
      const JointVector weights = joint_weights_at(function.weights, input.time);
      const bool velocity = function.kind == KinematicFunctionKind::kJointVelocity;
      for (int i = 0; i < kArmDof; ++i) {
        if (!(weights[i] > 0.0)) continue;
        const double root = std::sqrt(weights[i]);
        const int r = rows.count++;
        rows.jacobian.row(r).setZero();
        rows.jacobian(r, i) = root;
        rows.value[r] = root * q[i];
        rows.desired[r] = velocity ? root * function.desired[i]
                                   : root * function.gain * (function.desired[i] - q[i]);
      }
      return rows.count > 0;
    }
    case KinematicFunctionKind::kJointLock:
      if (function.joint < 0 || function.joint >= kArmDof) return false;
      single_joint(function.joint, q[function.joint], 0.0);
      return true;
  }
  return false;
}

}  // namespace tether::remote::configuration_control

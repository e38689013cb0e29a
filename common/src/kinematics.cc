#include "tether/common/kinematics.h"

#include <cmath>
#include <string>

#include "sincos.h"
#include "tether/common/urdf_loader.h"

namespace tether {
namespace {

// A rotation whose z axis is `axis`, so Rot(axis, q) = A · Rz(q) · Aᵀ.
Matrix3 align_z_to(const Vector3& axis) {
  const Vector3 z = axis.normalized();
  if (z.isApprox(Vector3::UnitZ(), 1e-12)) return Matrix3::Identity();
  if (z.isApprox(-Vector3::UnitZ(), 1e-12)) return Eigen::Vector3d(1, -1, -1).asDiagonal();
  const Vector3 helper = std::abs(z.x()) < 0.9 ? Vector3::UnitX() : Vector3::UnitY();
  const Vector3 x = (helper - z * z.dot(helper)).normalized();
  Matrix3 A;
  A.col(0) = x;
  A.col(1) = z.cross(x);
  A.col(2) = z;
  return A;
}

// Exact signed permutation test: every entry 0 or ±1 to rounding, one ±1 per column.
bool as_signed_permutation(const Matrix3& R, std::array<int, 3>& column,
                           std::array<double, 3>& sign) {
  constexpr double kTolerance = 1e-15;
  for (int j = 0; j < 3; ++j) {
    int nonzero = 0;
    for (int i = 0; i < 3; ++i) {
      const double v = R(i, j);
      if (std::abs(v) <= kTolerance) continue;
      if (std::abs(std::abs(v) - 1.0) > kTolerance) return false;
      ++nonzero;
      column[static_cast<std::size_t>(j)] = i;
      sign[static_cast<std::size_t>(j)] = v > 0 ? 1.0 : -1.0;
    }
    if (nonzero != 1) return false;
  }
  return true;
}

}  // namespace

KinematicModel::KinematicModel(const ArmModel& arm) : arm_(arm) {
  if (arm.dof() != kArmDof) {
    throw ArmModelError(arm.source + ": tether drives 7-DOF arms, but the chain from '" +
                        arm.base_link + "' to '" + arm.tool_link + "' has " +
                        std::to_string(arm.dof()) + " revolute joints");
  }
  Matrix3 previous_align = Matrix3::Identity();
  for (int i = 0; i < kArmDof; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const ArmJoint& joint = arm.joints[k];
    align_[k] = align_z_to(joint.axis);
    step_[k] = Frame{previous_align.transpose() * joint.origin.R * align_[k],
                     previous_align.transpose() * joint.origin.p};
    previous_align = align_[k];
    Permutation& perm = permutation_[k];
    perm.valid = as_signed_permutation(step_[k].R, perm.column, perm.sign);
    lower_[i] = joint.limits.lower;
    upper_[i] = joint.limits.upper;
    velocity_[i] = joint.limits.velocity;
    acceleration_[i] = joint.limits.acceleration;
  }
  tool_ = Frame{previous_align.transpose() * arm.tool.R, previous_align.transpose() * arm.tool.p};

  const ArmPoint* named[3] = {&arm.shoulder, &arm.elbow, &arm.wrist};
  for (std::size_t n = 0; n < 3; ++n) {
    ArmPoint point = *named[n];
    if (point.joint < -1 || point.joint >= kArmDof) {
      throw ArmModelError(arm.source + ": arm-angle point " + std::to_string(n) +
                          " is attached to joint index " + std::to_string(point.joint) +
                          ", outside [-1, 6]");
    }
    if (point.joint >= 0) {
      point.offset = align_[static_cast<std::size_t>(point.joint)].transpose() * point.offset;
    }
    points_[n] = point;
  }
}

Frame KinematicState::joint_frame(const KinematicModel& model, int i) const {
  const auto k = static_cast<std::size_t>(i);
  return Frame{R[k] * model.align_[k].transpose(), p[k]};
}

void forward_kinematics(const KinematicModel& model, const Eigen::Ref<const JointVector>& q,
                        KinematicState& state) {
  double s[kArmDof];
  double c[kArmDof];
  detail::sincos_n<kArmDof>(q.data(), s, c);
  state.q = q;

  // Joint i: R_i = R_{i-1} · step.R · Rz(q_i), p_i = R_{i-1} · step.p + p_{i-1}, where
  // multiplying by Rz(q_i) mixes the first two columns.
  const Matrix3 identity = Matrix3::Identity();
  const Vector3 zero = Vector3::Zero();
  for (std::size_t i = 0; i < kArmDof; ++i) {
    const Matrix3& R_prev = i == 0 ? identity : state.R[i - 1];
    const Vector3& p_prev = i == 0 ? zero : state.p[i - 1];
    const Frame& step = model.step_[i];
    const KinematicModel::Permutation& perm = model.permutation_[i];
    state.p[i] = R_prev * step.p + p_prev;
    Matrix3& Ri = state.R[i];
    if (perm.valid) {
      const auto a = R_prev.col(perm.column[0]);
      const auto b = R_prev.col(perm.column[1]);
      const double ca = c[i] * perm.sign[0], sa = s[i] * perm.sign[0];
      const double cb = c[i] * perm.sign[1], sb = s[i] * perm.sign[1];
      Ri.col(0) = ca * a + sb * b;
      Ri.col(1) = cb * b - sa * a;
      Ri.col(2) = perm.sign[2] * R_prev.col(perm.column[2]);
    } else {
      const Matrix3 M = R_prev * step.R;
      Ri.col(0) = c[i] * M.col(0) + s[i] * M.col(1);
      Ri.col(1) = c[i] * M.col(1) - s[i] * M.col(0);
      Ri.col(2) = M.col(2);
    }
  }
  const Matrix3& R_last = state.R[kArmDof - 1];
  state.tool.R = R_last * model.tool_.R;
  state.tool.p = R_last * model.tool_.p + state.p[kArmDof - 1];

  Vector3* targets[3] = {&state.shoulder, &state.elbow, &state.wrist};
  for (std::size_t n = 0; n < 3; ++n) {
    const ArmPoint& point = model.points_[n];
    if (point.joint < 0) {
      *targets[n] = point.offset;
    } else {
      const auto j = static_cast<std::size_t>(point.joint);
      *targets[n] = state.R[j] * point.offset + state.p[j];
    }
  }
}

void point_jacobian(const KinematicState& state, int joint, const Eigen::Ref<const Vector3>& point,
                    Eigen::Ref<Jacobian6> jacobian) {
  for (int i = 0; i < kArmDof; ++i) {
    if (i > joint) {
      jacobian.col(i).setZero();
      continue;
    }
    const auto k = static_cast<std::size_t>(i);
    const Vector3 z = state.R[k].col(2);
    jacobian.col(i).head<3>() = z.cross(point - state.p[k]);
    jacobian.col(i).tail<3>() = z;
  }
}

void tool_jacobian(const KinematicState& state, Eigen::Ref<Jacobian6> jacobian) {
  point_jacobian(state, kArmDof - 1, state.tool.p, jacobian);
}

}  // namespace tether

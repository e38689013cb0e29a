#include "tether/common/spatial.h"

#include <cmath>

namespace tether {

Matrix3 skew(const Vector3& a) {
  Matrix3 S;
  S << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return S;
}

Matrix3 so3_exp(const Vector3& w) {
  const double theta2 = w.squaredNorm();
  const double theta = std::sqrt(theta2);
  // Taylor series below 1e-4 rad keep full precision where sin θ/θ cancels.
  const double A = theta < 1e-4 ? 1.0 - theta2 / 6.0 : std::sin(theta) / theta;
  const double B = theta < 1e-4 ? 0.5 - theta2 / 24.0 : (1.0 - std::cos(theta)) / theta2;
  const Matrix3 W = skew(w);
  return Matrix3::Identity() + A * W + B * W * W;
}

Vector3 so3_log(const Matrix3& R) {
  const Vector3 v(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));  // 2 sin θ · axis
  const double sin_2 = v.norm();
  const double cos_2 = R.trace() - 1.0;  // 2 cos θ
  const double theta = std::atan2(sin_2, cos_2);
  if (theta < 1e-4) return (0.5 + theta * theta / 12.0) * v;
  if (theta < 3.0) return (theta / sin_2) * v;
  // Near π the antisymmetric part vanishes; the axis comes from the symmetric part
  // (R + Rᵀ)/2 = cos θ I + (1 − cos θ) a aᵀ, its sign from v.
  const Matrix3 S = 0.5 * (R + R.transpose()) - std::cos(theta) * Matrix3::Identity();
  Eigen::Index k;
  S.diagonal().maxCoeff(&k);
  Vector3 axis = S.col(k).normalized();
  if (axis.dot(v) < 0.0) axis = -axis;
  return theta * axis;
}

Vector3 orientation_error(const Matrix3& desired, const Matrix3& actual) {
  return so3_log(desired * actual.transpose());
}

Matrix3 integrate_rotation(const Matrix3& R, const Vector3& omega, double dt) {
  return so3_exp(omega * dt) * R;
}

Matrix6 twist_transform(const Frame& a_T_b) {
  Matrix6 X = Matrix6::Zero();
  X.topLeftCorner<3, 3>() = a_T_b.R;
  X.topRightCorner<3, 3>() = skew(a_T_b.p) * a_T_b.R;
  X.bottomRightCorner<3, 3>() = a_T_b.R;
  return X;
}

Vector6 transform_twist(const Frame& a_T_b, const Vector6& twist_b) {
  Vector6 out;
  out.tail<3>() = a_T_b.R * twist_b.tail<3>();
  out.head<3>() = a_T_b.R * twist_b.head<3>() + a_T_b.p.cross(out.tail<3>());
  return out;
}

Matrix6 wrench_transform(const Frame& a_T_b) {
  Matrix6 X = Matrix6::Zero();
  X.topLeftCorner<3, 3>() = a_T_b.R;
  X.bottomLeftCorner<3, 3>() = skew(a_T_b.p) * a_T_b.R;
  X.bottomRightCorner<3, 3>() = a_T_b.R;
  return X;
}

Vector6 transform_wrench(const Frame& a_T_b, const Vector6& wrench_b) {
  Vector6 out;
  out.head<3>() = a_T_b.R * wrench_b.head<3>();
  out.tail<3>() = a_T_b.R * wrench_b.tail<3>() + a_T_b.p.cross(out.head<3>());
  return out;
}

Vector6 shift_twist(const Vector6& twist, const Vector3& from, const Vector3& to) {
  Vector6 out = twist;
  out.head<3>() += twist.tail<3>().cross(to - from);
  return out;
}

Vector6 shift_wrench(const Vector6& wrench, const Vector3& from, const Vector3& to) {
  Vector6 out = wrench;
  out.tail<3>() += (from - to).cross(wrench.head<3>());
  return out;
}

}  // namespace tether

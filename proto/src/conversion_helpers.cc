#include "conversion_helpers.h"

#include <cmath>
#include <string>

namespace tether::proto::detail {

double limit(double v, const std::string& path) {
  if (std::isnan(v)) {
    throw ConversionError(path, " = nan: must be a number (leave the field out for no bound)");
  }
  return v;
}

InputKind to_input(v1::InputKind kind, InputKind default_kind, const std::string& path) {
  switch (kind) {
    case v1::INPUT_KIND_UNSPECIFIED:
      return default_kind;
    case v1::INPUT_KIND_VELOCITY:
      return InputKind::kVelocity;
    case v1::INPUT_KIND_FORCE:
      return InputKind::kForce;
    default:
      break;
  }
  throw ConversionError(path, " = " + std::to_string(static_cast<int>(kind)) +
                                  ": unknown value; use INPUT_KIND_VELOCITY or INPUT_KIND_FORCE");
}

v1::InputKind from_input(InputKind kind) {
  return kind == InputKind::kForce ? v1::INPUT_KIND_FORCE : v1::INPUT_KIND_VELOCITY;
}

namespace {

bool is_rotation(const Matrix3& R) {
  return R.allFinite() &&
         (R * R.transpose() - Matrix3::Identity()).cwiseAbs().maxCoeff() <= kRotationTolerance &&
         std::abs(R.determinant() - 1.0) <= kRotationTolerance;
}

}  // namespace

void write_rotation(const Matrix3& R, v1::Rotation* out) {
  if (is_rotation(R)) {
    Eigen::Quaterniond q(R);
    if (q.w() < 0.0) q.coeffs() = -q.coeffs();
    auto* quat = out->mutable_quaternion();
    quat->set_w(q.w());
    quat->set_x(q.x());
    quat->set_y(q.y());
    quat->set_z(q.z());
    return;
  }
  auto* rows = out->mutable_matrix()->mutable_rows();
  for (int i = 0; i < 9; ++i) rows->Add(R(i / 3, i % 3));
}

}  // namespace tether::proto::detail

namespace tether::proto {

void from_rotation(const Matrix3& R, v1::Rotation* out) { detail::write_rotation(R, out); }

}  // namespace tether::proto

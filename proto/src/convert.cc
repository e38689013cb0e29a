#include "tether/proto/convert.h"

#include <cmath>
#include <numbers>

#include "conversion_helpers.h"

namespace tether::proto {

using detail::finite;
using detail::number;

Vector3 to_vector3(const v1::Vector3& v, const std::string& path) {
  return Vector3(finite(v.x(), path + ".x"), finite(v.y(), path + ".y"),
                 finite(v.z(), path + ".z"));
}

Matrix3 to_rotation(const v1::Rotation& r, const std::string& path) {
  switch (r.representation_case()) {
    case v1::Rotation::kQuaternion: {
      const auto& q = r.quaternion();
      const std::string p = path + ".quaternion";
      const Eigen::Quaterniond quat(finite(q.w(), p + ".w"), finite(q.x(), p + ".x"),
                                    finite(q.y(), p + ".y"), finite(q.z(), p + ".z"));
      if (std::abs(quat.norm() - 1.0) > kRotationTolerance) {
        throw ConversionError(p + ": norm " + number(quat.norm()) +
                              ", a rotation needs a unit quaternion (norm 1 ± 1e-6)");
      }
      return quat.normalized().toRotationMatrix();
    }
    case v1::Rotation::kMatrix: {
      const std::string p = path + ".matrix.rows";
      if (r.matrix().rows_size() != 9) {
        throw ConversionError(p + ": " + std::to_string(r.matrix().rows_size()) +
                              " values, a 3x3 rotation needs 9 (row-major)");
      }
      Matrix3 R;
      for (int i = 0; i < 9; ++i) {
        R(i / 3, i % 3) = finite(r.matrix().rows(i), p + "[" + std::to_string(i) + "]");
      }
      const double orthogonality = (R * R.transpose() - Matrix3::Identity()).cwiseAbs().maxCoeff();
      const double det = R.determinant();
      if (orthogonality > kRotationTolerance || std::abs(det - 1.0) > kRotationTolerance) {
        throw ConversionError(p + ": not a rotation (max |R·Rᵀ − I| = " + number(orthogonality) +
                              ", det = " + number(det) +
                              "); needs an orthonormal matrix with det +1 within 1e-6");
      }
      return R;
    }
    case v1::Rotation::kRpy: {
      const std::string p = path + ".rpy";
      constexpr double kRad = std::numbers::pi / 180.0;
      const double roll = finite(r.rpy().roll_deg(), p + ".roll_deg") * kRad;
      const double pitch = finite(r.rpy().pitch_deg(), p + ".pitch_deg") * kRad;
      const double yaw = finite(r.rpy().yaw_deg(), p + ".yaw_deg") * kRad;
      return (Eigen::AngleAxisd(yaw, Vector3::UnitZ()) *
              Eigen::AngleAxisd(pitch, Vector3::UnitY()) *
              Eigen::AngleAxisd(roll, Vector3::UnitX()))
          .toRotationMatrix();
    }
    case v1::Rotation::REPRESENTATION_NOT_SET:
      return Matrix3::Identity();
  }
  return Matrix3::Identity();
}

Frame to_frame(const v1::Pose& pose, const std::string& path) {
  return Frame{to_rotation(pose.rotation(), path + ".rotation"),
               to_vector3(pose.position(), path + ".position")};
}

Vector6 to_twist(const v1::Twist& twist, const std::string& path) {
  Vector6 out;
  out << to_vector3(twist.linear(), path + ".linear"),
      to_vector3(twist.angular(), path + ".angular");
  return out;
}

Vector6 to_wrench(const v1::Wrench& wrench, const std::string& path) {
  Vector6 out;
  out << to_vector3(wrench.force(), path + ".force"), to_vector3(wrench.torque(), path + ".torque");
  return out;
}

JointVector to_joint_vector(const v1::JointVector& joints, const std::string& path) {
  if (joints.values_size() != kArmDof) {
    throw ConversionError(path + ".values: " + std::to_string(joints.values_size()) +
                          " values, the arm has " + std::to_string(kArmDof) + " joints");
  }
  JointVector q;
  for (int i = 0; i < kArmDof; ++i) {
    q[i] = finite(joints.values(i), path + ".values[" + std::to_string(i) + "]");
  }
  return q;
}

MotionVector to_motion_vector(const v1::MotionVector& m, const std::string& path) {
  MotionVector out;
  out << to_vector3(m.translation(), path + ".translation"),
      to_vector3(m.rotation(), path + ".rotation"), finite(m.arm_angle(), path + ".arm_angle");
  return out;
}

void from_vector3(const Vector3& v, v1::Vector3* out) {
  out->set_x(v.x());
  out->set_y(v.y());
  out->set_z(v.z());
}

void from_frame(const Frame& frame, v1::Pose* out) {
  from_vector3(frame.p, out->mutable_position());
  const Eigen::Quaterniond q(frame.R);
  auto* quat = out->mutable_rotation()->mutable_quaternion();
  quat->set_w(q.w());
  quat->set_x(q.x());
  quat->set_y(q.y());
  quat->set_z(q.z());
}

void from_twist(const Vector6& twist, v1::Twist* out) {
  from_vector3(twist.head<3>(), out->mutable_linear());
  from_vector3(twist.tail<3>(), out->mutable_angular());
}

void from_wrench(const Vector6& wrench, v1::Wrench* out) {
  from_vector3(wrench.head<3>(), out->mutable_force());
  from_vector3(wrench.tail<3>(), out->mutable_torque());
}

void from_joint_vector(const JointVector& q, v1::JointVector* out) {
  out->clear_values();
  for (int i = 0; i < kArmDof; ++i) out->add_values(q[i]);
}

void from_motion_vector(const MotionVector& m, v1::MotionVector* out) {
  from_vector3(m.head<3>(), out->mutable_translation());
  from_vector3(m.segment<3>(3), out->mutable_rotation());
  out->set_arm_angle(m[6]);
}

}  // namespace tether::proto

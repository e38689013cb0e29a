#pragma once

// Fixed-size vocabulary shared by every control-path unit.
//
// Conventions, used everywhere in tether:
//   * Joint quantities are ordered base to tip, radians and rad/s.
//   * A twist is (linear velocity [m/s], angular velocity [rad/s]), linear first.
//   * A wrench is (force [N], torque [N·m]), force first. Unless a name says
//     otherwise it is the wrench the robot applies to its environment.
//   * The motion space (the extended-task-space patent) is x = (position [m], rotation [rad], arm
//   angle [rad]):
//     rows 0-2 translation, 3-5 rotation (rotation vectors on SO(3)), 6 arm angle ψ.
//     Its dual, a motion-space force, is (force, torque, arm-angle torque [N·m]).

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace tether {

inline constexpr int kArmDof = 7;     // the arms tether drives are 7-DOF
inline constexpr int kMotionDim = 7;  // 6-D pose of the MOTION frame + arm angle

using Vector3 = Eigen::Vector3d;
using Matrix3 = Eigen::Matrix3d;
using Vector6 = Eigen::Matrix<double, 6, 1>;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using JointVector = Eigen::Matrix<double, kArmDof, 1>;
using MotionVector = Eigen::Matrix<double, kMotionDim, 1>;
using Matrix7 = Eigen::Matrix<double, 7, 7>;
using Jacobian6 = Eigen::Matrix<double, 6, kArmDof>;    // rows (v, ω), columns joints
using RowJacobian = Eigen::Matrix<double, 1, kArmDof>;  // gradient of a scalar
using CompositeJacobian = Eigen::Matrix<double, kMotionDim, kArmDof>;

// A rigid transform: maps coordinates in the child frame to the parent frame,
// p_parent = R * p_child + p.
struct Frame {
  Matrix3 R = Matrix3::Identity();
  Vector3 p = Vector3::Zero();

  static Frame Identity() { return Frame{}; }

  Frame operator*(const Frame& child) const { return Frame{R * child.R, R * child.p + p}; }
  Vector3 operator*(const Vector3& point) const { return R * point + p; }
  Frame inverse() const { return Frame{R.transpose(), -(R.transpose() * p)}; }
};

}  // namespace tether

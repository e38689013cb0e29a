#pragma once

// Rigid-body operations on SO(3), twists and wrenches.
// Twist = (v [m/s], ω [rad/s]); wrench = (f [N], τ [N·m]); both 6-vectors, linear first.

#include "tether/common/types.h"

namespace tether {

// Skew-symmetric matrix: skew(a) * b = a × b.
Matrix3 skew(const Vector3& a);

// Exponential map: rotation by |w| [rad] about w/|w|. Exact for every w.
Matrix3 so3_exp(const Vector3& w);
// Logarithm: rotation vector (axis·angle, angle ∈ [0, π]) of R. Accurate near 0 and π.
Vector3 so3_log(const Matrix3& R);

// Orientation error that rotates `actual` onto `desired`, as a rotation vector in the
// frame both are expressed in: so3_exp(e) * actual == desired.
Vector3 orientation_error(const Matrix3& desired, const Matrix3& actual);
// Integrates an angular velocity given in the frame R is expressed in, for dt seconds.
Matrix3 integrate_rotation(const Matrix3& R, const Vector3& omega, double dt);

// Twist of a rigid body, given at the origin of frame B in B coordinates, re-expressed
// at the origin of frame A in A coordinates; a_T_b is B's pose in A:
//   ω_a = R ω_b,   v_a = R v_b + p × (R ω_b)
Matrix6 twist_transform(const Frame& a_T_b);
Vector6 transform_twist(const Frame& a_T_b, const Vector6& twist_b);
// Wrench given about B's origin in B coordinates, re-expressed about A's origin in A
// coordinates: f_a = R f_b,   τ_a = R τ_b + p × (R f_b). Power is preserved:
// wrench_aᵀ twist_a == wrench_bᵀ twist_b.
Matrix6 wrench_transform(const Frame& a_T_b);
Vector6 transform_wrench(const Frame& a_T_b, const Vector6& wrench_b);

// Velocity of a rigid body at another point of it: v' = v + ω × (to − from).
Vector6 shift_twist(const Vector6& twist, const Vector3& from, const Vector3& to);
// Wrench moment about another point: τ' = τ + (from − to) × f.
Vector6 shift_wrench(const Vector6& wrench, const Vector3& from, const Vector3& to);

}  // namespace tether

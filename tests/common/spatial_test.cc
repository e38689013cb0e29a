#include "tether/common/spatial.h"

#include <gtest/gtest.h>

#include <numbers>
#include <random>

namespace tether {
namespace {

Vector3 random_vector(std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  return Vector3(u(rng), u(rng), u(rng));
}

Frame random_frame(std::mt19937_64& rng) {
  return Frame{so3_exp(random_vector(rng, 3.0)), random_vector(rng, 2.0)};
}

TEST(Spatial, LogInvertsExpOverTheWholeAngleRange) {
  std::mt19937_64 rng(11);
  for (int n = 0; n < 2000; ++n) {
    Vector3 axis = random_vector(rng, 1.0).normalized();
    const double angle = std::numbers::pi * (n % 200) / 199.0;  // 0 … π inclusive
    const Vector3 w = angle * axis;
    const Vector3 back = so3_log(so3_exp(w));
    if (angle > std::numbers::pi - 1e-9) {
      // At π, ±axis are the same rotation.
      EXPECT_LE(std::min((back - w).norm(), (back + w).norm()), 1e-7);
    } else {
      EXPECT_LE((back - w).norm(), 1e-9) << "angle " << angle;
    }
  }
}

TEST(Spatial, ExpIsAProperRotationForTinyAndLargeAngles) {
  for (const double angle : {0.0, 1e-12, 1e-6, 1e-4, 0.5, 3.0, 3.14159, 10.0}) {
    const Matrix3 R = so3_exp(angle * Vector3(1, 2, -2).normalized());
    EXPECT_LE((R * R.transpose() - Matrix3::Identity()).norm(), 1e-14) << angle;
    EXPECT_NEAR(R.determinant(), 1.0, 1e-14);
  }
}

TEST(Spatial, OrientationErrorRotatesActualOntoDesired) {
  std::mt19937_64 rng(12);
  for (int n = 0; n < 200; ++n) {
    const Matrix3 actual = so3_exp(random_vector(rng, 3.0));
    const Matrix3 desired = so3_exp(random_vector(rng, 3.0));
    const Vector3 e = orientation_error(desired, actual);
    EXPECT_LE((so3_exp(e) * actual - desired).norm(), 1e-9);
    EXPECT_LE(e.norm(), std::numbers::pi + 1e-12);
  }
}

TEST(Spatial, IntegratingAConstantAngularVelocityTurnsByRateTimesTime) {
  const Vector3 omega(0.0, 0.0, 0.5);
  Matrix3 R = Matrix3::Identity();
  for (int n = 0; n < 1000; ++n) R = integrate_rotation(R, omega, 1e-3);
  EXPECT_LE((R - so3_exp(Vector3(0, 0, 0.5))).norm(), 1e-12);
}

TEST(Spatial, TwistTransformMatchesPointVelocityOfTheRigidBody) {
  std::mt19937_64 rng(13);
  for (int n = 0; n < 100; ++n) {
    const Frame a_T_b = random_frame(rng);
    Vector6 twist_b;
    twist_b << random_vector(rng, 1.0), random_vector(rng, 1.0);
    const Vector6 twist_a = transform_twist(a_T_b, twist_b);
    EXPECT_LE((twist_a - twist_transform(a_T_b) * twist_b).norm(), 1e-12);
    // Velocity of the body point at A's origin, computed in A coordinates.
    const Vector3 omega_a = a_T_b.R * twist_b.tail<3>();
    const Vector3 v_b_origin_in_a = a_T_b.R * twist_b.head<3>();
    const Vector3 expected = v_b_origin_in_a + omega_a.cross(Vector3::Zero() - a_T_b.p);
    EXPECT_LE((twist_a.head<3>() - expected).norm(), 1e-12);
    EXPECT_LE((twist_a.tail<3>() - omega_a).norm(), 1e-12);
  }
}

TEST(Spatial, WrenchTransformPreservesPower) {
  std::mt19937_64 rng(14);
  for (int n = 0; n < 100; ++n) {
    const Frame a_T_b = random_frame(rng);
    Vector6 twist_b, wrench_b;
    twist_b << random_vector(rng, 1.0), random_vector(rng, 1.0);
    wrench_b << random_vector(rng, 10.0), random_vector(rng, 5.0);
    const Vector6 twist_a = transform_twist(a_T_b, twist_b);
    const Vector6 wrench_a = transform_wrench(a_T_b, wrench_b);
    EXPECT_NEAR(wrench_a.dot(twist_a), wrench_b.dot(twist_b), 1e-10);
    EXPECT_LE((wrench_a - wrench_transform(a_T_b) * wrench_b).norm(), 1e-12);
    // Round trip through the inverse frame.
    EXPECT_LE((transform_wrench(a_T_b.inverse(), wrench_a) - wrench_b).norm(), 1e-10);
    EXPECT_LE((transform_twist(a_T_b.inverse(), twist_a) - twist_b).norm(), 1e-10);
  }
}

TEST(Spatial, ShiftedTwistAndWrenchAgreeWithTheFrameTransforms) {
  Vector6 twist, wrench;
  twist << 0.1, -0.2, 0.3, 0.5, 0.0, -0.4;
  wrench << 5.0, -3.0, 1.0, 0.2, 0.1, -0.3;
  const Vector3 from(0.1, 0.2, 0.3), to(-0.4, 0.0, 0.9);
  // Shifting the reference point is a frame transform with identity rotation.
  const Frame to_T_from{Matrix3::Identity(), from - to};
  EXPECT_LE((shift_twist(twist, from, to) - transform_twist(to_T_from, twist)).norm(), 1e-14);
  EXPECT_LE((shift_wrench(wrench, from, to) - transform_wrench(to_T_from, wrench)).norm(), 1e-14);
}

}  // namespace
}  // namespace tether

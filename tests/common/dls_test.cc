#include "tether/common/dls.h"

#include <gtest/gtest.h>

#include <limits>

#include "test_arms.h"
#include "tether/common/motion_space.h"

namespace tether {
namespace {

using testing::random_configurations;
using testing::shipped_arms;

TEST(WeightedDls, EqualsTheExactInverseWithUnitTaskWeightsAndNoDamping) {
  const KinematicModel model(testing::load(shipped_arms()[0]));
  const ArmAngleModel arm_angle;
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  const MotionVector ones = MotionVector::Ones();
  int checked = 0;
  for (const JointVector& q : random_configurations(model, 200, 21)) {
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, arm_angle, Frame::Identity(), J, psi);
    const Eigen::JacobiSVD<CompositeJacobian> svd(J);
    if (svd.singularValues()[6] < 0.05) continue;  // exact inverse is ill-conditioned there
    const MotionVector xdot = MotionVector::LinSpaced(-0.3, 0.4);
    JointVector qdot;
    ASSERT_EQ(weighted_dls<7>(J, ones, JointVector::Zero(), xdot, qdot), DlsStatus::kOk);
    const JointVector exact = J.partialPivLu().solve(xdot);
    EXPECT_LE((qdot - exact).norm(), 1e-9 * (1.0 + exact.norm()));
    EXPECT_LE((J * qdot - xdot).norm(), 1e-9);
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(WeightedDls, StaysBoundedAtASingularityWithJointVelocityWeights) {
  const KinematicModel model(testing::load(shipped_arms()[0]));
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  // Wrist singularity: with q6 = 0 the axes of joints 5 and 7 coincide, so two columns
  // of the composite Jacobian are equal and it has rank 6.
  JointVector q;
  q << 0.3, 0.5, 0.2, -1.0, 0.4, 0.0, 0.3;
  forward_kinematics(model, q, state);
  composite_jacobian(model, state, ArmAngleModel(), Frame::Identity(), J, psi);
  ASSERT_EQ(psi.status, ArmAngleStatus::kOk);
  ASSERT_LE((J.col(4) - J.col(6)).norm(), 1e-12);
  MotionVector xdot;
  xdot << 0.05, -0.1, 0.2, 0.4, -0.3, 0.6, 0.1;
  JointVector qdot;
  const MotionVector ones = MotionVector::Ones();

  EXPECT_EQ(weighted_dls<7>(J, ones, JointVector::Zero(), xdot, qdot), DlsStatus::kSingular);
  EXPECT_TRUE(qdot.isZero()) << "a failed solve must command no motion";

  for (const double lambda : {1e-1, 1e-2, 1e-3}) {
    ASSERT_EQ(weighted_dls<7>(J, ones, JointVector::Constant(lambda * lambda), xdot, qdot),
              DlsStatus::kOk);
    // With W_v = λ²I the joint speed is bounded by |ẋ|/(2λ) whatever the singular values.
    EXPECT_LE(qdot.norm(), xdot.norm() / (2.0 * lambda) + 1e-12) << lambda;
    EXPECT_TRUE(qdot.allFinite());
  }
}

TEST(WeightedDls, TaskWeightsPrioritiseTheHeavierRows) {
  // One joint, two conflicting tasks on it: the solution leans to the heavier weight.
  Eigen::Matrix<double, 2, kArmDof> J = Eigen::Matrix<double, 2, kArmDof>::Zero();
  J(0, 0) = 1.0;
  J(1, 0) = 1.0;
  Eigen::Vector2d xdot(1.0, -1.0);
  JointVector wv = JointVector::Ones();
  wv[0] = 0.0;
  JointVector qdot;
  ASSERT_EQ(weighted_dls<2>(J, Eigen::Vector2d(9.0, 1.0), wv, xdot, qdot), DlsStatus::kOk);
  EXPECT_NEAR(qdot[0], (9.0 - 1.0) / (9.0 + 1.0), 1e-15);
}

TEST(WeightedDls, RejectsNonFiniteInputAndCommandsNoMotion) {
  CompositeJacobian J = CompositeJacobian::Identity();
  MotionVector xdot = MotionVector::Ones();
  xdot[3] = std::numeric_limits<double>::quiet_NaN();
  JointVector qdot = JointVector::Ones();
  EXPECT_EQ(weighted_dls<7>(J, MotionVector::Ones(), JointVector::Zero(), xdot, qdot),
            DlsStatus::kNonFiniteInput);
  EXPECT_TRUE(qdot.isZero());
}

}  // namespace
}  // namespace tether

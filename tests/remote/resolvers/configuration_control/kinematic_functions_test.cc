// The kinematic functions of configuration control: every row against a finite difference of
// the quantity it differentiates, the criteria's gradients against numeric ones, and the
// weights' interpolation in time.

#include "tether/remote/resolvers/configuration_control/kinematic_functions.h"

#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <random>
#include <utility>

#include "arm_fixture.h"

namespace tether::remote::configuration_control {
namespace {

using testing::ArmFixture;
using testing::iiwa_posture;

std::vector<JointVector> postures(const KinematicModel& model, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.15, 0.85);
  std::vector<JointVector> out{iiwa_posture()};
  for (int n = 1; n < count; ++n) {
    JointVector q;
    for (int j = 0; j < kArmDof; ++j) {
      q[j] =
          model.lower_limits()[j] + unit(rng) * (model.upper_limits()[j] - model.lower_limits()[j]);
    }
    out.push_back(q);
  }
  return out;
}

// Kinematics at q + h·e_j and q − h·e_j.
std::pair<KinematicState, KinematicState> central_pair(const KinematicModel& model,
                                                       const JointVector& q, int j, double h) {
  JointVector plus = q, minus = q;
  plus[j] += h;
  minus[j] -= h;
  std::pair<KinematicState, KinematicState> out;
  forward_kinematics(model, plus, out.first);
  forward_kinematics(model, minus, out.second);
  return out;
}

double gravity_cost_at(const ArmFixture& f, const GravityTorqueModel& g, const JointVector& q) {
  KinematicState s;
  forward_kinematics(f.model, q, s);
  return g.cost(s, nullptr);
}

TEST(GravityTorqueModel, TorquesAreTheLinksWeightsMappedThroughTheirCentreOfMassJacobians) {
  ArmFixture f;
  const GravityTorqueModel gravity(f.model);
  EXPECT_GT(gravity.total_mass(), 10.0);  // the iiwa7's links weigh ~22 kg
  for (const JointVector& q : postures(f.model, 20, 3)) {
    f.at(q);
    JointVector tau;
    gravity.torques(f.state, tau, nullptr);
    JointVector expected = JointVector::Zero();
    for (int k = 0; k < kArmDof; ++k) {
      const LinkInertia& link = f.model.arm().joints[static_cast<std::size_t>(k)].link;
      const Vector3 com = f.state.joint_frame(f.model, k) * link.com;
      Jacobian6 J;
      point_jacobian(f.state, k, com, J);
      expected += J.topRows<3>().transpose() * (link.mass * Vector3(0, 0, -kStandardGravity));
    }
    EXPECT_LT((tau - expected).norm(), 1e-10 * (1.0 + expected.norm())) << q.transpose();
  }
}

TEST(GravityTorqueModel, AnalyticDerivativeAndGradientMatchCentralDifferences) {
  ArmFixture f;
  const GravityTorqueModel gravity(f.model);
  const double h = 1e-6;
  for (const JointVector& q : postures(f.model, 20, 4)) {
    f.at(q);
    JointVector tau, gradient;
    Matrix7 derivative;
    gravity.torques(f.state, tau, &derivative);
    gravity.cost(f.state, &gradient);
    Matrix7 numeric;
    JointVector numeric_gradient;
    for (int j = 0; j < kArmDof; ++j) {
      const auto [sp, sm] = central_pair(f.model, q, j, h);
      JointVector tp, tm;
      gravity.torques(sp, tp, nullptr);
      gravity.torques(sm, tm, nullptr);
      numeric.col(j) = (tp - tm) / (2 * h);
      numeric_gradient[j] = (gravity.cost(sp, nullptr) - gravity.cost(sm, nullptr)) / (2 * h);
    }
    EXPECT_LT((derivative - numeric).norm(), 1e-6 * (1.0 + numeric.norm())) << q.transpose();
    EXPECT_LT((gradient - numeric_gradient).norm(), 1e-6 * (1.0 + numeric_gradient.norm()))
        << q.transpose();
  }
}

TEST(HandNullVector, SpansTheNullSpaceWithTheManipulabilityAsNormAndKeepsItsSign) {
  ArmFixture f;
  for (const JointVector& q : postures(f.model, 20, 5)) {
    f.at(q);
    Jacobian6 J;
    tool_jacobian(f.state, J);
    JointVector n;
    const double norm = hand_null_vector(J, n);
    EXPECT_NEAR(norm, std::sqrt((J * J.transpose()).determinant()), 1e-12);
    EXPECT_LT((J * n).norm(), 1e-12 * (1.0 + norm));
    // The MOTION-axes rows of the composite Jacobian give the same vector (determinant 1).
    JointVector n_motion;
    hand_null_vector(f.jacobian.topRows<6>(), n_motion);
    EXPECT_LT((n_motion - n).norm(), 1e-10 * norm);
    const Eigen::JacobiSVD<Jacobian6> svd(J, Eigen::ComputeFullV);
    const JointVector svd_null = svd.matrixV().col(6);
    EXPECT_NEAR(std::abs(svd_null.dot(n / norm)), 1.0, 1e-9);
    // Analytic in q: a neighbour's vector points the same way, an SVD's need not.
    JointVector near = q;
    near[3] += 1e-3;
    f.at(near);
    tool_jacobian(f.state, J);
    JointVector n_near;
    hand_null_vector(J, n_near);
    EXPECT_GT(n_near.normalized().dot(n / norm), 0.99);
  }
}

TEST(Manipulability, GradientMatchesCentralDifferences) {
  ArmFixture f;
  const double h = 1e-6;
  for (const JointVector& q : postures(f.model, 20, 6)) {
    f.at(q);
    JointVector gradient;
    const double w = manipulability(f.state, &gradient);
    ASSERT_GT(w, 1e-4);
    JointVector numeric;
    for (int j = 0; j < kArmDof; ++j) {
      const auto [sp, sm] = central_pair(f.model, q, j, h);
      numeric[j] = (manipulability(sp, nullptr) - manipulability(sm, nullptr)) / (2 * h);
    }
    EXPECT_LT((gradient - numeric).norm(), 1e-7 * (1.0 + numeric.norm())) << q.transpose();
  }
}

TEST(JointLimitCost, IsSevenTimesFourAtMidRangeAndItsGradientMatchesDifferences) {
  ArmFixture f;
  const JointVector& l = f.model.lower_limits();
  const JointVector& u = f.model.upper_limits();
  JointVector gradient;
  EXPECT_NEAR(joint_limit_cost(0.5 * (l + u), l, u, &gradient), 28.0, 1e-12);
  EXPECT_LT(gradient.norm(), 1e-12);
  const double h = 1e-7;
  for (const JointVector& q : postures(f.model, 20, 7)) {
    joint_limit_cost(q, l, u, &gradient);
    for (int j = 0; j < kArmDof; ++j) {
      JointVector plus = q, minus = q;
      plus[j] += h;
      minus[j] -= h;
      const double numeric =
          (joint_limit_cost(plus, l, u, nullptr) - joint_limit_cost(minus, l, u, nullptr)) /
          (2 * h);
      EXPECT_NEAR(gradient[j], numeric, 1e-5 * (1.0 + std::abs(numeric)));
    }
  }
  // At and beyond a limit it stays finite, large and pushing inwards.
  JointVector at_limit = 0.5 * (l + u);
  at_limit[1] = u[1] + 0.1;
  EXPECT_TRUE(std::isfinite(joint_limit_cost(at_limit, l, u, &gradient)));
  EXPECT_GT(gradient[1], 1e6);
}

TEST(JointWeights, InterpolateLinearlyBetweenKnotsAndHoldOutsideThem) {
  EXPECT_EQ(joint_weights_at({}, 3.0), JointVector::Ones());
  JointWeightKnot a{.time = 1.0, .weights = JointVector::Constant(2.0)};
  JointWeightKnot b{.time = 3.0, .weights = JointVector::Zero()};
  JointWeightKnot c{.time = 4.0, .weights = JointVector::Constant(10.0)};
  b.weights[6] = 4.0;
  const std::vector<JointWeightKnot> knots{a, b, c};
  EXPECT_EQ(joint_weights_at(knots, 0.0), a.weights);
  EXPECT_EQ(joint_weights_at(knots, 1.0), a.weights);
  const JointVector mid = joint_weights_at(knots, 2.5);
  EXPECT_NEAR(mid[0], 0.5, 1e-15);
  EXPECT_NEAR(mid[6], 3.5, 1e-15);
  EXPECT_EQ(joint_weights_at(knots, 3.0), b.weights);
  EXPECT_NEAR(joint_weights_at(knots, 3.25)[2], 2.5, 1e-15);
  EXPECT_EQ(joint_weights_at(knots, 9.0), c.weights);
}

// Every kind's rows are the derivative of its values.
class FunctionRowsTest : public ::testing::TestWithParam<KinematicFunctionKind> {};

KinematicFunctionParameters function_of(KinematicFunctionKind kind) {
  KinematicFunctionParameters p;
  p.kind = kind;
  p.gain = 3.0;
  p.joint = 4;
  p.offset = Vector3(0.02, -0.01, 0.05);
  p.target = Vector3(0.3, 0.1, 0.6);
  p.axes = Vector3(1, 0, 1);
  p.desired << 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, -0.7;
  p.weights = {{.time = 0.0, .weights = JointVector::Ones()},
               {.time = 2.0, .weights = (JointVector() << 4, 0, 1, 0, 9, 1, 0).finished()}};
  return p;
}

TEST_P(FunctionRowsTest, RowsAreTheDerivativeOfTheFunctionValues) {
  ArmFixture f;
  KinematicFunctionEvaluator evaluator(f.model);
  const KinematicFunctionParameters function = function_of(GetParam());
  const double h = 1e-6;
  for (const JointVector& q : postures(f.model, 8, 8)) {
    f.at(q);
    f.input.time = 2.5;
    FunctionRows rows, plus_rows, minus_rows;
    ASSERT_TRUE(evaluator.evaluate(function, f.input, rows));
    for (int j = 0; j < kArmDof; ++j) {
      JointVector plus = q, minus = q;
      plus[j] += h;
      minus[j] -= h;
      f.at(plus);
      ASSERT_TRUE(evaluator.evaluate(function, f.input, plus_rows));
      f.at(minus);
      ASSERT_TRUE(evaluator.evaluate(function, f.input, minus_rows));
      ASSERT_EQ(plus_rows.count, rows.count);
      for (int r = 0; r < rows.count; ++r) {
        const double numeric = (plus_rows.value[r] - minus_rows.value[r]) / (2 * h);
        EXPECT_NEAR(rows.jacobian(r, j), numeric, 2e-5 * (1.0 + std::abs(numeric)))
            << "row " << r << " joint " << j << " at " << q.transpose();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, FunctionRowsTest,
    ::testing::Values(KinematicFunctionKind::kArmAngle, KinematicFunctionKind::kGravityTorque,
                      KinematicFunctionKind::kArmPoint, KinematicFunctionKind::kJointVelocity,
                      KinematicFunctionKind::kJointAngle, KinematicFunctionKind::kJointLock,
                      KinematicFunctionKind::kJointLimitAvoidance,
                      KinematicFunctionKind::kManipulability));

TEST(KinematicFunctions, RowCountsAndDesiredRatesFollowTheParameters) {
  ArmFixture f;
  KinematicFunctionEvaluator evaluator(f.model);
  f.at(iiwa_posture());
  f.input.xd[6] = 0.25;
  f.input.time = 2.5;  // weights (4, 0, 1, 0, 9, 1, 0)
  FunctionRows rows;
  KinematicFunctionParameters p = function_of(KinematicFunctionKind::kArmAngle);
  ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
  EXPECT_EQ(rows.count, 1);
  EXPECT_EQ(rows.desired[0], 0.25);
  EXPECT_EQ(rows.jacobian.row(0), f.jacobian.row(6));

  p = function_of(KinematicFunctionKind::kArmPoint);
  ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
  ASSERT_EQ(rows.count, 2);  // x and z
  const Vector3 point = f.state.joint_frame(f.model, 4) * p.offset;
  EXPECT_NEAR(rows.desired[0], 3.0 * (0.3 - point.x()), 1e-12);
  EXPECT_NEAR(rows.desired[1], 3.0 * (0.6 - point.z()), 1e-12);

  p = function_of(KinematicFunctionKind::kJointVelocity);
  ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
  ASSERT_EQ(rows.count, 4);  // joints 0, 2, 4, 5
  EXPECT_NEAR(rows.jacobian(0, 0), 2.0, 1e-15);
  EXPECT_NEAR(rows.desired[0], 2.0 * 0.1, 1e-15);
  EXPECT_NEAR(rows.jacobian(2, 4), 3.0, 1e-15);
  EXPECT_NEAR(rows.desired[2], 3.0 * -0.5, 1e-15);

  p = function_of(KinematicFunctionKind::kJointAngle);
  ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
  ASSERT_EQ(rows.count, 4);
  EXPECT_NEAR(rows.desired[3], 1.0 * 3.0 * (0.6 - f.input.q[5]), 1e-15);

  p = function_of(KinematicFunctionKind::kJointLock);
  ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
  ASSERT_EQ(rows.count, 1);
  EXPECT_EQ(rows.jacobian.row(0), RowJacobian::Unit(4));
  EXPECT_EQ(rows.desired[0], 0.0);

  // Out-of-range joint and all-zero weights: no rows.
  p.joint = 7;
  EXPECT_FALSE(evaluator.evaluate(p, f.input, rows));
  EXPECT_EQ(rows.count, 0);
  p = function_of(KinematicFunctionKind::kJointVelocity);
  p.weights = {{.time = 0.0, .weights = JointVector::Zero()}};
  EXPECT_FALSE(evaluator.evaluate(p, f.input, rows));
}

TEST(KinematicFunctions, OptimalityConditionIsTheGradientAlongTheSelfMotion) {
  ArmFixture f;
  KinematicFunctionEvaluator evaluator(f.model);
  const GravityTorqueModel gravity(f.model);
  const double h = 1e-6;
  for (const JointVector& q : postures(f.model, 10, 9)) {
    f.at(q);
    Jacobian6 J;
    tool_jacobian(f.state, J);
    const Eigen::JacobiSVD<Jacobian6> svd(J, Eigen::ComputeFullV);
    const JointVector null = svd.matrixV().col(6);
    // G along the self-motion, numerically: dG/ds with q(s) = q + s·null to first order.
    const double along =
        (gravity_cost_at(f, gravity, q + h * null) - gravity_cost_at(f, gravity, q - h * null)) /
        (2 * h);
    double phi = 0.0;
    ASSERT_TRUE(evaluator.optimality_condition(KinematicFunctionKind::kGravityTorque, q, phi));
    EXPECT_NEAR(std::abs(phi), std::abs(along), 1e-6 * (1.0 + std::abs(along)));
    EXPECT_FALSE(evaluator.optimality_condition(KinematicFunctionKind::kJointLock, q, phi));
  }
}

TEST(KinematicFunctions, OptimalityRateMovesTheSelfMotionDownhill) {
  // Whatever the curvature at the posture, the self-motion the row asks for lowers G (and
  // raises w for manipulability).
  ArmFixture f;
  KinematicFunctionEvaluator evaluator(f.model);
  for (const auto kind :
       {KinematicFunctionKind::kGravityTorque, KinematicFunctionKind::kJointLimitAvoidance,
        KinematicFunctionKind::kManipulability}) {
    KinematicFunctionParameters p;
    p.kind = kind;
    for (const JointVector& q : postures(f.model, 10, 10)) {
      f.at(q);
      FunctionRows rows;
      ASSERT_TRUE(evaluator.evaluate(p, f.input, rows));
      Jacobian6 J;
      tool_jacobian(f.state, J);
      JointVector n;
      const double w = hand_null_vector(J, n);
      const JointVector n_hat = n / w;
      const double curvature = rows.jacobian.row(0).dot(n_hat);
      const double rate = rows.desired[0] / curvature;  // ṡ of q̇ = n̂ ṡ
      // φ = dC/ds: the rate must have the opposite sign for a minimum, the same for maximum.
      const double phi = rows.value[0];
      if (kind == KinematicFunctionKind::kManipulability) {
        EXPECT_GE(rate * phi, 0.0);
      } else {
        EXPECT_LE(rate * phi, 0.0);
      }
      // The Newton rate φ̇_d = ∓gain·φ unless that self-motion would outrun the arm.
      const double speed_limit = f.model.velocity_limits().minCoeff();
      EXPECT_LE(std::abs(rate), speed_limit * (1.0 + 1e-12));
      if (std::abs(rate) < speed_limit * (1.0 - 1e-12)) {
        EXPECT_NEAR(std::abs(rows.desired[0]), std::abs(phi), 1e-12 * (1.0 + std::abs(phi)));
      }
    }
  }
}

}  // namespace
}  // namespace tether::remote::configuration_control

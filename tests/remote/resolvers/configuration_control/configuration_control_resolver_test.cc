// The configuration-control resolver: the augmented system's solution (exact when square,
// weighted least squares when over-determined), joint locking, time-varying weights, the
// status mapping and the achieved fraction.

#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <limits>

#include "arm_fixture.h"
#include "tether/common/dls.h"
#include "tether/remote/resolvers/resolver_set.h"

namespace tether::remote {
namespace {

using configuration_control::FunctionRows;
using configuration_control::KinematicFunctionEvaluator;
using testing::ArmFixture;
using testing::iiwa_posture;

KinematicFunctionParameters function(KinematicFunctionKind kind, double weight = 1.0,
                                     double gain = 1.0, int joint = 3) {
  KinematicFunctionParameters p;
  p.kind = kind;
  p.weight = weight;
  p.gain = gain;
  p.joint = joint;
  return p;
}

KinematicFunctionParameters arm_angle_function(double weight = 1.0) {
  return function(KinematicFunctionKind::kArmAngle, weight);
}

MotionVector some_motion() {
  MotionVector xd;
  xd << 0.05, -0.02, 0.03, 0.1, -0.2, 0.05, 0.3;
  return xd;
}

// The weighted least-squares solution of the stacked rows, built with dynamic matrices and
// a QR factorisation: what the resolver's row-by-row normal equations must equal.
JointVector reference_solution(const TaskParameters& task, ArmFixture& f) {
  KinematicFunctionEvaluator evaluator(f.model);
  Eigen::MatrixXd A(0, kArmDof);
  Eigen::VectorXd b(0);
  const auto append = [&](const RowJacobian& row, double desired, double weight) {
    A.conservativeResize(A.rows() + 1, Eigen::NoChange);
    b.conservativeResize(b.rows() + 1);
    A.row(A.rows() - 1) = std::sqrt(weight) * row;
    b[b.rows() - 1] = std::sqrt(weight) * desired;
  };
  for (int r = 0; r < 6; ++r) {
    append(f.jacobian.row(r), f.input.xd[r], task.resolver.task_weights[r]);
  }
  for (const auto& function : task.resolver.configuration_control.functions) {
    FunctionRows rows;
    if (!evaluator.evaluate(function, f.input, rows)) continue;
    for (int r = 0; r < rows.count; ++r) {
      append(rows.jacobian.row(r), rows.desired[r], function.weight);
    }
  }
  for (int j = 0; j < kArmDof; ++j) {
    append(RowJacobian::Unit(j), 0.0, f.input.joint_weights[j]);
  }
  return A.colPivHouseholderQr().solve(b);
}

TEST(ConfigurationControlResolver, ArmAngleFunctionAloneIsTheCompositeJacobianInverse) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  task.resolver.kind = ResolverKind::kConfigurationControl;
  task.resolver.configuration_control.functions = {arm_angle_function()};
  f.at(iiwa_posture());
  f.input.xd = some_motion();
  resolver.reset(task, f.input);
  ResolverResult out;
  resolver.resolve(task, f.input, out);
  ASSERT_EQ(out.status, ResolverStatus::kOk);
  EXPECT_EQ(resolver.last_row_count(), 7);
  EXPECT_LT((f.jacobian * out.qd - f.input.xd).norm(), 1e-10);
  EXPECT_NEAR(out.achieved_fraction, 1.0, 1e-12);
}

TEST(ConfigurationControlResolver, LockedJointDoesNotMoveWhileTheHandDoesItsTask) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  task.resolver.configuration_control.functions = {
      function(KinematicFunctionKind::kJointLock, 1.0, 1.0, 2)};
  JointVector q = iiwa_posture();
  const double locked = q[2];
  for (int step = 0; step < 500; ++step) {
    f.at(q);
    f.input.xd.setZero();
    f.input.xd.head<6>() = some_motion().head<6>();
    ResolverResult out;
    resolver.resolve(task, f.input, out);
    ASSERT_EQ(out.status, ResolverStatus::kOk) << "step " << step;
    ASSERT_LT(std::abs(out.qd[2]), 1e-12) << "step " << step;
    ASSERT_LT((f.jacobian.topRows<6>() * out.qd - f.input.xd.head<6>()).norm(), 1e-9);
    q += out.qd * 0.001;
  }
  EXPECT_NEAR(q[2], locked, 1e-12);
  EXPECT_GT((q - iiwa_posture()).norm(), 0.05);  // the others did move
}

TEST(ConfigurationControlResolver, OverDeterminedStackIsTheWeightedLeastSquaresSolution) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  task.resolver.task_weights << 1, 2, 1, 0.5, 0.5, 3, 1;
  KinematicFunctionParameters point = function(KinematicFunctionKind::kArmPoint, 0.3, 1.5, 3);
  point.offset = Vector3(0, 0, 0.1);
  point.target = Vector3(0.2, 0.2, 0.7);
  KinematicFunctionParameters posture = function(KinematicFunctionKind::kJointAngle, 0.05);
  posture.desired = iiwa_posture();
  task.resolver.configuration_control.functions = {
      arm_angle_function(0.7),
      function(KinematicFunctionKind::kGravityTorque, 0.01, 2.0),
      point,
      posture,
      function(KinematicFunctionKind::kManipulability, 0.02),
      function(KinematicFunctionKind::kJointLimitAvoidance, 0.02)};
  JointVector q = iiwa_posture();
  q[1] += 0.2;
  q[3] -= 0.3;
  f.at(q);
  f.input.xd = some_motion();
  f.input.joint_weights.setConstant(1e-3);
  ResolverResult out;
  resolver.resolve(task, f.input, out);
  ASSERT_EQ(out.status, ResolverStatus::kOk);
  EXPECT_EQ(resolver.last_row_count(), 6 + 1 + 1 + 3 + 7 + 1 + 1);
  EXPECT_EQ(resolver.last_skipped_functions(), 0);
  const JointVector expected = reference_solution(task, f);
  EXPECT_LT((out.qd - expected).norm(), 1e-8 * expected.norm()) << out.qd.transpose() << "\n"
                                                                << expected.transpose();
  // The compromise costs the hand some of its demand.
  EXPECT_GT((f.jacobian.topRows<6>() * out.qd - f.input.xd.head<6>()).norm(), 1e-4);
  EXPECT_GT(out.achieved_fraction, 0.5);
  EXPECT_LE(out.achieved_fraction, 1.0);
}

TEST(ConfigurationControlResolver, JointWeightsChangeDuringTheMotion) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  KinematicFunctionParameters velocity = function(KinematicFunctionKind::kJointVelocity);
  velocity.desired << 0.2, 0, 0, 0, 0, 0, -0.1;
  velocity.weights = {{.time = 0.0, .weights = JointVector::Zero()},
                      {.time = 1.0, .weights = JointVector::Unit(0) * 4.0},
                      {.time = 2.0, .weights = JointVector::Unit(6) * 4.0}};
  task.resolver.configuration_control.functions = {velocity};
  f.at(iiwa_posture());
  f.input.xd.setZero();
  f.input.joint_weights.setConstant(1e-4);  // the stack is 6 rows at t = 0
  ResolverResult out;
  for (const double t : {0.0, 0.5, 1.0, 1.5, 2.0}) {
    f.input.time = t;
    resolver.resolve(task, f.input, out);
    ASSERT_EQ(out.status, ResolverStatus::kOk) << t;
    EXPECT_LT((out.qd - reference_solution(task, f)).norm(), 1e-9) << t;
  }
  // At t = 0 only damping and the still hand: no motion; at t = 1 joint 0's row alone adds
  // the self-motion that realises its desired rate; at 1.5 both rows share it.
  f.input.time = 0.0;
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(resolver.last_row_count(), 6);
  EXPECT_LT(out.qd.norm(), 1e-12);
  f.input.time = 1.0;
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(resolver.last_row_count(), 7);
  EXPECT_NEAR(out.qd[0], 0.2, 1e-3);
  f.input.time = 1.5;
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(resolver.last_row_count(), 8);
  f.input.time = 2.0;
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(resolver.last_row_count(), 7);
  EXPECT_NEAR(out.qd[6], -0.1, 1e-3);
}

TEST(ConfigurationControlResolver, ReportsNonFiniteInputAndSingularStacksWithZeroVelocity) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  task.resolver.configuration_control.functions = {arm_angle_function()};
  f.at(iiwa_posture());
  f.input.xd = some_motion();
  f.input.xd[2] = std::numeric_limits<double>::quiet_NaN();
  ResolverResult out;
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(out.status, ResolverStatus::kNonFiniteInput);
  EXPECT_EQ(out.qd, JointVector::Zero());

  // Six hand rows and nothing else: one direction of q̇ is undetermined.
  task.resolver.configuration_control.functions.clear();
  f.input.xd = some_motion();
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(out.status, ResolverStatus::kSingular);
  EXPECT_EQ(out.qd, JointVector::Zero());
  // Damping makes it a minimum-norm DLS solution again.
  f.input.joint_weights.setConstant(1e-6);
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(out.status, ResolverStatus::kOk);
  JointVector dls;
  ASSERT_EQ(weighted_dls<6>(Jacobian6(f.jacobian.topRows<6>()), Vector6::Ones(),
                            f.input.joint_weights, Vector6(f.input.xd.head<6>()), dls),
            DlsStatus::kOk);
  EXPECT_LT((out.qd - dls).norm(), 1e-9 * dls.norm());
}

TEST(ConfigurationControlResolver, AchievedFractionMeasuresTheHandDemandMet) {
  ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  // Every joint locked hard: the hand can hardly move.
  for (int j = 0; j < kArmDof; ++j) {
    task.resolver.configuration_control.functions.push_back(
        function(KinematicFunctionKind::kJointLock, 1e3, 1.0, j));
  }
  f.at(iiwa_posture());
  f.input.xd = some_motion();
  ResolverResult out;
  resolver.resolve(task, f.input, out);
  ASSERT_EQ(out.status, ResolverStatus::kOk);
  EXPECT_LT(out.achieved_fraction, 0.01);
  EXPECT_GE(out.achieved_fraction, 0.0);
  // Holding still is always fully achieved.
  f.input.xd.head<6>().setZero();
  resolver.resolve(task, f.input, out);
  EXPECT_EQ(out.achieved_fraction, 1.0);
}

TEST(ConfigurationControlResolver, IsTheResolverSetsChoiceForConfigurationControl) {
  ArmFixture f;
  ResolverSet set(f.model);
  EXPECT_NE(
      dynamic_cast<ConfigurationControlResolver*>(&set.select(ResolverKind::kConfigurationControl)),
      nullptr);
}

}  // namespace
}  // namespace tether::remote

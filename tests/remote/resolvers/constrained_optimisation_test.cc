#include <gtest/gtest.h>

#include <Eigen/LU>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/resolvers/constrained_optimisation/solver.h"

namespace tether::remote {
namespace {

using Resolver = ConstrainedOptimisationResolver;
using Params = ConstrainedOptimisationParameters;
using Problem = ConstrainedOptimisationProblem;
using Status = ConstrainedOptimisationResult::Status;

constexpr double kLimitTolerance = 1e-9;

Problem wide_open_problem(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Problem pr;
  for (int r = 0; r < 6; ++r) {
    for (int j = 0; j < kArmDof; ++j) pr.jacobian(r, j) = u(rng);
  }
  pr.dt = 0.01;
  pr.lower.setConstant(-3.0);
  pr.upper.setConstant(3.0);
  pr.velocity_limit.setConstant(100.0);
  pr.acceleration_limit.setConstant(1e6);
  return pr;
}

// The iiwa7 at q: tool Jacobian as the task rows, the URDF's limits.
struct Iiwa {
  Iiwa() : model(load_default_arm()) {}

  void fill(const JointVector& q, const JointVector& q_previous, Problem& pr) {
    forward_kinematics(model, q, state);
    Jacobian6 J;
    tool_jacobian(state, J);
    pr.task_rows = 6;
    pr.jacobian.setZero();
    pr.jacobian.topRows<6>() = J;
    pr.q = q;
    pr.q_previous = q_previous;
    pr.lower = model.lower_limits();
    pr.upper = model.upper_limits();
    pr.velocity_limit = model.velocity_limits();
    pr.acceleration_limit = model.acceleration_limits();
  }

  // Standing still at q, sampled at 100 Hz.
  Problem at_rest(const JointVector& q) {
    Problem pr;
    pr.dt = 0.01;
    fill(q, q, pr);
    return pr;
  }

  KinematicModel model;
  KinematicState state;
};

JointVector iiwa_start() {
  JointVector q;
  q << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  return q;
}

TEST(ConstrainedOptimisation, FeasibleShiftIsFullyAttainedAsWeightedMinimumNorm) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> weight(0.5, 3.0);
  for (int trial = 0; trial < 20; ++trial) {
    Params params;
    for (int j = 0; j < kArmDof; ++j) params.alpha[j] = weight(rng);
    Resolver resolver(params);
    Problem pr = wide_open_problem(rng);
    pr.q.setConstant(0.2);
    pr.q_previous = pr.q;
    pr.commanded_shift << 0.001, -0.0005, 0.0008, 0.002, -0.003, 0.001, 0.0;
    const auto result = resolver.solve(pr);
    ASSERT_EQ(result.status, Status::kOk) << to_string(result.status);
    EXPECT_NEAR(result.p, 1.0, 1e-12);
    const JointVector dq = result.q - pr.q;
    const Jacobian6 J = pr.jacobian.topRows<6>();
    EXPECT_LT((J * dq - pr.commanded_shift.head<6>()).norm(), 1e-9);
    // Closed form: Δq = W⁻¹Jᵀ(J W⁻¹ Jᵀ)⁻¹ Δx, W = diag(α).
    const Matrix7 w_inv = params.alpha.cwiseInverse().asDiagonal();
    const Matrix6 jwj = J * w_inv * J.transpose();
    const JointVector expected =
        w_inv * J.transpose() * jwj.inverse() * Vector6(pr.commanded_shift.head<6>());
    EXPECT_LT((dq - expected).norm(), 1e-9) << "trial " << trial;
    EXPECT_EQ(result.joints_at_lower | result.joints_at_upper, 0);
  }
}

TEST(ConstrainedOptimisation, ClampKeepsDirectionAndLimitsTranslationAndRotationSeparately) {
  std::mt19937 rng(3);
  Params params;
  params.max_translation = 0.002;
  params.max_rotation = 0.01;
  Resolver resolver(params);
  Problem pr = wide_open_problem(rng);
  pr.commanded_shift << 0.3, -0.4, 0.0, 0.004, 0.0, -0.003, 0.0;  // |t| = 0.5, |r| = 0.005
  const auto result = resolver.solve(pr);
  const MotionVector& d = result.desired_shift;
  EXPECT_NEAR(d.head<3>().norm(), 0.002, 1e-15);
  EXPECT_NEAR(d.head<3>().normalized().dot(Vector3(0.6, -0.8, 0.0)), 1.0, 1e-12);
  // Rotation already within its limit: untouched.
  EXPECT_LT((d.segment<3>(3) - pr.commanded_shift.segment<3>(3)).norm(), 1e-15);
  pr.commanded_shift.segment<3>(3) << 0.0, 3.0, 4.0;
  const auto rotated = resolver.solve(pr);
  EXPECT_NEAR(rotated.desired_shift.segment<3>(3).norm(), 0.01, 1e-15);
  EXPECT_NEAR(rotated.desired_shift[5] / rotated.desired_shift[4], 4.0 / 3.0, 1e-12);
  // The 7-row task clamps the arm angle to its own limit.
  pr.task_rows = 7;
  pr.jacobian.row(6).setRandom();
  pr.commanded_shift[6] = -1.0;
  EXPECT_DOUBLE_EQ(resolver.solve(pr).desired_shift[6], -params.max_arm_angle);
}

TEST(ConstrainedOptimisation, GuidanceIntoTheLimitsNeverExceedsThemAndPFallsToZero) {
  Iiwa iiwa;
  Params params;
  params.alpha.setOnes();
  params.gamma.setConstant(0.1);
  params.max_translation = 0.005;
  Resolver resolver(params);
  Problem pr;
  pr.dt = 0.01;
  // Outward and down, clamped to 5 mm per sample; the operator's hand ramps up over a
  // second so the start is within the joints' acceleration.
  const MotionVector push = (MotionVector() << 0.01, 0.0, -0.004, 0, 0, 0, 0).finished();
  JointVector q = iiwa_start();
  JointVector q_previous = q;
  double early_p = 2.0;  // the smallest p while the hand is far from every limit
  double last_p = -1.0;
  int iterations = 0;
  int max_iterations = 0;
  int statuses[4] = {0, 0, 0, 0};
  std::chrono::nanoseconds spent{0};
  constexpr int kSamples = 600;
  for (int i = 0; i < kSamples; ++i) {
    iiwa.fill(q, q_previous, pr);
    pr.commanded_shift = push * std::min(1.0, i / 100.0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = resolver.solve(pr);
    spent += std::chrono::steady_clock::now() - t0;
    ++statuses[static_cast<int>(result.status)];
    ASSERT_NE(result.status, Status::kNonFinite);
    iterations += result.iterations;
    max_iterations = std::max(max_iterations, result.iterations);
    const JointVector step = result.q - q;
    const JointVector previous_step = q - q_previous;
    const double dt = pr.dt;
    for (int j = 0; j < kArmDof; ++j) {
      SCOPED_TRACE("sample " + std::to_string(i) + " joint " + std::to_string(j));
      ASSERT_GE(result.q[j], pr.lower[j] - kLimitTolerance);
      ASSERT_LE(result.q[j], pr.upper[j] + kLimitTolerance);
      ASSERT_LE(std::abs(step[j]), pr.velocity_limit[j] * dt + kLimitTolerance);
      ASSERT_LE(std::abs(step[j] - previous_step[j]),
                pr.acceleration_limit[j] * dt * dt + kLimitTolerance);
    }
    if (i >= 1 && i <= 10) early_p = std::min(early_p, result.p);
    last_p = result.p;
    q_previous = q;
    q = result.q;
  }
  std::printf(
      "guidance: p %.3f (first 10) -> %.4f, %.2f iterations/solve (max %d), %.2f us/solve; "
      "ok %d, max-iterations %d, infeasible %d\n",
      early_p, last_p, static_cast<double>(iterations) / kSamples, max_iterations,
      std::chrono::duration<double, std::micro>(spent).count() / kSamples, statuses[0], statuses[1],
      statuses[2]);
  EXPECT_NEAR(early_p, 1.0, 1e-9);
  EXPECT_LT(last_p, 0.05);
}

TEST(ConstrainedOptimisation, ElbowHalfSpaceIsNeverCrossedAndBecomesActive) {
  Iiwa iiwa;
  Params params;
  params.max_translation = 0.004;
  Resolver resolver(params);
  Problem pr;
  pr.dt = 0.01;
  const MotionVector push = (MotionVector() << 0.0, 0.004, -0.004, 0, 0, 0, 0).finished();
  pr.commanded_shift = push;
  JointVector q = iiwa_start();
  JointVector q_previous = q;
  const int elbow_joint = iiwa.model.point_joint(1);

  // Put a wall 2 cm ahead of the elbow's unconstrained motion.
  iiwa.fill(q, q_previous, pr);
  const auto free_result = resolver.solve(pr);
  Jacobian6 Jp;
  point_jacobian(iiwa.state, elbow_joint, iiwa.state.elbow, Jp);
  const Vector3 elbow_motion = Jp.topRows<3>() * (free_result.q - q);
  ASSERT_GT(elbow_motion.norm(), 1e-5);
  const Vector3 n = -elbow_motion.normalized();  // wall normal, pointing back at the elbow
  const Vector3 wall_point = iiwa.state.elbow - 0.02 * n;

  bool became_active = false;
  double worst_clearance = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 300; ++i) {
    iiwa.fill(q, q_previous, pr);
    pr.commanded_shift = push * std::min(1.0, i / 50.0);
    point_jacobian(iiwa.state, elbow_joint, iiwa.state.elbow, Jp);
    const double clearance = n.dot(iiwa.state.elbow - wall_point);
    worst_clearance = std::min(worst_clearance, clearance);
    pr.inequality_count = 1;
    pr.inequality_normals.row(0) = (Jp.topRows<3>().transpose() * n).transpose();
    pr.inequality_bounds[0] = -clearance;
    const auto result = resolver.solve(pr);
    ASSERT_NE(result.status, Status::kNonFinite);
    const double row = pr.inequality_normals.row(0).dot(result.q - q);
    ASSERT_GE(row, -clearance - kLimitTolerance)
        << "sample " << i << " " << to_string(result.status) << " p " << result.p;
    became_active = became_active || (result.inequalities_active & 1u) != 0;
    q_previous = q;
    q = result.q;
  }
  EXPECT_TRUE(became_active);
  // The linearisation error of a 1 cm/s elbow over 10 ms is far below a millimetre.
  EXPECT_GT(worst_clearance, -1e-4);
}

TEST(ConstrainedOptimisation, BetaPullsTowardReferenceInTheNullSpace) {
  Iiwa iiwa;
  Params params;
  params.alpha.setConstant(1.0);
  params.beta.setConstant(5.0);
  params.q_ref = iiwa_start();
  params.q_ref[2] += 0.5;  // a different elbow swivel: reachable by self-motion
  Resolver resolver(params);
  Problem pr;
  pr.dt = 0.01;
  JointVector q = iiwa_start();
  JointVector q_previous = q;
  iiwa.fill(q, q_previous, pr);
  const Frame tool0 = iiwa.state.tool;
  const double initial_distance = (q - params.q_ref).norm();
  for (int i = 0; i < 300; ++i) {
    iiwa.fill(q, q_previous, pr);
    const auto result = resolver.solve(pr);
    ASSERT_EQ(result.status, Status::kOk) << to_string(result.status);
    ASSERT_LT((pr.jacobian.topRows<6>() * (result.q - q)).norm(), 1e-9);
    q_previous = q;
    q = result.q;
  }
  iiwa.fill(q, q_previous, pr);
  EXPECT_LT((q - params.q_ref).norm(), 0.8 * initial_distance);
  // Only the linearisation drift moves the tool.
  EXPECT_LT((iiwa.state.tool.p - tool0.p).norm(), 2e-3);
}

TEST(ConstrainedOptimisation, GammaReducesTheJointAcceleration) {
  Iiwa iiwa;
  const JointVector q = iiwa_start();
  Problem pr = iiwa.at_rest(q);
  // The arm was swivelling its elbow (a self-motion) and is now asked to move the hand:
  // without γ the swivel stops dead, with γ it carries on.
  const Jacobian6 J = pr.jacobian.topRows<6>();
  const JointVector self_motion = Eigen::FullPivLU<Jacobian6>(J).kernel().col(0).normalized();
  const JointVector q_previous = q - 0.004 * self_motion;
  iiwa.fill(q, q_previous, pr);
  pr.acceleration_limit.setConstant(1e3);  // γ, not the hard limit, shapes the step here
  pr.commanded_shift << 0.0, 0.0, 0.0005, 0.0, 0.0, 0.0, 0.0;
  auto acceleration = [&](double gamma) {
    Params params;
    params.gamma.setConstant(gamma);
    Resolver resolver(params);
    const auto result = resolver.solve(pr);
    EXPECT_EQ(result.status, Status::kOk) << to_string(result.status);
    EXPECT_NEAR(result.p, 1.0, 1e-9);
    EXPECT_LT((J * (result.q - q) - result.desired_shift.head<6>()).norm(), 1e-9);
    return ((result.q - q) - (q - q_previous)).norm();
  };
  const double without = acceleration(0.0);
  const double with = acceleration(50.0);
  EXPECT_GT(without, 0.004);  // the hand's motion is orthogonal to the swivel
  EXPECT_LT(with, 0.5 * without);
}

TEST(ConstrainedOptimisation, WeightedModeAgreesWithLexicographicWhenTheShiftIsAttainable) {
  Iiwa iiwa;
  const JointVector q = iiwa_start();
  Problem pr = iiwa.at_rest(q);
  pr.acceleration_limit.setConstant(1e3);  // the arm is free to start at once
  pr.commanded_shift << 0.0002, -0.0001, 0.0003, 0.0, 0.001, 0.0, 0.0;
  Params params;
  params.beta.setConstant(0.5);
  params.q_ref = q + JointVector::Constant(0.1);
  const auto lexicographic = Resolver(params).solve(pr);
  params.mode = Params::Mode::kWeighted;
  params.weight_p = 1e3;
  const auto weighted = Resolver(params).solve(pr);
  ASSERT_EQ(lexicographic.status, Status::kOk);
  ASSERT_EQ(weighted.status, Status::kOk);
  EXPECT_NEAR(lexicographic.p, 1.0, 1e-12);
  EXPECT_NEAR(weighted.p, 1.0, 1e-12);
  EXPECT_LT((weighted.q - lexicographic.q).norm(), 1e-9);
}

TEST(ConstrainedOptimisation, NonFiniteInputKeepsThePosition) {
  std::mt19937 rng(11);
  Resolver resolver(Params{});
  Problem pr = wide_open_problem(rng);
  pr.q.setConstant(0.3);
  pr.q_previous = pr.q;
  pr.commanded_shift[0] = 0.001;
  pr.jacobian(2, 4) = std::numeric_limits<double>::quiet_NaN();
  auto result = resolver.solve(pr);
  EXPECT_EQ(result.status, Status::kNonFinite);
  EXPECT_EQ(result.q, pr.q);
  EXPECT_EQ(result.p, 0.0);
  pr.jacobian(2, 4) = 0.1;
  pr.commanded_shift[4] = std::numeric_limits<double>::infinity();
  result = resolver.solve(pr);
  EXPECT_EQ(result.status, Status::kNonFinite);
  EXPECT_EQ(result.q, pr.q);
}

// A smooth 1 kHz motion through the iiwa's free workspace: a 4 cm circle in 2 s with a
// slow wrist rotation, the hand ramped in over 0.2 s.
MotionVector circle_shift(int i, double dt) {
  const double t = i * dt;
  const double ramp = std::min(1.0, t / 0.2);
  const double w = 2.0 * 3.14159265358979323846 / 2.0;
  MotionVector v;
  v << -0.04 * w * std::sin(w * t), 0.04 * w * std::cos(w * t), 0.0, 0.0, 0.0, 0.2, 0.0;
  return ramp * v * dt;
}

TEST(ConstrainedOptimisation, RealTimePathAgreesWithTheIterativeActiveSetMethod) {
  Iiwa iiwa;
  Params params;
  params.gamma.setConstant(0.1);
  params.beta.setConstant(1e-3);
  params.q_ref = iiwa_start();
  Resolver fast(params);
  Resolver reference(params);
  std::mt19937 rng(15);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Problem pr;
  pr.dt = 0.001;
  JointVector q = iiwa_start();
  JointVector q_previous = q;
  int real_time = 0;
  int compared = 0;
  constexpr int kSamples = 2000;
  for (int i = 0; i < kSamples; ++i) {
    iiwa.fill(q, q_previous, pr);
    pr.task_rows = 6;
    pr.commanded_shift = circle_shift(i, pr.dt);
    // A random half-space on the joint step every 100 samples, met with its braking room.
    pr.inequality_count = (i / 100) % 2;
    for (int j = 0; j < kArmDof; ++j) pr.inequality_normals(0, j) = u(rng);
    pr.inequality_bounds[0] = -1e-2;
    const auto a = fast.solve(pr);
    const auto b = reference.solve_with_active_set(pr);
    SCOPED_TRACE("sample " + std::to_string(i));
    if (a.null_space_dimension == 0) {
      // A row switched on that no step within the acceleration window can meet: the
      // iterative method's phase 0 decides, and both report it.
      ASSERT_EQ(a.status, b.status);
      q_previous = q;
      q = a.q;
      continue;
    }
    ASSERT_EQ(a.status, Status::kOk);
    // The real-time path meets the rows, the box and the half-space exactly.
    ASSERT_LT(a.task_residual, 1e-15);
    const JointVector step = a.q - q;
    ASSERT_TRUE((step - fast.step_lower()).minCoeff() > -1e-15);
    ASSERT_TRUE((fast.step_upper() - step).minCoeff() > -1e-15);
    if (pr.inequality_count == 1) {
      ASSERT_GE(pr.inequality_normals.row(0).dot(step), -1e-2 - 1e-15);
    }
    // The iterative method is the reference where it meets the rows itself: at 1 kHz the
    // steps are ~1e-5 rad and its tangent-space tolerances sometimes leave a residual.
    if (b.task_residual < 1e-12) {
      ++compared;
      ASSERT_NEAR(a.p, b.p, 1e-9);
      ASSERT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-9);
    }
    if (a.null_space_dimension > 0) ++real_time;
    q_previous = q;
    q = a.q;
  }
  EXPECT_GT(real_time, kSamples * 95 / 100);
  std::printf("agreement: %d of %d samples on the real-time path, %d compared\n", real_time,
              kSamples, compared);
  EXPECT_GT(compared, kSamples / 2);
}

TEST(ConstrainedOptimisation, PIsOneInFreeMotionAwayFromTheLimits) {
  Iiwa iiwa;
  Params params;
  params.beta.setConstant(1e-3);
  params.q_ref = iiwa_start();
  Resolver resolver(params);
  Problem pr;
  pr.dt = 0.001;
  JointVector q = iiwa_start();
  JointVector q_previous = q;
  double least_p = 1.0;
  int most_iterations = 0;
  for (int i = 0; i < 2000; ++i) {
    iiwa.fill(q, q_previous, pr);
    pr.commanded_shift = circle_shift(i, pr.dt);
    const auto result = resolver.solve(pr);
    ASSERT_EQ(result.status, Status::kOk) << "sample " << i;
    ASSERT_GT(result.null_space_dimension, 0) << "sample " << i;
    least_p = std::min(least_p, result.p);
    if (i > 0) most_iterations = std::max(most_iterations, result.iterations);
    q_previous = q;
    q = result.q;
  }
  EXPECT_GE(least_p, 1.0 - 1e-12);
  std::printf("free motion: p >= %.15f, at most %d lines solved in a cycle\n", least_p,
              most_iterations);
}

// The iiwa at rest at its start, 1 ms samples, with a 7th (arm-angle) row that is simply the
// elbow swivel's joint 2, turned by 5 µrad while the hand holds (at rest the acceleration
// window allows 10 rad/s² · 1 ms² = 10 µrad).
Problem arm_angle_row_problem(const JointVector& q) {
  Iiwa iiwa;
  Problem pr;
  pr.dt = 0.001;
  iiwa.fill(q, q, pr);
  pr.task_rows = 7;
  pr.jacobian.row(6).setZero();
  pr.jacobian(6, 2) = 1.0;
  pr.commanded_shift.setZero();
  pr.commanded_shift[6] = 5e-6;
  return pr;
}

TEST(ConstrainedOptimisation, ArmAngleRowIsTrackedAfterThePoseAndGivesWayToAConstraint) {
  Params params;
  Resolver resolver(params);
  const JointVector q = iiwa_start();
  Problem pr = arm_angle_row_problem(q);
  auto free = resolver.solve(pr);
  ASSERT_EQ(free.status, Status::kOk);
  EXPECT_NEAR(free.p, 1.0, 1e-12);
  EXPECT_NEAR(free.q[2] - q[2], 5e-6, 1e-12);  // the arm angle, met exactly
  // A row that forbids the self-motion's positive direction on joint 2: the pose keeps p = 1,
  // the arm angle gives way.
  pr.inequality_count = 1;
  pr.inequality_normals.setZero();
  pr.inequality_normals(0, 2) = -1.0;
  pr.inequality_bounds[0] = -1e-6;
  const auto blocked = resolver.solve(pr);
  ASSERT_EQ(blocked.status, Status::kOk);
  EXPECT_NEAR(blocked.p, 1.0, 1e-12);
  EXPECT_NEAR(blocked.q[2] - q[2], 1e-6, 1e-12);
  EXPECT_LT((pr.jacobian.topRows<6>() * (blocked.q - q)).norm(), 1e-12);
}

TEST(ConstrainedOptimisation, PreferredRowSteersTheSelfMotionEarlyWithoutCostingP) {
  Params params;
  Resolver resolver(params);
  const JointVector q = iiwa_start();
  Problem pr = arm_angle_row_problem(q);
  // A row far from binding (its hard bound lets joint 2 step 1 rad), whose preferred bound
  // (a velocity damper) allows 2 µrad: the self-motion keeps to the preference, not to ψ,
  // and the pose still gets all of its shift.
  pr.inequality_count = 1;
  pr.inequality_normals.setZero();
  pr.inequality_normals(0, 2) = -1.0;
  pr.inequality_bounds[0] = -1.0;
  pr.inequality_preferred[0] = -2e-6;
  const auto steered = resolver.solve(pr);
  ASSERT_EQ(steered.status, Status::kOk);
  EXPECT_NEAR(steered.p, 1.0, 1e-12);
  EXPECT_NEAR(steered.q[2] - q[2], 2e-6, 1e-12);
  EXPECT_EQ(steered.inequalities_active, 0);  // the hard row is nowhere near

  // A preference no step in the acceleration window can meet (joint 2 turning the other way
  // by 1 mrad in 1 ms from rest): the segment's nearest end, p untouched, box respected.
  pr.inequality_normals(0, 2) = 1.0;
  pr.inequality_preferred[0] = 1e-3;
  const auto end = resolver.solve(pr);
  ASSERT_EQ(end.status, Status::kOk);
  EXPECT_NEAR(end.p, 1.0, 1e-12);
  EXPECT_GT(end.q[2] - q[2], 5e-6);  // further than ψ alone asked, toward the preference
  const JointVector step = end.q - q;
  for (int j = 0; j < kArmDof; ++j) {
    EXPECT_GE(step[j], resolver.step_lower()[j] - 1e-15) << "joint " << j;
    EXPECT_LE(step[j], resolver.step_upper()[j] + 1e-15) << "joint " << j;
  }
  EXPECT_LT((pr.jacobian.topRows<6>() * step - end.p * end.desired_shift.head<6>()).norm(), 1e-12);

  // A preference of +∞ or NaN is bad input: nothing moves.
  pr.inequality_preferred[0] = std::numeric_limits<double>::quiet_NaN();
  const auto bad = resolver.solve(pr);
  EXPECT_EQ(bad.status, Status::kNonFinite);
  EXPECT_EQ(bad.q, q);
}

TEST(ConstrainedOptimisation, RejectsNegativeWeightsNamingTheField) {
  Params params;
  params.beta[3] = -1.0;
  try {
    Resolver resolver(params);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beta[3] = -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tether::remote

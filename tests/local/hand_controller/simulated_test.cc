#include "tether/local/hand_controller/simulated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "tether/common/spatial.h"

namespace tether::local {
namespace {

HandControllerGeometry offset_geometry() {
  HandControllerGeometry geometry;
  geometry.hb_T_mechanism = Frame{so3_exp(Vector3(0, 0, 0.3)), Vector3(0.05, -0.1, 0.0)};
  geometry.wrist_T_handle = Frame{so3_exp(Vector3(0.2, -0.1, 0.4)), Vector3(0.04, 0.0, 0.01)};
  return geometry;
}

TEST(HandControllerKinematics, JacobianMatchesFiniteDifferencesOfForwardKinematics) {
  const HandControllerKinematics kinematics(offset_geometry());
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.2, 1.2);
  for (int trial = 0; trial < 20; ++trial) {
    HandJointVector theta;
    for (int i = 0; i < 6; ++i) theta[i] = u(rng);
    const Frame X = kinematics.forward(theta);
    const Matrix6 J_base = kinematics.jacobian(theta, HandFrame::kBase);
    const Matrix6 J_handle = kinematics.jacobian(theta, HandFrame::kHandle);
    const double h = 1e-6;
    for (int j = 0; j < 6; ++j) {
      HandJointVector plus = theta, minus = theta;
      plus[j] += h;
      minus[j] -= h;
      const Frame Xp = kinematics.forward(plus), Xm = kinematics.forward(minus);
      Vector6 numeric;
      numeric << (Xp.p - Xm.p) / (2 * h), so3_log(Xp.R * Xm.R.transpose()) / (2 * h);
      EXPECT_LT((J_base.col(j) - numeric).norm(), 1e-6) << "joint " << j;
      Vector6 numeric_handle;
      numeric_handle << X.R.transpose() * numeric.head<3>(), X.R.transpose() * numeric.tail<3>();
      EXPECT_LT((J_handle.col(j) - numeric_handle).norm(), 1e-6) << "joint " << j;
    }
  }
}

TEST(HandControllerKinematics, DefaultStartIsWellConditioned) {
  const SimulatedHandControllerConfig config;
  const HandControllerKinematics kinematics(config.geometry);
  const Eigen::JacobiSVD<Matrix6> svd(kinematics.jacobian(config.initial_joints, HandFrame::kBase));
  EXPECT_GT(svd.singularValues().minCoeff(), 0.05);
}

// Rendering τ = J_HBᵀ F (re-computed every cycle, as the teleop loop does) pushes the handle
// against the still hand until the hand's impedance balances F.
TEST(SimulatedHandController, RenderedWrenchDeflectsTheHandleByForceOverHandStiffness) {
  SimulatedHandControllerConfig config;
  config.geometry = offset_geometry();
  SimulatedHandController device(config);
  const Frame rest = device.handle_pose();
  Vector6 F;
  F << 1.5, -0.9, 2.0, 0.02, 0.03, -0.025;  // [N, N·m], HB axes, at the HH origin
  device.sample(0.0);
  for (int i = 1; i <= 4000; ++i) {
    device.render(device.jacobian(HandFrame::kBase).transpose() * F);
    device.sample(0.001 * i);
  }
  const Frame moved = device.handle_pose();
  const Vector3 deflection = moved.p - rest.p;
  const Vector3 turn = so3_log(moved.R * rest.R.transpose());
  EXPECT_LT((deflection - F.head<3>() / config.hand.translation_stiffness).norm(), 1e-5)
      << deflection.transpose();
  EXPECT_LT((turn - F.tail<3>() / config.hand.rotation_stiffness).norm(), 1e-4) << turn.transpose();
  EXPECT_GT(deflection.norm(), 5e-3);                  // measurable: millimetres
  EXPECT_LT((device.hand_wrench() + F).norm(), 1e-3);  // the hand holds against F
}

TEST(SimulatedHandController, IncrementsFromDifferencedJointsMatchTheHandleMotion) {
  std::istringstream in(
      "0 base 0.02 -0.01 0.015 0.3 -0.2 0.25 0 1 0\n"
      "0.5 handle -0.01 0.02 0 -0.1 0.4 0.2 0 1 0\n"
      "1.0 base 0 0 0 0 0 0 0 1 0\n");
  SimulatedHandController device({}, HandScript::parse(in, "moves"));
  const Frame start = device.handle_pose();
  Frame previous = start;
  Vector6 sum_base = Vector6::Zero();
  double worst_handle = 0.0, worst_base = 0.0;
  device.sample(0.0);
  for (int i = 1; i <= 1500; ++i) {
    const DeviceSample s = device.sample(0.001 * i);
    const Frame now = device.handle_pose();
    sum_base += s.increment_base;
    // eq. 33: HB displacement of the handle; eq. 32: the same in the handle's own axes.
    Vector6 base_motion, handle_motion;
    base_motion << now.p - previous.p, so3_log(now.R * previous.R.transpose());
    handle_motion << previous.R.transpose() * (now.p - previous.p),
        so3_log(previous.R.transpose() * now.R);
    worst_base = std::max(worst_base, (s.increment_base - base_motion).norm());
    worst_handle = std::max(worst_handle, (s.increment_handle - handle_motion).norm());
    previous = now;
  }
  EXPECT_LT(worst_base, 1e-7);
  EXPECT_LT(worst_handle, 1e-5);
  const Frame end = device.handle_pose();
  EXPECT_LT((sum_base.head<3>() - (end.p - start.p)).norm(), 1e-6);
  EXPECT_GT((end.p - start.p).norm(), 5e-3);  // the hand did drag the handle along
}

TEST(SimulatedHandController, ScriptSwitchesAndTriggerPassThrough) {
  std::istringstream in("0 base 0 0 0 0 0 0 0.5 1 0\n1 base 0 0 0 0 0 0 0 0 1\n2 end\n");
  SimulatedHandController device({}, HandScript::parse(in, "switches"));
  device.sample(0.0);
  DeviceSample s = device.sample(0.5);
  EXPECT_TRUE(s.deadman);
  EXPECT_FALSE(s.clutch);
  EXPECT_NEAR(s.arm_angle_increment, 0.25, 1e-12);
  s = device.sample(1.5);
  EXPECT_FALSE(s.deadman);
  EXPECT_TRUE(s.clutch);
  EXPECT_NEAR(s.arm_angle_increment, 0.25, 1e-12);
  EXPECT_FALSE(device.sample(2.5).valid);
}

TEST(SimulatedHandControllerConfig, ValidationNamesTheFieldTheValueAndTheRange) {
  SimulatedHandControllerConfig config;
  config.joint_inertia[3] = 0.0;
  try {
    SimulatedHandController device(config);
    FAIL() << "accepted a zero inertia";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "sim.joint_inertia[3] = 0: must be finite and in [1e-06, 10]");
  }
}

}  // namespace
}  // namespace tether::local

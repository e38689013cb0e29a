#include "tether/common/kinematics.h"

#include <gtest/gtest.h>

#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainjnttojacsolver.hpp>

#include "kdl_chain.h"
#include "test_arms.h"

namespace tether {
namespace {

using testing::kdl_chain_from_urdf;
using testing::random_configurations;
using testing::shipped_arms;

constexpr int kConfigurations = 1000;
constexpr double kTolerance = 1e-9;

KDL::JntArray to_kdl(const JointVector& q) {
  KDL::JntArray out(kArmDof);
  for (int i = 0; i < kArmDof; ++i) out(static_cast<unsigned>(i)) = q[i];
  return out;
}

TEST(Kinematics, ForwardKinematicsMatchesKdlForEveryJointFrameAndTool) {
  for (const auto& shipped : shipped_arms()) {
    SCOPED_TRACE(shipped.name);
    const KinematicModel model(testing::load(shipped));
    const KDL::Chain chain = kdl_chain_from_urdf(shipped.urdf, shipped.base, shipped.tool);
    KDL::ChainFkSolverPos_recursive kdl_fk(chain);
    KinematicState state;
    double worst = 0.0;
    for (const JointVector& q : random_configurations(model, kConfigurations, 20261121)) {
      forward_kinematics(model, q, state);
      const KDL::JntArray kq = to_kdl(q);
      KDL::Frame tool;
      ASSERT_GE(kdl_fk.JntToCart(kq, tool), 0);
      const Frame expected_tool = testing::to_frame(tool);
      worst = std::max(worst, (state.tool.p - expected_tool.p).cwiseAbs().maxCoeff());
      worst = std::max(worst, (state.tool.R - expected_tool.R).cwiseAbs().maxCoeff());

      // Joint i's frame is the frame of the segment that joint i moves: in the KDL chain
      // (fixed segments included) that is the segment whose joint is named like ours.
      int joint = 0;
      for (unsigned s = 0; s < chain.getNrOfSegments() && joint < kArmDof; ++s) {
        if (chain.getSegment(s).getJoint().getName() !=
            model.arm().joints[static_cast<std::size_t>(joint)].name)
          continue;
        KDL::Frame segment;
        ASSERT_GE(kdl_fk.JntToCart(kq, segment, static_cast<int>(s) + 1), 0);
        const Frame expected = testing::to_frame(segment);
        const Frame actual = state.joint_frame(model, joint);
        worst = std::max(worst, (actual.p - expected.p).cwiseAbs().maxCoeff());
        worst = std::max(worst, (actual.R - expected.R).cwiseAbs().maxCoeff());
        ++joint;
      }
      ASSERT_EQ(joint, kArmDof);
    }
    EXPECT_LE(worst, kTolerance);
  }
}

TEST(Kinematics, ToolJacobianMatchesKdl) {
  for (const auto& shipped : shipped_arms()) {
    SCOPED_TRACE(shipped.name);
    const KinematicModel model(testing::load(shipped));
    const KDL::Chain chain = kdl_chain_from_urdf(shipped.urdf, shipped.base, shipped.tool);
    KDL::ChainJntToJacSolver kdl_jac(chain);
    KinematicState state;
    Jacobian6 J;
    KDL::Jacobian expected(kArmDof);
    double worst = 0.0;
    for (const JointVector& q : random_configurations(model, kConfigurations, 7)) {
      forward_kinematics(model, q, state);
      tool_jacobian(state, J);
      ASSERT_GE(kdl_jac.JntToJac(to_kdl(q), expected), 0);
      // KDL's rows are (v, ω) at the tool origin in BASE coordinates, as ours.
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < kArmDof; ++c) {
          worst = std::max(worst, std::abs(J(r, c) - expected(static_cast<unsigned>(r),
                                                              static_cast<unsigned>(c))));
        }
      }
    }
    EXPECT_LE(worst, kTolerance);
  }
}

TEST(Kinematics, PointJacobianPredictsPointMotion) {
  const KinematicModel model(testing::load(shipped_arms()[1]));
  KinematicState state, moved;
  Jacobian6 J;
  const double h = 1e-6;
  for (const JointVector& q : random_configurations(model, 50, 3, 1e-3)) {
    forward_kinematics(model, q, state);
    const Vector3 local(0.05, -0.02, 0.1);  // a point on link 5 (joint index 4)
    const Vector3 point = state.R[4] * local + state.p[4];
    point_jacobian(state, 4, point, J);
    for (int i = 0; i < kArmDof; ++i) {
      JointVector dq = JointVector::Zero();
      dq[i] = h;
      forward_kinematics(model, q + dq, moved);
      const Vector3 plus = moved.R[4] * local + moved.p[4];
      forward_kinematics(model, q - dq, moved);
      const Vector3 minus = moved.R[4] * local + moved.p[4];
      EXPECT_LE(((plus - minus) / (2 * h) - J.col(i).head<3>()).norm(), 1e-8) << "joint " << i;
    }
    EXPECT_TRUE(J.rightCols<2>().isZero()) << "joints beyond the link must not move the point";
  }
}

TEST(Kinematics, ShoulderElbowWristComeFromTheMarkerLinks) {
  const KinematicModel model(testing::load(shipped_arms()[0]));
  KinematicState state;
  forward_kinematics(model, JointVector::Zero(), state);
  // iiwa 7 R800 at q = 0 stands straight up: S, E, W at d1, d1 + d3, d1 + d3 + d5.
  EXPECT_LE((state.shoulder - Vector3(0, 0, 0.34)).norm(), 1e-12);
  EXPECT_LE((state.elbow - Vector3(0, 0, 0.74)).norm(), 1e-12);
  EXPECT_LE((state.wrist - Vector3(0, 0, 1.14)).norm(), 1e-12);
  EXPECT_LE((state.tool.p - Vector3(0, 0, 1.266)).norm(), 1e-12);
}

TEST(Kinematics, RejectsArmsThatAreNotSevenDof) {
  ArmModel arm = testing::load(shipped_arms()[0]);
  arm.joints.pop_back();
  try {
    const KinematicModel model(arm);
    FAIL() << "a 6-joint arm was accepted";
  } catch (const ArmModelError& e) {
    EXPECT_NE(std::string(e.what()).find("has 6 revolute joints"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tether

// The kinematics and DLS step run inside the control cycle: after construction they
// must never touch the heap.

#include <gtest/gtest.h>

#include "allocation_counter.h"
#include "test_arms.h"
#include "tether/common/dls.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"

namespace tether {
namespace {

TEST(KinematicsAllocation, ForwardKinematicsJacobiansArmAngleAndDlsAllocateNothing) {
  for (const auto& shipped : testing::shipped_arms()) {
    SCOPED_TRACE(shipped.name);
    const KinematicModel model(testing::load(shipped));
    const ArmAngleModel arm_angle;
    const auto configurations = testing::random_configurations(model, 100, 41);
    KinematicState state;
    CompositeJacobian J;
    Jacobian6 J_tool;
    ArmAngle psi;
    JointVector qdot;
    const MotionVector weights = MotionVector::Ones();
    const JointVector damping = JointVector::Constant(1e-3);
    const MotionVector xdot = MotionVector::LinSpaced(-0.1, 0.1);
    Frame tool_T_motion{so3_exp(Vector3(0.1, 0.2, 0.3)), Vector3(0, 0, 0.1)};
    double sink = 0.0;

    testing::ScopedAllocationCounter counter;
    for (const JointVector& q : configurations) {
      forward_kinematics(model, q, state);
      tool_jacobian(state, J_tool);
      composite_jacobian(model, state, arm_angle, tool_T_motion, J, psi);
      const DlsStatus status = weighted_dls<7>(J, weights, damping, xdot, qdot);
      const Frame pose = motion_frame_pose(state, tool_T_motion);
      const Vector3 error = orientation_error(pose.R, state.tool.R);
      sink += qdot.sum() + error.sum() + static_cast<double>(status);
    }
    EXPECT_EQ(counter.count(), 0u);
    EXPECT_TRUE(std::isfinite(sink));
  }
}

TEST(KinematicsAllocation, CounterSeesHeapAllocations) {
  testing::ScopedAllocationCounter counter;
  Eigen::MatrixXd dynamic(20, 20);
  dynamic.setOnes();
  EXPECT_GE(counter.count(), 1u) << "the counter must be able to fail";
  EXPECT_EQ(dynamic.sum(), 400.0);
}

}  // namespace
}  // namespace tether

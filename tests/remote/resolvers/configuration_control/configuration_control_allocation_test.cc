// resolve() and reset() run on the control-loop thread: after construction they must never
// touch the heap, whatever the functions, with obstacle constraints or non-finite input.

#include <gtest/gtest.h>

#include <array>
#include <limits>

#include "allocation_counter.h"
#include "arm_fixture.h"
#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"

namespace tether::remote {
namespace {

TEST(ConfigurationControlAllocation, ResetAndResolveAllocateNothingAfterConstruction) {
  testing::ArmFixture f;
  ConfigurationControlResolver resolver(f.model);
  TaskParameters task;
  auto& functions = task.resolver.configuration_control.functions;
  for (const auto kind :
       {KinematicFunctionKind::kArmAngle, KinematicFunctionKind::kGravityTorque,
        KinematicFunctionKind::kArmPoint, KinematicFunctionKind::kJointVelocity,
        KinematicFunctionKind::kJointAngle, KinematicFunctionKind::kJointLock,
        KinematicFunctionKind::kJointLimitAvoidance, KinematicFunctionKind::kManipulability}) {
    KinematicFunctionParameters p;
    p.kind = kind;
    p.weight = 0.1;
    p.weights = {{.time = 0.0, .weights = JointVector::Ones()},
                 {.time = 1.0, .weights = JointVector::Constant(2.0)}};
    functions.push_back(p);
  }
  f.at(testing::iiwa_posture());
  f.input.xd << 0.01, 0.02, -0.01, 0.1, 0.0, 0.05, 0.2;
  f.input.joint_weights.setConstant(1e-4);
  f.input.time = 0.5;
  const std::array<SphereObstacle, 1> obstacles{SphereObstacle{
      .centre = f.state.elbow + Vector3(0.1, 0.0, 0.0), .radius = 0.02, .influence = 0.1}};
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  const std::size_t count = critical_points(f.state, LinkRadii::Constant(0.06), obstacles, points);
  ASSERT_GT(count, 0u);
  ResolverInput with_obstacle = f.input;
  with_obstacle.critical_points = std::span<const CriticalPoint>(points.data(), count);
  with_obstacle.obstacle_recovery = 2.0;
  ResolverInput non_finite = f.input;
  non_finite.xd[0] = std::numeric_limits<double>::quiet_NaN();

  ResolverResult out;
  ::tether::testing::ScopedAllocationCounter counter;
  double sink = 0.0;
  for (int n = 0; n < 100; ++n) {
    resolver.reset(task, f.input);
    resolver.resolve(task, f.input, out);
    sink += out.qd.sum();
    resolver.resolve(task, with_obstacle, out);
    sink += out.qd.sum();
    resolver.resolve(task, non_finite, out);
  }
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_TRUE(std::isfinite(sink));
}

}  // namespace
}  // namespace tether::remote

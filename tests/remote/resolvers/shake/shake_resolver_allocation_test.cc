// reset() and resolve() run on the control-loop thread: after construction they must never
// touch the heap, with obstacles, the periodic ring wrapping, an unreachable target and
// non-finite input included.

#include <gtest/gtest.h>

#include <limits>

#include "allocation_counter.h"
#include "tether/common/arm_angle.h"
#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/resolvers/shake/shake_resolver.h"

namespace tether::remote::shake {
namespace {

TEST(ShakeResolverAllocation, ResetAndResolveAllocateNothingAfterConstruction) {
  const KinematicModel model(load_arm_by_name("iiwa7", {}));
  TaskParameters task;
  task.period = 0.01;
  task.resolver.kind = ResolverKind::kShake;
  auto& p = task.resolver.shake;
  p.temperature = 1e-3;
  p.acceleration_weight = 1e-6;
  p.reference_weight = 1.0;
  p.period = 0.05;  // 5 cycles: the ring wraps many times below
  p.periodic_weight = 10.0;
  p.periodic_ramp = 0.02;
  ShakeResolver resolver(model, 64);

  JointVector q = (JointVector() << 0.0, 0.5, 0.0, -1.5, 0.0, 0.8, 0.0).finished();
  KinematicState state;
  CompositeJacobian jacobian;
  ArmAngle psi;
  const SphereObstacle obstacles[2] = {{.centre = Vector3(0.3, 0.2, 0.7), .radius = 0.05},
                                       {.centre = Vector3(0.5, -0.2, 0.3), .radius = 0.05}};
  ResolverInput in;
  in.model = &model;
  in.state = &state;
  in.jacobian = &jacobian;
  in.dt = task.period;
  in.obstacles = obstacles;
  in.link_radius.setConstant(0.04);
  ResolverResult out;
  const auto cycle = [&](int n) {
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, ArmAngleModel(), task.tool_T_motion, jacobian, psi);
    in.motion_pose = motion_frame_pose(state, task.tool_T_motion);
    in.arm_angle = psi.psi;
    in.q = q;
    in.xd.setZero();
    in.xd[1] = 0.05 * std::sin(0.1 * n);
    in.xd[3] = 0.1;
    if (n % 50 == 7) in.xd[0] = 50.0;  // out of reach: the bisection path
    if (n % 50 == 9) in.xd[2] = std::numeric_limits<double>::quiet_NaN();
    if (n % 100 == 0) resolver.reset(task, in);
    resolver.resolve(task, in, out);
    if (out.qd.allFinite()) q += out.qd * in.dt;
  };
  for (int n = 0; n < 60; ++n) cycle(n);

  ::tether::testing::ScopedAllocationCounter counter;
  for (int n = 60; n < 460; ++n) cycle(n);
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_TRUE(q.allFinite());
}

}  // namespace
}  // namespace tether::remote::shake

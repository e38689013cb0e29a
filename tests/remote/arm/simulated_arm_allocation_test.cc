// read → write → advance_to run every control cycle: after construction the simulated arm
// must never touch the heap (MuJoCo's physics, the servos and the proximity rays included).

#include <gtest/gtest.h>

#include "allocation_counter.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote {
namespace {

TEST(SimulatedArmAllocation, ReadWriteAdvanceAllocateNothingInAnyScene) {
  const ArmModel arm = load_default_arm();
  for (const SceneKind kind :
       {SceneKind::kDoor, SceneKind::kWall, SceneKind::kObstacles, SceneKind::kProximityTarget}) {
    SCOPED_TRACE(to_string(kind));
    SimulationOptions options;
    options.scene = kind;
    SimulatedArm sim(arm, options);
    ArmState state;
    JointCommand command;
    command.position = sim.initial_position();
    double sink = 0.0;
    testing::ScopedAllocationCounter counter;
    for (int n = 1; n <= 200; ++n) {
      sim.read(state);
      command.position[0] = sim.initial_position()[0] + 1e-4 * n;
      sim.write(command);
      sim.advance_to(n * 0.001);
      sink += state.wrench.sum() + state.proximity.distance + sim.physics_step_time();
    }
    EXPECT_EQ(counter.count(), 0u);
    EXPECT_TRUE(std::isfinite(sink));
  }
}

}  // namespace
}  // namespace tether::remote

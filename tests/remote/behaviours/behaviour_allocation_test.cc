// Every behaviour's update runs inside the control cycle: it must never touch the heap,
// in either input mode, whether it produces output or not.

#include <gtest/gtest.h>

#include <cmath>

#include "allocation_counter.h"
#include "context_fixture.h"
#include "tether/common/spatial.h"
#include "tether/remote/behaviours/dither/dither.h"
#include "tether/remote/behaviours/joint_limit_avoidance/joint_limit_avoidance.h"
#include "tether/remote/behaviours/manipulability/manipulability.h"
#include "tether/remote/behaviours/proximity/proximity.h"
#include "tether/remote/behaviours/singularity_avoidance/singularity_avoidance.h"
#include "tether/remote/behaviours/singularity_robustness/singularity_robustness.h"
#include "tether/remote/behaviours/visual_tracking/visual_tracking.h"

namespace tether::remote {
namespace {

TEST(BehaviourAllocation, EveryBehaviourUpdateAllocatesNothing) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    testing::BehaviourContextFixture fixture(
        arm, Frame{so3_exp(Vector3(0.1, -0.2, 0.3)), Vector3(0.0, 0.01, 0.1)});
    // Configurations near the limits (so joint-limit avoidance acts), random ones and the
    // zero pose (stretched iiwa: the manipulability and singularity branches that bail out).
    auto configurations = fixture.random_configurations(60, 43);
    for (JointVector& q : fixture.random_configurations(20, 47)) {
      q[3] = fixture.model().lower_limits()[3] + 0.05;
      configurations.push_back(q);
    }
    configurations.push_back(JointVector::Zero());

    JointLimitAvoidanceParameters joint_limits;
    joint_limits.enabled = true;
    SingularityAvoidanceParameters singularity;
    singularity.enabled = true;
    singularity.r_min = 0.45;
    singularity.r_max = 0.8;
    SingularityRobustnessParameters robustness;
    robustness.enabled = true;
    robustness.r_min = 0.45;
    robustness.r_max = 0.8;
    DitherParameters dither;
    dither.enabled = true;
    dither.amplitude << 0.01, 0.0, 0.0, 0.0, 0.0, 0.1;
    dither.motion_T_dither.p = Vector3(0.0, 0.0, 0.05);
    ProximityParameters proximity;
    proximity.enabled = true;
    proximity.tool_T_sensor.p = Vector3(0.05, 0.0, 0.02);
    ManipulabilityParameters manipulability;
    manipulability.enabled = true;
    VisualTrackingParameters visual;
    visual.enabled = true;
    fixture.arm_state().visual.valid = true;
    fixture.arm_state().visual.target_in_camera = Vector3(0.02, 0.01, 0.28);
    fixture.arm_state().proximity.valid = true;
    fixture.arm_state().proximity.distance = 0.07;
    fixture.arm_state().proximity.surface_normal = Vector3(0.1, -0.2, 1.0).normalized();

    JointLimitAvoidance joint_limit_behaviour;
    SingularityAvoidance singularity_behaviour;
    SingularityRobustness robustness_behaviour;
    Dither dither_behaviour;
    Proximity proximity_behaviour;
    Manipulability manipulability_behaviour;
    VisualTracking visual_behaviour;
    BehaviourOutput out;
    double produced = 0.0;

    ::tether::testing::ScopedAllocationCounter counter;
    joint_limit_behaviour.reset(joint_limits, fixture.context());
    singularity_behaviour.reset(singularity, fixture.context());
    robustness_behaviour.reset(robustness, fixture.context());
    dither_behaviour.reset(dither, fixture.context());
    proximity_behaviour.reset(proximity, fixture.context());
    manipulability_behaviour.reset(manipulability, fixture.context());
    visual_behaviour.reset(visual, fixture.context());
    for (const InputKind input : {InputKind::kVelocity, InputKind::kForce}) {
      joint_limits.input = dither.input = proximity.input = manipulability.input = visual.input =
          input;
      for (std::size_t n = 0; n < configurations.size(); ++n) {
        fixture.set(configurations[n]);
        fixture.context().time = 0.001 * static_cast<double>(n);
        out.clear();
        joint_limit_behaviour.update(joint_limits, fixture.context(), out);
        singularity_behaviour.update(singularity, fixture.context(), out);
        robustness_behaviour.update(robustness, fixture.context(), out);
        dither_behaviour.update(dither, fixture.context(), out);
        proximity_behaviour.update(proximity, fixture.context(), out);
        manipulability_behaviour.update(manipulability, fixture.context(), out);
        // A new image every 30 cycles, each placed with the pose of its capture time.
        if (n % 30 == 0) {
          ++fixture.arm_state().visual.frame;
          fixture.arm_state().visual.capture_time = fixture.arm_state().time - 0.05;
        }
        fixture.arm_state().time = fixture.context().time;
        visual_behaviour.update(visual, fixture.context(), out);
        produced += out.force.norm() + out.velocity.norm() + out.joint_weight;
      }
    }
    EXPECT_EQ(counter.count(), 0u);
    EXPECT_TRUE(std::isfinite(produced));
    EXPECT_GT(produced, 0.0);
  }
}

TEST(BehaviourAllocation, CounterSeesHeapAllocations) {
  ::tether::testing::ScopedAllocationCounter counter;
  const std::vector<double> heap(64, 1.0);
  EXPECT_GE(counter.count(), 1u) << "the counter must be able to fail";
  EXPECT_EQ(heap.size(), 64u);
}

}  // namespace
}  // namespace tether::remote

#include "tether/remote/behaviours/teleoperation/teleoperation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

struct TeleopFixture : ::testing::Test {
  HandControllerQueue queue;
  Teleoperation teleop{queue};
  TeleoperationParameters params;
  BehaviourContext context;
  BehaviourOutput out;

  void SetUp() override {
    params.enabled = true;
    params.gain << 100, 100, 100, 5, 5, 5, 2;
    context.dt = 0.001;
    teleop.reset(params, context);
  }
  void send(std::uint64_t seq, const Vector6& increment, double psi = 0.0) {
    HandControllerSample s;
    s.sequence = seq;
    s.increment = increment;
    s.arm_angle_increment = psi;
    ASSERT_TRUE(queue.push(s));
  }
};

TEST_F(TeleopFixture, ForceIsGainTimesTheSummedIncrementsPerPeriodInToolMode) {
  Vector6 inc;
  inc << 1e-4, 0, -2e-4, 0, 1e-3, 0;
  send(1, inc, 1e-3);
  send(2, inc);  // two samples in one control period: both count
  teleop.update(params, context, out);
  EXPECT_NEAR(out.force[0], 100 * 2e-4 / 0.001, 1e-9);
  EXPECT_NEAR(out.force[2], 100 * -4e-4 / 0.001, 1e-9);
  EXPECT_NEAR(out.force[4], 5 * 2e-3 / 0.001, 1e-9);
  EXPECT_NEAR(out.force[6], 2 * 1e-3 / 0.001, 1e-9);
  EXPECT_EQ(teleop.counters().applied, 2u);
}

TEST_F(TeleopFixture, NoIncrementIsLostOrAppliedTwice) {
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  double total = 0.0;
  std::uint64_t seq = 0;
  for (int cycle = 0; cycle < 100; ++cycle) {
    for (int k = 0; k < cycle % 3; ++k) send(++seq, inc);  // bursts of 0, 1, 2 samples
    out.clear();
    teleop.update(params, context, out);
    total += out.force[0] / params.gain[0] * context.dt;
  }
  EXPECT_NEAR(total, 1e-5 * static_cast<double>(seq), 1e-15);
  send(seq, inc);      // repeated number: dropped
  send(seq + 3, inc);  // two lost
  out.clear();
  teleop.update(params, context, out);
  EXPECT_EQ(teleop.counters().duplicates, 1u);
  EXPECT_EQ(teleop.counters().lost, 2u);
  EXPECT_NEAR(out.force[0], 100 * 1e-5 / 0.001, 1e-9);
}

TEST_F(TeleopFixture, OnlyTheGainedDirectionsAreDriven) {
  params.gain.setZero();
  params.gain[3] = 5.0;  // rotation about TELEOP x only: the seed's door shared control
  Vector6 inc;
  inc << 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3;
  send(1, inc);
  teleop.update(params, context, out);
  for (int i = 0; i < 7; ++i) {
    if (i == 3) {
      EXPECT_NEAR(out.force[i], 5.0, 1e-12);
    } else {
      EXPECT_EQ(out.force[i], 0.0) << i;
    }
  }
}

TEST_F(TeleopFixture, WorldModeMovesTheToolTheSameWayInTheWorldWhateverItsOrientation) {
  params.mode = TeleopMode::kWorld;
  params.gain.setConstant(1.0);
  // Hand-controller base rotated 90° about z in the world: its x is world y.
  params.world_R_hc_base = so3_exp(Vector3(0, 0, M_PI / 2));
  context.motion_pose.R = so3_exp(Vector3(0.4, -0.3, 1.0));  // arbitrary tool orientation
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-3;  // along HB x
  send(1, inc);
  teleop.update(params, context, out);
  const Vector3 world_force = context.motion_pose.R * out.force.head<3>();
  EXPECT_TRUE(world_force.isApprox(Vector3(0, 1, 0), 1e-12)) << world_force.transpose();
}

TEST_F(TeleopFixture, CameraModeGoesThroughTheScreenAndTheEyeFrame) {
  params.mode = TeleopMode::kCamera;
  params.gain.setConstant(1.0);
  params.screen_R_hc_base = so3_exp(Vector3(0, 0, M_PI / 2));  // HB x = screen y
  params.world_R_eye = so3_exp(Vector3(M_PI / 2, 0, 0));       // eye y = world z
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-3;
  send(1, inc);
  teleop.update(params, context, out);
  EXPECT_TRUE(out.force.head<3>().isApprox(Vector3(0, 0, 1), 1e-12));
}

TEST_F(TeleopFixture, TeleopWrenchMovesToTheMotionOrigin) {
  params.gain.setConstant(1.0);
  params.tool_T_teleop.p = Vector3(0, 0.5, 0);  // TELEOP 0.5 m along tool y
  Vector6 inc = Vector6::Zero();
  inc[2] = 1e-3;  // 1 N along z at the TELEOP origin
  send(1, inc);
  teleop.update(params, context, out);
  EXPECT_NEAR(out.force[2], 1.0, 1e-12);
  EXPECT_NEAR(out.force[3], 0.5, 1e-12);  // τ = r × f = (0, .5, 0) × (0, 0, 1)
}

TEST_F(TeleopFixture, StallsWhenNoSampleArrivesWithinTheTimeout) {
  params.stall_timeout = 0.05;
  send(1, Vector6::Zero());
  context.time = 0.01;
  teleop.update(params, context, out);
  EXPECT_FALSE(teleop.stalled(params, 0.06));
  EXPECT_TRUE(teleop.stalled(params, 0.0601));
}

}  // namespace
}  // namespace tether::remote

#include "tether/local/teleop/teleop_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tether/common/teleop_channel.h"

namespace tether::local {
namespace {

OperatorIncrement moving(double translation_m, double rotation_rad, double arm_angle_rad) {
  OperatorIncrement increment;
  increment.valid = true;
  increment.deadman = true;
  increment.increment << translation_m, 0, 0, 0, 0, rotation_rad;
  increment.arm_angle_increment = arm_angle_rad;
  return increment;
}

TEST(IncrementPieces, OnePeriodsMotionGoesAsOneIncrement) {
  EXPECT_EQ(increment_pieces(moving(1e-4, 1e-3, 0.0)), 1);
  EXPECT_EQ(increment_pieces(moving(0.0, 0.0, 0.0)), 1);
  EXPECT_EQ(increment_pieces(moving(kMaxIncrementTranslation, 0.0, 0.0)), 1);
}

// The host paused the sampling thread for 70 ms while the hand moved at 0.15 m/s: the
// sample's 10.5 mm go as two increments the remote accepts, and nothing is lost.
TEST(IncrementPieces, ALateSamplesMotionGoesAsSeveralIncrementsTheRemoteAccepts) {
  for (const OperatorIncrement& late :
       {moving(0.0105, 0.0, 0.0), moving(0.0, 0.35, 0.0), moving(0.001, 0.01, -0.25)}) {
    const int pieces = increment_pieces(late);
    EXPECT_GT(pieces, 1);
    const Vector6 piece = late.increment / pieces;
    EXPECT_LE(piece.head<3>().norm(), kMaxIncrementTranslation);
    EXPECT_LE(piece.tail<3>().norm(), kMaxIncrementRotation);
    EXPECT_LE(std::abs(late.arm_angle_increment / pieces), kMaxIncrementRotation);
    // The fewest that do.
    const Vector6 fewer = late.increment / (pieces - 1);
    EXPECT_TRUE(fewer.head<3>().norm() > kMaxIncrementTranslation ||
                fewer.tail<3>().norm() > kMaxIncrementRotation ||
                std::abs(late.arm_angle_increment / (pieces - 1)) > kMaxIncrementRotation);
  }
  EXPECT_EQ(increment_pieces(moving(0.0105, 0.0, 0.0)), 2);
}

TEST(IncrementPieces, ABrokenDevicesSampleGoesAsOneForTheRemoteToRefuse) {
  EXPECT_EQ(increment_pieces(moving(5.0, 0.0, 0.0)), 1);  // 5 m in one sample
  EXPECT_EQ(increment_pieces(moving(std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0)), 1);
  EXPECT_EQ(increment_pieces(moving(0.0, std::numeric_limits<double>::infinity(), 0.0)), 1);
  EXPECT_EQ(increment_pieces(moving(kMaxIncrementPieces * kMaxIncrementTranslation, 0.0, 0.0)),
            kMaxIncrementPieces);
}

ForceReflectionConfig reflection() {
  ForceReflectionConfig r;
  r.source = ForceReflectionConfig::Source::kMeasured;
  r.force_scale = 0.01;
  r.torque_scale = 0.01;
  r.max_force = 1.0;
  r.max_torque = 0.5;
  return r;
}

TEST(FeltShares, UnclampedTheHandFeltTheChannelWholeAndWorkedOnTheCouplingDamping) {
  Vector6 F_m, F_c, v_m;
  F_m << 0, 0, -30, 0, 0, 0;  // the wall pushes back along z
  v_m << 0, 0, 0.005, 0.1, 0, 0;
  F_c = 300.0 * v_m;  // a damping against the hand's motion
  const Vector6 rendered = -0.01 * (F_m + F_c);
  const FeltShares felt = felt_shares(rendered, reflection(), F_m, F_c, v_m);
  EXPECT_LT((felt.channel - F_m).norm(), 1e-12);
  EXPECT_NEAR(felt.coupling_power, 300.0 * v_m.squaredNorm(), 1e-12);
}

TEST(FeltShares, AClampedGroupCountsEachShareScaledByTheClamp) {
  Vector6 F_m, F_c, v_m;
  F_m << 0, 0, -150, 0, 0, 0;
  v_m << 0, 0, 0.01, 0, 0, 0;
  F_c = 50.0 * v_m;  // 0.5 N along z: asked for 0.01·|−150 + 0.5| = 1.495 N, clamped to 1 N
  Vector6 rendered = Vector6::Zero();
  rendered[2] = 1.0;
  const FeltShares felt = felt_shares(rendered, reflection(), F_m, F_c, v_m);
  const double factor = 1.0 / 1.495;
  EXPECT_NEAR(felt.channel[2], factor * -150.0, 1e-9);
  EXPECT_NEAR(felt.coupling_power, factor * 50.0 * 1e-4, 1e-12);
  // A group the hand cannot render (scale 0) contributes nothing.
  ForceReflectionConfig off = reflection();
  off.force_scale = 0.0;
  EXPECT_EQ(felt_shares(Vector6::Zero(), off, F_m, F_c, v_m).channel.norm(), 0.0);
}

}  // namespace
}  // namespace tether::local

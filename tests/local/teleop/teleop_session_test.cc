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

}  // namespace
}  // namespace tether::local

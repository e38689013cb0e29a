#include "tether/local/hand_controller/rate_device.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tether/common/spatial.h"

namespace tether::local {
namespace {

TEST(VirtualHandle, BaseIncrementsSumToThePoseChangeAndHandleIncrementsFollowTheTurnedAxes) {
  VirtualHandle handle;
  RateCommand turn;  // turn about HB z at 1 rad/s while moving along HB x
  turn.twist << 0.1, 0, 0, 0, 0, 1.0;
  Vector6 sum_base = Vector6::Zero();
  Vector6 last_handle = Vector6::Zero();
  const double dt = 0.001;
  for (int i = 0; i < 1571; ++i) {  // ≈ π/2
    Vector6 inc_handle = Vector6::Zero();
    Vector6 inc_base = Vector6::Zero();
    handle.advance(turn, dt, inc_handle, inc_base);
    sum_base += inc_base;
    last_handle = inc_handle;
  }
  EXPECT_NEAR((handle.pose().p - sum_base.head<3>()).norm(), 0.0, 1e-12);
  EXPECT_NEAR(sum_base[5], 1.571, 1e-9);
  // After a quarter turn HB x lies along HH −y.
  EXPECT_NEAR(last_handle[1] / dt, -0.1, 1e-3);
  EXPECT_NEAR(std::abs(last_handle[0] / dt), 0.0, 1e-3);
  EXPECT_NEAR(last_handle[5] / dt, 1.0, 1e-12);
}

TEST(VirtualHandle, HandleAxisRatesRotateTheHandleAboutItsOwnAxes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Frame start{so3_exp(Vector3(u(rng), u(rng), u(rng))), Vector3::Zero()};
  VirtualHandle handle(start);
  RateCommand roll;
  roll.handle_axes = true;
  roll.twist << 0, 0, 0, 0.5, 0, 0;
  Vector6 inc_handle = Vector6::Zero();
  Vector6 inc_base = Vector6::Zero();
  for (int i = 0; i < 1000; ++i) handle.advance(roll, 0.001, inc_handle, inc_base);
  const Matrix3 expected = start.R * so3_exp(Vector3(0.5, 0, 0));
  EXPECT_LT((handle.pose().R - expected).norm(), 1e-12);
  EXPECT_NEAR(inc_handle[3], 0.5, 1e-12);
  // About a fixed axis the HB rotation vector is the same axis seen from HB.
  EXPECT_LT((inc_base.tail<3>() - start.R * Vector3(0.5, 0, 0)).norm(), 1e-12);
}

}  // namespace
}  // namespace tether::local

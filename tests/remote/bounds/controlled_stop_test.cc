#include "tether/remote/bounds/controlled_stop.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tether::remote {
namespace {

TEST(ControlledStop, RampsTheVelocityToZeroWithinTheStopTimeAndHolds) {
  ControlledStop stop;
  JointVector q0 = JointVector::LinSpaced(-0.3, 0.3);
  JointVector v0;
  v0 << 1.0, -0.5, 0.2, 0.0, 0.8, -1.2, 0.3;
  const double T = 0.2, dt = 0.001;
  stop.start(q0, v0, T);
  JointVector q, v, previous_v = v0;
  int steps = 0;
  while (!stop.at_rest()) {
    stop.step(dt, q, v);
    ++steps;
    // Deceleration never exceeds |v0|/T.
    EXPECT_LE(((v - previous_v).cwiseAbs() - v0.cwiseAbs() * dt / T).maxCoeff(), 1e-12);
    previous_v = v;
  }
  EXPECT_EQ(steps, 200);
  EXPECT_EQ(v.norm(), 0.0);
  // Distance of a linear ramp: v0·T/2.
  EXPECT_TRUE((q - q0).isApprox(v0 * T / 2, 1e-12));
  const JointVector hold = q;
  for (int i = 0; i < 10; ++i) stop.step(dt, q, v);
  EXPECT_EQ(q, hold);
  EXPECT_EQ(v.norm(), 0.0);
}

TEST(ControlledStop, NonFiniteVelocityStopsOnTheSpot) {
  ControlledStop stop;
  JointVector v = JointVector::Zero();
  v[2] = std::nan("");
  const JointVector q0 = JointVector::Constant(0.5);
  stop.start(q0, v, 0.1);
  JointVector q, out;
  stop.step(0.001, q, out);
  EXPECT_EQ(q, q0);
  EXPECT_EQ(out.norm(), 0.0);
}

}  // namespace
}  // namespace tether::remote

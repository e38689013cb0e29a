#include "tether/remote/behaviours/dither/dither.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "context_fixture.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

DitherParameters translation_dither() {
  DitherParameters params;
  params.enabled = true;
  params.amplitude << 0.004, -0.002, 0.001, 0.0, 0.0, 0.0;
  params.period = 0.2;
  return params;
}

MotionVector dither_at(const DitherParameters& params, BehaviourContextFixture& fixture,
                       double time) {
  fixture.context().time = time;
  Dither behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  return out.velocity;
}

TEST(Dither, VelocityIsTriangularWithThePeakAmplitude) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = translation_dither();
  MotionVector expected = MotionVector::Zero();
  expected.head<6>() = params.amplitude;
  const double T = params.period;
  // Starts at zero and rises: peak +A at T/4, −A at 3T/4, zero at T/2, straight in between.
  EXPECT_LE(dither_at(params, fixture, 0.0).norm(), 1e-15);
  EXPECT_LE((dither_at(params, fixture, T / 4) - expected).norm(), 1e-15);
  EXPECT_LE((dither_at(params, fixture, T / 8) - 0.5 * expected).norm(), 1e-15);
  EXPECT_LE(dither_at(params, fixture, T / 2).norm(), 1e-15);
  EXPECT_LE((dither_at(params, fixture, 5 * T / 8) + 0.5 * expected).norm(), 1e-15);
  EXPECT_LE((dither_at(params, fixture, 3 * T / 4) + expected).norm(), 1e-15);
  // Never beyond the peak, and every row follows the same wave.
  double peak = 0.0;
  for (int n = 0; n < 1000; ++n) {
    const MotionVector v = dither_at(params, fixture, n * 1.37e-3);
    const double wave = v[0] / params.amplitude[0];
    peak = std::max(peak, std::abs(wave));
    EXPECT_LE((v.head<6>() - wave * params.amplitude).norm(), 1e-15);
    EXPECT_EQ(v[6], 0.0);
  }
  EXPECT_LE(peak, 1.0 + 1e-15);
  EXPECT_GE(peak, 0.98);  // the samples come within 1.37 ms of a peak
}

TEST(Dither, VelocityHasZeroMeanOverEachPeriod) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = translation_dither();
  const int samples = 40;  // dt = 5 ms
  for (const double start : {0.0, 0.013, 0.47, 3.3}) {
    MotionVector sum = MotionVector::Zero();
    double absolute = 0.0;
    for (int n = 0; n < samples; ++n) {
      const MotionVector v = dither_at(params, fixture, start + n * params.period / samples);
      sum += v;
      absolute += std::abs(v[0]);
    }
    EXPECT_LE(sum.norm(), 1e-15) << start;
    EXPECT_NEAR(absolute / samples, 0.5 * 0.004, 2e-4) << start;  // mean |tri| = 1/2
  }
}

TEST(Dither, RepeatsWithThePeriodAndReversesEveryHalfPeriod) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = translation_dither();
  params.period = 0.37;
  for (const double t : {0.01, 0.05, 0.12, 0.3, 1.7}) {
    const MotionVector v = dither_at(params, fixture, t);
    EXPECT_GT(v.norm(), 1e-5) << t;
    EXPECT_LE((dither_at(params, fixture, t + params.period) - v).norm(), 1e-15) << t;
    EXPECT_LE((dither_at(params, fixture, t + 5 * params.period) - v).norm(), 1e-14) << t;
    EXPECT_LE((dither_at(params, fixture, t + params.period / 2) + v).norm(), 1e-15) << t;
  }
}

// An angular dither about a DITHER frame offset from the MOTION origin rotates the rigid
// tool about the DITHER origin, so the MOTION origin also translates by ω × lever arm.
TEST(Dither, AngularDitherAboutAnOffsetFrameMovesTheMotionOriginByTheLeverArm) {
  BehaviourContextFixture fixture(load_panda_arm());
  DitherParameters params;
  params.enabled = true;
  params.amplitude << 0.001, 0.0, 0.0, 0.05, 0.0, 0.0;  // along and about DITHER x
  params.period = 0.1;
  params.motion_T_dither =
      Frame{so3_exp(Vector3(0.0, 0.0, std::numbers::pi / 2)), Vector3(0.0, 0.0, 0.2)};
  const MotionVector v = dither_at(params, fixture, params.period / 4);
  // DITHER x is MOTION y. The MOTION origin sits at −0.2 m along z from the DITHER origin:
  // its velocity is v_D + ω × (−0.2 z) = 0.001 y + 0.05 y × (−0.2 z) = 0.001 y − 0.01 x.
  MotionVector expected = MotionVector::Zero();
  expected << -0.01, 0.001, 0.0, 0.0, 0.05, 0.0, 0.0;
  EXPECT_LE((v - expected).norm(), 1e-15);

  // The same from the definition: velocity of a body point moving with the DITHER frame.
  const double h = 1e-6;
  const Frame& m_T_d = params.motion_T_dither;
  const Vector6 twist_d = params.amplitude;
  // Move the DITHER frame by its body twist for h seconds; the MOTION origin rides along.
  const Frame d_T_d_moved{so3_exp(twist_d.tail<3>() * h), twist_d.head<3>() * h};
  const Frame moved = m_T_d * d_T_d_moved * m_T_d.inverse();  // MOTION→moved MOTION
  EXPECT_LE((moved.p / h - v.head<3>()).norm(), 1e-8);
}

TEST(Dither, ForceInputIsTheDampingTimesTheDitherVelocity) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = translation_dither();
  params.input = InputKind::kForce;
  params.damping = MotionVector::LinSpaced(100.0, 400.0);
  fixture.context().time = params.period / 4;
  Dither behaviour;
  BehaviourOutput out;
  out.force = MotionVector::Constant(-1.0);
  behaviour.update(params, fixture.context(), out);
  MotionVector expected = MotionVector::Constant(-1.0);
  expected.head<6>() += params.damping.head<6>().cwiseProduct(params.amplitude);
  EXPECT_LE((out.force - expected).norm(), 1e-12);
  EXPECT_EQ(out.velocity, MotionVector::Zero());
}

TEST(Dither, AddsNothingWhenDisabledOrWithoutAPeriod) {
  BehaviourContextFixture fixture(load_default_arm());
  fixture.context().time = 0.05;
  for (const double period : {0.0, -1.0, std::nan("")}) {
    auto params = translation_dither();
    params.period = period;
    EXPECT_EQ(dither_at(params, fixture, 0.05), MotionVector::Zero()) << period;
  }
  auto params = translation_dither();
  params.enabled = false;
  EXPECT_EQ(dither_at(params, fixture, 0.05), MotionVector::Zero());
}

}  // namespace
}  // namespace tether::remote

#include "tether/remote/impedance/impedance_law.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tether::remote {
namespace {

ImpedanceParameters seed_door(Formulation formulation) {
  ImpedanceParameters p;
  p.formulation = formulation;
  p.mass << 10, 10, 10, 2, 2, 2, 2;
  p.damping << 350, 350, 350, 80, 80, 80, 80;
  p.stiffness << 100, 100, 100, 10, 10, 10, 10;
  return p;
}

// A 1-D environment spring on every axis: the arm's position x (integrated from ẋ_c)
// compresses it and it pushes back, so the measured wrench is F_a = k_env·x.
struct SpringEnvironment {
  double k_env;
  MotionVector x = MotionVector::Zero();
};

MotionVector run_against_spring(const ImpedanceParameters& p, double dt, double seconds,
                                const MotionVector& reference_force, SpringEnvironment& env) {
  ImpedanceState state;
  for (int n = 0; n < static_cast<int>(seconds / dt); ++n) {
    ImpedanceInput in;
    in.error = env.x;  // x_r = 0
    in.force = reference_force - env.k_env * env.x;
    env.x += impedance_update(p, dt, in, state) * dt;
  }
  return env.x;
}

TEST(ImpedanceLaw, TracksReferenceForceWithZeroStiffness) {
  for (Formulation f : {Formulation::kAcceleration, Formulation::kVelocity}) {
    ImpedanceParameters p = seed_door(f);
    p.stiffness.setZero();
    SpringEnvironment env{2000.0};
    MotionVector reference = MotionVector::Zero();
    reference << 20, -10, 5, 1.5, 0, -2, 0;
    run_against_spring(p, 0.001, 10.0, reference, env);
    const MotionVector applied = env.k_env * env.x;
    EXPECT_LT((applied - reference).cwiseAbs().maxCoeff(), 1e-3) << static_cast<int>(f);
  }
}

TEST(ImpedanceLaw, StiffnessAndEnvironmentShareTheLoadAtEquilibrium) {
  // With K > 0 the arm settles where (F_r − k_env x) = K x: force tracking is not exact.
  for (Formulation f : {Formulation::kAcceleration, Formulation::kVelocity}) {
    ImpedanceParameters p = seed_door(f);
    SpringEnvironment env{400.0};
    MotionVector reference = MotionVector::Constant(10.0);
    run_against_spring(p, 0.001, 30.0, reference, env);
    for (int i = 0; i < 7; ++i) {
      EXPECT_NEAR(env.x[i], 10.0 / (p.stiffness[i] + env.k_env), 1e-6) << i;
    }
  }
}

TEST(ImpedanceLaw, AccelerationLevelMatchesTheContinuousMassSpringDamper) {
  // m ẍ + b ẋ + k x = 0 from x0 = 0.1: compare with the closed form (underdamped axis).
  ImpedanceParameters p = seed_door(Formulation::kAcceleration);
  p.mass.setConstant(1.0);
  p.damping.setConstant(4.0);
  p.stiffness.setConstant(100.0);
  const double dt = 1e-4;
  ImpedanceState state;
  double x = 0.1;
  const double wn = 10.0, zeta = 0.2, wd = wn * std::sqrt(1 - zeta * zeta);
  for (int n = 1; n <= 10000; ++n) {
    ImpedanceInput in;
    in.error.setConstant(x);
    x += impedance_update(p, dt, in, state)[0] * dt;
    const double t = n * dt;
    const double exact = 0.1 * std::exp(-zeta * wn * t) *
                         (std::cos(wd * t) + zeta / std::sqrt(1 - zeta * zeta) * std::sin(wd * t));
    ASSERT_NEAR(x, exact, 2e-3) << "t = " << t;
  }
}

TEST(ImpedanceLaw, VelocityLevelInertiaIsAFirstOrderLagWithTimeConstantMOverB) {
  ImpedanceParameters p = seed_door(Formulation::kVelocity);
  p.stiffness.setZero();
  const double dt = 0.001;
  ImpedanceState state;
  ImpedanceInput in;
  in.force.setConstant(35.0);  // steady velocity F/B = 0.1 m/s on the translational axes
  const double tau = p.mass[0] / p.damping[0];
  const int steps = static_cast<int>(std::round(tau / dt));
  for (int n = 0; n < steps; ++n) impedance_update(p, dt, in, state);
  EXPECT_NEAR(state.velocity[0], 0.1 * (1.0 - std::exp(-1.0)), 2e-3);
  for (int n = 0; n < 20 * steps; ++n) impedance_update(p, dt, in, state);
  EXPECT_NEAR(state.velocity[0], 0.1, 1e-6);
}

TEST(ImpedanceLaw, VelocityLevelStaysStableWithThePeriodLongerThanMOverB) {
  // The implicit inertia term: Δt = 0.1 s > M/B = 0.0286 s still converges monotonically.
  ImpedanceParameters p = seed_door(Formulation::kVelocity);
  p.stiffness.setZero();
  ImpedanceState state;
  ImpedanceInput in;
  in.force.setConstant(35.0);
  double previous = 0.0;
  for (int n = 0; n < 50; ++n) {
    const double v = impedance_update(p, 0.1, in, state)[0];
    EXPECT_GE(v, previous - 1e-12);
    EXPECT_LE(v, 0.1 + 1e-12);
    previous = v;
  }
}

TEST(ImpedanceLaw, FollowsTheReferenceVelocityAndAccelerationWithoutForces) {
  for (Formulation f : {Formulation::kAcceleration, Formulation::kVelocity}) {
    ImpedanceParameters p = seed_door(f);
    ImpedanceState state;
    ImpedanceInput in;
    const double dt = 0.001;
    for (int n = 1; n <= 1000; ++n) {
      in.reference_acceleration.setConstant(0.5);
      in.reference_velocity.setConstant(0.5 * n * dt);
      impedance_update(p, dt, in, state);
    }
    // Within one period of the reference acceleration (0.5 m/s² · 1 ms).
    EXPECT_NEAR(state.velocity[2], 0.5, 5.1e-4) << static_cast<int>(f);
  }
}

}  // namespace
}  // namespace tether::remote

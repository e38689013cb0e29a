#include "tether/common/teleop_channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tether {
namespace {

constexpr double kDt = 1e-3;  // [s] both sites run at 1 kHz

Vector6 axis0(double value) {
  Vector6 v = Vector6::Zero();
  v[0] = value;
  return v;
}

Vector6 random_vector(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  Vector6 v;
  for (int i = 0; i < 6; ++i) v[i] = uniform(rng);
  return v;
}

void expect_same(const PortEnergies& actual, const PortEnergies& expected) {
  EXPECT_EQ(actual.in, expected.in);
  EXPECT_EQ(actual.out, expected.out);
  EXPECT_EQ(actual.observed, expected.observed);
  EXPECT_EQ(actual.dissipated, expected.dissipated);
}

// A constant communication delay of `delay` samples: push() returns what was pushed
// `delay` pushes earlier (zero until then); with no delay it returns its argument.
template <typename T>
class DelayLine {
 public:
  DelayLine(int delay, const T& zero) : buffer_(static_cast<std::size_t>(delay), zero) {}

  T push(const T& value) {
    if (buffer_.empty()) return value;
    T oldest = buffer_[next_];
    buffer_[next_] = value;
    next_ = (next_ + 1) % buffer_.size();
    return oldest;
  }
  const std::vector<T>& in_flight() const { return buffer_; }

 private:
  std::vector<T> buffer_;
  std::size_t next_ = 0;
};

// ---------------------------------------------------------------------------------------
// A delayed teleoperation loop along x: the operator (hand plus device, a mass–spring–damper
// pulled toward a reference position) drives the master; the slave is a pure integrator of
// the velocity it is given, in front of a stiff wall.

struct Operator {
  double mass = 1.0;         // [kg]
  double stiffness = 300.0;  // [N/m] toward the reference
  double damping = 30.0;     // [N·s/m]
  double x = 0.0;            // [m]
  double v = 0.0;            // [m/s]
};

// Into the wall (at 10 mm) to 30 mm over the first second, held until 3 s, then back
// into free space to −20 mm over one second and held.
double reference_position(double t) {
  const auto ramp = [t](double t0, double t1, double from, double to) {
    if (t <= t0) return from;
    if (t >= t1) return to;
    const double s = (t - t0) / (t1 - t0);
    return from + (to - from) * s * s * (3.0 - 2.0 * s);
  };
  return t < 3.0 ? ramp(0.0, 1.0, 0.0, 0.03) : ramp(3.0, 4.0, 0.03, -0.02);
}

struct LoopResult {
  double min_master_observed = 0.0;  // [J] lowest over the run
  double min_slave_observed = 0.0;   // [J]
  double max_penetration = 0.0;      // [m] of the slave into the wall
  double max_drift = 0.0;            // [m] |drift| of the slave PC
  double final_drift = 0.0;          // [m]
  double master_x = 0.0;             // [m] at the end
  double delivered_x = 0.0;          // [m] Σ v_sd dt: where the channel told the slave to be
  double slave_x = 0.0;              // [m]
};

// Runs 8 s plus the one-way delay (`delay` samples each way). With `passivity` the channel
// runs MasterPassivity and SlavePassivity; without, it is direct (F_m = delayed F_s,
// v_s = delayed v_m) and the test observes its port energies the same way.
LoopResult simulate_wall_contact(int delay, bool passivity, unsigned seed) {
  constexpr double kWall = 0.01;              // [m]
  constexpr double kWallStiffness = 20000.0;  // [N/m]
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> tremor(-0.2, 0.2);  // [N] on the hand

  MasterPassivity master;
  SlavePassivity slave;
  PortEnergies direct_master;
  PortEnergies direct_slave;
  DelayLine<Vector6> velocity_line(delay, Vector6::Zero());
  DelayLine<double> ground_in_line(delay, 0.0);
  DelayLine<Vector6> wrench_line(delay, Vector6::Zero());
  DelayLine<double> remote_in_line(delay, 0.0);
  Vector6 wrench_received = Vector6::Zero();  // newest remote F_s at the ground
  double remote_in_received = 0.0;            // newest remote `in` at the ground

  Operator op;
  LoopResult result;
  const int steps = static_cast<int>(std::lround(8.0 / kDt)) + delay;
  for (int k = 0; k < steps; ++k) {
    const double t = k * kDt;

    // Ground: display the wrench, send the velocity.
    const Vector6 v_m = axis0(op.v);
    Vector6 displayed;
    double ground_in = 0.0;
    if (passivity) {
      displayed = master.control(v_m, wrench_received, remote_in_received, kDt);
      master.commit(v_m, displayed, kDt);
      ground_in = master.energies().in;
      result.min_master_observed = std::min(result.min_master_observed, master.energies().observed);
    } else {
      displayed = wrench_received;
      const double power = displayed.dot(v_m);
      (power > 0.0 ? direct_master.in : direct_master.out) += std::abs(power) * kDt;
      direct_master.observed = remote_in_received - direct_master.out;
      ground_in = direct_master.in;
      result.min_master_observed = std::min(result.min_master_observed, direct_master.observed);
    }
    // The hand renders the reaction −F_m on the operator.
    const double force = op.stiffness * (reference_position(t) - op.x) - op.damping * op.v -
                         displayed[0] + tremor(rng);
    op.x += op.v * kDt;
    op.v += force / op.mass * kDt;

    // Remote: apply the delivered velocity against the wall, send the wrench back.
    const Vector6 delivered = velocity_line.push(v_m);
    const double ground_in_received = ground_in_line.push(ground_in);
    const Vector6 F_s = axis0(kWallStiffness * std::max(result.slave_x - kWall, 0.0));
    Vector6 v_s;
    double remote_in = 0.0;
    if (passivity) {
      v_s = slave.step(delivered, F_s, ground_in_received, kDt);
      remote_in = slave.energies().in;
      result.min_slave_observed = std::min(result.min_slave_observed, slave.energies().observed);
      result.max_drift = std::max(result.max_drift, slave.drift().norm());
    } else {
      v_s = delivered;
      const double power = F_s.dot(v_s);
      (power > 0.0 ? direct_slave.out : direct_slave.in) += std::abs(power) * kDt;
      direct_slave.observed = ground_in_received - direct_slave.out;
      remote_in = direct_slave.in;
      result.min_slave_observed = std::min(result.min_slave_observed, direct_slave.observed);
    }
    result.slave_x += v_s[0] * kDt;
    result.delivered_x += delivered[0] * kDt;
    result.max_penetration = std::max(result.max_penetration, result.slave_x - kWall);
    wrench_received = wrench_line.push(F_s);
    remote_in_received = remote_in_line.push(remote_in);
  }
  result.master_x = op.x;
  result.final_drift = slave.drift().norm();
  return result;
}

TEST(TeleopChannel, DirectChannelGeneratesEnergyAgainstAWallAt250Ms) {
  const LoopResult direct = simulate_wall_contact(250, false, 7);
  EXPECT_LT(std::min(direct.min_master_observed, direct.min_slave_observed), -0.1);
  // The generated energy shows: the slave rams centimetres into a 20 kN/m wall.
  EXPECT_GT(direct.max_penetration, 0.005);
}

TEST(TeleopChannel, PassivityControllersKeepBothPortsPassiveAt250Ms) {
  const LoopResult controlled = simulate_wall_contact(250, true, 7);
  EXPECT_GE(controlled.min_master_observed, -0.01);
  EXPECT_GE(controlled.min_slave_observed, -0.01);
  EXPECT_LT(controlled.max_penetration, 0.002);
}

TEST(TeleopChannel, PassivityControllersKeepBothPortsPassiveFromNoDelayToOneSecond) {
  for (const int delay : {0, 50, 250, 1000}) {
    SCOPED_TRACE("one-way delay " + std::to_string(delay) + " samples");
    const LoopResult controlled = simulate_wall_contact(delay, true, 100 + delay);
    EXPECT_GE(controlled.min_master_observed, -0.01);
    EXPECT_GE(controlled.min_slave_observed, -0.01);
    EXPECT_LT(controlled.max_penetration, 0.002);
  }
}

TEST(TeleopChannel, SlaveReturnsToTheMasterInFreeSpaceAfterContact) {
  for (const int delay : {0, 50, 250, 1000}) {
    SCOPED_TRACE("one-way delay " + std::to_string(delay) + " samples");
    const LoopResult controlled = simulate_wall_contact(delay, true, 200 + delay);
    // In contact the slave PC held the slave back from where the master went (the master
    // pressed 20 mm past the wall)...
    EXPECT_GT(controlled.max_drift, 0.001);
    // ...and back in free space drift compensation returned it: the slave is where the
    // channel delivered the master, and, the operator having come to rest, where the
    // master is.
    EXPECT_LT(controlled.final_drift, 1e-4);
    EXPECT_NEAR(controlled.slave_x, controlled.delivered_x, 1e-4);
    EXPECT_NEAR(controlled.slave_x, controlled.master_x, 1e-3);
  }
}

// ---------------------------------------------------------------------------------------
// The passivity controllers sample by sample.

TEST(TeleopChannel, MasterControllerRemovesExactlyTheExcessOutflow) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Vector6 v = random_vector(rng, 0.5);
    Vector6 F = random_vector(rng, 20.0);
    if (F.dot(v) > 0.0) F = -F;  // energy leaves the channel at the master
    const double outflow = -F.dot(v) * kDt;
    const double remote_in = 0.4 * outflow;  // the slave put in less than that

    MasterPassivity master;
    const Vector6 controlled = master.control(v, F, remote_in, kDt);
    const Vector6 correction = controlled - F;
    const double alpha = correction.dot(v) / v.squaredNorm();
    EXPECT_GE(alpha, 0.0);                                                 // a damping...
    EXPECT_LE((correction - alpha * v).norm(), 1e-12 * (1.0 + F.norm()));  // ...along v
    EXPECT_LE(controlled.dot(v), 0.0);  // energy still leaves, only less
    master.commit(v, controlled, kDt);
    EXPECT_NEAR(master.energies().observed, 0.0, 1e-12);
    EXPECT_NEAR(master.energies().out, remote_in, 1e-12);
    EXPECT_NEAR(master.energies().dissipated, 0.6 * outflow, 1e-12);
    EXPECT_EQ(master.energies().in, 0.0);

    // With enough energy received the wrench passes untouched.
    MasterPassivity funded;
    EXPECT_EQ((funded.control(v, F, outflow * 1.01, kDt) - F).norm(), 0.0);
    funded.commit(v, F, kDt);
    EXPECT_EQ(funded.energies().dissipated, 0.0);
    EXPECT_GE(funded.energies().observed, 0.0);
  }
}

// A channel that carries a force only (a wall along the handle's z) damps the hand's
// translation only: the wrist, light and carrying no energy of the channel, is left alone.
TEST(TeleopChannel, TheMasterControllerDampsOnlyTheGroupsTheChannelCarriesAWrenchIn) {
  Vector6 v;
  v << 0, 0, -0.01, 0.5, -0.3, 0.2;  // backing off the wall while the wrist turns
  Vector6 F = Vector6::Zero();
  F[2] = 30.0;
  MasterPassivity master;
  const Vector6 controlled = master.control(v, F, 0.0, kDt);
  EXPECT_EQ(controlled.tail<3>().norm(), 0.0);
  EXPECT_LE(controlled.dot(v), 1e-15);
  master.commit(v, controlled, kDt);
  EXPECT_NEAR(master.energies().observed, 0.0, 1e-12);
  EXPECT_NEAR(master.energies().dissipated, 30.0 * 0.01 * kDt, 1e-12);
}

TEST(TeleopChannel, TheScalingControllerOnlyLowersTheWrenchAndRemovesTheExcess) {
  MasterPassivity master;
  // The remote has put 0.01 J in; the hand gives way to a 20 N wrench at 1 m/s for 1 ms:
  // 0.02 J would leave.
  Vector6 v = Vector6::Zero();
  v[0] = -1.0;
  Vector6 F = Vector6::Zero();
  F[0] = 20.0;
  const Vector6 out = master.control_scaled(v, F, 0.01, 1e-3);
  EXPECT_NEAR(out[0], 10.0, 1e-12);  // halved: never more than the wrench received
  master.commit(v, out, 1e-3);
  EXPECT_NEAR(master.energies().observed, 0.0, 1e-15);
  EXPECT_NEAR(master.energies().dissipated, 0.01, 1e-15);
  // No budget left: nothing more leaves, whatever the wrench.
  const Vector6 none = master.control_scaled(v, 5.0 * F, 0.01, 1e-3);
  EXPECT_EQ(none.norm(), 0.0);
}

TEST(TeleopChannel, SlaveControllerRemovesExactlyTheExcessOutflow) {
  // No drift compensation here: the velocity is the admittance PC's alone.
  DriftCompensation no_compensation;
  no_compensation.max_speed_translation = 0.0;
  no_compensation.max_speed_rotation = 0.0;
  std::mt19937 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    const Vector6 v_sd = random_vector(rng, 0.5);
    Vector6 F = random_vector(rng, 20.0);
    if (F.dot(v_sd) < 0.0) F = -F;  // the slave would do work on its environment
    const double outflow = F.dot(v_sd) * kDt;
    const double ground_in = 0.25 * outflow;

    SlavePassivity slave(no_compensation);
    const Vector6 v = slave.step(v_sd, F, ground_in, kDt);
    const Vector6 correction = v_sd - v;
    const double beta = correction.dot(F) / F.squaredNorm();
    EXPECT_GE(beta, 0.0);
    EXPECT_LE((correction - beta * F).norm(), 1e-12 * (1.0 + v_sd.norm()));
    EXPECT_GE(F.dot(v), -1e-12);
    EXPECT_NEAR(slave.energies().observed, 0.0, 1e-12);
    EXPECT_NEAR(slave.energies().out, ground_in, 1e-12);
    EXPECT_NEAR(slave.energies().dissipated, 0.75 * outflow, 1e-12);
    EXPECT_EQ(slave.energies().in, 0.0);
    // What the PC held back is the drift.
    EXPECT_LE((slave.drift() - correction * kDt).norm(), 1e-15);
  }
}

TEST(TeleopChannel, NothingIsDissipatedWithoutMotionOrForce) {
  const Vector6 F = (Vector6() << 5.0, -3.0, 2.0, 0.5, 0.1, -0.2).finished();
  const Vector6 v = (Vector6() << 0.1, 0.2, -0.1, 0.3, -0.2, 0.1).finished();

  MasterPassivity master;
  // No motion: no power flows and there is nothing to damp, even with no energy received.
  Vector6 displayed = master.control(Vector6::Zero(), F, 0.0, kDt);
  EXPECT_TRUE(displayed.allFinite());
  EXPECT_EQ((displayed - F).norm(), 0.0);
  master.commit(Vector6::Zero(), displayed, kDt);
  // No force: no power either.
  displayed = master.control(v, Vector6::Zero(), 0.0, kDt);
  EXPECT_EQ(displayed.norm(), 0.0);
  master.commit(v, displayed, kDt);
  // A velocity below 1 µm/s cannot carry a damping force: the wrench passes unchanged.
  const Vector6 creep = -1e-7 * F.normalized();
  displayed = master.control(creep, F, 0.0, kDt);
  EXPECT_TRUE(displayed.allFinite());
  EXPECT_EQ((displayed - F).norm(), 0.0);
  EXPECT_EQ(master.energies().dissipated, 0.0);
  EXPECT_EQ(master.energies().in, 0.0);
  EXPECT_EQ(master.energies().out, 0.0);
  EXPECT_EQ(master.energies().observed, 0.0);

  SlavePassivity slave;
  Vector6 applied = slave.step(Vector6::Zero(), F, 0.0, kDt);  // pressing, not moving
  EXPECT_EQ(applied.norm(), 0.0);
  applied = slave.step(v, Vector6::Zero(), 0.0, kDt);  // moving freely
  EXPECT_EQ((applied - v).norm(), 0.0);
  EXPECT_EQ(slave.drift().norm(), 0.0);
  EXPECT_EQ(slave.energies().dissipated, 0.0);
  EXPECT_EQ(slave.energies().in, 0.0);
  EXPECT_EQ(slave.energies().out, 0.0);
  EXPECT_EQ(slave.energies().observed, 0.0);
}

TEST(TeleopChannel, NonFiniteInputIsIgnoredAndCommandsNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Vector6 v = axis0(0.1);
  const Vector6 F = axis0(-10.0);
  Vector6 v_bad = v;
  v_bad[4] = nan;
  Vector6 F_bad = F;
  F_bad[2] = -inf;

  MasterPassivity master;
  master.commit(v, master.control(v, F, 5e-4, kDt), kDt);  // some history first
  const PortEnergies master_before = master.energies();
  ASSERT_GT(master_before.out, 0.0);
  EXPECT_EQ(master.control(v_bad, F, 1.0, kDt).norm(), 0.0);
  master.commit(v_bad, F, kDt);
  EXPECT_EQ(master.control(v, F_bad, 1.0, kDt).norm(), 0.0);
  master.commit(v, F_bad, kDt);
  for (const double dt : {0.0, -kDt, nan, inf}) {
    EXPECT_EQ(master.control(v, F, 1.0, dt).norm(), 0.0);
    master.commit(v, F, dt);
  }
  expect_same(master.energies(), master_before);
  // A non-finite remote energy is ignored on its own; the sample still goes through.
  const Vector6 displayed = master.control(Vector6::Zero(), F, nan, kDt);
  EXPECT_EQ((displayed - F).norm(), 0.0);
  master.commit(Vector6::Zero(), displayed, kDt);
  expect_same(master.energies(), master_before);

  SlavePassivity slave;
  slave.step(v, -F, 2e-4, kDt);  // some history first, drift included
  const PortEnergies slave_before = slave.energies();
  const Vector6 drift_before = slave.drift();
  ASSERT_GT(drift_before.norm(), 0.0);
  EXPECT_EQ(slave.step(v_bad, -F, 1.0, kDt).norm(), 0.0);
  EXPECT_EQ(slave.step(v, F_bad, 1.0, kDt).norm(), 0.0);
  for (const double dt : {0.0, -kDt, nan, inf}) {
    EXPECT_EQ(slave.step(v, -F, 1.0, dt).norm(), 0.0);
  }
  expect_same(slave.energies(), slave_before);
  EXPECT_EQ((slave.drift() - drift_before).norm(), 0.0);

  const WaveImpedance b{20.0, 5.0};
  WaveMaster wave_master(b);
  wave_master.step(v, axis0(0.3), kDt);
  const PortEnergies wave_master_before = wave_master.energies();
  wave_master.step(v_bad, axis0(0.3), kDt);
  EXPECT_EQ(wave_master.force().norm(), 0.0);
  EXPECT_EQ(wave_master.forward_wave().norm(), 0.0);
  expect_same(wave_master.energies(), wave_master_before);

  WaveSlave wave_slave(b);
  wave_slave.step(axis0(0.3), -F, 0.0, kDt);
  const PortEnergies wave_slave_before = wave_slave.energies();
  wave_slave.step(axis0(0.3), F_bad, 0.0, kDt);
  EXPECT_EQ(wave_slave.velocity().norm(), 0.0);
  EXPECT_EQ(wave_slave.return_wave().norm(), 0.0);
  expect_same(wave_slave.energies(), wave_slave_before);
}

TEST(TeleopChannel, ObservedEnergyNeverGoesNegativeOnRandomInput) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> arrival(0.0, 0.02);  // [J] per packet
  MasterPassivity master;
  SlavePassivity slave;
  double remote_in = 0.0;
  double ground_in = 0.0;
  PortEnergies master_last;
  PortEnergies slave_last;
  for (int k = 0; k < 20000; ++k) {
    if (k % 10 == 0) {  // energy arrives in packets
      remote_in += arrival(rng);
      ground_in += arrival(rng);
    }
    const Vector6 v_m = random_vector(rng, 0.5);
    const Vector6 F_m = random_vector(rng, 20.0);
    master.commit(v_m, master.control(v_m, F_m, remote_in, kDt), kDt);
    slave.step(random_vector(rng, 0.5), random_vector(rng, 20.0), ground_in, kDt);

    for (const auto& [now, last] :
         {std::pair{master.energies(), master_last}, std::pair{slave.energies(), slave_last}}) {
      ASSERT_GE(now.observed, -1e-12) << "sample " << k;
      ASSERT_GE(now.in, last.in);
      ASSERT_GE(now.out, last.out);
      ASSERT_GE(now.dissipated, last.dissipated);
    }
    master_last = master.energies();
    slave_last = slave.energies();
  }
  // The controllers did have to act.
  EXPECT_GT(master.energies().dissipated, 0.0);
  EXPECT_GT(slave.energies().dissipated, 0.0);
}

// ---------------------------------------------------------------------------------------
// Drift compensation.

TEST(TeleopChannel, DriftCompensationSpendsAtMostItsShareOfTheSurplus) {
  const DriftCompensation config{};  // τ = 0.5 s, half the surplus per cycle
  SlavePassivity slave(config);
  const Vector6 F = axis0(10.0);

  // The master put in 1 mJ; moving at 1 m/s against 10 N would take 10 mJ out: the PC
  // slows the slave to 0.1 m/s and the other 0.9 mm become drift. No surplus is left to
  // compensate with.
  const Vector6 v1 = slave.step(axis0(1.0), F, 1e-3, kDt);
  EXPECT_NEAR(v1[0], 0.1, 1e-12);
  EXPECT_NEAR(slave.drift()[0], 0.9e-3, 1e-12);
  EXPECT_NEAR(slave.energies().dissipated, 9e-3, 1e-15);
  EXPECT_NEAR(slave.energies().observed, 0.0, 1e-15);

  // 10 µJ more arrive while the master holds still. Returning the drift at drift/τ
  // (1.8 mm/s against 10 N: 18 µJ this cycle) would cost more than half of it, so the
  // compensation spends exactly half.
  const double surplus = 1e-5;
  const double ground_in = slave.energies().out + surplus;
  double out_before = slave.energies().out;
  const Vector6 v2 = slave.step(Vector6::Zero(), F, ground_in, kDt);
  EXPECT_NEAR(slave.energies().out - out_before, config.energy_share * surplus, 1e-15);
  EXPECT_NEAR(v2[0], config.energy_share * surplus / (F[0] * kDt), 1e-12);
  EXPECT_NEAR(slave.drift()[0], 0.9e-3 - v2[0] * kDt, 1e-15);
  EXPECT_NEAR(slave.energies().observed, (1.0 - config.energy_share) * surplus, 1e-15);

  // Nothing new arrives: half of what is left, and never below zero.
  out_before = slave.energies().out;
  const double left = slave.energies().observed;
  slave.step(Vector6::Zero(), F, ground_in, kDt);
  EXPECT_NEAR(slave.energies().out - out_before, config.energy_share * left, 1e-15);
  EXPECT_GE(slave.energies().observed, 0.0);
  EXPECT_EQ(slave.energies().in, 0.0);

  // Out of contact, returning the drift draws no power from the channel: full speed.
  out_before = slave.energies().out;
  const double drift = slave.drift()[0];
  const Vector6 v4 = slave.step(Vector6::Zero(), Vector6::Zero(), ground_in, kDt);
  EXPECT_NEAR(v4[0], drift / config.time_constant, 1e-15);
  EXPECT_EQ(slave.energies().out, out_before);
}

TEST(TeleopChannel, DriftCompensationRespectsTheSpeedCaps) {
  const DriftCompensation config{};  // 0.05 m/s, 0.2 rad/s
  SlavePassivity slave(config);
  Vector6 F = Vector6::Zero();
  F[0] = 10.0;  // [N]
  F[3] = 2.0;   // [N·m]
  Vector6 v_sd = Vector6::Zero();
  v_sd[0] = 10.0;
  v_sd[3] = 10.0;
  // No energy at all from the master: the PC stops every flow out of the channel, a large
  // drift in translation and rotation builds up, and none of it can be returned yet.
  const Vector6 v1 = slave.step(v_sd, F, 0.0, 0.1);
  EXPECT_NEAR(F.dot(v1), 0.0, 1e-12);
  const Vector6 drift = slave.drift();
  ASSERT_GT(drift.head<3>().norm() / config.time_constant, config.max_speed_translation);
  ASSERT_GT(drift.tail<3>().norm() / config.time_constant, config.max_speed_rotation);

  // Free space: the drift returns at the caps, along itself.
  const Vector6 v2 = slave.step(Vector6::Zero(), Vector6::Zero(), 0.0, kDt);
  EXPECT_NEAR(v2.head<3>().norm(), config.max_speed_translation, 1e-15);
  EXPECT_NEAR(v2.tail<3>().norm(), config.max_speed_rotation, 1e-15);
  EXPECT_LE((v2.head<3>().normalized() - drift.head<3>().normalized()).norm(), 1e-12);
  EXPECT_LE((v2.tail<3>().normalized() - drift.tail<3>().normalized()).norm(), 1e-12);
  EXPECT_LE((slave.drift() - (drift - v2 * kDt)).norm(), 1e-15);

  for (int k = 0; k < 60000; ++k) {
    const Vector6 v = slave.step(Vector6::Zero(), Vector6::Zero(), 0.0, kDt);
    ASSERT_LE(v.head<3>().norm(), config.max_speed_translation + 1e-15) << "cycle " << k;
    ASSERT_LE(v.tail<3>().norm(), config.max_speed_rotation + 1e-15) << "cycle " << k;
  }
  EXPECT_LE(slave.drift().norm(), 1e-9);

  slave.reset();
  EXPECT_EQ(slave.drift().norm(), 0.0);
  EXPECT_EQ(slave.energies().dissipated, 0.0);
}

// ---------------------------------------------------------------------------------------
// Wave variables.

TEST(TeleopChannel, WaveChannelFollowsTheMasterInFreeSpaceWithoutDelay) {
  const WaveImpedance b{20.0, 5.0, 0.0};
  WaveMaster master(b);
  WaveSlave slave(b);
  Vector6 impedance;
  impedance << b.translation, b.translation, b.translation, b.rotation, b.rotation, b.rotation;
  const Vector6 sqrt_2b = (2.0 * impedance.array()).sqrt().matrix();

  // The operator drags the master at a constant 50 mm/s along x and 0.2 rad/s about y
  // (per row: mass 1, stiffness 300, damping 30 toward the moving reference). The
  // master's force F_m = b v_m − √(2b) w_m is a damping b plus a wave term; the hand is
  // integrated implicitly in its damping (the operator's and the channel's), as a device
  // that renders a physical damping would be.
  Vector6 reference_velocity = Vector6::Zero();
  reference_velocity[0] = 0.05;
  reference_velocity[4] = 0.2;
  const Operator op{};
  Vector6 x = Vector6::Zero();
  Vector6 v = Vector6::Zero();
  Vector6 w_received = Vector6::Zero();  // from the previous remote cycle
  for (int k = 0; k < 5000; ++k) {
    const double t = k * kDt;
    const Vector6 external = op.stiffness * (reference_velocity * t - x) +
                             op.damping * reference_velocity +
                             (sqrt_2b.array() * w_received.array()).matrix();
    v = ((op.mass * v + kDt * external).array() /
         (op.mass + kDt * (op.damping + impedance.array())))
            .matrix();
    master.step(v, w_received, kDt);
    x += v * kDt;
    slave.step(master.forward_wave(), Vector6::Zero(), master.energies().in, kDt);
    w_received = slave.return_wave();
  }
  EXPECT_LE((v - reference_velocity).norm(), 1e-8);
  EXPECT_LE((slave.velocity() - v).norm(), 1e-8);
  EXPECT_LE(master.force().norm(), 1e-8);
  // A free slave takes no energy out.
  EXPECT_EQ(slave.energies().out, 0.0);
  EXPECT_EQ(master.energies().dissipated, 0.0);
}

TEST(TeleopChannel, WaveChannelIsPassiveForAnyConstantDelay) {
  for (const double filter_hz : {0.0, 2.0})
    for (const int delay : {1, 37, 250}) {
      const WaveImpedance b{20.0, 5.0, filter_hz};
      SCOPED_TRACE("one-way delay " + std::to_string(delay) + " samples, wave filter " +
                   std::to_string(filter_hz) + " Hz");
      std::mt19937 rng(300 + delay);
      WaveMaster master(b);
      WaveSlave slave(b);
      DelayLine<Vector6> forward(delay, Vector6::Zero());
      DelayLine<Vector6> backward(delay, Vector6::Zero());
      DelayLine<double> ground_in_line(delay, 0.0);
      DelayLine<double> remote_in_line(delay, 0.0);
      Vector6 w_received = Vector6::Zero();
      Vector6 v_m = Vector6::Zero();
      Vector6 F_s = Vector6::Zero();
      double net_in = 0.0;  // Σ (F_m·v_m − F_s·v_s) dt [J]
      double lowest = 0.0;
      for (int k = 0; k < 5000; ++k) {
        // Random, band-limited operator motion and slave wrench.
        v_m = 0.99 * v_m + random_vector(rng, 0.05);
        F_s = 0.99 * F_s + random_vector(rng, 2.0);
        master.step(v_m, w_received, kDt);
        const Vector6 u_received = forward.push(master.forward_wave());
        slave.step(u_received, F_s, ground_in_line.push(master.energies().in), kDt);
        w_received = backward.push(slave.return_wave());
        master.set_remote_in(remote_in_line.push(slave.energies().in));
        net_in += (master.force().dot(v_m) - F_s.dot(slave.velocity())) * kDt;
        lowest = std::min(lowest, net_in);
      }
      EXPECT_GE(lowest, -1e-9);
      // What went in and did not come out is the energy of the waves in transit:
      // ½ dt Σ (|u|² + |w|²), the last return wave received not yet used by the master.
      double stored = 0.5 * kDt * w_received.squaredNorm();
      for (const Vector6& u : forward.in_flight()) stored += 0.5 * kDt * u.squaredNorm();
      for (const Vector6& w : backward.in_flight()) stored += 0.5 * kDt * w.squaredNorm();
      if (filter_hz == 0.0) {
        EXPECT_NEAR(net_in, stored, 1e-9 * (1.0 + stored));
      } else {
        // The wave filter only takes energy out.
        EXPECT_GE(net_in, stored - 1e-9 * (1.0 + stored));
      }
      EXPECT_GT(stored, 0.0);
      // The ports' own accounting tells the same.
      const PortEnergies& m = master.energies();
      const PortEnergies& s = slave.energies();
      EXPECT_NEAR((m.in - m.out) - (s.out - s.in), net_in, 1e-9 * (1.0 + m.in + s.in));
      EXPECT_EQ(m.dissipated, 0.0);
      EXPECT_EQ(s.dissipated, 0.0);
    }
}

// ---------------------------------------------------------------------------------------
// Vocabulary and configuration.

TEST(TeleopChannel, ReflectionMethodNamesRoundTrip) {
  EXPECT_STREQ(to_string(ReflectionMethod::kNone), "none");
  EXPECT_STREQ(to_string(ReflectionMethod::kPassivity), "passivity");
  EXPECT_STREQ(to_string(ReflectionMethod::kWave), "wave");
  for (const ReflectionMethod method :
       {ReflectionMethod::kNone, ReflectionMethod::kPassivity, ReflectionMethod::kWave}) {
    const std::optional<ReflectionMethod> parsed = reflection_method_from_name(to_string(method));
    ASSERT_TRUE(parsed.has_value()) << to_string(method);
    EXPECT_TRUE(*parsed == method) << to_string(method);
  }
  EXPECT_FALSE(reflection_method_from_name("Wave").has_value());
  EXPECT_FALSE(reflection_method_from_name("").has_value());
  EXPECT_FALSE(reflection_method_from_name("tdpa").has_value());
}

template <typename Make>
std::string rejection(const Make& make) {
  try {
    make();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "accepted";
}

TEST(TeleopChannel, InvalidConfigurationIsRejectedNamingFieldValueAndRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(rejection([] {
              const WaveMaster master(WaveImpedance{-1.0, 2.0});
              static_cast<void>(master);
            }),
            "wave_impedance.translation = -1: must be > 0 and finite (N·s/m)");
  EXPECT_EQ(rejection([] {
              const WaveSlave slave(WaveImpedance{1.0, 0.0});
              static_cast<void>(slave);
            }),
            "wave_impedance.rotation = 0: must be > 0 and finite (N·m·s/rad)");
  EXPECT_EQ(rejection([] {
              const WaveMaster master(WaveImpedance{});
              static_cast<void>(master);
            }),
            "wave_impedance.translation = 0: must be > 0 and finite (N·s/m)");
  EXPECT_EQ(rejection([&] {
              validate(WaveImpedance{1.0, nan});
            }),
            "wave_impedance.rotation = nan: must be > 0 and finite (N·m·s/rad)");
  EXPECT_EQ(rejection([&] {
              validate(WaveImpedance{inf, 1.0});
            }),
            "wave_impedance.translation = inf: must be > 0 and finite (N·s/m)");

  // The defaults with one field changed.
  const auto drift = [](double DriftCompensation::*field, double value) {
    DriftCompensation config;
    config.*field = value;
    return config;
  };
  EXPECT_EQ(rejection([&] {
              const SlavePassivity slave(drift(&DriftCompensation::time_constant, 0.0));
              static_cast<void>(slave);
            }),
            "drift_compensation.time_constant = 0: must be in (0, 100] s");
  EXPECT_EQ(rejection([&] { validate(drift(&DriftCompensation::time_constant, 150.0)); }),
            "drift_compensation.time_constant = 150: must be in (0, 100] s");
  EXPECT_EQ(rejection([&] { validate(drift(&DriftCompensation::energy_share, 1.5)); }),
            "drift_compensation.energy_share = 1.5: must be in (0, 1]");
  EXPECT_EQ(rejection([&] { validate(drift(&DriftCompensation::energy_share, 0.0)); }),
            "drift_compensation.energy_share = 0: must be in (0, 1]");
  EXPECT_EQ(rejection([&] { validate(drift(&DriftCompensation::max_speed_translation, -0.1)); }),
            "drift_compensation.max_speed_translation = -0.1: must be >= 0 and finite (m/s)");
  EXPECT_EQ(rejection([&] { validate(drift(&DriftCompensation::max_speed_rotation, inf)); }),
            "drift_compensation.max_speed_rotation = inf: must be >= 0 and finite (rad/s)");

  EXPECT_EQ(rejection([] { validate(DriftCompensation{}); }), "accepted");
  EXPECT_EQ(rejection([] { validate(WaveImpedance{20.0, 5.0}); }), "accepted");
  DriftCompensation edges;  // the ends of the ranges that are allowed
  edges.time_constant = 100.0;
  edges.energy_share = 1.0;
  edges.max_speed_translation = 0.0;
  edges.max_speed_rotation = 0.0;
  EXPECT_EQ(rejection([&] { validate(edges); }), "accepted");
}

}  // namespace
}  // namespace tether

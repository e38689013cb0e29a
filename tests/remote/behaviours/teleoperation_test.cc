#include "tether/remote/behaviours/teleoperation/teleoperation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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

// The ground's thread was held up 30 ms: its next sample, sampled 30 ms after the one
// before, carries 30 ms of the hand's motion. The arm takes it over 30 cycles, as the hand
// moved, and every bit of it.
TEST_F(TeleopFixture, ALateSamplesMotionIsSpreadOverThePeriodsItWasSampledAcross) {
  const auto sample = [&](std::uint64_t seq, std::uint64_t ground_ms, double x) {
    HandControllerSample s;
    s.sequence = seq;
    s.ground_time_ns = ground_ms * 1000000;
    s.increment[0] = x;
    ASSERT_TRUE(queue.push(s));
  };
  sample(1, 1, 1e-5);
  teleop.update(params, context, out);
  EXPECT_NEAR(out.force[0], 100 * 1e-5 / 0.001, 1e-9);  // on time: applied at once
  sample(2, 31, 30e-5);
  double total = 0.0;
  for (int cycle = 0; cycle < 40; ++cycle) {
    out.clear();
    teleop.update(params, context, out);
    const double velocity = out.force[0] / 100.0;
    if (cycle < 30) {
      EXPECT_NEAR(velocity, 1e-5 / 0.001, 1e-9) << "cycle " << cycle;
    } else {
      EXPECT_EQ(velocity, 0.0) << "cycle " << cycle;
    }
    total += velocity * 0.001;
  }
  EXPECT_NEAR(total, 30e-5, 1e-15);
  EXPECT_EQ(teleop.counters().applied, 2u);
  // Releasing the switch drops what is still being spread, like any motion waiting.
  sample(3, 61, 30e-5);
  out.clear();
  teleop.update(params, context, out);
  HandControllerSample released;
  released.sequence = 4;
  released.deadman = false;
  ASSERT_TRUE(queue.push(released));
  out.clear();
  teleop.update(params, context, out);
  EXPECT_EQ(out.force.norm(), 0.0);
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

TEST_F(TeleopFixture, IncrementsSentBeforeTheTaskStartedAreCountedStaleAndMoveNothing) {
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-4;
  send(1, inc);
  send(2, inc);
  teleop.reset(params, context);  // the task starts with these still queued
  send(3, inc);
  out.clear();
  teleop.update(params, context, out);
  EXPECT_EQ(teleop.counters().stale, 2u);
  EXPECT_EQ(teleop.counters().applied, 1u);
  EXPECT_EQ(teleop.counters().lost, 0u);
  EXPECT_NEAR(out.force[0], 100 * 1e-4 / 0.001, 1e-9);  // the one sent after the start
}

// Nothing takes increments while no teleoperated task runs: the queue fills within a
// second of a stream's heartbeats and the server refuses the rest. The gap they leave before
// the first increment after the start was sent before it: stale, as those still queued.
TEST_F(TeleopFixture, IncrementsTheFullQueueRefusedBeforeTheTaskStartedAreStaleNotLost) {
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-4;
  send(1, inc);
  send(2, inc);                   // 3 … 9 refused by the full queue
  teleop.reset(params, context);  // the task starts with these still queued
  send(10, inc);
  send(12, inc);  // 11 lost after the start
  out.clear();
  teleop.update(params, context, out);
  EXPECT_EQ(teleop.counters().stale, 2u + 7u);
  EXPECT_EQ(teleop.counters().lost, 1u);
  EXPECT_EQ(teleop.counters().applied, 2u);
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

// The cameras ride on an arm that turns 90° about the world's z axis while the task runs: the
// same push of the hand along HB x (screen x ≡ EYE x) moved the tool along world x before
// the update and along world y, the new EYE x, after it.
TEST_F(TeleopFixture, ACameraModeIncrementMovesTheToolAlongTheEyeFrameOfItsCycle) {
  params.mode = TeleopMode::kCamera;
  params.gain.setConstant(1.0);
  params.world_R_eye = Matrix3::Identity();
  params.eye_time_ns = 1'000'000'000;
  context.motion_pose.R = so3_exp(Vector3(0.4, -0.3, 1.0));  // any tool orientation
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-3;  // along HB x: 1 N at gain 1 over 1 ms
  send(1, inc);
  teleop.update(params, context, out);
  Vector3 world_force = context.motion_pose.R * out.force.head<3>();
  EXPECT_TRUE(world_force.isApprox(Vector3(1, 0, 0), 1e-12)) << world_force.transpose();

  params.world_R_eye = so3_exp(Vector3(0, 0, M_PI / 2));  // EYE x = world y
  params.eye_time_ns = 1'010'000'000;                     // 10 ms later
  send(2, inc);
  out.clear();
  teleop.update(params, context, out);
  world_force = context.motion_pose.R * out.force.head<3>();
  EXPECT_TRUE(world_force.isApprox(Vector3(0, 1, 0), 1e-12)) << world_force.transpose();
  EXPECT_TRUE(teleop.world_R_eye_used().isApprox(params.world_R_eye, 1e-15));
  EXPECT_EQ(teleop.eye_time_ns_used(), 1'010'000'000U);
}

// The arm pushes 5 N along world y (the tool is pressed there). With the EYE frame as the
// world that is the operator's screen y; once the cameras turn 90° about z, world y is what
// they show as x, and the hand feels it along HB x: the reflection is rotated with the frame
// the cycle used and reports its stamp, also after the arm stops.
TEST_F(TeleopFixture, TheCameraModeReflectionIsExpressedWithTheNewEyeFrameAndCarriesItsStamp) {
  params.mode = TeleopMode::kCamera;
  params.gain.setConstant(1.0);
  params.reflect_all_axes = true;
  context.measured_wrench << 0, 5, 0, 0, 0, 0;  // MOTION axes ≡ WORLD here
  send(1, Vector6::Zero());
  teleop.update(params, context, out);
  EXPECT_TRUE(teleop.reflected_wrench().isApprox((Vector6() << 0, 5, 0, 0, 0, 0).finished(), 1e-12))
      << teleop.reflected_wrench().transpose();
  EXPECT_EQ(teleop.eye_time_ns_used(), 0U);

  params.world_R_eye = so3_exp(Vector3(0, 0, M_PI / 2));
  params.eye_time_ns = 2'000'000'000;
  out.clear();
  teleop.update(params, context, out);
  EXPECT_TRUE(teleop.reflected_wrench().isApprox((Vector6() << 5, 0, 0, 0, 0, 0).finished(), 1e-12))
      << teleop.reflected_wrench().transpose();
  EXPECT_TRUE(teleop.world_R_eye_used().isApprox(params.world_R_eye, 1e-15));
  EXPECT_EQ(teleop.eye_time_ns_used(), 2'000'000'000U);
  // Stopped, the reflection follows the wrench in the frame of the last running cycle.
  context.measured_wrench << 0, 8, 0, 0, 0, 0;
  teleop.reflect(params, context.measured_wrench);
  EXPECT_TRUE(teleop.reflected_wrench().isApprox((Vector6() << 8, 0, 0, 0, 0, 0).finished(), 1e-12))
      << teleop.reflected_wrench().transpose();
  EXPECT_EQ(teleop.eye_time_ns_used(), 2'000'000'000U);
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
  context.elapsed = 0.01;
  context.time = 0.5;  // the task's (pausable) time does not drive the stall clock
  teleop.update(params, context, out);
  EXPECT_FALSE(teleop.stalled(params, 0.06));
  EXPECT_TRUE(teleop.stalled(params, 0.0601));
}

// A stream at 1 kHz: sample k sampled at k ms on the ground, arriving at `arrival_ms`.
struct PacedStream {
  TeleopFixture& f;
  std::uint64_t sequence = 0;
  void send_at(double ground_ms, double arrival_ms, const Vector6& increment, bool deadman = true) {
    HandControllerSample s;
    s.sequence = ++sequence;
    s.increment = increment;
    s.deadman = deadman;
    s.ground_time_ns = static_cast<std::uint64_t>(std::llround(ground_ms * 1e6)) + 1'000'000'000;
    s.arrival_ns = static_cast<std::int64_t>(std::llround(arrival_ms * 1e6)) + 5'000'000'000;
    ASSERT_TRUE(f.queue.push(s));
  }
  // One control cycle at `now_ms` on the remote; returns the increment applied [m along x].
  double cycle(double now_ms) {
    f.context.elapsed = now_ms * 1e-3;
    f.context.steady_ns = static_cast<std::int64_t>(std::llround(now_ms * 1e6)) + 5'000'000'000;
    f.out.clear();
    f.teleop.update(f.params, f.context, f.out);
    return f.out.force[0] / f.params.gain[0] * f.context.dt;
  }
};

TEST_F(TeleopFixture, ABurstHeldBackByTheLinkIsPlayedOutAtThePaceItWasSampled) {
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  // Two seconds of a link with 100 ms delay whose arrivals bunch up every 50 ms (a TCP
  // stream behind a late segment), then the same pattern goes on while we measure.
  double largest = 0.0;
  double total = 0.0;
  int sent = 0;
  for (int ms = 0; ms < 4000; ++ms) {
    if (ms >= 100 && (ms - 100) % 50 == 49) {
      // Every 50 ms the 50 samples sampled over the last 50 ms arrive at once.
      for (int k = ms - 100 - 49; k <= ms - 100; ++k) {
        stream.send_at(k, ms, inc);
        ++sent;
      }
    }
    const double applied = stream.cycle(ms);
    total += applied;
    if (ms >= 2000) largest = std::max(largest, applied);
  }
  // Once the jitter is learned, each cycle plays out about one sample, never the burst.
  EXPECT_LE(largest, 2.0 * 1e-5 + 1e-15);
  EXPECT_GT(teleop.counters().playout_delay, 0.040);
  EXPECT_LE(teleop.counters().playout_delay, params.max_playout_delay);
  for (int ms = 4000; ms < 4300; ++ms) total += stream.cycle(ms);
  // None lost, none applied twice.
  EXPECT_NEAR(total, 1e-5 * sent, 1e-12);
  EXPECT_EQ(teleop.counters().applied, static_cast<std::uint64_t>(sent));
  EXPECT_EQ(teleop.counters().lost, 0u);
}

TEST_F(TeleopFixture, ALoopbackLinksFewMillisecondsOfJitterAreNotPlayedOut) {
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  // Every 100th sample 3 ms late, holding back the two behind it: a busy machine's loopback.
  for (int ms = 0; ms < 2000; ++ms) {
    const int late = ms % 100 < 3 ? 3 - ms % 100 : 0;
    stream.send_at(ms, ms + late, inc);
    stream.cycle(ms + late);
  }
  EXPECT_EQ(teleop.counters().playout_delay, 0.0);
  EXPECT_EQ(teleop.counters().applied, 2000u);
}

TEST_F(TeleopFixture, WithoutAPlayoutBufferABurstIsAppliedAsItArrives) {
  params.max_playout_delay = 0.0;
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  for (int k = 0; k < 50; ++k) stream.send_at(k, 60, inc);
  EXPECT_NEAR(stream.cycle(60), 50 * 1e-5, 1e-15);
}

// A 1 kHz stream over a 100 ms link: sample `ground_ms` arrives `late_ms` after 100 ms, or
// after the one before it (a TCP stream keeps order). `motion` is the sample's increment in
// units of 1e-5 m (a sample taken late by the ground carries several periods' motion).
struct OrderedLink {
  struct Sample {
    int ground_ms;
    double arrival_ms;
    double motion;
  };
  std::vector<Sample> samples;
  void add(int ground_ms, double late_ms, double motion = 1.0) {
    double arrival = ground_ms + 100.0 + late_ms;
    if (!samples.empty()) arrival = std::max(arrival, samples.back().arrival_ms);
    samples.push_back({ground_ms, arrival, motion});
  }
  // Runs the remote's cycles over [0, end_ms); applied[ms] is the motion of cycle ms [1e-5 m].
  std::vector<double> play(PacedStream& stream, int end_ms) {
    std::vector<double> applied;
    std::size_t next = 0;
    for (int ms = 0; ms < end_ms; ++ms) {
      for (; next < samples.size() && samples[next].arrival_ms <= ms; ++next) {
        Vector6 inc = Vector6::Zero();
        inc[0] = samples[next].motion * 1e-5;
        stream.send_at(samples[next].ground_ms, samples[next].arrival_ms, inc);
      }
      applied.push_back(stream.cycle(ms) / 1e-5);
    }
    return applied;
  }
};

// Every 100th sample 20 ms late teaches the playout its jitter. Then the ground's thread is
// held up 15 ms: its next sample carries 15 periods of motion. The arm plays it over the
// 15 ms it covers, at the pace of the others: no pause before it, no burst after.
TEST_F(TeleopFixture, UnderAPlayoutDelayALateSampleIsPlayedOverTheTimeItCoversWithoutAPause) {
  PacedStream stream{*this};
  OrderedLink link;
  for (int g = 0; g < 3000; ++g) {
    if (g > 2000 && g < 2015) continue;
    link.add(g, g % 100 == 0 ? 20.0 : 0.0, g == 2015 ? 15.0 : 1.0);
  }
  const std::vector<double> applied = link.play(stream, 3400);
  EXPECT_GT(teleop.counters().playout_delay, 0.020);
  for (int ms = 1500; ms < 3000; ++ms) {
    EXPECT_NEAR(applied[ms], 1.0, 0.02) << "cycle " << ms;
  }
  double total = 0.0;
  for (double a : applied) total += a;
  EXPECT_NEAR(total, 3000.0, 1e-6);  // every period's motion, once
  EXPECT_EQ(teleop.counters().applied, link.samples.size());
}

// The same link, then one sample 60 ms late, three times any before: the motion behind it
// is not there when its turn comes. The playout slows down as it runs out, waits, and
// resumes on a longer delay, its pace changing gradually: never a step from moving to
// standing still or a burst of the motion that arrived at once.
TEST_F(TeleopFixture, APlayoutThatMustWaitLongerSlowsDownGraduallyRatherThanStopping) {
  PacedStream stream{*this};
  OrderedLink link;
  for (int g = 0; g < 3000; ++g) link.add(g, g % 100 == 0 ? (g == 2000 ? 60.0 : 20.0) : 0.0);
  const std::vector<double> applied = link.play(stream, 3500);
  double largest_step = 0.0;
  double slowest = 1.0;
  for (int ms = 1500; ms < 3000; ++ms) {
    largest_step = std::max(largest_step, std::abs(applied[ms] - applied[ms - 1]));
    slowest = std::min(slowest, applied[ms]);
    EXPECT_LE(applied[ms], 2.0 + 1e-9) << "cycle " << ms;  // catching up at most 2× the pace
  }
  EXPECT_LT(slowest, 0.5);  // it did have to wait
  EXPECT_LE(largest_step, 0.2);
  EXPECT_GT(teleop.counters().playout_delay, 0.060);
  double total = 0.0;
  for (double a : applied) total += a;
  EXPECT_NEAR(total, 3000.0, 1e-6);
  EXPECT_EQ(teleop.counters().applied, 3000u);
}

TEST_F(TeleopFixture, ReleasingTheSwitchZeroesTheInputAtOnceAndDropsTheWaitingMotion) {
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  // Learn a 30 ms jitter, then leave 20 samples waiting in the playout buffer.
  for (int ms = 0; ms < 1000; ++ms) {
    stream.send_at(ms, ms + 10 + (ms % 100 == 0 ? 30 : 0), inc);
    stream.cycle(ms + 10);
  }
  for (int k = 1000; k < 1020; ++k) stream.send_at(k, 1020, inc);
  stream.send_at(1020, 1020, Vector6::Zero(), false);
  EXPECT_EQ(stream.cycle(1020), 0.0);
  EXPECT_FALSE(teleop.operator_enabled());
  EXPECT_GT(teleop.counters().discarded, 0u);
  // Disabled, the heartbeats keep the stream alive and move nothing.
  for (int ms = 1021; ms < 1500; ++ms) {
    stream.send_at(ms, ms + 10, inc, false);
    EXPECT_EQ(stream.cycle(ms + 10), 0.0);
  }
  EXPECT_FALSE(teleop.stalled(params, 1.51));
  // Enabled again: motion resumes, no reset needed.
  double moved = 0.0;
  for (int ms = 1500; ms < 1700; ++ms) {
    stream.send_at(ms, ms + 10, inc);
    moved += stream.cycle(ms + 10);
  }
  EXPECT_TRUE(teleop.operator_enabled());
  EXPECT_GT(moved, 100 * 1e-5);
}

TEST_F(TeleopFixture, TheStallBoundFollowsTheArrivalJitterUpToItsCap) {
  params.stall_timeout = 0.1;
  PacedStream stream{*this};
  // Arrivals every 1 ms: the task's own timeout is the bound.
  for (int ms = 0; ms < 500; ++ms) {
    stream.send_at(ms, ms + 1000, Vector6::Zero());  // a long but steady link is no stall
    stream.cycle(ms + 1000);
  }
  EXPECT_DOUBLE_EQ(teleop.stall_bound(params), 0.1);
  EXPECT_FALSE(teleop.stalled(params, 1.5));
  // Gaps of 150 ms (a jittery 1 s link): the bound grows to twice the largest gap.
  double t = 1500;
  for (int k = 0; k < 10; ++k) {
    t += 150;
    stream.send_at(t - 1000, t, Vector6::Zero());
    stream.cycle(t);
  }
  EXPECT_NEAR(teleop.stall_bound(params), 0.3, 0.01);
  EXPECT_FALSE(teleop.stalled(params, t * 1e-3 + 0.25));
  EXPECT_TRUE(teleop.stalled(params, t * 1e-3 + 0.31));
  // Never beyond the cap, whatever the gaps.
  t += 5000;
  stream.send_at(t - 1000, t, Vector6::Zero());
  stream.cycle(t);
  EXPECT_DOUBLE_EQ(teleop.stall_bound(params), kMaxStallBound);
}

TEST_F(TeleopFixture, AStreamThatEndsCleanlyIsAnEndAndNotAStall) {
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  for (int ms = 0; ms < 100; ++ms) {
    stream.send_at(ms, ms, inc);
    stream.cycle(ms);
  }
  HandControllerSample end;
  end.end = true;
  ASSERT_TRUE(queue.push(end));
  stream.cycle(100);
  EXPECT_TRUE(teleop.counters().ended);
  EXPECT_FALSE(teleop.stalled(params, 10.0));
  // A new stream sends: the stall clock runs again.
  stream.send_at(200, 200, inc);
  stream.cycle(200);
  EXPECT_FALSE(teleop.counters().ended);
  EXPECT_TRUE(teleop.stalled(params, 0.5));
}

TEST_F(TeleopFixture, ANewStreamLearnsItsLinkAfreshAndItsStallClockRunsFromItsOpening) {
  PacedStream stream{*this};
  Vector6 inc = Vector6::Zero();
  inc[0] = 1e-5;
  // A loopback stream, then one through a link 250 ms longer with no jitter.
  for (int ms = 0; ms < 500; ++ms) {
    stream.send_at(ms, ms, inc);
    stream.cycle(ms);
  }
  HandControllerSample opened;
  opened.opened = true;
  ASSERT_TRUE(queue.push(opened));
  stream.cycle(500);
  EXPECT_FALSE(teleop.stalled(params, 0.55));
  for (int ms = 500; ms < 1500; ++ms) {
    stream.send_at(ms, ms + 250, inc);
    stream.cycle(ms + 250);
  }
  // The longer link is not mistaken for jitter to be absorbed.
  EXPECT_LT(teleop.counters().playout_delay, 0.002);
}

// The hand drives translation z and rotation x only: it feels F_a along those, not what
// the task's other behaviours hold in the other directions (a door's hinge constraint).
TEST_F(TeleopFixture, TheHandFeelsTheWrenchAlongTheDirectionsItDrivesOnly) {
  params.gain << 0, 0, 100, 5, 0, 0, 0;
  teleop.reset(params, context);
  context.measured_wrench << 10, 20, 30, 4, 5, 6;
  send(1, Vector6::Zero());
  teleop.update(params, context, out);
  Vector6 expected;
  expected << 0, 0, 30, 4, 0, 0;
  EXPECT_TRUE(teleop.reflected_wrench().isApprox(expected)) << teleop.reflected_wrench();
  // Every axis when the task asks for it.
  params.reflect_all_axes = true;
  send(2, Vector6::Zero());
  out.clear();
  teleop.update(params, context, out);
  EXPECT_TRUE(teleop.reflected_wrench().isApprox(context.measured_wrench))
      << teleop.reflected_wrench();
}

TEST_F(TeleopFixture, ThePassivityMethodDrivesNoMoreEnergyIntoTheEnvironmentThanTheHandPutIn) {
  // A wall pushes back along x with 50 N while the operator drives into it at 10 mm/s for
  // 0.2 s, but the ground has reported only 0.01 J into the channel so far. Returns the
  // energy the arm's port put into the wall [J].
  context.measured_wrench << 50, 0, 0, 0, 0, 0;
  PacedStream stream{*this};
  std::uint64_t sequence = 0;
  const auto drive = [&](ReflectionMethod method) {
    params.reflection = method;
    teleop.reset(params, context);
    double energy_out = 0.0;
    for (int ms = 0; ms < 200; ++ms) {
      HandControllerSample s;
      s.sequence = ++sequence;
      s.increment[0] = 1e-5;
      s.master_in = 0.01;
      EXPECT_TRUE(queue.push(s));
      energy_out += 50.0 * stream.cycle(ms);
    }
    return energy_out;
  };
  EXPECT_LE(drive(ReflectionMethod::kPassivity), 0.01 + 1e-9);
  EXPECT_GE(teleop.energies().slave.observed, -1e-9);
  EXPECT_GT(teleop.energies().slave.dissipated, 0.0);
  // Without it, the same drive puts 0.1 J into the wall.
  EXPECT_NEAR(drive(ReflectionMethod::kNone), 50.0 * 200 * 1e-5, 1e-9);
  EXPECT_LT(teleop.energies().slave.observed, -0.08);
}

}  // namespace
}  // namespace tether::remote

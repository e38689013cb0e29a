#include "tether/local/teleop/teleop_session.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "tether/common/teleop_channel.h"
#include "tether/local/web/web_gamepad.h"
#include "tether/v1/remote_site.grpc.pb.h"

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

// A site as a browser-driven session finds it, on loopback: earlier sessions' counts on its
// counters (they run over its life); no task for the stream's first kIdle increments, of
// which it queued the first kQueued and refused the rest (nothing takes increments then);
// then a task starts: the queued ones dropped as stale and the gap before the next one
// counted lost (as a site counts it that tells stale from lost only for what was queued),
// and from then on every increment taken at once and reflected.
class IdleThenRunningSite final : public v1::RemoteSite::Service {
 public:
  static constexpr std::uint64_t kEarlierApplied = 50000;
  static constexpr std::uint64_t kEarlierLost = 7;
  static constexpr std::uint64_t kEarlierStale = 300;
  static constexpr std::uint64_t kQueued = 100;
  static constexpr std::uint64_t kIdle = 2000;  // 2 s at 1 kHz

  grpc::Status Teleoperate(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::ForceReflection, v1::TeleopIncrement>* stream) override {
    v1::ForceReflection out;
    v1::TeleoperationCounters& c = *out.mutable_teleoperation();
    c.set_applied(kEarlierApplied);
    c.set_lost(kEarlierLost);
    c.set_stale(kEarlierStale);
    out.set_state(v1::EXECUTOR_STATE_IDLE);
    v1::TeleopIncrement in;
    while (stream->Read(&in)) {
      const std::uint64_t s = in.sequence();
      if (s == kIdle) {  // the task starts
        out.set_state(v1::EXECUTOR_STATE_RUNNING);
        c.set_stale(c.stale() + kQueued);
        out.set_applied_sequence(kQueued);
      } else if (s > kIdle) {
        if (s == kIdle + 1) c.set_lost(c.lost() + s - kQueued - 1);
        c.set_applied(c.applied() + 1);
        out.set_applied_sequence(s);
      }
      if (!stream->Write(out)) break;
    }
    return grpc::Status::OK;
  }
};

// The summary of a browser-driven session claimed the site's counts over its life and a
// round trip for every increment the site's numbering skipped, timed from when each was
// sampled, up to the whole idle time before the task started.
TEST(TeleopSession, ReportsItsOwnCountsAndRoundTripsOnlyOfWhatTheSiteTookInTurn) {
  IdleThenRunningSite site;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&site);
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_GT(port, 0);

  // The browser's gamepad, which nobody holds: the session streams released heartbeats.
  auto gamepad = std::make_shared<WebGamepad>();
  OperatorInput input(std::make_unique<WebHandController>(gamepad, WebGamepadConfig{}),
                      OperatorInputConfig{});
  TeleopOptions options;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.operator_name = "tester";
  options.credentials.insecure = true;
  options.realtime = false;
  TeleopSession session(input, options);
  session.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (session.sent() < IdleThenRunningSite::kIdle + 500 && !session.finished() &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  session.stop();
  const TeleopReport r = session.wait();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(r.ok) << r.stream_status;
  ASSERT_GT(r.sent, IdleThenRunningSite::kIdle + 1);
  const std::uint64_t taken = r.sent - IdleThenRunningSite::kIdle;
  EXPECT_EQ(r.last.teleoperation.applied, taken);
  EXPECT_EQ(r.last.teleoperation.stale, IdleThenRunningSite::kQueued);
  EXPECT_EQ(r.last.teleoperation.lost, IdleThenRunningSite::kIdle - IdleThenRunningSite::kQueued);
  // The increments taken in turn after the start (the first may come with the gap's
  // reflection), none of those passed over.
  EXPECT_GE(r.measured, taken - 1);
  EXPECT_LE(r.measured, taken);
  // Milliseconds on loopback; those passed over would have given up to 2 s, half of them
  // more than 0.5 s.
  EXPECT_LT(r.latency_p50, 0.25);
  EXPECT_LT(r.latency_max, 1.0);
}

}  // namespace
}  // namespace tether::local

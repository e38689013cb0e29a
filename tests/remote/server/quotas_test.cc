// Per-identity quotas: concurrent streams and a token bucket of uploads.

#include "quotas.h"

#include <gtest/gtest.h>

namespace tether::remote::server {
namespace {

using namespace std::chrono_literals;

TEST(Quotas, CountsStreamsPerIdentityAndFreesThemOnClose) {
  QuotaOptions options;
  options.max_streams = 2;
  Quotas quotas(options);
  EXPECT_EQ(quotas.open_stream("alice"), "");
  EXPECT_EQ(quotas.open_stream("alice"), "");
  EXPECT_EQ(quotas.open_stream("alice"),
            "'alice' already has 2 streams open: at most 2 per identity");
  EXPECT_EQ(quotas.open_stream("bob"), "");  // another identity is not affected
  quotas.close_stream("alice");
  EXPECT_EQ(quotas.open_stream("alice"), "");
}

// An operator with telemetry and teleoperation open still watches a stereo pair: camera views
// have a limit of their own.
TEST(Quotas, CameraViewsAreCountedApartFromTheStreams) {
  QuotaOptions options;
  options.max_streams = 2;
  options.max_camera_views = 2;
  Quotas quotas(options);
  EXPECT_EQ(quotas.open_stream("alice"), "");
  EXPECT_EQ(quotas.open_stream("alice"), "");
  EXPECT_EQ(quotas.open_camera_view("alice"), "");
  EXPECT_EQ(quotas.open_camera_view("alice"), "");
  EXPECT_EQ(quotas.open_camera_view("alice"),
            "'alice' already has 2 camera views open: at most 2 per identity");
  quotas.close_camera_view("alice");
  EXPECT_EQ(quotas.open_camera_view("alice"), "");
  EXPECT_NE(quotas.open_stream("alice"), "");  // the streams are still full
}

TEST(Quotas, AllowsABurstOfUploadsThenTheRate) {
  QuotaOptions options;
  options.upload_burst = 3;
  options.uploads_per_second = 2.0;
  Quotas quotas(options);
  const auto t0 = Quotas::Clock::time_point{} + 100s;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(quotas.take_upload("alice", t0), "") << i;
  EXPECT_EQ(quotas.take_upload("alice", t0),
            "'alice' uploads faster than 2 per second (bursts of up to 3); try again in 0.5 s");
  EXPECT_EQ(quotas.take_upload("bob", t0), "");
  EXPECT_NE(quotas.take_upload("alice", t0 + 400ms), "");
  EXPECT_EQ(quotas.take_upload("alice", t0 + 1000ms), "");  // 2 tokens back, 1 taken
  // Idle time refills to the burst, never beyond.
  const auto later = t0 + 60s;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(quotas.take_upload("alice", later), "") << i;
  EXPECT_NE(quotas.take_upload("alice", later), "");
}

// A camera on an arm streams its EYE frame through SetParameter at 100 Hz: its own bucket
// (200 per second after a burst of 100) never refuses that, and still stops a flood.
TEST(Quotas, SetParameterHasItsOwnRateAboveACameraArms100Hz) {
  Quotas quotas(QuotaOptions{});
  const auto t0 = Quotas::Clock::time_point{} + 100s;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(quotas.take_parameter("camera", t0 + i * 10ms), "") << i;
  }
  for (int i = 0; i < 100; ++i) EXPECT_EQ(quotas.take_parameter("flood", t0), "") << i;
  EXPECT_EQ(quotas.take_parameter("flood", t0),
            "'flood' sets parameters faster than 200 per second (bursts of up to 100); try "
            "again in 0.005 s");
  EXPECT_EQ(quotas.take_parameter("flood", t0 + 6ms), "");
  EXPECT_EQ(quotas.take_upload("flood", t0), "");  // uploads keep their own bucket
}

TEST(Quotas, LimitsEachMethodsRequestSize) {
  EXPECT_EQ(max_request_bytes("UploadTask"), 256U * 1024);
  EXPECT_EQ(max_request_bytes("SetParameter"), 20U * 1024);
  EXPECT_EQ(max_request_bytes("GetStatus"), 4U * 1024);
  EXPECT_LT(max_request_bytes("UploadTask"), kMaxReceiveMessage);
}

}  // namespace
}  // namespace tether::remote::server

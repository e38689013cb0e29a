// A camera view end to end in one process: the remote site's service in front of the
// embedded MuJoCo door scene renders the watched camera, encodes it as VP9 and sends it as
// sealed fragments on the datagram plane; the ground's CameraView reassembles the frames,
// which decode, in order, with their capture times on the ground's clock.

#include "tether/local/link/camera_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "tether/common/urdf_loader.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/remote/camera/video_codec.h"
#include "tether/remote/server/remote_site_server.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {
namespace {

using namespace std::chrono_literals;

class CameraViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_default_arm();
    remote::SimulationOptions sim;
    sim.scene = remote::SceneKind::kDoor;
    arm_ = std::make_unique<remote::SimulatedArm>(model_, sim);
    executor_ = std::make_unique<remote::Executor>(model_, queue_);
    loop_ = std::make_unique<remote::ControlLoop>(*arm_, *executor_, remote::Pacing::kRealTime);
    loop_->start();
    remote::ServerOptions options;
    options.security.insecure = true;  // in process; the security tests use mutual TLS
    options.address = "127.0.0.1:0";
    options.site_name = "camera-site";
    options.scene = arm_->scene_description();
    options.cameras = arm_.get();
    server_ = std::make_unique<remote::RemoteSiteServer>(options, *executor_, *loop_, queue_,
                                                         model_.name);
    ClientOptions client_options;
    client_options.credentials.insecure = true;
    client_options.operator_name = "viewer";
    client_ = std::make_unique<RemoteSiteClient>("127.0.0.1:" + std::to_string(server_->port()),
                                                 client_options);
  }

  void TearDown() override {
    client_.reset();
    server_->shutdown();
    loop_->stop();
  }

  ArmModel model_;
  remote::HandControllerQueue queue_;
  std::unique_ptr<remote::SimulatedArm> arm_;
  std::unique_ptr<remote::Executor> executor_;
  std::unique_ptr<remote::ControlLoop> loop_;
  std::unique_ptr<remote::RemoteSiteServer> server_;
  std::unique_ptr<RemoteSiteClient> client_;
};

TEST_F(CameraViewTest, AWatchedCameraArrivesInOrderDecodesAndCarriesItsCaptureTime) {
  std::mutex mutex;
  std::vector<VideoFrame> frames;
  auto view = client_->watch_camera("overview", 0, [&](const VideoFrame& f) {
    std::lock_guard lock(mutex);
    frames.push_back(f);
  });
  std::this_thread::sleep_for(2500ms);
  const CameraViewStats stats = view->stats();
  view.reset();
  std::lock_guard lock(mutex);
  ASSERT_TRUE(stats.open) << stats.error;
  EXPECT_EQ(stats.codec, "vp09.00.10.08");
  EXPECT_EQ(stats.camera.name, "overview");
  ASSERT_GE(frames.size(), 5u);  // 15 Hz when the machine keeps up
  EXPECT_TRUE(frames.front().key);
  EXPECT_EQ(stats.lost, 0u);  // loopback
  remote::camera::VideoDecoder decoder;
  std::vector<double> ages;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const VideoFrame& f = frames[i];
    if (i > 0) {
      EXPECT_GT(f.number, frames[i - 1].number);
    }
    std::vector<std::uint8_t> rgb;
    int w = 0;
    int h = 0;
    ASSERT_TRUE(decoder.decode(f.data, rgb, w, h)) << "frame " << f.number;
    EXPECT_EQ(w, 640);
    EXPECT_EQ(h, 480);
    if (f.capture_ground_ns != 0)
      ages.push_back(1e-9 * static_cast<double>(f.arrival_ns - f.capture_ground_ns));
    // A camera fixed in the cell: every frame was taken from where the scene says it is.
    ASSERT_TRUE(f.pose_known) << "frame " << f.number;
    EXPECT_LT((f.base_T_camera.p - stats.camera.pose.p).norm(), 1e-5) << "frame " << f.number;
    EXPECT_LT((f.base_T_camera.R - stats.camera.pose.R).norm(), 1e-5) << "frame " << f.number;
  }
  ASSERT_TRUE(stats.clock_known);
  // One machine, one clock: the estimated offset is the round trip's asymmetry at most.
  EXPECT_LE(std::abs(stats.clock_offset_ns), stats.round_trip_ns / 2 + 1'000'000);
  ASSERT_FALSE(ages.empty());
  std::sort(ages.begin(), ages.end());
  std::printf(
      "camera view: %zu frames in 2.5 s, capture to reassembled %.1f ms median, "
      "%.1f ms worst; site: %llu sent, %.1f ms to encode\n",
      frames.size(), 1e3 * ages[ages.size() / 2], 1e3 * ages.back(),
      static_cast<unsigned long long>(stats.sent), stats.encode_ms);
  EXPECT_GE(ages.front(), -0.002);  // never before it was taken (within the estimate)
  EXPECT_LT(ages.back(), 1.0);      // render, encode and loopback, not seconds
}

TEST_F(CameraViewTest, AnUnknownCameraEndsTheViewNamingTheCamerasThereAre) {
  auto view = client_->watch_camera("ceiling", 0, [](const VideoFrame&) {});
  CameraViewStats stats;
  for (int i = 0; i < 100 && !(stats = view->stats()).ended; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(stats.ended);
  EXPECT_FALSE(stats.open);
  EXPECT_EQ(stats.error,
            "camera 'ceiling': camera = 'ceiling': no such camera (there are: wrist, overview, "
            "stereo_left, stereo_right)");
}

TEST_F(CameraViewTest, ABitRateOutOfRangeIsRefusedNamingTheField) {
  auto view = client_->watch_camera("overview", 20000, [](const VideoFrame&) {});
  CameraViewStats stats;
  for (int i = 0; i < 100 && !(stats = view->stats()).ended; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(stats.ended);
  EXPECT_NE(stats.error.find("bit_rate_kbps = 20000: must be 0 (1000) or in [100, 8000] kbit/s"),
            std::string::npos)
      << stats.error;
}

}  // namespace
}  // namespace tether::local

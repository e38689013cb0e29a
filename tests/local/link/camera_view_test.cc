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
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/proto/task_io.h"
#include "tether/remote/camera/video_codec.h"
#include "tether/remote/server/remote_site_server.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {
namespace {

using namespace std::chrono_literals;

// The simulated arm's cameras, of which one can fail as a camera whose driver did not start.
class FailingCameras final : public remote::camera::CameraDevices {
 public:
  explicit FailingCameras(remote::SimulatedArm& arm) : arm_(arm) {}
  const std::vector<SceneCamera>& cameras() const override { return arm_.cameras(); }
  std::unique_ptr<remote::camera::CameraWatch> watch(const std::string& name,
                                                     remote::camera::ImageSink sink) override {
    if (name == failing) throw std::runtime_error("its driver did not start");
    return arm_.watch(name, std::move(sink));
  }
  std::string aim(const std::string& name, double pan, double tilt) override {
    return arm_.aim(name, pan, tilt);
  }
  std::string failing;  // set before a watch of it is asked for

 private:
  remote::SimulatedArm& arm_;
};

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
    cameras_ = std::make_unique<FailingCameras>(*arm_);
    options.cameras = cameras_.get();
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
  std::unique_ptr<FailingCameras> cameras_;
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

// The pose of the newest frame received.
Frame newest_pose(std::mutex& mutex, const std::vector<VideoFrame>& frames) {
  std::lock_guard lock(mutex);
  return frames.empty() ? Frame() : frames.back().base_T_camera;
}

double angle_between(const Matrix3& a, const Matrix3& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

TEST_F(CameraViewTest, AimingTheHeadTurnsTheStereoPairAndItsFramesSayHowFar) {
  client_->acquire_control();
  std::mutex mutex;
  std::vector<VideoFrame> frames;
  auto view = client_->watch_camera("stereo_left", 0, [&](const VideoFrame& f) {
    std::lock_guard lock(mutex);
    frames.push_back(f);
  });
  std::this_thread::sleep_for(1000ms);
  const Frame before = newest_pose(mutex, frames);
  ASSERT_FALSE(frames.empty());
  client_->aim_camera("stereo_left", 30.0, 0.0);
  std::this_thread::sleep_for(1500ms);  // 30° at 60°/s, and a few frames after
  const Frame panned = newest_pose(mutex, frames);
  // 30° about BASE z: the optical axis turns in the horizontal plane, to the left.
  EXPECT_NEAR(angle_between(before.R, panned.R) * kRadToDeg, 30.0, 1.0);
  const Eigen::AngleAxisd turn(panned.R * before.R.transpose());
  EXPECT_GT(std::abs(turn.axis().z()), 0.999) << turn.axis().transpose();
  EXPECT_GT(turn.axis().z() * turn.angle(), 0.0);  // counter-clockwise seen from above
  // Tilt: about the cameras' own x axis, + looks up (C's y is down).
  client_->aim_camera("stereo_left", 30.0, 20.0);
  std::this_thread::sleep_for(1200ms);
  const Frame tilted = newest_pose(mutex, frames);
  EXPECT_NEAR(angle_between(panned.R, tilted.R) * kRadToDeg, 20.0, 1.0);
  EXPECT_GT(tilted.R.col(2).z(), panned.R.col(2).z() + 0.3);  // the optical axis rose
  EXPECT_LT((tilted.p - before.p).norm(), 0.2);               // the head turns about its own axes
  // A camera not on the head, or an aim out of range, is refused naming it.
  try {
    client_->aim_camera("overview", 10.0, 0.0);
    ADD_FAILURE() << "aimed a fixed camera";
  } catch (const RemoteError& e) {
    EXPECT_NE(e.message().find("camera 'overview' is not on the pan-tilt head (its mount: fixed "
                               "in the cell)"),
              std::string::npos)
        << e.message();
  }
  try {
    client_->aim_camera("stereo_right", 120.0, 0.0);
    ADD_FAILURE() << "aimed beyond the head's range";
  } catch (const RemoteError& e) {
    EXPECT_NE(e.message().find("pan_deg = 120: within [-90, 90]°"), std::string::npos)
        << e.message();
  }
}

// Camera mode sees through the camera the operator watches: the running task's EYE frame is
// the camera's orientation, and the change is audited.
TEST_F(CameraViewTest, AViewThatIsTheEyeSetsTheRunningTasksEyeFrameFromItsCamera) {
  TaskParameters task =
      proto::load_task_file(TETHER_SOURCE_DIR "/remote_site/tasks/door_shared.textproto");
  task.teleoperation.mode = TeleopMode::kCamera;
  ASSERT_TRUE(task.teleoperation.enabled);
  client_->acquire_control();
  client_->upload("door_eye", task, true);
  client_->start("door_eye");
  const SceneCamera overview =
      *std::find_if(arm_->cameras().begin(), arm_->cameras().end(),
                    [](const SceneCamera& c) { return c.name == "overview"; });
  const Matrix3 expected = task.world_T_base.R * overview.pose.R;
  ASSERT_GT(angle_between(loop_->latest().world_R_eye, expected), 0.1);  // not so by chance
  auto view = client_->watch_camera(
      "overview", 0, [](const VideoFrame&) {}, /*eye=*/true);
  for (int i = 0; i < 40 && angle_between(loop_->latest().world_R_eye, expected) > 1e-4; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_LT(angle_between(loop_->latest().world_R_eye, expected), 1e-4);
  EXPECT_GT(loop_->latest().eye_time_ns, 0u);  // the image's capture
  std::uint64_t next = 0;
  std::string trail;
  for (const std::string& line : client_->audit(0, 1000, next)) trail += line + "\n";
  EXPECT_NE(trail.find("camera mode's EYE frame: camera 'overview'"), std::string::npos) << trail;
  // Someone without the lease may watch, but not set the EYE frame.
  ClientOptions other;
  other.credentials.insecure = true;
  other.operator_name = "bystander";
  RemoteSiteClient bystander(client_->address(), other);
  auto refused = bystander.watch_camera(
      "overview", 0, [](const VideoFrame&) {}, true);
  for (int i = 0; i < 40 && !refused->stats().ended; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(refused->stats().ended);
  EXPECT_NE(refused->stats().error.find("viewer"), std::string::npos) << refused->stats().error;
  client_->stop();
}

// A view that asks for the EYE but cannot be watched (its camera's driver failed) ends with
// the reason, and leaves the EYE with the view that has it: that view's images go on setting
// the frame.
TEST_F(CameraViewTest, AViewThatCannotBeWatchedLeavesTheEyeWithTheViewThatHasIt) {
  TaskParameters task =
      proto::load_task_file(TETHER_SOURCE_DIR "/remote_site/tasks/door_shared.textproto");
  task.teleoperation.mode = TeleopMode::kCamera;
  client_->acquire_control();
  client_->upload("door_eye", task, true);
  client_->start("door_eye");
  auto view = client_->watch_camera(
      "overview", 0, [](const VideoFrame&) {}, /*eye=*/true);
  for (int i = 0; i < 40 && loop_->latest().eye_time_ns == 0; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(loop_->latest().eye_time_ns, 0u);

  cameras_->failing = "wrist";
  auto failed = client_->watch_camera(
      "wrist", 0, [](const VideoFrame&) {}, /*eye=*/true);
  for (int i = 0; i < 40 && !failed->stats().ended; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(failed->stats().ended);
  EXPECT_NE(
      failed->stats().error.find("camera 'wrist' cannot be watched: its driver did not start"),
      std::string::npos)
      << failed->stats().error;

  // The overview's images, taken after the failure, still set the frame (15 Hz).
  const std::uint64_t before = loop_->latest().eye_time_ns;
  for (int i = 0; i < 40 && loop_->latest().eye_time_ns == before; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(loop_->latest().eye_time_ns, before);
  EXPECT_TRUE(view->stats().open);
  client_->stop();
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

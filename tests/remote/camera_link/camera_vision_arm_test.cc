// Visual tracking through the camera link, as a site with tether-simarm behind its arm link
// runs it: the simulated visual-target scene renders its wrist camera and serves it
// (CameraLinkServer), the site takes the images (NetworkCameras), finds the tag in them
// itself (CameraVisionArm) and the shipped visual-tracking task follows the moving tag in
// real time. The simulation's own camera model is the geometric one here, so every reading
// the behaviour gets comes from the site's detection in the served images.

#include "tether/remote/camera_link/camera_vision_arm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/camera_link/camera_link_server.h"
#include "tether/remote/camera_link/network_cameras.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/sim/simulated_arm.h"
#include "udp_peer.h"

namespace tether::remote::camera_link {
namespace {

// After every read past `settled` [s], the true target in the wrist camera's frame.
class Observed final : public ArmInterface {
 public:
  Observed(ArmInterface& arm, SimulatedArm& truth, double settled)
      : arm_(arm), truth_(truth), settled_(settled) {}
  const ArmModel& model() const override { return arm_.model(); }
  ArmStatus read(ArmState& state) noexcept override {
    const ArmStatus status = arm_.read(state);
    if (state.time >= settled_) {
      const Vector3 p = truth_.visual_target_in_camera();
      lateral = std::max(lateral, p.head<2>().norm());
      depth = std::max(depth, std::abs(p.z() - 0.3));
    }
    return status;
  }
  ArmStatus write(const JointCommand& command) noexcept override { return arm_.write(command); }
  void advance_to(double time) noexcept override { arm_.advance_to(time); }

  double lateral = 0.0;  // [m] worst |(x, y)| of the target in C after settling
  double depth = 0.0;    // [m] worst |z − 0.3|

 private:
  ArmInterface& arm_;
  SimulatedArm& truth_;
  double settled_;
};

TEST(CameraVisionArm, TheShippedTaskFollowsTheTagFromTheSitesDetectionInServedImages) {
  const ArmModel model = load_default_arm();
  SimulationOptions sim;
  sim.scene = SceneKind::kVisualTarget;
  sim.initial_position = default_initial_position(SceneKind::kVisualTarget, model);
  sim.camera.source = CameraSource::kGeometric;
  // Not the defaults: the site must take the tag from the served scene.
  sim.visual_target.tag_id = 7;
  sim.visual_target.size = 0.08;
  SimulatedArm arm(model, sim);
  CameraLinkServerOptions served;
  served.key_file = testing::test_key_file();
  served.arm_model = 7;
  CameraLinkServer server(arm, arm.scene_description(), served);
  server.start();
  NetworkCamerasOptions site;
  site.host = "127.0.0.1";
  site.port = server.port();
  site.key_file = testing::test_key_file();
  site.arm_model = 7;
  NetworkCameras cameras(site);
  const std::optional<CameraVisionOptions> vision = vision_options_for(cameras.scene());
  ASSERT_TRUE(vision.has_value()) << "the served scene describes no tagged visual target";
  EXPECT_EQ(vision->tag_id, 7);
  EXPECT_DOUBLE_EQ(vision->tag_size, 0.08);
  CameraVisionArm seeing(arm, cameras, *vision);

  // As the rendered-camera scenario: at rest for 1 s, then 0.05 m/s sideways, back and
  // forth over 0.2 m; steady state on the second leg, from 4.5 s.
  Observed observed(seeing, arm, 4.5);
  TaskRunOptions run;
  run.duration = 6.5;
  run.pacing = Pacing::kRealTime;
  const TaskParameters task =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/visual_tracking.textproto");
  const TaskRunRecord record = run_task(observed, task, run);
  const CameraVisionStatistics s = seeing.statistics();
  std::printf(
      "visual tracking through the camera link (15 Hz wrist images, the site's detection): "
      "lateral ≤ %.2f mm, depth ≤ %.2f mm; %llu images, tag in %llu, detection %.1f ms mean, "
      "%.1f ms worst\n",
      1e3 * observed.lateral, 1e3 * observed.depth, static_cast<unsigned long long>(s.images),
      static_cast<unsigned long long>(s.detected),
      s.images > 0 ? 1e3 * s.detect_seconds / static_cast<double>(s.images) : 0.0,
      1e3 * s.worst_detect);
  EXPECT_FALSE(record.breach) << describe(record.breach);
  EXPECT_EQ(record.final_state, ExecutorState::kRunning);
  EXPECT_LT(observed.lateral, 0.002);
  EXPECT_LT(observed.depth, 0.005);
  EXPECT_GE(s.images, 60u);  // 15 Hz for 6.5 s when the machine keeps up
  EXPECT_GE(s.detected, s.images * 9 / 10);
}

TEST(CameraVisionArm, ACameraItDoesNotHaveOrATagIdOutOfRangeIsRefusedByName) {
  const ArmModel model = load_default_arm();
  SimulatedArm arm(model, SimulationOptions{});
  CameraVisionOptions o;
  o.camera = "nose";
  try {
    CameraVisionArm seeing(arm, arm, o);
    FAIL() << "watched a camera that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "camera vision: camera = 'nose': the site has no such camera");
  }
  o.camera = "wrist";
  o.tag_id = 600;
  try {
    CameraVisionArm seeing(arm, arm, o);
    FAIL() << "looked for a tag id tag36h11 does not have";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "camera vision: tag_id = 600: must be in [0, 586] (tag36h11)");
  }
}

TEST(CameraVisionArm, OnlyAVisualTargetCarryingATagIsTracked) {
  const ArmModel model = load_default_arm();
  SimulationOptions door;
  door.scene = SceneKind::kDoor;
  EXPECT_FALSE(vision_options_for(SimulatedArm(model, door).scene_description()).has_value());
  SceneDescription scene;
  SceneBody target;
  target.name = "visual_target";
  scene.bodies.push_back(target);
  EXPECT_FALSE(vision_options_for(scene).has_value()) << "a target without a tag";
  scene.bodies[0].tag = SceneTag{586, 0.2};
  const auto vision = vision_options_for(scene);
  ASSERT_TRUE(vision.has_value());
  EXPECT_EQ(vision->camera, "wrist");
  EXPECT_EQ(vision->tag_id, 586);
  EXPECT_DOUBLE_EQ(vision->tag_size, 0.2);
}

}  // namespace
}  // namespace tether::remote::camera_link

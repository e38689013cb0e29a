// The visual-tracking behaviour: the velocity it commands from the camera's images, where it
// places a late image, the target's velocity fed forward, holding still and losing the
// target, and the validation of its section.

#include "tether/remote/behaviours/visual_tracking/visual_tracking.h"

#include <gtest/gtest.h>

#include <cmath>

#include "context_fixture.h"
#include "tether/common/spatial.h"
#include "tether/remote/task/validation.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

JointVector posture(double shift = 0.0) {
  JointVector q;
  q << 0.1 + shift, 0.6, -0.2, -1.1 + shift, 0.3, 0.8, -0.4;
  return q;
}

VisualTrackingParameters params() {
  VisualTrackingParameters p;
  p.enabled = true;
  p.tool_T_camera = Frame{so3_exp(Vector3(0.0, 0.0, -M_PI / 2)), Vector3(0.0, 0.06, 0.05)};
  p.gain = 4.0;
  p.max_speed = 10.0;  // out of the way unless a test needs it
  return p;
}

Frame camera(const BehaviourContextFixture& fixture, const VisualTrackingParameters& p) {
  return fixture.context().motion_pose *
         (fixture.context().tool_T_motion.inverse() * p.tool_T_camera);
}

// Delivers image `frame` taken at `capture` showing the target at `in_camera`, at arm and task
// time `now`, and runs one update.
MotionVector step(VisualTracking& behaviour, const VisualTrackingParameters& p,
                  BehaviourContextFixture& fixture, double now, std::uint64_t frame, double capture,
                  const Vector3& in_camera, bool valid = true) {
  fixture.context().time = now;
  fixture.arm_state().time = now;
  fixture.arm_state().visual.frame = frame;
  fixture.arm_state().visual.valid = valid;
  fixture.arm_state().visual.capture_time = capture;
  fixture.arm_state().visual.target_in_camera = in_camera;
  BehaviourOutput out;
  behaviour.update(p, fixture.context(), out);
  return out.velocity;
}

TEST(VisualTracking, ATargetAtTheReferencePositionAddsNothing) {
  BehaviourContextFixture fixture(load_default_arm(),
                                  Frame{so3_exp(Vector3(0.2, -0.1, 0.3)), Vector3(0, 0, 0.1)});
  fixture.set(posture());
  const auto p = params();
  VisualTracking behaviour;
  behaviour.reset(p, fixture.context());
  EXPECT_LT(step(behaviour, p, fixture, 0.0, 1, 0.0, p.reference_position).norm(), 1e-12);
}

TEST(VisualTracking, ATargetOffsetInTheImageDrivesTheCameraTowardsItAtGainTimesTheOffset) {
  BehaviourContextFixture fixture(load_default_arm(),
                                  Frame{so3_exp(Vector3(0.2, -0.1, 0.3)), Vector3(0, 0, 0.1)});
  fixture.set(posture());
  const auto p = params();
  VisualTracking behaviour;
  behaviour.reset(p, fixture.context());
  const Vector3 offset(0.02, -0.01, 0.03);  // right, up, further: C axes
  const MotionVector v = step(behaviour, p, fixture, 0.0, 1, 0.0, p.reference_position + offset);
  // A pure translation of the tool towards the target: k · offset along C's axes, in MOTION axes.
  const Vector3 expected =
      fixture.context().motion_pose.R.transpose() * (camera(fixture, p).R * (p.gain * offset));
  EXPECT_LT((v.head<3>() - expected).norm(), 1e-12) << v.transpose();
  EXPECT_EQ(v.tail<4>(), Eigen::Vector4d::Zero());
}

TEST(VisualTracking, TheCommandedSpeedIsClampedToTheTasksMaximum) {
  BehaviourContextFixture fixture(load_default_arm());
  fixture.set(posture());
  auto p = params();
  p.max_speed = 0.05;
  VisualTracking behaviour;
  behaviour.reset(p, fixture.context());
  const MotionVector v =
      step(behaviour, p, fixture, 0.0, 1, 0.0, p.reference_position + Vector3(0.2, 0.0, 0.0));
  EXPECT_NEAR(v.head<3>().norm(), 0.05, 1e-12);
}

TEST(VisualTracking, ALateImageIsPlacedWithTheCameraPoseOfItsCaptureTime) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto p = params();
  VisualTracking behaviour;
  fixture.set(posture());
  behaviour.reset(p, fixture.context());
  // 40 cycles at the first posture, no image yet.
  for (int n = 0; n < 40; ++n) step(behaviour, p, fixture, 0.001 * n, 0, 0.0, Vector3::Zero());
  const Frame then = camera(fixture, p);
  // The arm has moved since; the image taken at 20 ms arrives now and shows the target at
  // the reference position as the camera was then.
  fixture.set(posture(0.05));
  const Frame now = camera(fixture, p);
  ASSERT_GT((now.p - then.p).norm(), 0.01);
  const MotionVector v = step(behaviour, p, fixture, 0.040, 1, 0.020, p.reference_position);
  const Vector3 expected = p.gain * (then * p.reference_position - now * p.reference_position);
  EXPECT_LT((fixture.context().motion_pose.R * v.head<3>() - expected).norm(), 1e-9);
}

TEST(VisualTracking, SuccessiveImagesOfAMovingTargetFeedItsVelocityForward) {
  BehaviourContextFixture fixture(load_default_arm());
  fixture.set(posture());
  const auto p = params();  // 1 Hz velocity filter
  VisualTracking behaviour;
  behaviour.reset(p, fixture.context());
  const Frame c = camera(fixture, p);
  const Vector3 velocity(0.0, 0.05, -0.01);  // BASE [m/s]
  const Vector3 start = c * p.reference_position;
  std::uint64_t frame = 0;
  MotionVector v = MotionVector::Zero();
  for (int n = 0; n <= 4000; ++n) {  // 4 s at 1 kHz, an image every 33 ms, 50 ms late
    const double t = 0.001 * n;
    const double capture = std::floor((t - 0.05) * 30.0) / 30.0;
    if (capture >= 0.0) frame = static_cast<std::uint64_t>(std::lround(capture * 30.0)) + 1;
    v = step(behaviour, p, fixture, t, frame, capture,
             c.inverse() * (start + velocity * std::max(0.0, capture)));
  }
  EXPECT_LT((behaviour.target_velocity() - velocity).norm(), 1e-3)
      << behaviour.target_velocity().transpose();
  // The camera stood still meanwhile (the fixture's arm does not move): the command is the
  // target's velocity plus k times how far it is predicted to be by now.
  const Vector3 predicted = start + velocity * 4.0;
  const Vector3 expected = velocity + p.gain * (predicted - c * p.reference_position);
  EXPECT_LT((fixture.context().motion_pose.R * v.head<3>() - expected).norm(), 5e-3);
}

TEST(VisualTracking, OutOfViewItHoldsStillAndTheTargetIsLostAfterTheTimeout) {
  BehaviourContextFixture fixture(load_default_arm());
  fixture.set(posture());
  const auto p = params();  // lost after 0.5 s
  VisualTracking behaviour;
  behaviour.reset(p, fixture.context());
  EXPECT_FALSE(behaviour.lost(p, 0.4));  // counted from the start until a first image
  EXPECT_TRUE(behaviour.lost(p, 0.51));
  const Vector3 off = p.reference_position + Vector3(0.03, 0.0, 0.0);
  EXPECT_GT(step(behaviour, p, fixture, 0.30, 1, 0.25, off).norm(), 0.1);
  EXPECT_DOUBLE_EQ(behaviour.last_seen(), 0.25);
  // The next image does not show it: the camera holds still.
  EXPECT_EQ(step(behaviour, p, fixture, 0.33, 2, 0.28, Vector3::Zero(), false),
            MotionVector::Zero());
  EXPECT_FALSE(behaviour.lost(p, 0.74));
  EXPECT_TRUE(behaviour.lost(p, 0.76));
  // Seen again: it is followed again, and the timeout starts over from that image.
  EXPECT_GT(step(behaviour, p, fixture, 0.70, 3, 0.65, off).norm(), 0.1);
  EXPECT_FALSE(behaviour.lost(p, 1.1));
}

TEST(VisualTracking, ValidationNamesTheFieldTheValueAndTheRule) {
  TaskParameters task;
  task.visual_tracking.enabled = true;
  task.visual_tracking.reference_position = Vector3(0.0, 0.0, -0.1);
  task.visual_tracking.lost_timeout = 0.0;
  task.visual_tracking.gain = -1.0;
  const auto issues = validate_task(task, KinematicModel(load_default_arm()));
  std::vector<std::string> messages;
  for (const auto& issue : issues) messages.push_back(issue.message);
  const auto has = [&](const std::string& text) {
    return std::find(messages.begin(), messages.end(), text) != messages.end();
  };
  EXPECT_TRUE(
      has("visual_tracking.reference_position.z = -0.1: must be > 0 m: the target is "
          "wanted in front of the camera (C's z axis is the optical axis, out of the "
          "lens)"))
      << ::testing::PrintToString(messages);
  EXPECT_TRUE(has("visual_tracking.lost_timeout_s = 0: must be finite and > 0 s"))
      << ::testing::PrintToString(messages);
  EXPECT_TRUE(has("visual_tracking.gain = -1: must be finite and ≥ 0 1/s"))
      << ::testing::PrintToString(messages);
}

}  // namespace
}  // namespace tether::remote

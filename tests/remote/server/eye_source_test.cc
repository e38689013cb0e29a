// Which camera view sets camera mode's EYE frame, and when a switch of camera is applied.

#include "eye_source.h"

#include <gtest/gtest.h>

namespace tether::remote::server {
namespace {

TEST(EyeSource, EvenTheFirstCameraWaitsForTheEnablingSwitchToBeReleased) {
  // The task's own EYE frame is replaced by the camera's: a jump under a moving hand too.
  EyeSource eye;
  const auto view = eye.open("overview");
  const EyeSource::Take t = eye.take(view, /*driving=*/true);
  EXPECT_FALSE(t.apply);
  const EyeSource::Take released = eye.take(view, false);
  EXPECT_TRUE(released.apply);
  EXPECT_TRUE(released.switched);
  EXPECT_EQ(released.previous, "");
  EXPECT_EQ(eye.camera(), "overview");
  // Then every image of it applies, driving or not: a camera on a moving head is followed.
  EXPECT_TRUE(eye.take(view, true).apply);
  EXPECT_FALSE(eye.take(view, true).switched);
}

TEST(EyeSource, AnotherCameraTakesOverOnlyOnceTheEnablingSwitchIsReleased) {
  EyeSource eye;
  const auto first = eye.open("overview");
  ASSERT_TRUE(eye.take(first, false).apply);
  const auto second = eye.open("stereo_left");
  // The newest view is the one: the first sets nothing any more.
  EXPECT_FALSE(eye.take(first, false).apply);
  // While the hand drives, the frame stays the overview's.
  EXPECT_FALSE(eye.take(second, true).apply);
  EXPECT_EQ(eye.camera(), "overview");
  const EyeSource::Take t = eye.take(second, false);
  EXPECT_TRUE(t.apply);
  EXPECT_TRUE(t.switched);
  EXPECT_EQ(t.previous, "overview");
  EXPECT_EQ(eye.camera(), "stereo_left");
}

TEST(EyeSource, AnEndedViewSetsNothingAndASupersededOneDoesNotComeBack) {
  EyeSource eye;
  const auto first = eye.open("overview");
  const auto second = eye.open("stereo_left");
  eye.close(second);
  EXPECT_FALSE(eye.take(second, false).apply);
  EXPECT_FALSE(eye.take(first, false).apply);  // superseded: it asks again by reopening
  EXPECT_FALSE(eye.take(0, false).apply);
  eye.close(first);  // not the one: nothing changes
  const auto third = eye.open("overview");
  EXPECT_TRUE(eye.take(third, false).apply);
}

}  // namespace
}  // namespace tether::remote::server

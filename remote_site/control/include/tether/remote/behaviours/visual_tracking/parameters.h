#pragma once

// Parameters of the visual-tracking behaviour (the member `visual_tracking` of
// TaskParameters and message tether.v1.VisualTrackingParameters) and their validation.
// Frames, units and sign conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Visual tracking (the extended-task-space patent's "Visual Tracking" behaviour: visual
// servoing from a real or virtual camera). Position-based: the camera frame C on the tool
// (z along the optical axis, out of the lens; x right, y down in the image) is driven so
// that the target sits at `reference_position` in C, e.g. 0.3 m straight ahead.
struct VisualTrackingParameters {
  bool enabled = false;
  Frame tool_T_camera;                                  // C on the tool
  Vector3 reference_position = Vector3(0.0, 0.0, 0.3);  // [m] the target wanted in C
  double gain = 4.0;                                    // k [1/s]: v = k · (target − reference)
  // The target's own velocity, estimated from successive images, is fed forward so that a
  // target moving at constant speed is followed without a lag error; it is filtered with
  // this cutoff [Hz] (pixel noise makes a raw difference of images noisy). 0: no feed-forward.
  double velocity_filter_hz = 1.0;
  double max_speed = 0.25;  // [m/s] the commanded camera speed is clamped to this
  // The target not seen for longer than this stops the arm (BreachCause::kVisualTargetLost)
  // [s]; meanwhile the camera holds still. Counted from the task start until a first image.
  double lost_timeout = 0.5;
  InputKind input = InputKind::kVelocity;
  MotionVector damping = MotionVector::Constant(350.0);
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const VisualTrackingParameters& parameters, TaskChecker& check);

}  // namespace tether

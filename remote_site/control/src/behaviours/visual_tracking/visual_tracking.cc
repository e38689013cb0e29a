#include "tether/remote/behaviours/visual_tracking/visual_tracking.h"

#include <algorithm>
#include <cmath>

namespace tether::remote {

namespace {
constexpr double kTwoPi = 6.283185307179586;
}  // namespace

void VisualTracking::reset(const Params& /*params*/, const BehaviourContext& context) {
  history_size_ = 0;
  history_next_ = 0;
  // Only images taken from now on count: an earlier one may show an earlier task's scene.
  frame_ = context.arm != nullptr ? context.arm->visual.frame : 0;
  have_target_ = false;
  visible_ = false;
  last_seen_ = context.time;
  target_time_ = 0.0;
  target_.setZero();
  velocity_.setZero();
  xdot_.setZero();
}

const Frame& VisualTracking::camera_at(double time) const noexcept {
  // Newest first: an image is at most a latency old, so the search is short.
  int index = (history_next_ + kHistory - 1) % kHistory;
  for (int n = 1; n < history_size_; ++n) {
    if (history_[static_cast<std::size_t>(index)].time <= time) break;
    index = (index + kHistory - 1) % kHistory;
  }
  return history_[static_cast<std::size_t>(index)].base_T_camera;
}

void VisualTracking::update(const Params& params, const BehaviourContext& context,
                            BehaviourOutput& out) noexcept {
  xdot_.setZero();
  if (!params.enabled || context.arm == nullptr) return;
  const ArmState& arm = *context.arm;
  const Frame base_T_camera =
      context.motion_pose * (context.tool_T_motion.inverse() * params.tool_T_camera);
  history_[static_cast<std::size_t>(history_next_)] = Stamped{arm.time, base_T_camera};
  history_next_ = (history_next_ + 1) % kHistory;
  history_size_ = std::min(history_size_ + 1, kHistory);

  const VisualReading& reading = arm.visual;
  if (reading.frame != frame_) {
    frame_ = reading.frame;
    const bool valid = reading.valid && reading.target_in_camera.allFinite() &&
                       std::isfinite(reading.capture_time);
    if (valid) {
      const Vector3 target = camera_at(reading.capture_time) * reading.target_in_camera;
      // The velocity from two images in a row only: across a gap the target may have done
      // anything.
      const double dt = reading.capture_time - target_time_;
      if (visible_ && dt > 0.0 && params.velocity_filter_hz > 0.0) {
        const double alpha = dt / (dt + 1.0 / (kTwoPi * params.velocity_filter_hz));
        velocity_ += alpha * ((target - target_) / dt - velocity_);
      } else if (!visible_) {
        velocity_.setZero();
      }
      target_ = target;
      target_time_ = reading.capture_time;
      have_target_ = true;
      last_seen_ = context.time - std::max(0.0, arm.time - reading.capture_time);
    }
    visible_ = valid;
  }
  if (!have_target_ || !visible_) return;  // hold still until the target is seen again

  const Vector3 predicted = target_ + velocity_ * (arm.time - target_time_);
  Vector3 v = velocity_ + params.gain * (predicted - base_T_camera * params.reference_position);
  const double speed = v.norm();
  if (speed > params.max_speed) v *= params.max_speed / speed;
  // A pure translation of the tool: every point of it, the MOTION origin too, moves with v.
  xdot_.head<3>() = context.motion_pose.R.transpose() * v;
  add_velocity_input(params.input, params.damping, xdot_, out);
}

}  // namespace tether::remote

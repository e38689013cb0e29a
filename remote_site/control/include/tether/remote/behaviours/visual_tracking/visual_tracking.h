#pragma once

// Visual tracking (the extended-task-space patent names it among the behaviours: "generates
// control inputs to provide visual servoing" from real or virtual sensors): a
// position-based visual servo on a camera carried by the tool.
//
// The camera's reading (ArmState::visual) is the target's position p in the camera frame C
// at the image's capture time t_c, delivered some latency later. Each new image is placed
// in BASE with the camera pose of its capture time (a short history of the commanded
// camera poses), p_B = T_BC(t_c) p, and successive images give the target's velocity v_t
// (first-order filtered). Each cycle at time t the target is predicted to
// p_B + v_t (t − t_c), and the camera is driven at
//   v_B = v_t + k (p_B + v_t (t − t_c) − T_BC(t) r)          [m/s, BASE axes]
// with r the reference position in C, clamped to the task's maximum speed: a latency-free
// feed-forward and a proportional correction, so a target at constant speed is followed
// without a steady lag. The velocity is a pure translation of the tool, re-expressed in
// MOTION axes (row 6, ψ, is 0); it enters as a reference velocity (default) or as the force
// B ⊙ ẋ. While the target is out of view the camera holds still; past the task's
// lost_timeout the executor stops the arm (lost()).
//
// No allocation: the pose history is a fixed ring of the last kHistory cycles.

#include <array>
#include <cstdint>

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/visual_tracking/parameters.h"

namespace tether::remote {

class VisualTracking {
 public:
  using Params = VisualTrackingParameters;
  // Cycles of camera poses kept for placing a late image: 0.5 s at 1 kHz. An image older
  // than that is placed with the oldest pose kept.
  static constexpr int kHistory = 512;

  void reset(const Params& params, const BehaviourContext& context);
  // Needs context.arm, motion_pose and tool_T_motion; adds nothing when disabled.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  // True once the target has been out of sight longer than the task's lost_timeout at task
  // time `time` [s].
  bool lost(const Params& params, double time) const noexcept {
    return time - last_seen_ > params.lost_timeout;
  }
  double last_seen() const { return last_seen_; }    // [s] task time of the last image with it
  bool tracking() const { return have_target_; }     // an image has placed the target
  const Vector3& target() const { return target_; }  // p_B of the last image [m]
  const Vector3& target_velocity() const { return velocity_; }  // v_t [m/s] BASE
  const MotionVector& velocity() const { return xdot_; }        // last ẋ, MOTION axes

 private:
  struct Stamped {
    double time = 0.0;  // [s] arm clock
    Frame base_T_camera;
  };
  // The commanded camera pose at arm time `time` (nearest kept cycle).
  const Frame& camera_at(double time) const noexcept;

  std::array<Stamped, kHistory> history_{};
  int history_size_ = 0;
  int history_next_ = 0;
  std::uint64_t frame_ = 0;  // the last image used
  bool have_target_ = false;
  bool visible_ = false;  // the last image showed the target
  double last_seen_ = 0.0;
  double target_time_ = 0.0;  // [s] arm clock: capture time of target_
  Vector3 target_ = Vector3::Zero();
  Vector3 velocity_ = Vector3::Zero();
  MotionVector xdot_ = MotionVector::Zero();
};

}  // namespace tether::remote

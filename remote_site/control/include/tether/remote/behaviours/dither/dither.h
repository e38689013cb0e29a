#pragma once

// Dither (the extended-task-space patent): a small triangular velocity wave that keeps the tool
// moving in tight tolerance tasks (insertion), so static friction never sets in.
//
//   twist_D(t) = amplitude ⊙ tri(t / period)     DITHER axes, about the DITHER origin
//   tri(s): unit peak, zero mean, period 1, tri(0) = 0 rising: 0 → 1 at s = ¼ → −1 at
//           s = ¾ → 0 at s = 1 (the velocity, so the displacement is a smooth wave)
// t is the task time (context.time). The DITHER frame is rigidly attached to the MOTION
// frame (motion_T_dither), so its twist is re-expressed as the same rigid body's twist at
// the MOTION origin, in MOTION axes:
//   ω_M = R ω_D,   v_M = R v_D + p × ω_M    (R, p: motion_T_dither)
// i.e. an angular dither about the DITHER origin also translates the MOTION origin by the
// lever arm. Row 6 (ψ) is 0. It enters as a reference velocity (default) or as the force
// B ⊙ ẋ (InputKind). A period ≤ 0 or non-finite produces nothing.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/dither/parameters.h"

namespace tether::remote {

// tri(s) above: unit peak, zero mean, period 1.
double triangle_wave(double s) noexcept;

class Dither {
 public:
  using Params = DitherParameters;

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled. Needs context.time only.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  const MotionVector& velocity() const { return xdot_; }  // last ẋ, MOTION axes, for logs

 private:
  MotionVector xdot_ = MotionVector::Zero();
};

}  // namespace tether::remote

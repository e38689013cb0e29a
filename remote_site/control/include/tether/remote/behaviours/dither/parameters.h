#pragma once

// Parameters of the dither behaviour (the member `dither` of TaskParameters and message
// tether.v1.DitherParameters) and their validation. Frames, units and sign conventions as in
// tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Dither: triangular velocity wave of the given peak amplitude and period, in a DITHER
// frame attached to the MOTION frame.
struct DitherParameters {
  bool enabled = false;
  Vector6 amplitude = Vector6::Zero();  // peak twist [m/s, rad/s] in DITHER axes
  double period = 0.1;                  // [s]
  Frame motion_T_dither;
  InputKind input = InputKind::kVelocity;
  MotionVector damping = MotionVector::Constant(350.0);
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const DitherParameters& parameters, TaskChecker& check);

}  // namespace tether

#pragma once

// Parameters of the teleoperation behaviour (the member `teleoperation` of TaskParameters and
// message tether.v1.TeleoperationParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include "tether/common/types.h"
#include "tether/remote/task/parameter_types.h"

namespace tether {

class TaskChecker;

// Teleoperation (eq. 14, 32-36): F_t = B_t ẋ_h with ẋ_h the hand-controller velocity in the
// TELEOP frame. Samples are increments (remote/arm/arm_interface.h, HandControllerSample).
enum class TeleopMode {
  kTool,    // handle frame HH → TELEOP
  kWorld,   // hand-controller base HB → local WORLD ≡ remote WORLD → TELEOP
  kCamera,  // HB → local WORLD → stereo screen ST ≡ remote EYE → remote WORLD → TELEOP
};

struct TeleoperationParameters {
  bool enabled = false;
  TeleopMode mode = TeleopMode::kTool;
  // B_t diagonal in TELEOP axes [N·s/m | N·m·s/rad | N·m·s/rad]; zero rows are directions the
  // operator may not drive. Row 6 maps the trigger's arm-angle rate.
  MotionVector gain = MotionVector::Zero();
  Frame tool_T_teleop;                             // TELEOP frame on the tool
  Matrix3 teleop_R_handle = Matrix3::Identity();   // tool mode: HH axes in TELEOP axes
  Matrix3 world_R_hc_base = Matrix3::Identity();   // world mode: HB axes in WORLD axes
  Matrix3 screen_R_hc_base = Matrix3::Identity();  // camera mode: HB axes in ST axes
  Matrix3 world_R_eye = Matrix3::Identity();       // camera mode: EYE (≡ ST) axes in WORLD
  double stall_timeout = 0.1;  // [s] no sample for this long while enabled → stop
};

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const TeleoperationParameters& parameters, TaskChecker& check);

}  // namespace tether

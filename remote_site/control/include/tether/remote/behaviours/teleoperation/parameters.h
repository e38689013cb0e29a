#pragma once

// Parameters of the teleoperation behaviour (the member `teleoperation` of TaskParameters and
// message tether.v1.TeleoperationParameters) and their validation. Frames, units and sign
// conventions as in tether/remote/task/task_parameters.h.

#include <cstdint>

#include "tether/common/teleop_channel.h"
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
  // Camera mode: EYE (≡ ST) axes in WORLD. The cameras may ride on an arm: the running task
  // takes a new frame between cycles (SetParameter, up to 100 Hz), and each cycle maps its
  // camera-mode increments and rotates its reflection with the frame it has then.
  Matrix3 world_R_eye = Matrix3::Identity();
  // When world_R_eye was measured [ns], on its setter's clock (the ground's steady clock, as
  // HandControllerSample::ground_time_ns, or the camera arm's); 0 = not stamped. Not
  // interpreted here: reported with the reflection that used the frame, so the ground knows
  // which view the force is rendered in.
  std::uint64_t eye_time_ns = 0;
  // [s] least stall bound: no sample for this long stops the arm. The bound in force is the
  // larger of this and kStallJitterFactor × the largest recent gap between arrivals
  // (Teleoperation::stall_bound), at most kMaxStallBound, so a long but steady link is not
  // a stall and a link that falls silent is.
  double stall_timeout = 0.1;
  // [s] most the remote holds an increment back to play the stream out at the pace it was
  // sampled (a de-jitter buffer); 0 applies increments as they arrive, bursts and all.
  double max_playout_delay = 0.25;
  // With the enabling switch released: false, only the operator's input is zeroed and the
  // task's other behaviours go on; true, every behaviour holds (the task's time pauses).
  bool hold_all_when_disabled = false;
  // Delay-robust force reflection (tether/common/teleop_channel.h): what the channel between
  // the hand controller and this behaviour does with the velocity it delivers.
  ReflectionMethod reflection = ReflectionMethod::kNone;
  WaveImpedance wave_impedance{50.0, 5.0};  // wave method: b [N·s/m, N·m·s/rad]
  DriftCompensation drift;                  // passivity method: position-drift compensation
  // Reflect (and account at the ports) every axis of F_a; false: only the driven directions
  // (gain ≠ 0, TELEOP axes).
  bool reflect_all_axes = false;
};

// Stall bound: the larger of the task's stall timeout and this factor × the decaying peak of
// the gaps between arrivals, at most kMaxStallBound.
inline constexpr double kStallJitterFactor = 2.0;
inline constexpr double kMaxStallBound = 2.0;    // [s]
inline constexpr double kMaxPlayoutDelay = 1.0;  // [s]
// Arrival jitter below this is not played out (a few samples in one cycle are harmless).
inline constexpr double kMinPlayoutJitter = 0.005;  // [s]

// Reports every problem of `parameters` to `check` (tether/remote/task/validation.h).
void validate(const TeleoperationParameters& parameters, TaskChecker& check);

}  // namespace tether

#pragma once

// Teleoperation input (the extended-task-space patent, eq. 14 and appendix eq. 32-36): the
// operator's hand controller drives the MOTION frame through a virtual force F_t = B_t ẋ_h.
//
// The ground station sends hand-controller *increments* (displacement since the previous
// sample), numbered. Every cycle the behaviour drains the queue and sums the increments,
// so none is lost or applied twice even when samples arrive in bursts; the sum over one
// control period is the velocity ẋ_h. A sequence gap counts lost samples; a repeated or
// older number is dropped and counted.
//
// Frames (task_parameters.h, TeleoperationParameters):
//   tool mode    ẋ in the handle frame HH, rotated into TELEOP by teleop_R_handle
//   world mode   ẋ in the hand-controller base HB, rotated into remote WORLD by
//                world_R_hc_base (local WORLD ≡ remote WORLD), then into TELEOP with the
//                current commanded pose — so the same hand motion moves the tool the same
//                way in the world whatever its orientation
//   camera mode  ẋ in HB → stereo screen ST by screen_R_hc_base, ST ≡ remote EYE, → WORLD by
//                world_R_eye, then as world mode
// F_t is formed in TELEOP axes (B_t diagonal there) and moved to the MOTION origin and axes
// as a rigid-body wrench. Row 6 (arm angle) is the trigger's ψ increment times B_t[6].

#include <cstdint>
#include <optional>

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/teleoperation/parameters.h"
#include "tether/remote/loop/spsc_ring.h"

namespace tether::remote {

struct HandControllerSample {
  std::uint64_t sequence = 0;  // consecutive from 1 per stream
  // Displacement since the previous sample in the hand-controller frame of the mode
  // (HH for tool mode, HB otherwise): translation [m], rotation vector [rad].
  Vector6 increment = Vector6::Zero();
  double arm_angle_increment = 0.0;  // [rad], trigger + sign button
  // The ground's mode for this sample; empty = the task's mode. The ground may switch
  // modes while teleoperating, so each increment says which frame it is expressed in.
  std::optional<TeleopMode> mode;
  // Enable switch: a sample without it is not applied and stops the arm.
  bool deadman = true;
  std::uint64_t ground_time_ns = 0;  // the ground's sampling time, echoed for latency
};

using HandControllerQueue = SpscRing<HandControllerSample, 1024>;

struct TeleoperationCounters {
  std::uint64_t applied = 0;     // samples summed into a command
  std::uint64_t lost = 0;        // gaps in the sequence
  std::uint64_t duplicates = 0;  // repeated or out-of-order numbers, dropped
  std::uint64_t last_sequence = 0;
  std::uint64_t last_ground_time_ns = 0;  // of the sample with last_sequence
  friend bool operator==(const TeleoperationCounters&, const TeleoperationCounters&) = default;
};

class Teleoperation {
 public:
  // The queue is owned by whoever owns the executor; it must outlive this object.
  explicit Teleoperation(HandControllerQueue& queue) : queue_(&queue) {}

  // Restarts the stall clock; samples already queued are discarded as stale.
  void reset(const TeleoperationParameters& parameters, const BehaviourContext& context);
  void update(const TeleoperationParameters& parameters, const BehaviourContext& context,
              BehaviourOutput& out) noexcept;

  // True once no sample arrived for longer than the stall timeout.
  bool stalled(const TeleoperationParameters& parameters, double time) const noexcept {
    return time - last_sample_time_ > parameters.stall_timeout;
  }
  double last_sample_time() const { return last_sample_time_; }
  const TeleoperationCounters& counters() const { return counters_; }
  // Hand-controller velocity of the last cycle in TELEOP axes, for logs and reflection.
  const MotionVector& teleop_velocity() const { return velocity_; }
  // True once a sample arrived with the deadman released (until reset).
  bool deadman_released() const { return deadman_released_; }
  // Force reflection (eq. 37-39 up to J_hcᵀ): rotates a wrench in MOTION axes into the
  // hand-controller axes of the last sample's mode (HH for tool, HB otherwise). Like the
  // seed, it rotates force and torque alike and ignores the displacement between frames.
  const Matrix3& hand_controller_R_motion() const { return hc_R_motion_; }
  TeleopMode last_mode() const { return last_mode_; }

 private:
  HandControllerQueue* queue_;
  TeleoperationCounters counters_;
  double last_sample_time_ = 0.0;
  MotionVector velocity_ = MotionVector::Zero();
  bool deadman_released_ = false;
  TeleopMode last_mode_ = TeleopMode::kTool;
  Matrix3 hc_R_motion_ = Matrix3::Identity();
};

// Rotation of hand-controller axes into TELEOP axes for the mode, given the commanded
// TELEOP pose in BASE and the BASE pose in WORLD.
Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters, TeleopMode mode,
                                 const Matrix3& base_R_teleop, const Matrix3& world_R_base);
inline Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters,
                                        const Matrix3& base_R_teleop, const Matrix3& world_R_base) {
  return teleop_R_hand_controller(parameters, parameters.mode, base_R_teleop, world_R_base);
}

}  // namespace tether::remote

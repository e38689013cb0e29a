#pragma once

// The operator's teleoperation input at the ground station (the extended-task-space patent
// appendix): the local half of eq. 32-36 and the last step of eq. 37-39.
//
// Motion. Each sample() reads the device and picks the increment of the mode's frame:
//   tool mode           HH increment (eq. 32: HH ẋ_h = HH J_hc θ̇)
//   world, camera mode  HB increment (eq. 33: HB ẋ_h = HB J_hc θ̇)
// scaled by translation_scale (rows 0-2), rotation_scale (rows 3-5) and arm_angle_scale (ψ).
// The remote site rotates it into TELEOP (eq. 34-36). Nothing moves — the increment is zero —
// unless the deadman is held, the clutch is released and the device is valid. While clutched
// the hand may move freely to re-index: that motion is never sent, so releasing the clutch
// continues from wherever the hand is, without a jump.
//
// Scaling changes only while clutched (the robot is then still, so a new scale cannot cause a
// jump): the device's scale buttons multiply (+) or divide (−) both motion scales by
// scale_step per press, kept within [min_scale, max_scale]; presses while not clutched are
// ignored and counted. The mode changes only while clutched or with the deadman released.
//
// Force reflection. The remote site sends the measured wrench F_a and the force-tracking error
// F_r − F_a already rotated into the hand-controller axes of the mode (HH for tool, HB for
// world and camera), about the HH origin; F_a is, as everywhere in tether, the wrench the
// robot applies to its environment. The wrench rendered on the operator's hand is
//   kMeasured:       F_hc = S ⊙ (−F_a)      the environment's reaction, as if holding the tool
//   kTrackingError:  F_hc = S ⊙ (F_r − F_a) equal to the above when F_r = 0
// with S = (force_scale ×3, torque_scale ×3); then |force| ≤ max_force and |torque| ≤
// max_torque, each clamped along its own direction. The actuators get τ = J_hcᵀ F_hc with the
// device's Jacobian in the same axes (eq. 37-39's last step). Nothing is rendered unless
// motion is being sent (deadman held, clutch released, device valid): a hand that is
// re-indexing or has let go must not be pushed. Non-finite wrenches render nothing.
//
// sample() and reflect() run in the teleoperation thread every cycle: no allocation, lock,
// log or throw. The setters are operator commands and throw std::invalid_argument /
// std::logic_error with the field, the value and what is allowed.

#include <cstdint>
#include <memory>

#include "tether/local/hand_controller/hand_controller.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

struct ForceReflectionConfig {
  enum class Source { kNone, kMeasured, kTrackingError };
  Source source = Source::kNone;
  double force_scale = 0.0;   // rendered N per remote N, in [0, 10]
  double torque_scale = 0.0;  // rendered N·m per remote N·m, in [0, 10]
  double max_force = 0.0;     // [N] in [0, 100]
  double max_torque = 0.0;    // [N·m] in [0, 10]
  // Coupling damping (the virtual coupling of haptic rendering, Colgate; Adams and
  // Hannaford): the teleoperation session adds to the reflected wrench a damping of
  // damping_ratio × S × B_t against the operator's velocity, B_t the task's largest
  // teleoperation gain of each kind. Rate control closes a damping of S × B_t through the
  // arm, lagged by its dynamics and the wrench filter; on a light hand at a high scale that
  // rings at tens of hertz. A local, undelayed share of it damps the ring. In [0, 10].
  double damping_ratio = 0.0;
};

struct OperatorInputConfig {
  TeleopMode mode = TeleopMode::kTool;
  double translation_scale = 1.0;  // remote m per hand m, in [min_scale, max_scale]
  double rotation_scale = 1.0;     // remote rad per hand rad, in [min_scale, max_scale]
  double arm_angle_scale = 1.0;    // in (0, 100]
  double min_scale = 0.1;          // in (0, max_scale]
  double max_scale = 10.0;         // in [min_scale, 1000]
  double scale_step = 1.25;        // factor per scale button press, in (1, 10]
  ForceReflectionConfig reflection;
};

// Throw std::invalid_argument naming the field, the value and the allowed range.
void validate(const ForceReflectionConfig& config);
void validate(const OperatorInputConfig& config);

struct OperatorIncrement {
  double time = 0.0;  // [s] the sample's time
  TeleopMode mode = TeleopMode::kTool;
  Vector6 increment = Vector6::Zero();  // scaled, HH (tool) / HB (world, camera); [m, rad]
  double arm_angle_increment = 0.0;     // scaled [rad]
  bool deadman = false;
  bool clutch = false;
  bool valid = true;  // false: device lost or script ended
};

struct OperatorInputCounters {
  std::uint64_t samples = 0;
  std::uint64_t deadman_releases = 0;     // held → released transitions
  std::uint64_t refused_scale_steps = 0;  // scale presses while not clutched
  std::uint64_t invalid_samples = 0;
  std::uint64_t rejected_wrenches = 0;  // non-finite wrenches given to reflect()
};

const char* to_string(TeleopMode mode);

class OperatorInput {
 public:
  OperatorInput(std::unique_ptr<HandController> device, const OperatorInputConfig& config);

  OperatorIncrement sample(double now) noexcept;
  // Only while clutched or with the deadman released; throws std::logic_error otherwise.
  void set_mode(TeleopMode mode);
  // Only while clutched (std::logic_error otherwise), each in [min_scale, max_scale]
  // (std::invalid_argument otherwise); both messages name the field and the value.
  void set_scale(double translation, double rotation);
  // Any time; takes effect at the next reflect().
  void set_reflection(const ForceReflectionConfig& reflection);

  // Wrenches in the hand-controller axes of the current mode [N, N·m]; returns the actuator
  // torques rendered (after scale and clamp; zero for a device without actuators).
  Vector6 reflect(const Eigen::Ref<const Vector6>& measured,
                  const Eigen::Ref<const Vector6>& tracking_error) noexcept;

  TeleopMode mode() const { return mode_; }
  double translation_scale() const { return translation_scale_; }
  double rotation_scale() const { return rotation_scale_; }
  // True when the last sample sent motion: deadman held, clutch released, device valid.
  bool engaged() const { return engaged_; }
  // Wrench of the last reflect() on the operator's hand (after scale and clamp), mode axes.
  const Vector6& reflected_wrench() const { return reflected_; }
  const OperatorInputCounters& counters() const { return counters_; }
  const OperatorInputConfig& config() const { return config_; }
  HandController& device() { return *device_; }

 private:
  std::unique_ptr<HandController> device_;
  OperatorInputConfig config_;
  TeleopMode mode_;
  double translation_scale_;
  double rotation_scale_;
  bool deadman_ = false;
  bool clutch_ = false;
  bool engaged_ = false;
  Vector6 reflected_ = Vector6::Zero();
  OperatorInputCounters counters_;
};

}  // namespace tether::local

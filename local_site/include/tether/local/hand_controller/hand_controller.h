#pragma once

// A hand-controller device driver, as the ground station's teleoperation loop sees it
// (the extended-task-space patent appendix, eq. 32-33 and the last step of eq. 37-39).
//
// Frames:
//   HB  the hand controller's fixed base frame (configured per device, see open.h)
//   HH  a frame fixed in the handle (grip)
// Increments are the handle's displacement since the previous sample(): translation [m]
// first, then a rotation vector [rad], expressed in HH axes (eq. 32, tool mode) and in HB
// axes (eq. 33, world and camera modes). Over one sample they are the handle twist times
// the sample interval, the twist taken at the middle of the interval; the translation is
// that of the HH origin.
//
// Threading: sample(), render() and jacobian() are called from the one teleoperation
// thread at its rate (1 kHz); they never block, allocate, lock or throw. Set-up (the
// constructors and open_hand_controller) throws on bad configuration or devices.

#include <optional>
#include <string>

#include "tether/common/types.h"
#include "tether/remote/behaviours/teleoperation/parameters.h"

namespace tether::local {

// One reading of a device.
struct DeviceSample {
  double time = 0.0;                           // [s] steady clock, the `now` given to sample()
  Vector6 increment_handle = Vector6::Zero();  // in the handle frame HH (eq. 32)
  Vector6 increment_base = Vector6::Zero();    // in the device base frame HB (eq. 33)
  double arm_angle_increment = 0.0;            // [rad] trigger + sign button; + raises ψ
  bool deadman = false;                        // enable switch held
  bool clutch = false;                         // clutch engaged: motion is NOT sent
  int scale_steps = 0;  // scale up (+) / down (−) button presses since the last sample
  bool valid = true;    // false: device lost / end of script; increments are then zero
};

// What a driver reports once the device is lost: no motion.
inline void clear_motion(DeviceSample& sample) {
  sample.increment_handle.setZero();
  sample.increment_base.setZero();
  sample.arm_angle_increment = 0.0;
}

// Axes in which a hand-controller Jacobian gives the handle twist.
enum class HandFrame {
  kHandle,  // HH: tool mode
  kBase,    // HB: world and camera modes
};

class HandController {
 public:
  virtual ~HandController() = default;

  // One line for logs: the kind of device and where it is.
  virtual std::string describe() const = 0;
  // Non-blocking: consumes whatever input arrived since the previous call. `now` [s] must
  // not decrease; the first call only starts the clock (zero increments).
  virtual DeviceSample sample(double now) = 0;
  virtual bool has_actuators() const = 0;
  // Actuator command for the joint/axis actuators [N·m for revolute, N for prismatic],
  // held until the next call; devices without actuators ignore it.
  virtual void render(const Eigen::Ref<const Vector6>& actuator_torques) = 0;
  // J_hc at the configuration of the last sample(): maps joint velocities [rad/s] to the
  // handle twist (v [m/s], ω [rad/s]) at the HH origin in the axes of `frame`, so
  // τ = J_hcᵀ F renders the wrench F (force at the HH origin, in those axes) on the
  // operator's hand. Zero for devices without actuators.
  // The teleoperation mode the operator picked on the device itself (the browser console's
  // mode buttons), or none for devices without such a choice. OperatorInput takes it at the
  // first sample where a mode change is allowed (clutched or deadman released).
  virtual std::optional<TeleopMode> requested_mode() const { return std::nullopt; }
  virtual Matrix6 jacobian(HandFrame frame) const {
    static_cast<void>(frame);
    return Matrix6::Zero();
  }
};

}  // namespace tether::local

#pragma once

// Rate-commanding devices (keyboard, evdev and joystick 6-axis devices, scripted playback):
// the operator commands a handle twist rather than moving a mechanism, so the driver keeps
// a virtual handle pose HB_T_HH and integrates the commanded rates into it. That pose is what
// makes the HH increments (eq. 32) and the HB increments (eq. 33) differ once the virtual
// handle has turned.
//
// Rates are piecewise constant; a derived driver says what the command is at a time and when
// it next changes by itself (a key's hold running out, a script line starting), and the base
// integrates exactly across those instants, so increments do not depend on the sample rate.

#include <limits>

#include "tether/local/hand_controller/hand_controller.h"

namespace tether::local {

// A commanded handle twist (v [m/s], ω [rad/s]) and arm-angle rate [rad/s].
struct RateCommand {
  Vector6 twist = Vector6::Zero();
  bool handle_axes = false;  // twist given in HH axes (true) or HB axes (false)
  double arm_angle_rate = 0.0;
};

// The virtual handle: its pose in HB, moved by rates held over an interval.
class VirtualHandle {
 public:
  VirtualHandle() = default;
  explicit VirtualHandle(const Frame& base_T_handle) : pose_(base_T_handle) {}

  // Holds `command` for dt [s] and adds the displacement to the increments. Rotation uses
  // the exact exponential; the other frame's axes are those at the middle of the interval.
  void advance(const RateCommand& command, double dt, Vector6& increment_handle,
               Vector6& increment_base);
  const Frame& pose() const { return pose_; }  // HB_T_HH
  void set_pose(const Frame& base_T_handle) { pose_ = base_T_handle; }

 private:
  Frame pose_;
};

class RateHandController : public HandController {
 public:
  DeviceSample sample(double now) override;
  bool has_actuators() const override { return false; }
  void render(const Eigen::Ref<const Vector6>& /*actuator_torques*/) override {}
  const VirtualHandle& handle() const { return handle_; }

 protected:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // The command in force at time t (it holds until next_change_after(t)).
  virtual RateCommand command_at(double t) const = 0;
  // The first instant > t at which the command changes without new input; kNever if none.
  virtual double next_change_after(double /*t*/) const { return kNever; }
  // Consumes the input that arrived up to `now`: updates the command from now on and fills
  // the sample's switches (deadman, clutch, scale_steps, valid).
  virtual void poll(double now, DeviceSample& out) = 0;

 private:
  VirtualHandle handle_;
  double last_time_ = 0.0;
  bool started_ = false;
};

}  // namespace tether::local

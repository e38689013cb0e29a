#pragma once

// The controlled stop every fault leads to: the joint velocity command at the moment of the
// breach is ramped linearly to zero within the task's stop time, integrated into position
// commands, and the arm then holds the reached position. The ramp keeps the deceleration
// within |q̇₀|/T_stop and needs nothing but the last command — it works when the
// kinematics, the sensors or the network are what failed.

#include "tether/common/types.h"

namespace tether::remote {

class ControlledStop {
 public:
  // Starts a stop from the commanded joint position and velocity; stop_time [s] > 0.
  void start(const JointVector& position, const JointVector& velocity, double stop_time) noexcept;
  // Advances one period dt [s]; writes the next position and velocity command.
  void step(double dt, JointVector& position, JointVector& velocity) noexcept;
  // Moves the position the ramp integrates from by `offset` (a compliant hold yielding).
  void shift(const JointVector& offset) noexcept { position_ += offset; }
  bool active() const { return active_; }
  bool at_rest() const { return elapsed_ >= stop_time_; }

 private:
  JointVector position_ = JointVector::Zero();
  JointVector initial_velocity_ = JointVector::Zero();
  double stop_time_ = 0.0;
  double elapsed_ = 0.0;
  bool active_ = false;
};

}  // namespace tether::remote

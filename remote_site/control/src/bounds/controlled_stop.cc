#include "tether/remote/bounds/controlled_stop.h"

#include <algorithm>

namespace tether::remote {

void ControlledStop::start(const JointVector& position, const JointVector& velocity,
                           double stop_time) noexcept {
  position_ = position;
  // A non-finite velocity (the fault may be exactly that) stops on the spot.
  initial_velocity_ = velocity.allFinite() ? velocity : JointVector::Zero();
  stop_time_ = stop_time > 0.0 ? stop_time : 0.0;
  elapsed_ = 0.0;
  active_ = true;
}

void ControlledStop::step(double dt, JointVector& position, JointVector& velocity) noexcept {
  // Trapezoidal integration of the linear ramp over [elapsed, elapsed + dt].
  const double t0 = elapsed_;
  const double t1 = std::min(elapsed_ + dt, stop_time_);
  if (t1 > t0 && stop_time_ > 0.0) {
    const double f0 = 1.0 - t0 / stop_time_;
    const double f1 = 1.0 - t1 / stop_time_;
    position_ += initial_velocity_ * (0.5 * (f0 + f1) * (t1 - t0));
    velocity = initial_velocity_ * f1;
  } else {
    velocity.setZero();
  }
  elapsed_ += dt;
  position = position_;
}

}  // namespace tether::remote

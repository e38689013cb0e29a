#include "tether/local/hand_controller/rate_device.h"

#include <algorithm>

#include "tether/common/spatial.h"

namespace tether::local {

void VirtualHandle::advance(const RateCommand& command, double dt, Vector6& increment_handle,
                            Vector6& increment_base) {
  if (!(dt > 0.0)) return;
  const Vector3 v = command.twist.head<3>();
  const Vector3 w = command.twist.tail<3>();
  // ω is its own rotation's axis, so it has the same coordinates at the start and the middle
  // of the interval in the frame it is given in; the mid-interval axes map it to the other.
  if (command.handle_axes) {
    const Matrix3 R_mid = pose_.R * so3_exp(0.5 * dt * w);
    increment_handle.head<3>() += v * dt;
    increment_handle.tail<3>() += w * dt;
    increment_base.head<3>() += R_mid * v * dt;
    increment_base.tail<3>() += R_mid * w * dt;
    pose_.p += R_mid * v * dt;
    pose_.R = pose_.R * so3_exp(dt * w);
  } else {
    const Matrix3 R_mid = so3_exp(0.5 * dt * w) * pose_.R;
    increment_base.head<3>() += v * dt;
    increment_base.tail<3>() += w * dt;
    increment_handle.head<3>() += R_mid.transpose() * v * dt;
    increment_handle.tail<3>() += R_mid.transpose() * w * dt;
    pose_.p += v * dt;
    pose_.R = so3_exp(dt * w) * pose_.R;
  }
}

DeviceSample RateHandController::sample(double now) {
  DeviceSample out;
  out.time = now;
  if (!started_) {
    started_ = true;
    last_time_ = now;
  }
  double t = last_time_;
  while (t < now) {
    double next = std::min(next_change_after(t), now);
    // A change time shifted by the script's origin can round back onto t; never stall.
    if (!(next > t)) next = now;
    const RateCommand command = command_at(t);
    handle_.advance(command, next - t, out.increment_handle, out.increment_base);
    out.arm_angle_increment += command.arm_angle_rate * (next - t);
    t = next;
  }
  last_time_ = std::max(last_time_, now);
  poll(now, out);
  if (!out.valid) clear_motion(out);
  return out;
}

}  // namespace tether::local

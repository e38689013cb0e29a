#include "tether/local/hand_controller/axis_device.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "config_check.h"
#include "fd_reader.h"

namespace tether::local {

AxisDeviceConfig AxisDeviceConfig::joystick_defaults() {
  AxisDeviceConfig config;
  config.full_scale = 32767.0;
  config.deadband = 1500.0;
  config.deadman_button = 0;
  config.clutch_button = 1;
  config.scale_up_button = 2;
  config.scale_down_button = 3;
  config.arm_up_button = 4;
  config.arm_down_button = 5;
  return config;
}

void validate(const AxisDeviceConfig& config) {
  detail::require_positive("axis_device.full_scale", config.full_scale);
  detail::require_range("axis_device.deadband", config.deadband, 0.0,
                        std::nextafter(config.full_scale, 0.0));
  detail::require_range("axis_device.linear_rate", config.linear_rate, 1e-9, 1.0);
  detail::require_range("axis_device.angular_rate", config.angular_rate, 1e-9, 10.0);
  detail::require_range("axis_device.arm_angle_rate", config.arm_angle_rate, 1e-9, 10.0);
  for (int i = 0; i < 6; ++i) {
    const double s = config.axis_sign[i];
    if (s != 1.0 && s != -1.0) {
      detail::config_error(detail::indexed_field("axis_device.axis_sign", i), s,
                           "must be +1 or -1");
    }
  }
  const Matrix3& R = config.hb_R_device;
  const double orthonormality = (R.transpose() * R - Matrix3::Identity()).cwiseAbs().maxCoeff();
  if (!R.allFinite() || orthonormality > 1e-6 || R.determinant() < 0.0) {
    detail::config_error("axis_device.hb_R_device", orthonormality,
                         "must be a rotation (orthonormal within 1e-06, det +1); the value is "
                         "the largest deviation of RᵀR from I");
  }
}

AxisHandController::AxisHandController(asio::io_context& io, int fd, bool owns_fd, std::string kind,
                                       std::string name, std::size_t record_size,
                                       const AxisDeviceConfig& config)
    : config_(config), kind_(std::move(kind)), name_(std::move(name)), record_size_(record_size) {
  // A descriptor handed over is closed even if the configuration is refused.
  reader_ = std::make_unique<detail::FdReader>(io, fd, owns_fd);
  validate(config_);
  level_.fill(0.0);
}

AxisHandController::~AxisHandController() = default;

void AxisHandController::poll(double /*now*/, DeviceSample& out) {
  reader_->drain(buffer_, filled_, record_size_,
                 [&](const unsigned char* bytes) { on_record(bytes, out); });
  out.deadman = deadman_;
  out.clutch = clutch_;
  out.valid = !reader_->lost();
}

RateCommand AxisHandController::command_at(double /*t*/) const {
  RateCommand command;
  command.handle_axes = config_.handle_axes;
  const Vector3 v(level_[0], level_[1], level_[2]);
  const Vector3 w(level_[3], level_[4], level_[5]);
  command.twist.head<3>() = config_.hb_R_device * v * config_.linear_rate;
  command.twist.tail<3>() = config_.hb_R_device * w * config_.angular_rate;
  command.arm_angle_rate =
      ((arm_up_ ? 1.0 : 0.0) - (arm_down_ ? 1.0 : 0.0)) * config_.arm_angle_rate;
  return command;
}

void AxisHandController::on_axis(int axis, double raw) {
  if (axis < 0 || axis >= 6) return;
  const double magnitude = std::abs(raw) - config_.deadband;
  const double level =
      magnitude <= 0.0 ? 0.0 : std::min(1.0, magnitude / (config_.full_scale - config_.deadband));
  level_[axis] = config_.axis_sign[axis] * std::copysign(level, raw);
}

void AxisHandController::on_button(int code, bool pressed, DeviceSample& out) {
  if (code < 0) return;
  if (code == config_.deadman_button) deadman_ = pressed;
  if (code == config_.clutch_button) clutch_ = pressed;
  if (code == config_.arm_up_button) arm_up_ = pressed;
  if (code == config_.arm_down_button) arm_down_ = pressed;
  if (pressed && code == config_.scale_up_button) ++out.scale_steps;
  if (pressed && code == config_.scale_down_button) --out.scale_steps;
}

}  // namespace tether::local

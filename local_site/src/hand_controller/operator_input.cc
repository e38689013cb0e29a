#include "tether/local/hand_controller/operator_input.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "config_check.h"

namespace tether::local {

namespace {

// Scales `v` down to length `limit` if longer; direction kept.
Vector3 clamp_norm(const Vector3& v, double limit) {
  const double norm = v.norm();
  return norm > limit ? Vector3(v * (limit / norm)) : v;
}

}  // namespace

const char* to_string(TeleopMode mode) {
  switch (mode) {
    case TeleopMode::kTool:
      return "tool";
    case TeleopMode::kWorld:
      return "world";
    case TeleopMode::kCamera:
      return "camera";
  }
  return "unknown";
}

void validate(const ForceReflectionConfig& config) {
  detail::require_range("reflection.force_scale", config.force_scale, 0.0, 10.0);
  detail::require_range("reflection.torque_scale", config.torque_scale, 0.0, 10.0);
  detail::require_range("reflection.max_force", config.max_force, 0.0, 100.0);
  detail::require_range("reflection.max_torque", config.max_torque, 0.0, 10.0);
  detail::require_range("reflection.damping_ratio", config.damping_ratio, 0.0, 10.0);
}

void validate(const OperatorInputConfig& config) {
  detail::require_range("operator_input.max_scale", config.max_scale, 1e-6, 1000.0);
  detail::require_range("operator_input.min_scale", config.min_scale, 1e-6, config.max_scale);
  detail::require_range("operator_input.translation_scale", config.translation_scale,
                        config.min_scale, config.max_scale);
  detail::require_range("operator_input.rotation_scale", config.rotation_scale, config.min_scale,
                        config.max_scale);
  detail::require_range("operator_input.arm_angle_scale", config.arm_angle_scale, 1e-6, 100.0);
  if (!std::isfinite(config.scale_step) || !(config.scale_step > 1.0) || config.scale_step > 10.0) {
    detail::config_error("operator_input.scale_step", config.scale_step,
                         "must be finite and in (1, 10]");
  }
  validate(config.reflection);
}

OperatorInput::OperatorInput(std::unique_ptr<HandController> device,
                             const OperatorInputConfig& config)
    : device_(std::move(device)),
      config_(config),
      mode_(config.mode),
      translation_scale_(config.translation_scale),
      rotation_scale_(config.rotation_scale) {
  if (!device_) throw std::invalid_argument("OperatorInput: no hand controller given");
  validate(config_);
}

OperatorIncrement OperatorInput::sample(double now) noexcept {
  const DeviceSample s = device_->sample(now);
  ++counters_.samples;
  if (!s.valid) ++counters_.invalid_samples;
  if (deadman_ && !s.deadman) ++counters_.deadman_releases;
  deadman_ = s.deadman;
  clutch_ = s.clutch;
  engaged_ = s.valid && s.deadman && !s.clutch;
  // A mode picked on the device waits, like set_mode(), until the hand is not driving.
  if (const auto mode = device_->requested_mode(); mode && *mode != mode_ && !engaged_) {
    mode_ = *mode;
  }

  if (s.scale_steps != 0) {
    if (clutch_) {
      const double factor = std::pow(config_.scale_step, s.scale_steps);
      translation_scale_ =
          std::clamp(translation_scale_ * factor, config_.min_scale, config_.max_scale);
      rotation_scale_ = std::clamp(rotation_scale_ * factor, config_.min_scale, config_.max_scale);
    } else {
      counters_.refused_scale_steps += static_cast<std::uint64_t>(std::abs(s.scale_steps));
    }
  }

  OperatorIncrement out;
  out.time = s.time;
  out.mode = mode_;
  out.deadman = s.deadman;
  out.clutch = s.clutch;
  out.valid = s.valid;
  if (engaged_) {
    const Vector6& raw = mode_ == TeleopMode::kTool ? s.increment_handle : s.increment_base;
    out.increment.head<3>() = raw.head<3>() * translation_scale_;
    out.increment.tail<3>() = raw.tail<3>() * rotation_scale_;
    out.arm_angle_increment = s.arm_angle_increment * config_.arm_angle_scale;
  }
  return out;
}

void OperatorInput::set_mode(TeleopMode mode) {
  if (mode == mode_) return;
  if (deadman_ && !clutch_) {
    throw std::logic_error(std::string("teleoperation mode ") + to_string(mode_) + " -> " +
                           to_string(mode) +
                           " refused: engage the clutch or release the deadman first "
                           "(deadman held, clutch released)");
  }
  mode_ = mode;
}

void OperatorInput::set_scale(double translation, double rotation) {
  if (!clutch_) {
    std::ostringstream message;
    message << "operator_input.translation_scale = " << translation
            << ", operator_input.rotation_scale = " << rotation
            << " refused: scales change only while the clutch is engaged (allowed range ["
            << config_.min_scale << ", " << config_.max_scale << "])";
    throw std::logic_error(message.str());
  }
  detail::require_range("operator_input.translation_scale", translation, config_.min_scale,
                        config_.max_scale);
  detail::require_range("operator_input.rotation_scale", rotation, config_.min_scale,
                        config_.max_scale);
  translation_scale_ = translation;
  rotation_scale_ = rotation;
}

void OperatorInput::set_reflection(const ForceReflectionConfig& reflection) {
  validate(reflection);
  config_.reflection = reflection;
}

Vector6 OperatorInput::reflect(const Eigen::Ref<const Vector6>& measured,
                               const Eigen::Ref<const Vector6>& tracking_error) noexcept {
  using Source = ForceReflectionConfig::Source;
  const ForceReflectionConfig& r = config_.reflection;
  reflected_.setZero();
  if (engaged_ && r.source != Source::kNone) {
    const Vector6 source =
        r.source == Source::kMeasured ? Vector6(-measured) : Vector6(tracking_error);
    if (source.allFinite()) {
      reflected_.head<3>() = clamp_norm(source.head<3>() * r.force_scale, r.max_force);
      reflected_.tail<3>() = clamp_norm(source.tail<3>() * r.torque_scale, r.max_torque);
    } else {
      ++counters_.rejected_wrenches;
    }
  }
  Vector6 tau = Vector6::Zero();
  if (device_->has_actuators()) {
    const HandFrame frame = mode_ == TeleopMode::kTool ? HandFrame::kHandle : HandFrame::kBase;
    tau = device_->jacobian(frame).transpose() * reflected_;
    device_->render(tau);
  }
  return tau;
}

}  // namespace tether::local

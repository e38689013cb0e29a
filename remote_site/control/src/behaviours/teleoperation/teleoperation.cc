#include "tether/remote/behaviours/teleoperation/teleoperation.h"

#include <array>

#include "tether/common/spatial.h"

namespace tether::remote {

Matrix3 teleop_R_hand_controller(const TeleoperationParameters& parameters, TeleopMode mode,
                                 const Matrix3& base_R_teleop, const Matrix3& world_R_base) {
  switch (mode) {
    case TeleopMode::kTool:
      return parameters.teleop_R_handle;
    case TeleopMode::kWorld:
      return (world_R_base * base_R_teleop).transpose() * parameters.world_R_hc_base;
    case TeleopMode::kCamera:
      return (world_R_base * base_R_teleop).transpose() * parameters.world_R_eye *
             parameters.screen_R_hc_base;
  }
  return Matrix3::Identity();
}

void Teleoperation::reset(const TeleoperationParameters& /*parameters*/,
                          const BehaviourContext& context) {
  HandControllerSample stale;
  while (queue_->pop(stale)) {
    counters_.last_sequence = stale.sequence;
  }
  last_sample_time_ = context.time;
  velocity_.setZero();
  deadman_released_ = false;
}

void Teleoperation::update(const TeleoperationParameters& parameters,
                           const BehaviourContext& context, BehaviourOutput& out) noexcept {
  const Frame tool_T_teleop = parameters.tool_T_teleop;
  const Frame base_T_tool = context.motion_pose * context.tool_T_motion.inverse();
  const Matrix3 base_R_teleop = base_T_tool.R * tool_T_teleop.R;
  // Rotations for every mode up front: samples of one cycle may differ in mode.
  std::array<Matrix3, 3> teleop_R_hc;
  for (TeleopMode mode : {TeleopMode::kTool, TeleopMode::kWorld, TeleopMode::kCamera}) {
    teleop_R_hc[static_cast<std::size_t>(mode)] =
        teleop_R_hand_controller(parameters, mode, base_R_teleop, context.world_T_base.R);
  }

  Vector6 increment = Vector6::Zero();  // TELEOP axes
  double arm_angle_increment = 0.0;
  bool received = false;
  HandControllerSample sample;
  while (queue_->pop(sample)) {
    if (sample.sequence <= counters_.last_sequence) {
      ++counters_.duplicates;
      continue;
    }
    counters_.lost += sample.sequence - counters_.last_sequence - 1;
    counters_.last_sequence = sample.sequence;
    counters_.last_ground_time_ns = sample.ground_time_ns;
    received = true;
    if (!sample.deadman) {
      deadman_released_ = true;
      continue;
    }
    ++counters_.applied;
    last_mode_ = sample.mode.value_or(parameters.mode);
    const Matrix3& R = teleop_R_hc[static_cast<std::size_t>(last_mode_)];
    increment.head<3>() += R * sample.increment.head<3>();
    increment.tail<3>() += R * sample.increment.tail<3>();
    arm_angle_increment += sample.arm_angle_increment;
  }
  if (received) last_sample_time_ = context.time;

  velocity_.head<6>() = increment / context.dt;
  velocity_[6] = arm_angle_increment / context.dt;

  const Vector6 wrench_teleop = parameters.gain.head<6>().cwiseProduct(velocity_.head<6>());
  const Frame motion_T_teleop = context.tool_T_motion.inverse() * tool_T_teleop;
  out.force.head<6>() += transform_wrench(motion_T_teleop, wrench_teleop);
  out.force[6] += parameters.gain[6] * velocity_[6];
  hc_R_motion_ =
      teleop_R_hc[static_cast<std::size_t>(last_mode_)].transpose() * motion_T_teleop.R.transpose();
}

}  // namespace tether::remote

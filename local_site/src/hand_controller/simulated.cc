#include "tether/local/hand_controller/simulated.h"

#include <cmath>
#include <string>

#include "config_check.h"
#include "tether/common/spatial.h"

namespace tether::local {

namespace {

// Pose change of a revolute joint with unit axis `axis` through `point`, turned by `angle`.
Frame revolute(const Vector3& axis, const Vector3& point, double angle) {
  Frame motion;
  motion.R = so3_exp(axis * angle);
  motion.p = (Matrix3::Identity() - motion.R) * point;
  return motion;
}

Matrix6 rotate_both(const Matrix3& R) {
  Matrix6 out = Matrix6::Zero();
  out.topLeftCorner<3, 3>() = R;
  out.bottomRightCorner<3, 3>() = R;
  return out;
}

}  // namespace

HandControllerKinematics::HandControllerKinematics(const HandControllerGeometry& geometry)
    : geometry_(geometry) {
  const double l1 = geometry.base_height;
  const double l2 = geometry.upper_arm;
  const double l3 = geometry.forearm;
  const Vector3 wrist(l2 + l3, 0.0, l1);
  axis_ = {Vector3::UnitZ(), Vector3::UnitY(), Vector3::UnitY(),
           Vector3::UnitX(), Vector3::UnitY(), Vector3::UnitZ()};
  point_ = {Vector3::Zero(), Vector3(0.0, 0.0, l1), Vector3(l2, 0.0, l1), wrist, wrist, wrist};
  home_ = Frame{Matrix3::Identity(), wrist} * geometry.wrist_T_handle;
}

Frame HandControllerKinematics::forward(const HandJointVector& theta) const {
  Frame chain = geometry_.hb_T_mechanism;
  for (int i = 0; i < 6; ++i) chain = chain * revolute(axis_[i], point_[i], theta[i]);
  return chain * home_;
}

Matrix6 HandControllerKinematics::jacobian(const HandJointVector& theta, HandFrame frame) const {
  Matrix6 J;
  Frame chain = geometry_.hb_T_mechanism;  // HB_T of the links before joint i, moved
  std::array<Vector3, 6> axes;
  std::array<Vector3, 6> points;
  for (int i = 0; i < 6; ++i) {
    axes[i] = chain.R * axis_[i];
    points[i] = chain * point_[i];
    chain = chain * revolute(axis_[i], point_[i], theta[i]);
  }
  const Frame handle = chain * home_;
  for (int i = 0; i < 6; ++i) {
    J.col(i) << axes[i].cross(handle.p - points[i]), axes[i];
  }
  if (frame == HandFrame::kHandle) return rotate_both(handle.R.transpose()) * J;
  return J;
}

void validate(const SimulatedHandControllerConfig& config) {
  detail::require_range("sim.geometry.base_height", config.geometry.base_height, 1e-3, 1.0);
  detail::require_range("sim.geometry.upper_arm", config.geometry.upper_arm, 1e-3, 1.0);
  detail::require_range("sim.geometry.forearm", config.geometry.forearm, 1e-3, 1.0);
  detail::require_range("sim.hand.translation_stiffness", config.hand.translation_stiffness, 1e-3,
                        1e4);
  detail::require_range("sim.hand.rotation_stiffness", config.hand.rotation_stiffness, 1e-5, 100.0);
  detail::require_range("sim.hand.translation_damping", config.hand.translation_damping, 0.0, 1e3);
  detail::require_range("sim.hand.rotation_damping", config.hand.rotation_damping, 0.0, 10.0);
  for (int i = 0; i < 6; ++i) {
    detail::require_range(detail::indexed_field("sim.initial_joints", i), config.initial_joints[i],
                          -M_PI, M_PI);
    detail::require_range(detail::indexed_field("sim.joint_inertia", i), config.joint_inertia[i],
                          1e-6, 10.0);
    detail::require_range(detail::indexed_field("sim.joint_damping", i), config.joint_damping[i],
                          0.0, 10.0);
  }
  detail::require_range("sim.step", config.step, 1e-5, 2e-3);
}

SimulatedHandController::SimulatedHandController(const SimulatedHandControllerConfig& config,
                                                 std::optional<HandScript> script)
    : config_((validate(config), config)),
      kinematics_(config.geometry),
      script_(std::move(script)),
      theta_(config.initial_joints),
      theta_sampled_(config.initial_joints) {
  target_.set_pose(kinematics_.forward(theta_));
  jacobian_base_ = kinematics_.jacobian(theta_, HandFrame::kBase);
  jacobian_handle_ = kinematics_.jacobian(theta_, HandFrame::kHandle);
}

std::string SimulatedHandController::describe() const {
  return "simulated 6R hand controller, operator hand " +
         (script_ ? "following " + script_->name() : std::string("holding still"));
}

void SimulatedHandController::render(const Eigen::Ref<const Vector6>& actuator_torques) {
  tau_ = actuator_torques;
}

Matrix6 SimulatedHandController::jacobian(HandFrame frame) const {
  return frame == HandFrame::kBase ? jacobian_base_ : jacobian_handle_;
}

void SimulatedHandController::step(double t, double h) {
  RateCommand command;
  if (script_) {
    if (const ScriptSegment* segment = script_->segment_at(t - origin_)) {
      command = segment->command;
    }
  }
  Vector6 unused_handle = Vector6::Zero();
  Vector6 unused_base = Vector6::Zero();
  target_.advance(command, h, unused_handle, unused_base);
  const Frame& target = target_.pose();
  const Vector6 target_twist =
      command.handle_axes ? Vector6(rotate_both(target.R) * command.twist) : command.twist;

  const Frame handle = kinematics_.forward(theta_);
  const Matrix6 J = kinematics_.jacobian(theta_, HandFrame::kBase);
  const Vector6 twist = J * theta_dot_;
  const OperatorHandConfig& hand = config_.hand;
  hand_wrench_.head<3>() = hand.translation_stiffness * (target.p - handle.p) +
                           hand.translation_damping * (target_twist.head<3>() - twist.head<3>());
  hand_wrench_.tail<3>() = hand.rotation_stiffness * orientation_error(target.R, handle.R) +
                           hand.rotation_damping * (target_twist.tail<3>() - twist.tail<3>());

  const HandJointVector acceleration =
      (tau_ + J.transpose() * hand_wrench_ - config_.joint_damping.cwiseProduct(theta_dot_))
          .cwiseQuotient(config_.joint_inertia);
  theta_dot_ += acceleration * h;
  theta_ += theta_dot_ * h;
}

DeviceSample SimulatedHandController::sample(double now) {
  DeviceSample out;
  out.time = now;
  if (!started_) {
    started_ = true;
    origin_ = now;
    last_time_ = now;
  }
  const double interval = now - last_time_;
  if (interval > 0.0) {
    const int steps = static_cast<int>(std::ceil(interval / config_.step));
    const double h = interval / steps;
    for (int i = 0; i < steps; ++i) step(last_time_ + i * h, h);
    last_time_ = now;
  }

  const HandJointVector delta = theta_ - theta_sampled_;
  const HandJointVector mid = 0.5 * (theta_ + theta_sampled_);
  out.increment_base = kinematics_.jacobian(mid, HandFrame::kBase) * delta;
  out.increment_handle = kinematics_.jacobian(mid, HandFrame::kHandle) * delta;
  theta_sampled_ = theta_;
  jacobian_base_ = kinematics_.jacobian(theta_, HandFrame::kBase);
  jacobian_handle_ = kinematics_.jacobian(theta_, HandFrame::kHandle);

  out.deadman = true;
  if (script_) {
    const double t = now - origin_;
    const ScriptSegment* segment = script_->segment_at(t);
    out.deadman = segment && segment->deadman;
    out.clutch = segment && segment->clutch;
    out.valid = t < script_->end_time();
    // The trigger is the hand's, not the mechanism's: its rate comes straight from the script.
    out.arm_angle_increment = script_->arm_angle_change(t - interval, t);
  }
  if (!out.valid) clear_motion(out);
  return out;
}

}  // namespace tether::local

#include "tether/remote/behaviours/spring_trajectory/spring_trajectory.h"

#include "tether/common/arm_angle.h"

namespace tether::remote {

void SpringTrajectory::reset(const SpringTrajectoryParameters& /*parameters*/,
                             const BehaviourContext& context) {
  start_pose_ = context.motion_pose;
  start_arm_angle_ = context.arm_angle;
}

void SpringTrajectory::evaluate(const SpringTrajectoryParameters& parameters,
                                MotionReference& reference) const noexcept {
  reference.pose = pose_from_start(parameters.relative, start_pose_, parameters.destination);
  reference.arm_angle =
      wrap_angle(arm_angle_from_start(parameters.relative, start_arm_angle_, parameters.arm_angle));
  reference.velocity.setZero();
  reference.acceleration.setZero();
  reference.max_translation = parameters.max_translation;
  reference.max_rotation = parameters.max_rotation;
  reference.max_arm_angle = parameters.max_arm_angle;
}

}  // namespace tether::remote

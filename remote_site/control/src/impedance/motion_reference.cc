#include "tether/remote/impedance/motion_reference.h"

#include <algorithm>
#include <cmath>

#include "tether/common/arm_angle.h"
#include "tether/common/spatial.h"

namespace tether::remote {

MotionVector motion_error(const Frame& commanded_pose, double commanded_arm_angle,
                          const MotionReference& reference) {
  MotionVector e;
  const Matrix3 Rt = commanded_pose.R.transpose();
  e.head<3>() = Rt * (commanded_pose.p - reference.pose.p);
  e.segment<3>(3) = Rt * orientation_error(commanded_pose.R, reference.pose.R);
  e[6] = wrap_angle(commanded_arm_angle - reference.arm_angle);

  for (int i = 0; i < 3; ++i) {
    e[i] = std::clamp(e[i], -reference.max_translation[i], reference.max_translation[i]);
  }
  const double angle = e.segment<3>(3).norm();
  if (angle > reference.max_rotation) e.segment<3>(3) *= reference.max_rotation / angle;
  e[6] = std::clamp(e[6], -reference.max_arm_angle, reference.max_arm_angle);
  return e;
}

void hold_reference(const Frame& pose, double arm_angle, MotionReference& reference) noexcept {
  reference.pose = pose;
  reference.arm_angle = arm_angle;
  reference.velocity.setZero();
  reference.acceleration.setZero();
  reference.max_translation.setConstant(kUnbounded);
  reference.max_rotation = kUnbounded;
  reference.max_arm_angle = kUnbounded;
}

}  // namespace tether::remote

#include "tether/remote/behaviours/trajectory/trajectory.h"

#include <algorithm>

#include "tether/common/arm_angle.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

struct Blend {
  double s, ds, dds;  // s(τ) and its time derivatives [1, 1/s, 1/s²]
};

Blend quintic(double t, double duration) {
  if (duration <= 0.0 || t >= duration) return {1.0, 0.0, 0.0};
  if (t <= 0.0) return {0.0, 0.0, 0.0};
  const double x = t / duration;
  const double x2 = x * x, x3 = x2 * x;
  return {x3 * (10.0 - 15.0 * x + 6.0 * x2), 30.0 * x2 * (1.0 - 2.0 * x + x2) / duration,
          60.0 * x * (1.0 - 3.0 * x + 2.0 * x2) / (duration * duration)};
}

}  // namespace

void Trajectory::reset(const TrajectoryParameters& /*parameters*/,
                       const BehaviourContext& context) {
  start_pose_ = context.motion_pose;
  start_arm_angle_ = context.arm_angle;
}

void Trajectory::evaluate(const TrajectoryParameters& parameters, double time,
                          MotionReference& reference) const noexcept {
  const auto& wps = parameters.waypoints;
  reference.velocity.setZero();
  reference.acceleration.setZero();
  reference.max_translation.setConstant(kUnbounded);
  reference.max_rotation = kUnbounded;
  reference.max_arm_angle = kUnbounded;
  if (wps.empty()) {
    reference.pose = start_pose_;
    reference.arm_angle = start_arm_angle_;
    return;
  }
  // Segment [a, b] containing `time`; a is the start pose before the first waypoint.
  const auto next = std::upper_bound(wps.begin(), wps.end(), time,
                                     [](double t, const Waypoint& w) { return t < w.time; });
  if (next == wps.end()) {
    const Waypoint& last = wps.back();
    reference.pose = pose_from_start(parameters.relative, start_pose_, last.pose);
    reference.arm_angle =
        wrap_angle(arm_angle_from_start(parameters.relative, start_arm_angle_, last.arm_angle));
    return;
  }
  Frame a_pose = start_pose_;
  double a_angle = start_arm_angle_;
  double a_time = 0.0;
  if (next != wps.begin()) {
    const Waypoint& a = *(next - 1);
    a_pose = pose_from_start(parameters.relative, start_pose_, a.pose);
    a_angle = arm_angle_from_start(parameters.relative, start_arm_angle_, a.arm_angle);
    a_time = a.time;
  }
  const Frame b_pose = pose_from_start(parameters.relative, start_pose_, next->pose);
  const double b_angle =
      arm_angle_from_start(parameters.relative, start_arm_angle_, next->arm_angle);
  const Blend blend = quintic(time - a_time, next->time - a_time);

  const Vector3 dp = b_pose.p - a_pose.p;
  const Vector3 axis_angle = so3_log(a_pose.R.transpose() * b_pose.R);  // body axes of a
  const double dpsi = wrap_angle(b_angle - a_angle);

  reference.pose.R = a_pose.R * so3_exp(blend.s * axis_angle);
  reference.pose.p = a_pose.p + blend.s * dp;
  reference.arm_angle = wrap_angle(a_angle + blend.s * dpsi);
  // The body axis is invariant under its own rotation, so ω and ω̇ in the reference's own
  // axes are axis_angle·ṡ and axis_angle·s̈.
  const Matrix3 Rt = reference.pose.R.transpose();
  reference.velocity.head<3>() = Rt * dp * blend.ds;
  reference.velocity.segment<3>(3) = axis_angle * blend.ds;
  reference.velocity[6] = dpsi * blend.ds;
  reference.acceleration.head<3>() = Rt * dp * blend.dds;
  reference.acceleration.segment<3>(3) = axis_angle * blend.dds;
  reference.acceleration[6] = dpsi * blend.dds;
}

}  // namespace tether::remote

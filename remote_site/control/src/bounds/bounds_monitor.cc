#include "tether/remote/bounds/bounds_monitor.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "tether/common/arm_angle.h"
#include "tether/common/spatial.h"

namespace tether::remote {

namespace {

BreachEvent breach(BreachCause cause, double value, double bound, double time, int index = -1) {
  return BreachEvent{cause, value, bound, time, index};
}

BreachEvent check_wrench_proximity_joints(const BoundsParameters& b, const BoundsInput& in) {
  const double force = in.wrench.head<3>().norm();
  if (!(force <= b.max_force)) return breach(BreachCause::kForce, force, b.max_force, in.time);
  const double torque = in.wrench.tail<3>().norm();
  if (!(torque <= b.max_torque)) {
    return breach(BreachCause::kTorque, torque, b.max_torque, in.time);
  }
  const bool window = b.min_proximity_distance > 0.0 || std::isfinite(b.max_proximity_distance);
  if (window && in.proximity != nullptr) {
    if (!in.proximity->valid) {
      return breach(BreachCause::kProximityTooFar, kUnbounded, b.max_proximity_distance, in.time);
    }
    const double d = in.proximity->distance;
    if (d < b.min_proximity_distance) {
      return breach(BreachCause::kProximityTooClose, d, b.min_proximity_distance, in.time);
    }
    if (!(d <= b.max_proximity_distance)) {
      return breach(BreachCause::kProximityTooFar, d, b.max_proximity_distance, in.time);
    }
  }
  if (in.measured_joints != nullptr) {
    const JointVector& q = *in.measured_joints;
    for (int i = 0; i < kArmDof; ++i) {
      const double room = std::min(q[i] - (*in.lower)[i], (*in.upper)[i] - q[i]);
      if (!(room >= b.joint_limit_margin[i])) {
        return breach(BreachCause::kJointLimitMargin, room, b.joint_limit_margin[i], in.time, i);
      }
    }
  }
  return BreachEvent{};
}

}  // namespace

std::string describe(const BreachEvent& event) {
  if (!event) return "no breach";
  std::string joint = event.index >= 0 ? fmt::format(" (joint {})", event.index + 1) : "";
  const char* relation = event.cause == BreachCause::kProximityTooClose ||
                                 event.cause == BreachCause::kJointLimitMargin
                             ? "is below"
                             : "exceeds";
  // A cause without a unit carries no value and no bound (arm fault, operator stop, ...).
  const char* unit = unit_of(event.cause);
  if (*unit == '\0') {
    return fmt::format("{}{} at t = {:.3f} s", to_string(event.cause), joint, event.time);
  }
  return fmt::format("{}{} {:.4g} {} {} the bound {:.4g} {} at t = {:.3f} s",
                     to_string(event.cause), joint, event.value, unit, relation, event.bound, unit,
                     event.time);
}

BreachEvent check_bounds(const BoundsParameters& b, const BoundsInput& in) noexcept {
  const double translation = (in.actual_pose.p - in.reference_pose.p).norm();
  if (!(translation <= b.max_translation_deviation)) {
    return breach(BreachCause::kTranslationDeviation, translation, b.max_translation_deviation,
                  in.time);
  }
  const double rotation = orientation_error(in.actual_pose.R, in.reference_pose.R).norm();
  if (!(rotation <= b.max_rotation_deviation)) {
    return breach(BreachCause::kRotationDeviation, rotation, b.max_rotation_deviation, in.time);
  }
  if (in.arm_angle_valid) {
    const double psi = std::abs(wrap_angle(in.actual_arm_angle - in.reference_arm_angle));
    if (!(psi <= b.max_arm_angle_deviation)) {
      return breach(BreachCause::kArmAngleDeviation, psi, b.max_arm_angle_deviation, in.time);
    }
  }
  return check_wrench_proximity_joints(b, in);
}

BreachEvent check_persistent_bounds(const BoundsParameters& b, const BoundsInput& in) noexcept {
  return check_wrench_proximity_joints(b, in);
}

}  // namespace tether::remote

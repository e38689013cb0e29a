#include "tether/remote/behaviours/proximity/proximity.h"

#include <cmath>

#include "tether/common/spatial.h"

namespace tether::remote {

Vector6 proximity_sensor_twist(const ProximityParameters& params,
                               const ProximityReading& reading) noexcept {
  Vector6 twist = Vector6::Zero();
  if (!reading.valid || !std::isfinite(reading.distance)) return twist;
  twist[2] = params.distance_gain * (params.reference_distance - reading.distance);

  const double normal_norm = reading.surface_normal.norm();
  if (!(normal_norm > 0.0) || !std::isfinite(normal_norm)) return twist;
  const Vector3 n = reading.surface_normal / normal_norm;
  // z × n = (−n_y, n_x, 0) = sin θ · k, and z · n = cos θ.
  const Vector3 axis_sin(-n.y(), n.x(), 0.0);
  const double sin_theta = axis_sin.norm();
  const double theta = std::atan2(sin_theta, n.z());
  // θ k = (θ / sin θ)(z × n), |θ k| = θ ≤ π; θ/sin θ → 1 as θ → 0. At θ = π (normal facing
  // straight away) every axis is equally valid: no rotation is commanded from such a reading.
  constexpr double kSmall = 1e-9;
  double scale = 1.0;
  if (sin_theta > kSmall) {
    scale = theta / sin_theta;
  } else if (n.z() < 0.0) {
    scale = 0.0;
  }
  twist.tail<3>() = params.tilt_gain * scale * axis_sin;
  return twist;
}

void Proximity::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  xdot_.setZero();
}

void Proximity::update(const Params& params, const BehaviourContext& context,
                       BehaviourOutput& out) noexcept {
  if (!params.enabled || context.arm == nullptr || !context.arm->proximity.valid) {
    xdot_.setZero();
    return;
  }
  const Frame motion_T_sensor = context.tool_T_motion.inverse() * params.tool_T_sensor;
  xdot_.head<6>() =
      transform_twist(motion_T_sensor, proximity_sensor_twist(params, context.arm->proximity));
  xdot_[6] = 0.0;
  add_velocity_input(params.input, params.damping, xdot_, out);
}

}  // namespace tether::remote

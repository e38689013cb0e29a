#include "tether/remote/behaviours/dither/dither.h"

#include <cmath>

#include "tether/common/spatial.h"

namespace tether::remote {

double triangle_wave(double s) noexcept {
  // Shifted by a quarter period so the wave's zero crossing on the way up sits at s = 0.
  const double shifted = s + 0.25;
  const double phase = shifted - std::floor(shifted);  // [0, 1)
  return 1.0 - 4.0 * std::abs(phase - 0.5);
}

void Dither::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  xdot_.setZero();
}

void Dither::update(const Params& params, const BehaviourContext& context,
                    BehaviourOutput& out) noexcept {
  if (!params.enabled || !(params.period > 0.0) || !std::isfinite(params.period)) {
    xdot_.setZero();
    return;
  }
  const Vector6 twist_dither = params.amplitude * triangle_wave(context.time / params.period);
  xdot_.head<6>() = transform_twist(params.motion_T_dither, twist_dither);
  xdot_[6] = 0.0;
  add_velocity_input(params.input, params.damping, xdot_, out);
}

}  // namespace tether::remote

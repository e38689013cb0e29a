#include "tether/remote/impedance/impedance_law.h"

namespace tether::remote {

const MotionVector& impedance_update(const ImpedanceParameters& parameters, double dt,
                                     const ImpedanceInput& input, ImpedanceState& state) noexcept {
  const MotionVector& m = parameters.mass;
  const MotionVector& b = parameters.damping;
  const MotionVector& k = parameters.stiffness;
  if (parameters.formulation == Formulation::kAcceleration) {
    const MotionVector acceleration =
        input.reference_acceleration +
        (input.force - b.cwiseProduct(state.velocity - input.reference_velocity) -
         k.cwiseProduct(input.error))
            .cwiseQuotient(m);
    state.velocity += acceleration * dt;
  } else {
    const MotionVector u = (input.force - k.cwiseProduct(input.error)).cwiseQuotient(b);
    const MotionVector bdt = b * dt;
    state.perturbation =
        (bdt.cwiseProduct(u) + m.cwiseProduct(state.perturbation)).cwiseQuotient(bdt + m);
    state.velocity = input.reference_velocity + state.perturbation;
  }
  return state.velocity;
}

}  // namespace tether::remote

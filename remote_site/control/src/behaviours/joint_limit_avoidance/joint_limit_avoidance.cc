#include "tether/remote/behaviours/joint_limit_avoidance/joint_limit_avoidance.h"

#include <algorithm>
#include <cmath>

namespace tether::remote {

namespace {

// k (1/d − 1/zone) inside the zone, 0 outside; ≥ 0.
double repulsion(double distance, double zone, double gain) {
  if (!(zone > 0.0) || !std::isfinite(zone) || !(distance < zone)) return 0.0;
  const double d = std::max(distance, JointLimitAvoidance::kMinDistance);
  return gain * (1.0 / d - 1.0 / zone);
}

}  // namespace

JointVector joint_limit_repulsion(const JointLimitAvoidanceParameters& params, const JointVector& q,
                                  const JointVector& lower, const JointVector& upper) noexcept {
  JointVector qdot;
  for (int i = 0; i < kArmDof; ++i) {
    qdot[i] = repulsion(q[i] - lower[i], params.zone[i], params.gain[i]) -
              repulsion(upper[i] - q[i], params.zone[i], params.gain[i]);
  }
  return qdot;
}

void JointLimitAvoidance::reset(const Params& /*params*/, const BehaviourContext& /*context*/) {
  qdot_.setZero();
  xdot_.setZero();
}

void JointLimitAvoidance::update(const Params& params, const BehaviourContext& context,
                                 BehaviourOutput& out) noexcept {
  if (!params.enabled) {
    qdot_.setZero();
    xdot_.setZero();
    return;
  }
  qdot_ = joint_limit_repulsion(params, *context.joints, context.model->lower_limits(),
                                context.model->upper_limits());
  xdot_.noalias() = *context.jacobian * qdot_;
  add_velocity_input(params.input, params.damping, xdot_, out);
}

}  // namespace tether::remote

#include "tether/remote/behaviours/obstacle_avoidance/obstacle_avoidance.h"

#include <Eigen/LU>

namespace tether::remote {

void ObstacleAvoidance::reset(const Params&, const BehaviourContext&) { force_.setZero(); }

void ObstacleAvoidance::update(const Params& params, const BehaviourContext& context,
                               std::span<const CriticalPoint> points,
                               BehaviourOutput& out) noexcept {
  force_.setZero();
  if (!params.enabled || params.behaviour_gain <= 0.0) return;
  JointVector torque = JointVector::Zero();
  bool any = false;
  Jacobian6 point_j;
  for (const CriticalPoint& c : points) {
    if (!c.active()) continue;
    const Vector3 f = params.behaviour_gain * (c.influence - c.distance) * c.normal;
    point_jacobian(*context.kinematics, c.link, c.point, point_j);
    torque.noalias() += point_j.topRows<3>().transpose() * f;
    any = true;
  }
  if (!any) return;
  const Eigen::PartialPivLU<Matrix7> lu(context.jacobian->transpose());
  if (!(std::abs(lu.determinant()) > 1e-12)) return;
  force_ = lu.solve(torque);
  if (!force_.allFinite()) {
    force_.setZero();
    return;
  }
  out.force += force_;
}

}  // namespace tether::remote

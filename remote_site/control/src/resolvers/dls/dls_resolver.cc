#include "tether/remote/resolvers/dls/dls_resolver.h"

#include <algorithm>

#include "tether/common/dls.h"

namespace tether::remote {

void DlsResolver::reset(const TaskParameters&, const ResolverInput&) noexcept {}

void DlsResolver::resolve(const TaskParameters& task, const ResolverInput& in,
                          ResolverResult& out) noexcept {
  out.achieved_fraction = 1.0;
  out.active_constraints = 0;
  DlsStatus status = DlsStatus::kOk;
  if (in.critical_points.empty()) {
    status = weighted_dls<kMotionDim>(*in.jacobian, task.resolver.task_weights, in.joint_weights,
                                      in.xd, out.qd);
  } else {
    const ObstacleResolution r =
        resolve_with_obstacles(*in.jacobian, task.resolver.task_weights, in.joint_weights, in.xd,
                               *in.state, in.critical_points, in.obstacle_recovery, out.qd);
    status = r.status;
    out.active_constraints = r.active_constraints;
    const double demand = in.xd.norm();
    if (r.active_constraints > 0 && demand > 0.0) {
      const MotionVector achieved = *in.jacobian * out.qd;
      out.achieved_fraction = std::clamp(achieved.dot(in.xd) / (demand * demand), 0.0, 1.0);
    }
  }
  switch (status) {
    case DlsStatus::kOk:
      out.status = ResolverStatus::kOk;
      break;
    case DlsStatus::kSingular:
      out.status = ResolverStatus::kSingular;
      break;
    case DlsStatus::kNonFiniteInput:
      out.status = ResolverStatus::kNonFiniteInput;
      break;
  }
}

}  // namespace tether::remote

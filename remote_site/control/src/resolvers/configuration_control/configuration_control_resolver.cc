#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

namespace tether::remote {

ConfigurationControlResolver::ConfigurationControlResolver(const KinematicModel& model)
    : functions_(model) {}

void ConfigurationControlResolver::reset(const TaskParameters&, const ResolverInput&) noexcept {
  last_row_count_ = 0;
  last_skipped_ = 0;
}

void ConfigurationControlResolver::resolve(const TaskParameters& task, const ResolverInput& in,
                                           ResolverResult& out) noexcept {
  out.qd.setZero();
  out.achieved_fraction = 1.0;
  out.active_constraints = 0;
  const MotionVector& hand_weights = task.resolver.task_weights;
  if (!in.jacobian->allFinite() || !in.xd.allFinite() || !in.q.allFinite() ||
      !in.joint_weights.allFinite() || !hand_weights.allFinite()) {
    out.status = ResolverStatus::kNonFiniteInput;
    return;
  }

  Matrix7 normal = Matrix7::Zero();
  JointVector rhs = JointVector::Zero();
  for (int r = 0; r < 6; ++r) {
    const RowJacobian row = in.jacobian->row(r);
    normal.noalias() += hand_weights[r] * row.transpose() * row;
    rhs += (hand_weights[r] * in.xd[r]) * row.transpose();
  }
  last_row_count_ = 6;
  last_skipped_ = 0;
  for (const KinematicFunctionParameters& function :
       task.resolver.configuration_control.functions) {
    if (!functions_.evaluate(function, in, rows_)) {
      ++last_skipped_;
      continue;
    }
    for (int r = 0; r < rows_.count; ++r) {
      const RowJacobian row = rows_.jacobian.row(r);
      normal.noalias() += function.weight * row.transpose() * row;
      rhs += (function.weight * rows_.desired[r]) * row.transpose();
    }
    last_row_count_ += rows_.count;
  }
  normal.diagonal() += in.joint_weights;
  if (!normal.allFinite() || !rhs.allFinite()) {
    out.status = ResolverStatus::kNonFiniteInput;
    return;
  }

  if (in.critical_points.empty()) {
    // A vanishing pivot would still give an unbounded q̇; the tolerance is DLS's
    // (common/dls.h): cond(J_a) ≳ 10⁷ counts as singular.
    const Eigen::LLT<Matrix7> llt(normal);
    const double pivot_floor = 1e-14 * normal.diagonal().maxCoeff();
    const auto diagonal = llt.matrixLLT().diagonal();
    if (llt.info() != Eigen::Success || !(pivot_floor > 0.0) ||
        !((diagonal.array().square() > pivot_floor).all())) {
      out.status = ResolverStatus::kSingular;
      return;
    }
    out.qd = llt.solve(rhs);
    out.status = ResolverStatus::kOk;
  } else {
    const ObstacleResolution r = constrain_with_obstacles(
        normal, rhs, *in.state, in.critical_points, in.obstacle_recovery, out.qd);
    out.active_constraints = r.active_constraints;
    switch (r.status) {
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
  if (out.status != ResolverStatus::kOk || !out.qd.allFinite()) {
    if (out.status == ResolverStatus::kOk) out.status = ResolverStatus::kSingular;
    out.qd.setZero();
    return;
  }

  const Vector6 demand = in.xd.head<6>();
  const double demand_squared = demand.squaredNorm();
  if (demand_squared > 0.0) {
    const Vector6 achieved = in.jacobian->topRows<6>() * out.qd;
    out.achieved_fraction = std::clamp(achieved.dot(demand) / demand_squared, 0.0, 1.0);
  }
}

}  // namespace tether::remote

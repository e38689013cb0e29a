#include "tether/remote/resolvers/shake/srs_chain.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tether/common/dls.h"
#include "tether/common/spatial.h"

namespace tether::remote::shake {
namespace {

// μ relative to the largest diagonal entry of JᵀJ, and the pivot the factorisation needs.
constexpr double kDamping = 1e-12;
constexpr double kPivot = 1e-15;

struct Residual {
  Eigen::Matrix<double, 9, 1> r;
  double position = 0.0, rotation = 0.0;
};

Residual residual(const KinematicState& state, const Frame& tool, const Vector3& elbow) {
  Residual out;
  out.r.segment<3>(0) = tool.p - state.tool.p;
  out.r.segment<3>(3) = orientation_error(tool.R, state.tool.R);
  out.r.segment<3>(6) = elbow - state.elbow;
  out.position = std::max(out.r.segment<3>(0).norm(), out.r.segment<3>(6).norm());
  out.rotation = out.r.segment<3>(3).norm();
  return out;
}

}  // namespace

SrsGeometry srs_geometry(const KinematicModel& model) {
  KinematicState state;
  forward_kinematics(model, JointVector::Zero(), state);
  SrsGeometry g;
  g.shoulder = state.shoulder;
  g.upper_arm = (state.elbow - state.shoulder).norm();
  g.forearm = (state.wrist - state.elbow).norm();
  g.wrist_in_tool = state.tool.inverse() * state.wrist;
  g.base_direction = state.R[0].col(2);
  g.shoulder_joint = model.point_joint(0);
  g.elbow_joint = model.point_joint(1);
  g.wrist_joint = model.point_joint(2);
  return g;
}

bool project_elbow(const Vector3& shoulder, const Vector3& wrist, double upper_arm, double forearm,
                   Vector3& elbow) noexcept {
  const Vector3 sw = wrist - shoulder;
  const double d = sw.norm();
  if (!(d > std::abs(upper_arm - forearm)) || !(d < upper_arm + forearm)) return false;
  const Vector3 u = sw / d;
  const double along = (upper_arm * upper_arm - forearm * forearm + d * d) / (2.0 * d);
  const double radius = std::sqrt(std::max(upper_arm * upper_arm - along * along, 0.0));
  const Vector3 e = elbow - shoulder;
  const Vector3 off = e - e.dot(u) * u;
  const double n = off.norm();
  if (!(n > 1e-12 * upper_arm)) return false;
  elbow = shoulder + along * u + (radius / n) * off;
  return true;
}

RecoveryReport recover_joints(const KinematicModel& model, const Frame& tool, const Vector3& elbow,
                              const RecoveryOptions& options, JointVector& q,
                              KinematicState& state) noexcept {
  RecoveryReport report;
  const int elbow_joint = model.point_joint(1);
  JointVector best = q;
  double best_cost = std::numeric_limits<double>::infinity();
  Jacobian6 tool_j;
  Jacobian6 elbow_j;
  for (int it = 0;; ++it) {
    forward_kinematics(model, q, state);
    const Residual res = residual(state, tool, elbow);
    const double cost = res.r.squaredNorm();
    if (cost < best_cost) {
      best_cost = cost;
      best = q;
      report.position_residual = res.position;
      report.rotation_residual = res.rotation;
    }
    report.iterations = it;
    if (res.position < options.tolerance && res.rotation < options.tolerance) {
      report.converged = true;
      break;
    }
    if (it == options.max_iterations || !std::isfinite(cost)) break;
    tool_jacobian(state, tool_j);
    point_jacobian(state, elbow_joint, state.elbow, elbow_j);
    Eigen::Matrix<double, 9, kArmDof> J;
    J.topRows<6>() = tool_j;
    J.bottomRows<3>() = elbow_j.topRows<3>();
    Matrix7 normal = J.transpose() * J;
    normal.diagonal().array() += kDamping * normal.diagonal().maxCoeff();
    JointVector step = J.transpose() * res.r;
    if (!detail::cholesky_solve(normal, step, kPivot) || !step.allFinite()) {
      report.singular = true;
      break;
    }
    q += step;
  }
  if (!report.converged && q != best) {
    q = best;
    forward_kinematics(model, q, state);
  }
  return report;
}

}  // namespace tether::remote::shake

#include "tether/common/obstacles.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>

namespace tether {

namespace {

// Up to one constraint per joint can be independent; more would over-determine q̇.
constexpr int kMaxActive = kArmDof - 1;
using ActiveMatrix = Eigen::Matrix<double, Eigen::Dynamic, kArmDof, 0, kMaxActive, kArmDof>;
using ActiveSquare =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxActive, kMaxActive>;
using ActiveVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxActive, 1>;
using SolveMatrix = Eigen::Matrix<double, kArmDof, Eigen::Dynamic, 0, kArmDof, kMaxActive>;

// A constraint row needs this much leverage [m/rad] to be honoured at all.
constexpr double kMinGradient = 1e-9;
// Slack on "violated", so that a constraint just enforced is not added again.
constexpr double kFeasibility = 1e-12;
// Relative pivot below which the normal matrix counts as singular (as dls.h).
constexpr double kSingularPivot = 1e-12;

}  // namespace

Vector3 closest_point_on_segment(const Vector3& a, const Vector3& b, const Vector3& c,
                                 double& t) noexcept {
  const Vector3 ab = b - a;
  const double length2 = ab.squaredNorm();
  t = length2 > 0.0 ? std::clamp((c - a).dot(ab) / length2, 0.0, 1.0) : 0.0;
  return a + t * ab;
}

std::size_t critical_points(const KinematicState& state, const LinkRadii& radii,
                            std::span<const SphereObstacle> obstacles,
                            std::array<CriticalPoint, kMaxCriticalPoints>& out) noexcept {
  const std::size_t count = std::min(obstacles.size(), kMaxObstacles);
  std::size_t n = 0;
  for (int link = 0; link < kArmDof; ++link) {
    const Vector3& a = state.p[static_cast<std::size_t>(link)];
    const Vector3& b =
        link + 1 < kArmDof ? state.p[static_cast<std::size_t>(link) + 1] : state.tool.p;
    for (std::size_t j = 0; j < count; ++j) {
      const SphereObstacle& o = obstacles[j];
      double t = 0.0;
      CriticalPoint& c = out[n++];
      c.link = link;
      c.obstacle = static_cast<int>(j);
      c.point = closest_point_on_segment(a, b, o.centre, t);
      const Vector3 away = c.point - o.centre;
      const double centre_distance = away.norm();
      // On the axis itself any normal is as good; keep the last one's direction defined.
      c.normal = centre_distance > 1e-12 ? Vector3(away / centre_distance) : Vector3::UnitZ();
      c.distance = centre_distance - o.radius - radii[link];
      c.influence = o.influence;
    }
  }
  return n;
}

RowJacobian distance_gradient(const KinematicState& state, const CriticalPoint& c) noexcept {
  Jacobian6 j;
  point_jacobian(state, c.link, c.point, j);
  return c.normal.transpose() * j.topRows<3>();
}

namespace {

// Bound b_k of g_k q̇ ≥ b_k: the velocity damper (see the header).
double approach_bound(const CriticalPoint& c, double recovery) noexcept {
  return recovery > 0.0 ? recovery * (c.influence - c.distance)
                        : (c.active() ? 0.0 : -std::numeric_limits<double>::infinity());
}

}  // namespace

ObstacleResolution constrain_with_obstacles(const Matrix7& normal, const JointVector& rhs,
                                            const KinematicState& state,
                                            std::span<const CriticalPoint> points, double recovery,
                                            JointVector& qdot) noexcept {
  ObstacleResolution result;
  qdot.setZero();
  if (!normal.allFinite() || !rhs.allFinite() || !std::isfinite(recovery)) {
    result.status = DlsStatus::kNonFiniteInput;
    return result;
  }
  const Eigen::LLT<Matrix7> llt(normal);
  const double largest = normal.diagonal().maxCoeff();
  const auto pivots = llt.matrixLLT().diagonal();
  if (llt.info() != Eigen::Success || !(largest > 0.0) ||
      !(pivots.cwiseAbs2().minCoeff() > kSingularPivot * largest)) {
    result.status = DlsStatus::kSingular;
    return result;
  }
  const JointVector unconstrained = llt.solve(rhs);

  // The candidate critical points and their rows g_k q̇ ≥ b_k.
  std::array<RowJacobian, kMaxCriticalPoints> rows;
  std::array<double, kMaxCriticalPoints> bounds{};
  std::size_t candidates = 0;
  for (const CriticalPoint& c : points) {
    if (candidates == kMaxCriticalPoints) break;
    const double bound = approach_bound(c, recovery);
    if (!std::isfinite(bound)) continue;
    const RowJacobian g = distance_gradient(state, c);
    if (!(g.norm() > kMinGradient)) continue;
    rows[candidates] = g;
    bounds[candidates] = bound;
    ++candidates;
  }

  std::array<int, kMaxActive> active{};
  int m = 0;
  qdot = unconstrained;
  ActiveMatrix a;
  ActiveVector b;
  SolveMatrix h_inv_at;
  ActiveSquare s;
  ActiveVector lambda;
  const int max_iterations = 2 * static_cast<int>(candidates) + 2;
  for (result.iterations = 0; result.iterations < max_iterations; ++result.iterations) {
    if (m > 0) {
      a.resize(m, kArmDof);
      b.resize(m);
      for (int r = 0; r < m; ++r) {
        a.row(r) = rows[static_cast<std::size_t>(active[static_cast<std::size_t>(r)])];
        b[r] = bounds[static_cast<std::size_t>(active[static_cast<std::size_t>(r)])];
      }
      h_inv_at = llt.solve(a.transpose());
      s = a * h_inv_at;
      lambda = s.ldlt().solve(a * unconstrained - b);
      qdot = unconstrained - h_inv_at * lambda;
      // μ = −λ must be ≥ 0: a constraint with λ > 0 holds the point back from moving away.
      int release = -1;
      double worst = 0.0;
      for (int r = 0; r < m; ++r) {
        if (lambda[r] > worst) {
          worst = lambda[r];
          release = r;
        }
      }
      if (release >= 0) {
        active[static_cast<std::size_t>(release)] = active[static_cast<std::size_t>(m - 1)];
        --m;
        if (m == 0) qdot = unconstrained;
        continue;
      }
    }
    // The most violated constraint not yet enforced.
    int add = -1;
    double most = kFeasibility;
    for (std::size_t k = 0; k < candidates; ++k) {
      bool enforced = false;
      for (int r = 0; r < m; ++r)
        enforced = enforced || active[static_cast<std::size_t>(r)] == static_cast<int>(k);
      if (enforced) continue;
      const double violation = bounds[k] - rows[k].dot(qdot);
      if (violation > most) {
        most = violation;
        add = static_cast<int>(k);
      }
    }
    if (add < 0 || m == kMaxActive) break;
    active[static_cast<std::size_t>(m++)] = add;
  }
  if (!qdot.allFinite()) {
    qdot.setZero();
    result.status = DlsStatus::kSingular;
    return result;
  }
  result.active_constraints = m;
  return result;
}

ObstacleResolution resolve_with_obstacles(const CompositeJacobian& jacobian,
                                          const MotionVector& task_weights,
                                          const JointVector& velocity_weights,
                                          const MotionVector& xdot, const KinematicState& state,
                                          std::span<const CriticalPoint> points, double recovery,
                                          JointVector& qdot) noexcept {
  ObstacleResolution result;
  qdot.setZero();
  if (!jacobian.allFinite() || !task_weights.allFinite() || !velocity_weights.allFinite() ||
      !xdot.allFinite() || !std::isfinite(recovery)) {
    result.status = DlsStatus::kNonFiniteInput;
    return result;
  }
  // Eq. 13 first, with its faster solver; most cycles no constraint binds and this is it.
  result.status = weighted_dls<kMotionDim>(jacobian, task_weights, velocity_weights, xdot, qdot);
  bool binding = false;
  if (result.status == DlsStatus::kOk) {
    for (const CriticalPoint& c : points) {
      const double bound = approach_bound(c, recovery);
      if (!std::isfinite(bound)) continue;
      if (distance_gradient(state, c).dot(qdot) < bound - kFeasibility) {
        binding = true;
        break;
      }
    }
  }
  if (binding) {
    // The redundancy the constraints take is the arm angle's: the hand keeps its path.
    MotionVector weights = task_weights;
    weights[kMotionDim - 1] *= kArmAngleYield;
    const CompositeJacobian weighted = weights.asDiagonal() * jacobian;
    Matrix7 normal = jacobian.transpose() * weighted;
    normal.diagonal() += velocity_weights;
    const JointVector rhs = weighted.transpose() * xdot;
    const ObstacleResolution constrained =
        constrain_with_obstacles(normal, rhs, state, points, recovery, qdot);
    result.status = constrained.status;
    result.active_constraints = constrained.active_constraints;
    result.iterations = constrained.iterations;
  }
  if (result.status == DlsStatus::kOk) {
    const MotionVector residual = jacobian * qdot - xdot;
    result.residual = std::sqrt(residual.dot(task_weights.asDiagonal() * residual));
  }
  return result;
}

}  // namespace tether

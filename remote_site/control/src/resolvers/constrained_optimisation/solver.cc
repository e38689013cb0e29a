#include "tether/remote/resolvers/constrained_optimisation/solver.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tether::remote {
namespace {

constexpr int kP = kArmDof;  // index of p in z
constexpr double kInf = std::numeric_limits<double>::infinity();
// Eigenvalues of the (unit-row) active-constraint Gram matrix below this span the tangent
// space; rows are unit, so the scale is absolute.
constexpr double kNullTolerance = 1e-10;
// Curvature below this (relative to the largest Hessian entry) counts as zero: the phase-2
// linear programme and the p direction have none.
constexpr double kCurvatureTolerance = 1e-12;
constexpr double kMultiplierTolerance = 1e-12;
constexpr double kRowBrakingShare = 0.5;
// The real-time path. Relative pivot below which Aᵀ's QR counts a row as dependent (then the
// iterative method takes over); rows of g shorter than kReducedZeroRow do not move with y;
// kReducedTolerance [rad, unit rows] is how far a row may be missed and still hold; the
// bounding box [−kReducedBox, kReducedBox]² only bounds the first lines of the linear
// programme (the variable bounds keep ‖y‖ = ‖z‖ far inside it).
constexpr double kRankTolerance = 1e-9;
constexpr double kReducedZeroRow = 1e-12;
constexpr double kReducedParallel = 1e-12;
constexpr double kReducedTolerance = 1e-13;
constexpr double kReducedBox = 1e3;
// The iterative method's weight on the arm-angle row, relative to the criteria's largest.
constexpr double kArmAnglePenalty = 1e6;

void require_non_negative(const JointVector& v, const char* name) {
  for (int j = 0; j < kArmDof; ++j) {
    if (!(v[j] >= 0.0) || !std::isfinite(v[j])) {
      throw std::invalid_argument("ConstrainedOptimisationParameters." + std::string(name) + "[" +
                                  std::to_string(j) + "] = " + std::to_string(v[j]) +
                                  ": must be finite and >= 0");
    }
  }
}

void require_positive(double value, const char* name) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw std::invalid_argument("ConstrainedOptimisationParameters." + std::string(name) + " = " +
                                std::to_string(value) + ": must be finite and > 0");
  }
}

// Limits a 3-vector's norm, keeping its direction.
void clamp_norm(Eigen::Ref<Eigen::Matrix<double, 3, 1>> v, double max_norm) {
  const double norm = v.norm();
  if (norm > max_norm) v *= max_norm / norm;
}

// The largest step from which a joint decelerating by δ per sample still stops within D.
double braking_step(double travel, double delta) {
  if (!(travel > 0.0)) return 0.0;
  return -0.5 * delta + std::sqrt(0.25 * delta * delta + 2.0 * delta * travel);
}

}  // namespace

const char* to_string(ConstrainedOptimisationResult::Status status) noexcept {
  using S = ConstrainedOptimisationResult::Status;
  switch (status) {
    case S::kOk:
      return "ok";
    case S::kMaxIterations:
      return "max iterations";
    case S::kInfeasible:
      return "infeasible";
    case S::kNonFinite:
      return "non-finite input";
  }
  return "unknown";
}

ConstrainedOptimisationResolver::ConstrainedOptimisationResolver(const Parameters& params)
    : params_(params) {
  require_non_negative(params.alpha, "alpha");
  require_non_negative(params.beta, "beta");
  require_non_negative(params.gamma, "gamma");
  for (int j = 0; j < kArmDof; ++j) {
    // The quadratic must be strictly convex in Δq or the third phase has no unique minimum.
    if (!(params.alpha[j] + params.beta[j] + params.gamma[j] > 0.0)) {
      throw std::invalid_argument("ConstrainedOptimisationParameters: alpha[" + std::to_string(j) +
                                  "] + beta + gamma = 0: at least one must be > 0");
    }
    if (!std::isfinite(params.q_ref[j])) {
      throw std::invalid_argument("ConstrainedOptimisationParameters.q_ref[" + std::to_string(j) +
                                  "] is not finite");
    }
  }
  require_positive(params.max_translation, "max_translation");
  require_positive(params.max_rotation, "max_rotation");
  require_positive(params.max_arm_angle, "max_arm_angle");
  require_positive(params.weight_p, "weight_p");
  require_positive(params.tolerance, "tolerance");
  require_positive(params.feasibility_tolerance, "feasibility_tolerance");
  if (params.max_iterations < 1) {
    throw std::invalid_argument("ConstrainedOptimisationParameters.max_iterations = " +
                                std::to_string(params.max_iterations) + ": must be >= 1");
  }
  lo_.setZero();
  hi_.setZero();
  z_.setZero();
  ineq_.setZero();
  ineq_b_.setZero();
  ineq_target_.setZero();
  ineq_preferred_.setConstant(-kInf);
  rows_.setZero();
  Q_.setZero();
  c_.setZero();
}

bool ConstrainedOptimisationResolver::build(const Problem& pr, Result& result) noexcept {
  if ((pr.task_rows != 6 && pr.task_rows != 7) || pr.inequality_count < 0 ||
      pr.inequality_count > Problem::kMaxInequalities || !(pr.dt > 0.0) || !std::isfinite(pr.dt) ||
      !pr.jacobian.allFinite() || !pr.commanded_shift.allFinite() || !pr.q.allFinite() ||
      !pr.q_previous.allFinite() || !pr.lower.allFinite() || !pr.upper.allFinite() ||
      !pr.velocity_limit.allFinite() || !pr.acceleration_limit.allFinite() ||
      !pr.inequality_normals.topRows(std::clamp(pr.inequality_count, 0, 8)).allFinite() ||
      !pr.inequality_bounds.head(std::clamp(pr.inequality_count, 0, 8)).allFinite() ||
      pr.inequality_preferred.head(std::clamp(pr.inequality_count, 0, 8)).hasNaN() ||
      (pr.inequality_preferred.head(std::clamp(pr.inequality_count, 0, 8)).array() == kInf).any()) {
    return false;
  }
  m_ = pr.task_rows;
  MotionVector& d = result.desired_shift;
  d = pr.commanded_shift;
  clamp_norm(d.segment<3>(0), params_.max_translation);
  clamp_norm(d.segment<3>(3), params_.max_rotation);
  if (m_ == 7) {
    d[6] = std::clamp(d[6], -params_.max_arm_angle, params_.max_arm_angle);
  } else {
    d[6] = 0.0;
  }
  task_.setZero();
  task_.topLeftCorner(m_, kArmDof) = pr.jacobian.topRows(m_);
  task_.col(kP).head(m_) = -d.head(m_);
  // The arm-angle row is not an equality: it is tracked next after the pose (see the header),
  // from task_.row(6). The equalities are the six pose rows.
  track_arm_angle_ = m_ == 7;
  m_ = 6;

  bool box_consistent = true;
  for (int j = 0; j < kArmDof; ++j) {
    const double v = pr.q[j] - pr.q_previous[j];
    const double delta = pr.acceleration_limit[j] * pr.dt * pr.dt;
    const double vmax = pr.velocity_limit[j] * pr.dt;
    const double acc_lo = v - delta;
    const double acc_hi = v + delta;
    const double pos_lo =
        std::max({pr.lower[j] - pr.q[j], -vmax, -braking_step(pr.q[j] - pr.lower[j], delta)});
    const double pos_hi =
        std::min({pr.upper[j] - pr.q[j], vmax, braking_step(pr.upper[j] - pr.q[j], delta)});
    double lo = std::max(pos_lo, acc_lo);
    double hi = std::min(pos_hi, acc_hi);
    if (lo > hi) {
      // Rounding in s(D) can cross the bounds by an ulp; anything more is a real conflict.
      if (lo - hi > 1e-12 * (1.0 + std::abs(lo))) {
        box_consistent = false;
        const double nearest = std::clamp(
            std::clamp(0.0, std::min(pos_lo, pos_hi), std::max(pos_lo, pos_hi)), acc_lo, acc_hi);
        lo = hi = nearest;
      } else {
        lo = hi = 0.5 * (lo + hi);
      }
    }
    lo_[j] = lo;
    hi_[j] = hi;
    z_[j] = std::clamp(0.0, lo, hi);
    bound_[static_cast<std::size_t>(j)] = lo == hi      ? Bound::kFixed
                                          : z_[j] == lo ? Bound::kLower
                                          : z_[j] == hi ? Bound::kUpper
                                                        : Bound::kFree;
  }
  lo_[kP] = 0.0;
  hi_[kP] = 1.0;
  z_[kP] = 0.0;
  bound_[kP] = Bound::kLower;

  n_ineq_ = pr.inequality_count;
  for (int k = 0; k < n_ineq_; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    ineq_.row(k).head<kArmDof>() = pr.inequality_normals.row(k);
    ineq_(k, kP) = 0.0;
    double b = pr.inequality_bounds[k];
    // Like a joint stop, a row met at speed needs braking room: the row's rate aᵀΔq can
    // change by at most Σ|a_j| q̈_max,j Δt² per sample, so with clearance D = −b the step is
    // limited to s(D) toward it. Only half of that is counted: a turns between samples
    // (it is a linearisation) and joints at their velocity limit cannot help.
    const double delta_row = kRowBrakingShare *
                             ineq_.row(k).head<kArmDof>().cwiseAbs().dot(pr.acceleration_limit) *
                             pr.dt * pr.dt;
    if (b < 0.0 && delta_row > 0.0) b = std::max(b, -braking_step(-b, delta_row));
    const double at_start = ineq_.row(k).head<kArmDof>().dot(z_.head<kArmDof>());
    ineq_target_[k] = b;
    ineq_preferred_[k] = pr.inequality_preferred[k];
    ineq_relaxed_[ku] = at_start < b;
    ineq_b_[k] = std::min(b, at_start);
    // A zero row constrains nothing; keeping it inactive avoids a degenerate tangent space.
    ineq_active_[ku] = false;
  }
  if (!box_consistent) result.status = Result::Status::kInfeasible;
  return true;
}

int ConstrainedOptimisationResolver::active_rows(bool task_rows_active) noexcept {
  int n = 0;
  if (task_rows_active) {
    for (int r = 0; r < m_; ++r) {
      const double norm = task_.row(r).norm();
      if (norm > 0.0) {
        rows_.row(n) = task_.row(r) / norm;
        row_id_[static_cast<std::size_t>(n)] = r;
        ++n;
      }
    }
  }
  for (int k = 0; k < n_ineq_; ++k) {
    if (!ineq_active_[static_cast<std::size_t>(k)]) continue;
    rows_.row(n) = ineq_.row(k) / ineq_.row(k).norm();
    row_id_[static_cast<std::size_t>(n)] = kMotionDim + k;
    ++n;
  }
  return n;
}

ConstrainedOptimisationResolver::Outcome ConstrainedOptimisationResolver::minimise(
    const VarMatrix& Q, const VarVector& c, bool task_rows_active, int& iterations) noexcept {
  Eigen::SelfAdjointEigenSolver<VarMatrix> tangent_solver;
  Eigen::SelfAdjointEigenSolver<VarMatrix> reduced_solver;
  const double curvature_floor =
      kCurvatureTolerance * std::max(1.0, Q.diagonal().cwiseAbs().maxCoeff());
  for (int it = 0; it < params_.max_iterations; ++it) {
    ++iterations;
    const VarVector g = Q * z_ + c;
    const int n_rows = active_rows(task_rows_active);

    // d3: the tangent space of the active constraints, as the null space of their Gram
    // matrix (bounds are unit rows e_j).
    VarMatrix gram = rows_.topRows(n_rows).transpose() * rows_.topRows(n_rows);
    for (int j = 0; j < kVars; ++j) {
      if (bound_[static_cast<std::size_t>(j)] != Bound::kFree) gram(j, j) += 1.0;
    }
    tangent_solver.compute(gram);
    VarMatrix Z = tangent_solver.eigenvectors();
    for (int i = 0; i < kVars; ++i) {
      if (tangent_solver.eigenvalues()[i] > kNullTolerance) Z.col(i).setZero();
    }

    // d2-d3: projected Newton step; projected steepest descent along zero curvature.
    const VarMatrix reduced = Z.transpose() * Q * Z;
    const VarVector reduced_g = Z.transpose() * g;
    reduced_solver.compute(reduced);
    VarVector newton = VarVector::Zero();
    VarVector descent = VarVector::Zero();
    const double gradient_floor = params_.tolerance * std::max(1.0, g.cwiseAbs().maxCoeff());
    for (int i = 0; i < kVars; ++i) {
      const auto u = reduced_solver.eigenvectors().col(i);
      const double gi = u.dot(reduced_g);
      if (reduced_solver.eigenvalues()[i] > curvature_floor) {
        newton -= (gi / reduced_solver.eigenvalues()[i]) * u;
      } else if (std::abs(gi) > gradient_floor) {
        descent -= gi * u;
      }
    }
    const bool unbounded = descent.squaredNorm() > 0.0;
    const VarVector step = Z * (unbounded ? descent : newton);

    if (step.norm() <= params_.tolerance) {
      // d6 and claim 10: at the minimum of the tangent space; the multipliers of the
      // active inequalities decide whether one is released. g = Σ ν_r n_r over active rows
      // (task and general rows, then bounds as e_j), least squares.
      Eigen::Matrix<double, kMaxRows + kVars, kVars> A;
      A.setZero();
      A.topRows(n_rows) = rows_.topRows(n_rows);
      std::array<int, kVars> bound_row{};
      int n = n_rows;
      for (int j = 0; j < kVars; ++j) {
        if (bound_[static_cast<std::size_t>(j)] == Bound::kFree) continue;
        A(n, j) = 1.0;
        bound_row[static_cast<std::size_t>(j)] = n;
        ++n;
      }
      Eigen::Matrix<double, kMaxRows + kVars, kMaxRows + kVars> normal = A * A.transpose();
      normal.diagonal().array() += 1e-12;
      Eigen::Matrix<double, kMaxRows + kVars, 1> nu = A * g;
      Eigen::LLT<Eigen::Matrix<double, kMaxRows + kVars, kMaxRows + kVars>> llt(normal);
      nu = llt.solve(nu);
      // Oriented so λ ≥ 0 means the constraint holds the point (its inward normal and the
      // gradient agree).
      double most_negative = -kMultiplierTolerance * std::max(1.0, g.norm());
      int release = -1;
      for (int r = 0; r < n_rows; ++r) {
        const int id = row_id_[static_cast<std::size_t>(r)];
        if (id < kMotionDim) continue;  // task rows are equalities
        if (nu[r] < most_negative) {
          most_negative = nu[r];
          release = id;
        }
      }
      for (int j = 0; j < kVars; ++j) {
        const Bound b = bound_[static_cast<std::size_t>(j)];
        if (b == Bound::kFree || b == Bound::kFixed) continue;
        const double lambda =
            nu[bound_row[static_cast<std::size_t>(j)]] * (b == Bound::kLower ? 1.0 : -1.0);
        if (lambda < most_negative) {
          most_negative = lambda;
          release = kMaxRows + j;
        }
      }
      if (release < 0) return Outcome::kOptimal;
      if (release >= kMaxRows) {
        bound_[static_cast<std::size_t>(release - kMaxRows)] = Bound::kFree;
      } else {
        ineq_active_[static_cast<std::size_t>(release - kMotionDim)] = false;
      }
      continue;
    }

    // d4: the longest step (at most the Newton step) no inactive constraint stops.
    double t = unbounded ? kInf : 1.0;
    int blocking = -1;
    for (int j = 0; j < kVars; ++j) {
      if (bound_[static_cast<std::size_t>(j)] != Bound::kFree) continue;
      if (step[j] < 0.0) {
        const double tj = (lo_[j] - z_[j]) / step[j];
        if (tj < t) {
          t = std::max(tj, 0.0);
          blocking = kMaxRows + j;
        }
      } else if (step[j] > 0.0) {
        const double tj = (hi_[j] - z_[j]) / step[j];
        if (tj < t) {
          t = std::max(tj, 0.0);
          blocking = kMaxRows + kVars + j;
        }
      }
    }
    for (int k = 0; k < n_ineq_; ++k) {
      if (ineq_active_[static_cast<std::size_t>(k)]) continue;
      const double rate = ineq_.row(k).dot(step);
      if (rate < 0.0) {
        const double tk = (ineq_b_[k] - ineq_.row(k).dot(z_)) / rate;
        if (tk < t) {
          t = std::max(tk, 0.0);
          blocking = kMotionDim + k;
        }
      }
    }
    if (!std::isfinite(t)) return Outcome::kUnbounded;
    // d5
    z_ += t * step;
    if (blocking >= kMaxRows + kVars) {
      const int j = blocking - kMaxRows - kVars;
      z_[j] = hi_[j];
      bound_[static_cast<std::size_t>(j)] = Bound::kUpper;
    } else if (blocking >= kMaxRows) {
      const int j = blocking - kMaxRows;
      z_[j] = lo_[j];
      bound_[static_cast<std::size_t>(j)] = Bound::kLower;
    } else if (blocking >= 0) {
      ineq_active_[static_cast<std::size_t>(blocking - kMotionDim)] = true;
    }
  }
  return Outcome::kMaxIterations;
}

void ConstrainedOptimisationResolver::finish(const Problem& pr, Result& result) const noexcept {
  result.q = pr.q + z_.head<kArmDof>();
  result.p = z_[kP];
  result.task_residual = (task_.topRows(m_) * z_).norm();
  result.joints_at_lower = 0;
  result.joints_at_upper = 0;
  result.inequalities_active = 0;
  for (int j = 0; j < kArmDof; ++j) {
    const Bound b = bound_[static_cast<std::size_t>(j)];
    if (b == Bound::kLower || b == Bound::kFixed) result.joints_at_lower |= 1u << j;
    if (b == Bound::kUpper || b == Bound::kFixed) result.joints_at_upper |= 1u << j;
  }
  for (int k = 0; k < n_ineq_; ++k) {
    if (ineq_active_[static_cast<std::size_t>(k)]) result.inequalities_active |= 1u << k;
  }
}

bool ConstrainedOptimisationResolver::start(const Problem& problem, Result& result) noexcept {
  result.status = Result::Status::kOk;
  if (build(problem, result)) return true;
  result.status = Result::Status::kNonFinite;
  result.q = problem.q;
  result.p = 0.0;
  return false;
}

ConstrainedOptimisationResolver::Result ConstrainedOptimisationResolver::solve(
    const Problem& problem) noexcept {
  Result result;
  if (start(problem, result) && params_.mode == Parameters::Mode::kLexicographic &&
      result.status == Result::Status::kOk && solve_reduced(problem, result)) {
    return result;
  }
  warm_ = {-1, -1};
  return result.status == Result::Status::kNonFinite ? result : solve_general(problem, result);
}

ConstrainedOptimisationResolver::Result ConstrainedOptimisationResolver::solve_with_active_set(
    const Problem& problem) noexcept {
  Result result;
  return start(problem, result) ? solve_general(problem, result) : result;
}

bool ConstrainedOptimisationResolver::solve_reduced(const Problem& problem,
                                                    Result& result) noexcept {
  // The general rows enter at their (braking) targets; ineq_relaxed_ concerns only the
  // iterative method's starting point. Rows no step can meet make the programme below
  // infeasible, and the iterative method's phase 0 takes over.
  // The null space of A = [J  −Δx_d]: Aᵀ P = Q R, the columns of Q past the rank span it.
  Eigen::Matrix<double, kVars, kMotionDim> At = Eigen::Matrix<double, kVars, kMotionDim>::Zero();
  At.leftCols(m_) = task_.topRows(m_).transpose();
  qr_.setThreshold(kRankTolerance);
  qr_.compute(At);
  const int k = kVars - static_cast<int>(qr_.rank());
  if (k < 1 || k > 2) return false;  // rank-deficient at a singularity
  basis_ = qr_.householderQ();
  // N = the last k columns; with k = 1 the second column is zero, so its coordinate moves
  // nothing and the two-dimensional algorithm below serves both cases.
  Eigen::Matrix<double, kVars, 2> N = Eigen::Matrix<double, kVars, 2>::Zero();
  N.col(0) = basis_.col(kVars - 1);
  if (k == 2) N.col(1) = basis_.col(kVars - 2);

  // Every constraint as a unit half-plane g_rᵀ y ≥ h_r. Ids are stable across cycles (2j, 2j+1:
  // variable j's lower and upper bound; 2·kVars + k: general row k), so last cycle's active
  // rows can be found again.
  int n_rows = 0;
  bool feasible = true;
  auto add = [&](int id, const Eigen::Vector2d& g, double h) {
    const double norm = g.norm();
    if (!(norm > kReducedZeroRow)) {
      // y cannot move this row: it holds for every y or for none.
      if (h > kReducedTolerance) feasible = false;
      return;
    }
    reduced_rows_.row(id) = g.transpose() / norm;
    reduced_bounds_[id] = h / norm;
    order_[static_cast<std::size_t>(n_rows++)] = id;
  };
  for (int j = 0; j < kVars; ++j) {
    const Eigen::Vector2d g = N.row(j).transpose();
    add(2 * j, g, lo_[j]);
    add(2 * j + 1, -g, -hi_[j]);
  }
  for (int r = 0; r < n_ineq_; ++r) {
    const Eigen::Vector2d g = (ineq_.row(r) * N).transpose();
    add(2 * kVars + r, g, ineq_target_[r]);
  }
  if (!feasible) return false;
  // Warm start: last cycle's active rows first.
  int front = 0;
  for (const int w : warm_) {
    if (w < 0) continue;
    for (int a = front; a < n_rows; ++a) {
      if (order_[static_cast<std::size_t>(a)] == w) {
        std::swap(order_[static_cast<std::size_t>(a)], order_[static_cast<std::size_t>(front)]);
        ++front;
        break;
      }
    }
  }

  // Phase 2: max p = cᵀy, Seidel's incremental linear programme. The optimum so far is kept;
  // a row it violates holds with equality at the new optimum, found on that row's line
  // against the rows before it.
  const Eigen::Vector2d c = N.row(kP).transpose();
  const double c_norm = c.norm();
  if (!(c_norm > kReducedZeroRow)) return false;  // p ≡ 0 on the task rows
  Eigen::Vector2d y(c[0] >= 0.0 ? kReducedBox : -kReducedBox,
                    c[1] >= 0.0 ? kReducedBox : -kReducedBox);
  std::array<int, 2> active{-1, -1};
  int iterations = 1;
  for (int a = 0; a < n_rows; ++a) {
    const int i = order_[static_cast<std::size_t>(a)];
    const Eigen::Vector2d g = reduced_rows_.row(i).transpose();
    if (g.dot(y) >= reduced_bounds_[i] - kReducedTolerance) continue;
    ++iterations;
    const Eigen::Vector2d u(-g[1], g[0]);
    const Eigen::Vector2d y0 = g * reduced_bounds_[i];
    double t_lo = -kInf;
    double t_hi = kInf;
    int lo_id = -1;
    int hi_id = -1;
    for (int d = 0; d < 2; ++d) {  // the bounding box keeps the first lines bounded
      if (u[d] > kReducedParallel) {
        t_lo = std::max(t_lo, (-kReducedBox - y0[d]) / u[d]);
        t_hi = std::min(t_hi, (kReducedBox - y0[d]) / u[d]);
      } else if (u[d] < -kReducedParallel) {
        t_lo = std::max(t_lo, (kReducedBox - y0[d]) / u[d]);
        t_hi = std::min(t_hi, (-kReducedBox - y0[d]) / u[d]);
      }
    }
    for (int b = 0; b < a; ++b) {
      const int j = order_[static_cast<std::size_t>(b)];
      const double gu = reduced_rows_.row(j).dot(u);
      const double rhs = reduced_bounds_[j] - reduced_rows_.row(j).dot(y0);
      if (gu > kReducedParallel) {
        if (rhs / gu > t_lo) {
          t_lo = rhs / gu;
          lo_id = j;
        }
      } else if (gu < -kReducedParallel) {
        if (rhs / gu < t_hi) {
          t_hi = rhs / gu;
          hi_id = j;
        }
      } else if (rhs > kReducedTolerance) {
        return false;  // parallel rows that exclude each other: no feasible point
      }
    }
    if (t_lo > t_hi + kReducedTolerance) return false;  // phase 1 needed
    const double cu = c.dot(u);
    double t = 0.0;
    if (t_lo > t_hi) {
      t = 0.5 * (t_lo + t_hi);
      active = {i, cu > 0.0 ? hi_id : lo_id};
    } else if (cu > 0.0) {
      t = t_hi;
      active = {i, hi_id};
    } else if (cu < 0.0) {
      t = t_lo;
      active = {i, lo_id};
    } else {
      t = std::clamp(0.0, t_lo, t_hi);
      active = {i, -1};
    }
    y = y0 + t * u;
  }
  warm_ = active;

  // Phase 3: p frozen, the quadratic ½ Δqᵀ H Δq + fᵀ Δq along the segment cᵀy = p*.
  const Eigen::Vector2d u = Eigen::Vector2d(-c[1], c[0]) / c_norm;
  const VarVector w = N * y;
  const VarVector v = N * u;
  const JointVector H = 2.0 * (params_.alpha + params_.beta + params_.gamma);
  const JointVector f = -2.0 * (params_.beta.cwiseProduct(params_.q_ref - problem.q) +
                                params_.gamma.cwiseProduct(problem.q - problem.q_previous));
  const double curvature = v.head<kArmDof>().cwiseProduct(H).dot(v.head<kArmDof>());
  // The arm-angle row first, when it can move along the segment: r(t) = task_.row(6)·(w + t v)
  // = J_ψ Δq − p* Δψ_d, zeroed or brought as near zero as the segment allows. That leaves a
  // point, so the criteria below only act on six rows.
  const double psi_rate = track_arm_angle_ ? task_.row(6).dot(v) : 0.0;
  const bool psi_decides = std::abs(psi_rate) > kReducedZeroRow;
  const bool criteria_decide = curvature > kReducedZeroRow * kReducedZeroRow;
  // The segment: the rows' slack at y along ±u.
  double t_lo = -kInf;
  double t_hi = kInf;
  for (int a = 0; a < n_rows; ++a) {
    const int i = order_[static_cast<std::size_t>(a)];
    const double gu = reduced_rows_.row(i).dot(u);
    const double slack = std::max(0.0, reduced_rows_.row(i).dot(y) - reduced_bounds_[i]);
    if (gu > kReducedParallel) {
      t_lo = std::max(t_lo, -slack / gu);
    } else if (gu < -kReducedParallel) {
      t_hi = std::min(t_hi, -slack / gu);
    }
  }
  if (t_lo <= t_hi) {
    narrow_to_preferred(w, v, t_lo, t_hi);
    double t_best = 0.0;
    if (psi_decides) {
      t_best = -task_.row(6).dot(w) / psi_rate;
    } else if (criteria_decide) {
      const double slope = v.head<kArmDof>().dot(H.cwiseProduct(w.head<kArmDof>()) + f);
      t_best = -slope / curvature;
    }
    y += std::clamp(t_best, t_lo, t_hi) * u;
  }

  z_ = N * y;
  z_[kP] = std::clamp(z_[kP], 0.0, 1.0);
  for (int j = 0; j < kVars; ++j) {
    const double tol = kReducedTolerance * (1.0 + std::abs(z_[j]));
    bound_[static_cast<std::size_t>(j)] = lo_[j] == hi_[j]        ? Bound::kFixed
                                          : z_[j] <= lo_[j] + tol ? Bound::kLower
                                          : z_[j] >= hi_[j] - tol ? Bound::kUpper
                                                                  : Bound::kFree;
  }
  for (int r = 0; r < n_ineq_; ++r) {
    ineq_active_[static_cast<std::size_t>(r)] =
        ineq_.row(r).dot(z_) <= ineq_target_[r] + kReducedTolerance;
  }
  result.iterations = iterations;
  result.null_space_dimension = k;
  finish(problem, result);
  return true;
}

void ConstrainedOptimisationResolver::narrow_to_preferred(const VarVector& w, const VarVector& v,
                                                          double& t_lo,
                                                          double& t_hi) const noexcept {
  for (int r = 0; r < n_ineq_; ++r) {
    const double preferred = ineq_preferred_[r];
    if (!(preferred > ineq_target_[r])) continue;  // none, or no stricter than the row
    const double rate = ineq_.row(r).dot(v);
    const double short_by = preferred - ineq_.row(r).dot(w);  // row(w + t v) ≥ b' ⇔ t·rate ≥ this
    if (rate > kReducedParallel) {
      const double t = short_by / rate;
      if (t > t_hi) {  // out of reach: as near as the segment allows, then nothing else
        t_lo = t_hi;
        return;
      }
      t_lo = std::max(t_lo, t);
    } else if (rate < -kReducedParallel) {
      const double t = short_by / rate;
      if (t < t_lo) {
        t_hi = t_lo;
        return;
      }
      t_hi = std::min(t_hi, t);
    }
  }
}

ConstrainedOptimisationResolver::Result ConstrainedOptimisationResolver::solve_general(
    const Problem& problem, Result result) noexcept {
  int iterations = 0;
  auto merge = [&result](Outcome outcome) {
    if (outcome == Outcome::kMaxIterations && result.status == Result::Status::kOk) {
      result.status = Result::Status::kMaxIterations;
    }
  };

  // Phase 0, only when the step forced by the acceleration window violates a row: each such
  // row in turn is pushed as far as the box and the rows before it allow (a linear
  // programme), and holds from there on at its target or, if unreachable, at that best.
  for (int k = 0; k < n_ineq_; ++k) {
    if (!ineq_relaxed_[static_cast<std::size_t>(k)]) continue;
    VarVector push = VarVector::Zero();
    push.head<kArmDof>() = -ineq_.row(k).head<kArmDof>().transpose();
    merge(minimise(VarMatrix::Zero(), push, false, iterations));
    const double reached = ineq_.row(k).dot(z_);
    ineq_b_[k] = std::min(ineq_target_[k], reached);
    if (reached < ineq_target_[k]) result.status = Result::Status::kInfeasible;
  }

  // Phase 1: a point satisfying the task rows inside the box (p = 0, Δq = clamp(0) already
  // does unless the acceleration window excludes standing still).
  Q_.setZero();
  Q_.noalias() = 2.0 * task_.topRows(m_).transpose() * task_.topRows(m_);
  c_.setZero();
  if ((task_.topRows(m_) * z_).norm() > params_.feasibility_tolerance) {
    merge(minimise(Q_, c_, false, iterations));
    if ((task_.topRows(m_) * z_).norm() > params_.feasibility_tolerance) {
      result.status = Result::Status::kInfeasible;
      result.iterations = iterations;
      finish(problem, result);
      return result;
    }
  }

  // The quadratic in z: Δqᵀ H Δq − 2 hᵀ Δq + const, H = diag(α + β + γ),
  // h = β (q_ref − q_i) + γ v, since q − 2q_i + q_{i−1} = Δq − v.
  Q_.setZero();
  Q_.diagonal().head<kArmDof>() = 2.0 * (params_.alpha + params_.beta + params_.gamma);
  const JointVector v = problem.q - problem.q_previous;
  c_.head<kArmDof>() =
      -2.0 * (params_.beta.cwiseProduct(params_.q_ref - problem.q) + params_.gamma.cwiseProduct(v));
  if (track_arm_angle_) {
    // The arm-angle row after the pose, as a penalty far above the criteria (this method
    // has no second lexicographic level): w (J_ψ Δq − p Δψ_d)².
    const double w = kArmAnglePenalty * std::max(1.0, Q_.diagonal().maxCoeff());
    Q_.noalias() += 2.0 * w * task_.row(6).transpose() * task_.row(6);
  }
  if (params_.mode == Parameters::Mode::kWeighted) {
    c_[kP] = -params_.weight_p;
    merge(minimise(Q_, c_, true, iterations));
  } else {
    // Phase 2: the largest attainable p (a linear programme: no curvature).
    VarVector lp = VarVector::Zero();
    lp[kP] = -1.0;
    merge(minimise(VarMatrix::Zero(), lp, true, iterations));
    // Phase 3: p frozen at its maximum, the secondary criteria.
    lo_[kP] = hi_[kP] = z_[kP];
    bound_[kP] = Bound::kFixed;
    c_[kP] = 0.0;
    merge(minimise(Q_, c_, true, iterations));
  }
  result.iterations = iterations;
  finish(problem, result);
  return result;
}

}  // namespace tether::remote

#include "tether/remote/resolvers/constrained_optimisation/constrained_optimisation_resolver.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace tether::remote {
namespace {

constexpr double kMarginAllowance = 2e-3;  // [rad]

}  // namespace

ConstrainedOptimisationTaskResolver::ConstrainedOptimisationTaskResolver()
    : solver_(ConstrainedOptimisationParameters{}) {}

void ConstrainedOptimisationTaskResolver::reset(const TaskParameters& task,
                                                const ResolverInput& in) noexcept {
  solver_.reconfigure(task.resolver.constrained_optimisation);
  // The solver holds the joints inside the task's joint-limit margin, not merely inside the
  // stops: the bounds monitor stops the task at the margin. kMarginAllowance covers the
  // measured joints lagging the commanded ones.
  problem_.lower = in.model->lower_limits();
  problem_.upper = in.model->upper_limits();
  for (int j = 0; j < kArmDof; ++j) {
    const double keep = task.bounds.joint_limit_margin[j] + kMarginAllowance;
    if (problem_.lower[j] + keep < problem_.upper[j] - keep) {
      problem_.lower[j] += keep;
      problem_.upper[j] -= keep;
    }
  }
  problem_.velocity_limit = in.model->velocity_limits();
  problem_.acceleration_limit = in.model->acceleration_limits();
  last_ = ConstrainedOptimisationResult{};
  last_.p = 1.0;
}

void ConstrainedOptimisationTaskResolver::resolve(const TaskParameters& task,
                                                  const ResolverInput& in,
                                                  ResolverResult& out) noexcept {
  const ConstrainedOptimisationParameters& params = task.resolver.constrained_optimisation;
  problem_.task_rows = params.track_arm_angle ? 7 : 6;
  problem_.jacobian = *in.jacobian;
  problem_.commanded_shift = in.xd * in.dt;
  problem_.q = in.q;
  problem_.q_previous = in.q - in.qd_previous * in.dt;
  problem_.dt = in.dt;

  // The critical points nearest to their spheres of influence become the general rows.
  std::array<int, ConstrainedOptimisationProblem::kMaxInequalities> chosen{};
  int count = 0;
  for (int k = 0; k < static_cast<int>(in.critical_points.size()); ++k) {
    const CriticalPoint& c = in.critical_points[static_cast<std::size_t>(k)];
    const double slack = c.distance - c.influence;
    int at = count;
    if (count < ConstrainedOptimisationProblem::kMaxInequalities) {
      ++count;
    } else {
      const CriticalPoint& worst =
          in.critical_points[static_cast<std::size_t>(chosen[static_cast<std::size_t>(count - 1)])];
      if (slack >= worst.distance - worst.influence) continue;
      at = count - 1;
    }
    while (at > 0) {
      const CriticalPoint& before =
          in.critical_points[static_cast<std::size_t>(chosen[static_cast<std::size_t>(at - 1)])];
      if (before.distance - before.influence <= slack) break;
      chosen[static_cast<std::size_t>(at)] = chosen[static_cast<std::size_t>(at - 1)];
      --at;
    }
    chosen[static_cast<std::size_t>(at)] = k;
  }
  const double rate = std::min(1.0, in.obstacle_recovery * in.dt);
  problem_.inequality_count = 0;
  for (int r = 0; r < count; ++r) {
    const CriticalPoint& c =
        in.critical_points[static_cast<std::size_t>(chosen[static_cast<std::size_t>(r)])];
    const RowJacobian g = distance_gradient(*in.state, c);
    if (!(g.norm() > 1e-9)) continue;
    const int row = problem_.inequality_count++;
    problem_.inequality_normals.row(row) = g;
    // Outside: the remaining distance to the sphere, which the solver brakes against itself
    // (a damper here would count twice); inside: a gentle push back out.
    const double slack = c.distance - c.influence;
    problem_.inequality_bounds[row] = slack >= 0.0 ? -slack : rate * -slack;
    // The hard row lets the point run up to the sphere and brake there, which an
    // acceleration-limited self-motion can no longer do without taking p down. The preferred
    // step is the velocity damper DLS holds as its constraint (common/obstacles.h): approach
    // at most `obstacle_recovery` times the remaining distance. Phase 3 keeps to it wherever
    // p* leaves the self-motion free, so the elbow starts turning away early.
    problem_.inequality_preferred[row] = slack >= 0.0 ? -rate * slack : rate * -slack;
  }

  last_ = solver_.solve(problem_);
  out.qd = (last_.q - in.q) / in.dt;
  // With nothing commanded every p is optimal; the operator is told 1, not a warning.
  out.achieved_fraction = last_.desired_shift.norm() > 1e-12 ? last_.p : 1.0;
  out.active_constraints = std::popcount(last_.inequalities_active);
  switch (last_.status) {
    case ConstrainedOptimisationResult::Status::kOk:
      out.status = ResolverStatus::kOk;
      break;
    case ConstrainedOptimisationResult::Status::kMaxIterations:
      out.status = ResolverStatus::kNotConverged;
      break;
    case ConstrainedOptimisationResult::Status::kInfeasible:
      out.status = ResolverStatus::kInfeasible;
      break;
    case ConstrainedOptimisationResult::Status::kNonFinite:
      out.qd.setZero();
      out.status = ResolverStatus::kNonFiniteInput;
      break;
  }
}

}  // namespace tether::remote

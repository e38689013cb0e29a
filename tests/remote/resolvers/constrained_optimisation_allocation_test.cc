// solve() runs every control cycle: after construction it must never touch the heap, in
// any phase (feasible, limit-bound, obstacle row active, infeasible, non-finite).

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "allocation_counter.h"
#include "tether/remote/resolvers/constrained_optimisation/solver.h"

namespace tether::remote {
namespace {

TEST(ConstrainedOptimisationAllocation, SolveAllocatesNothingAfterConstruction) {
  ConstrainedOptimisationParameters params;
  params.beta.setConstant(0.5);
  params.gamma.setConstant(0.2);
  ConstrainedOptimisationResolver resolver(params);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ConstrainedOptimisationProblem problems[4];
  for (int n = 0; n < 4; ++n) {
    auto& pr = problems[n];
    for (int r = 0; r < 7; ++r) {
      for (int j = 0; j < kArmDof; ++j) pr.jacobian(r, j) = u(rng);
    }
    pr.task_rows = n % 2 == 0 ? 6 : 7;
    pr.dt = 0.01;
    pr.commanded_shift << 0.01, 0.0, -0.01, 0.02, 0.0, 0.0, 0.01;
    pr.q.setConstant(0.5);
    pr.q_previous.setConstant(0.5 - 0.004 * n);  // n = 3 moves too fast to stop: infeasible
    pr.inequality_count = n;
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < kArmDof; ++j) pr.inequality_normals(k, j) = u(rng);
      pr.inequality_bounds[k] = -0.001;
    }
  }
  problems[2].jacobian(0, 0) = std::numeric_limits<double>::quiet_NaN();
  for (const auto& pr : problems) resolver.solve(pr);  // nothing to warm, but symmetric

  ::tether::testing::ScopedAllocationCounter counter;
  double sink = 0.0;
  for (int n = 0; n < 400; ++n) sink += resolver.solve(problems[n % 4]).p;
  EXPECT_EQ(counter.count(), 0u);
  EXPECT_TRUE(std::isfinite(sink));
}

}  // namespace
}  // namespace tether::remote

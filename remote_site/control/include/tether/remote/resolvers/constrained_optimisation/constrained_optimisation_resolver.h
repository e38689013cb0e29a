#pragma once

// The constrained-optimisation patent as a selectable resolver: each cycle the impedance law's ẋ_c
// becomes the commanded shift Δx_c = ẋ_c Δt, the solver (solver.h) returns q_{i+1} and the achieved
// fraction p, and q̇ = (q_{i+1} − q_i)/Δt. The solver holds the joint position (the stops less
// the task's joint-limit margin and 2 mrad), velocity and acceleration limits itself, so the
// executor's own limits leave its q̇ unchanged. The
// critical points of the spheres of influence become its general inequality rows (at most
// 8, the nearest to their sphere first), in the solver's step form: outside the sphere of
// influence Δd ≥ −(d − influence), the remaining distance, which the solver tightens to
// what the joints can still brake within (so no velocity damper is added on top); inside
// it Δd ≥ min(1, recovery·Δt)·(influence − d), a push back out.

#include "tether/remote/resolvers/constrained_optimisation/solver.h"
#include "tether/remote/resolvers/resolver.h"

namespace tether::remote {

class ConstrainedOptimisationTaskResolver final : public Resolver {
 public:
  ConstrainedOptimisationTaskResolver();
  void reset(const TaskParameters& task, const ResolverInput& input) noexcept override;
  void resolve(const TaskParameters& task, const ResolverInput& input,
               ResolverResult& result) noexcept override;
  const ConstrainedOptimisationResult& last() const { return last_; }

 private:
  ConstrainedOptimisationResolver solver_;
  ConstrainedOptimisationProblem problem_;
  ConstrainedOptimisationResult last_;
};

}  // namespace tether::remote

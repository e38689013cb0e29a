#pragma once

// The default resolver (the extended-task-space patent, eq. 13): weighted damped least squares on
// the composite 7×7 Jacobian, q̇ = (Jᵀ W_t J + W_v)⁻¹ Jᵀ W_t ẋ_c. With obstacle avoidance in the
// resolver, the same least squares subject to the spheres-of-influence constraints of the
// spheres-of-influence patent (common/obstacles.h); the arm angle is then the redundancy the
// constraints take first.

#include "tether/remote/resolvers/resolver.h"

namespace tether::remote {

class DlsResolver final : public Resolver {
 public:
  void reset(const TaskParameters& task, const ResolverInput& input) noexcept override;
  void resolve(const TaskParameters& task, const ResolverInput& input,
               ResolverResult& result) noexcept override;
};

}  // namespace tether::remote

#include "tether/remote/resolvers/resolver_set.h"

namespace tether::remote {

const char* to_string(ResolverStatus status) noexcept {
  switch (status) {
    case ResolverStatus::kOk:
      return "ok";
    case ResolverStatus::kSingular:
      return "singular";
    case ResolverStatus::kInfeasible:
      return "infeasible";
    case ResolverStatus::kNotConverged:
      return "not converged";
    case ResolverStatus::kNonFiniteInput:
      return "non-finite input";
  }
  return "unknown";
}

ResolverSet::ResolverSet(const KinematicModel& model)
    : configuration_control_(model), shake_(model) {}

Resolver& ResolverSet::select(ResolverKind kind) noexcept {
  switch (kind) {
    case ResolverKind::kDls:
      return dls_;
    case ResolverKind::kConstrainedOptimisation:
      return constrained_optimisation_;
    case ResolverKind::kConfigurationControl:
      return configuration_control_;
    case ResolverKind::kShake:
      return shake_;
  }
  return dls_;
}

}  // namespace tether::remote

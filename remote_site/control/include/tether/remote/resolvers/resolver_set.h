#pragma once

// One instance of every resolver, built with the executor (so nothing is allocated when a
// task switches resolver), and the choice by task.resolver.kind.

#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"
#include "tether/remote/resolvers/constrained_optimisation/constrained_optimisation_resolver.h"
#include "tether/remote/resolvers/dls/dls_resolver.h"
#include "tether/remote/resolvers/resolver.h"
#include "tether/remote/resolvers/shake/shake_resolver.h"

namespace tether::remote {

class ResolverSet {
 public:
  explicit ResolverSet(const KinematicModel& model);

  // The resolver of `kind`; a kind this site was built without falls back to DLS (task
  // validation refuses such tasks before they reach the loop).
  Resolver& select(ResolverKind kind) noexcept;

 private:
  DlsResolver dls_;
  ConstrainedOptimisationTaskResolver constrained_optimisation_;
  ConfigurationControlResolver configuration_control_;
  shake::ShakeResolver shake_;
};

}  // namespace tether::remote

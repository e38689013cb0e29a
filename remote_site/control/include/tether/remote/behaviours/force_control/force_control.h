#pragma once

// Force control (the extended-task-space patent, eq. 15-17): adds F_r − F_a to ΣF, both wrenches
// the robot applies to its environment about the MOTION origin in MOTION axes. In a direction with
// K = 0 and no reference motion the impedance law settles only where F_a = F_r: exact force
// tracking. Against an environment of stiffness k_env the direction behaves as m s² + b s + k_env,
// stable for m, b > 0. With F_r = 0 the behaviour is pure compliance (the arm yields to
// contact forces), which is how the seed's shared-control task absorbs teleoperation errors.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/force_control/parameters.h"

namespace tether::remote {

class ForceControl {
 public:
  void reset(const ForceControlParameters& /*parameters*/, const BehaviourContext& /*context*/) {}
  void update(const ForceControlParameters& parameters, const BehaviourContext& context,
              BehaviourOutput& out) const noexcept {
    out.force.head<6>() += parameters.reference_wrench - context.measured_wrench;
  }
};

}  // namespace tether::remote

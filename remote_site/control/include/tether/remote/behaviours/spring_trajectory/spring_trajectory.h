#pragma once

// Spring trajectory (the extended-task-space patent): x_r = destination with ẋ_r = ẍ_r = 0, and
// the spring x_c − x_r limited per component so the arm moves at a bounded, then decaying, rate.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/spring_trajectory/parameters.h"
#include "tether/remote/impedance/motion_reference.h"

namespace tether::remote {

class SpringTrajectory {
 public:
  using Params = SpringTrajectoryParameters;

  void reset(const SpringTrajectoryParameters& parameters, const BehaviourContext& context);
  // Sets out.reference; listed after Trajectory, so it wins when both are enabled.
  void update(const SpringTrajectoryParameters& parameters, const BehaviourContext& /*context*/,
              BehaviourOutput& out) const noexcept {
    evaluate(parameters, out.reference);
  }
  void evaluate(const SpringTrajectoryParameters& parameters,
                MotionReference& reference) const noexcept;

 private:
  Frame start_pose_;
  double start_arm_angle_ = 0.0;
};

}  // namespace tether::remote

#pragma once

// Configuration control (the configuration-control patent): the hand's six MOTION rows (rows 0-5 of
// the composite Jacobian, weights task.resolver.task_weights[0..5], rates ẋ_c[0..5]) augmented by
// the rows of the task's user kinematic functions (kinematic_functions.h; the arm angle enters only
// through a kArmAngle function, with rate ẋ_c[6]). The augmented system J_a q̇ = ẏ is solved
// as weighted damped least squares,
//   (J_aᵀ W J_a + W_v) q̇ = J_aᵀ W ẏ,
// W the hand weights and each function's `weight` on its rows, W_v = input.joint_weights:
// the exact inverse when the stack is square (7 rows) and W_v = 0, the weighted least-squares
// compromise when r exceeds the redundancy. The normal equations are accumulated row by row,
// so any number of rows costs the same memory. With obstacle avoidance in the resolver the
// same normal equations go to constrain_with_obstacles (the spheres-of-influence patent inside the
// configuration-control patent).
//
// achieved_fraction: the share of the hand's demand the solution delivers,
// clamp((J₆ q̇)·ẋ_c,6 / |ẋ_c,6|², 0, 1), 1 when the hand is asked to hold still.

#include "tether/remote/resolvers/configuration_control/kinematic_functions.h"
#include "tether/remote/resolvers/resolver.h"

namespace tether::remote {

class ConfigurationControlResolver final : public Resolver {
 public:
  // The model provides the links' masses for the gravity-torque function; it must outlive
  // the resolver and be the one the inputs' states were computed with.
  explicit ConfigurationControlResolver(const KinematicModel& model);

  void reset(const TaskParameters& task, const ResolverInput& input) noexcept override;
  void resolve(const TaskParameters& task, const ResolverInput& input,
               ResolverResult& result) noexcept override;

  // Rows of the last augmented system (6 hand rows plus the functions'), and how many
  // functions were undefined at that configuration (they added no rows).
  int last_row_count() const { return last_row_count_; }
  int last_skipped_functions() const { return last_skipped_; }
  configuration_control::KinematicFunctionEvaluator& functions() { return functions_; }

 private:
  configuration_control::KinematicFunctionEvaluator functions_;
  configuration_control::FunctionRows rows_;
  int last_row_count_ = 0;
  int last_skipped_ = 0;
};

}  // namespace tether::remote

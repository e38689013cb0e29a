#pragma once

// Trajectory generator (the extended-task-space patent, eq. 3-5): x_r, ẋ_r, ẍ_r of the MOTION frame
// and the arm angle from timed waypoints.
//
// Between consecutive waypoints the pose moves along the quintic blend
// s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ (rest to rest, zero acceleration at both ends): translation
// on the straight line, rotation about the constant body axis log(R_aᵀ R_b) (geodesic on
// SO(3)), ψ the short way round. If the first waypoint's time is after 0, the segment
// starts from the MOTION pose at task start. After the last waypoint the reference holds it.
// Velocities and accelerations are given in the reference pose's own axes.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/trajectory/parameters.h"
#include "tether/remote/impedance/motion_reference.h"

namespace tether::remote {

class Trajectory {
 public:
  using Params = TrajectoryParameters;

  // Remembers the start pose and ψ (for relative waypoints and the initial segment).
  void reset(const TrajectoryParameters& parameters, const BehaviourContext& context);
  // Sets out.reference to the reference for the next sample, context.time + context.dt.
  void update(const TrajectoryParameters& parameters, const BehaviourContext& context,
              BehaviourOutput& out) const noexcept {
    evaluate(parameters, context.time + context.dt, out.reference);
  }
  // Reference at `time` [s] since task start.
  void evaluate(const TrajectoryParameters& parameters, double time,
                MotionReference& reference) const noexcept;

 private:
  Frame start_pose_;
  double start_arm_angle_ = 0.0;
};

}  // namespace tether::remote

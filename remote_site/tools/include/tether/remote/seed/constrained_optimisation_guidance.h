#pragma once

// The constrained-optimisation patent's guidance into the joint limits: the operator keeps
// commanding the hand toward a pose the arm cannot reach without passing a joint limit; the
// per-cycle constrained optimisation keeps every joint inside its limits and the attained
// fraction p, shown to the operator as a warning, falls toward 0.
//
// Only the solver's public interface (solve(Problem) → Result) is used, as the executor does.

#include <array>
#include <string>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/types.h"

namespace tether::remote::seed {

struct GuidanceRun {
  double dt = 0.01;                            // [s] sample time
  MotionVector push = MotionVector::Zero();    // commanded shift per sample at full hand [m | rad]
  std::vector<double> times;                   // [s] sample i
  std::vector<Vector3> hand;                   // tool position, BASE [m]
  std::vector<double> p;                       // attained fraction of Δx_d
  std::vector<JointVector> q;                  // joint positions [rad]
  std::vector<std::array<Vector3, 5>> chains;  // base, shoulder, elbow, wrist, tool
  JointVector lower = JointVector::Zero(), upper = JointVector::Zero();  // [rad]
  int non_finite = 0, infeasible = 0;                                    // solver statuses seen
  double worst_limit_excess = 0.0;    // [rad] beyond a limit (0: never)
  double min_p = 1.0, early_p = 1.0;  // over the run; over the first 0.1 s
  int limit_joint = -1;               // the joint that ended nearest its limit (0-based)
};

// The hand's commanded shift per sample at full hand [m | rad], BASE axes: back toward the
// base and down (mostly down), the orientation held.
inline const MotionVector kGuidancePush =
    (MotionVector() << -0.001, 0.0, -0.002, 0.0, 0.0, 0.0, 0.0).finished();

GuidanceRun run_guidance_into_limits(const ArmModel& arm, const MotionVector& push = kGuidancePush);
void write_guidance_picture(const GuidanceRun& run, const std::string& path);

}  // namespace tether::remote::seed

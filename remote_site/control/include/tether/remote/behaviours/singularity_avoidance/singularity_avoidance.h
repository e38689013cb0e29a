#pragma once

// Singularity avoidance (the extended-task-space patent, eq. 20-21): a virtual spring that pushes
// the wrist back into the annulus r_min ≤ |P| ≤ r_max around the first joint, outside which the arm
// is near its stretched (|P| large) or folded (|P| small) singular regions.
//
// P = wrist point (the tether_wrist marker) − origin of the joint-1 frame, BASE [m]: the
// seed's "joint-7 frame relative to joint-1 frame" for an arm whose wrist joints meet at a
// point. With P̂ = P/|P|:
//   |P| > r_max:  F = −K_s (|P| − r_max) P̂     (pull the wrist in)
//   |P| < r_min:  F = +K_s (r_min − |P|) P̂     (push the wrist out)
//   otherwise     F = 0, so the behaviour is inert away from the singular regions.
// F [N] is rotated into MOTION axes (R_motionᵀ F) and added to the translational force rows
// 0-2 only: it acts at the MOTION origin, not at the wrist. Moved rigidly from the wrist it
// would also carry the moment (wrist − MOTION origin) × F and turn the tool; without it the
// behaviour only translates the tool, and since the MOTION frame rides on the last link,
// translating the MOTION origin along F at constant orientation moves the wrist along F too.

#include "tether/remote/behaviours/behaviour.h"
#include "tether/remote/behaviours/singularity_avoidance/parameters.h"

namespace tether::remote {

// P above, BASE [m].
inline Vector3 wrist_from_first_joint(const KinematicState& state) {
  return state.wrist - state.p[0];
}

// Depth [m] of |P| inside a singular region: |P| − r_max above r_max, r_min − |P| below
// r_min, 0 in between (≥ 0 always).
inline double singular_region_depth(double radius, double r_min, double r_max) {
  if (radius > r_max) return radius - r_max;
  if (radius < r_min) return r_min - radius;
  return 0.0;
}

// The force F above, BASE axes [N].
Vector3 singularity_avoidance_force(const SingularityAvoidanceParameters& params,
                                    const Vector3& wrist_from_joint1) noexcept;

class SingularityAvoidance {
 public:
  using Params = SingularityAvoidanceParameters;

  void reset(const Params& params, const BehaviourContext& context);
  // Adds nothing when disabled. Needs context.kinematics and motion_pose.
  void update(const Params& params, const BehaviourContext& context, BehaviourOutput& out) noexcept;

  // Last force, MOTION axes [N], for logs.
  const Vector3& force() const { return force_; }

 private:
  Vector3 force_ = Vector3::Zero();
};

}  // namespace tether::remote

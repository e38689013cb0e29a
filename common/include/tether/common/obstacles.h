#pragma once

// Obstacle avoidance with spheres of influence (the spheres-of-influence patent).
//
// The arm is a chain of capsules: link i (0-based) is the segment from joint frame i's
// origin to joint frame i+1's (the last one ends at the tool origin), with a radius. An
// obstacle is a sphere (a point for radius 0). For every link and obstacle the *critical
// point* is the point of the link's segment closest to the obstacle's centre, and the
// *critical distance* the clearance between the two surfaces. While it exceeds the
// obstacle's radius of influence nothing happens; once it reaches it, the inequality
//   d ≥ influence   becomes the active velocity constraint   nᵀ v_c ≥ 0
// (n the unit normal from the obstacle to the critical point, v_c the critical point's
// velocity = J_p q̇): the critical point may not approach the obstacle any further, while
// the motion-space task keeps what the remaining redundancy allows. Several obstacles add
// constraints in succession.
//
// All positions in the arm's BASE frame [m]. Allocation-free; usable in the control cycle.

#include <array>
#include <cstddef>
#include <span>

#include "tether/common/dls.h"
#include "tether/common/kinematics.h"
#include "tether/common/types.h"

namespace tether {

inline constexpr std::size_t kMaxObstacles = 8;
// Every link against every obstacle.
inline constexpr std::size_t kMaxCriticalPoints = kMaxObstacles * kArmDof;

struct SphereObstacle {
  Vector3 centre = Vector3::Zero();  // BASE [m]
  double radius = 0.0;               // the obstacle's own extent [m]
  double influence = 0.1;            // radius of the sphere of influence, beyond `radius` [m]
};

struct CriticalPoint {
  int link = -1;                      // 0-based link (moves with joint `link`)
  int obstacle = -1;                  // index into the obstacle list
  Vector3 point = Vector3::Zero();    // on the link's axis, BASE [m]
  Vector3 normal = Vector3::UnitZ();  // unit, obstacle → critical point
  double distance = 0.0;   // surface to surface: |point − centre| − radius − link radius [m]
  double influence = 0.0;  // that obstacle's radius of influence [m]
  bool active() const { return distance <= influence; }
};

// Capsule radius of each link [m].
using LinkRadii = JointVector;

// The closest point of segment [a, b] to `c`, and its parameter t ∈ [0, 1].
Vector3 closest_point_on_segment(const Vector3& a, const Vector3& b, const Vector3& c,
                                 double& t) noexcept;

// Critical point and distance of every link against every obstacle (at most kMaxObstacles
// are considered); returns how many were written to `out`.
std::size_t critical_points(const KinematicState& state, const LinkRadii& radii,
                            std::span<const SphereObstacle> obstacles,
                            std::array<CriticalPoint, kMaxCriticalPoints>& out) noexcept;

// The constraint row nᵀ J_p of a critical point: the rate of change of its critical
// distance per joint velocity [m/rad].
RowJacobian distance_gradient(const KinematicState& state, const CriticalPoint& c) noexcept;

struct ObstacleResolution {
  DlsStatus status = DlsStatus::kOk;
  int active_constraints = 0;  // constraints enforced in the final solution
  int iterations = 0;
  double residual = 0.0;  // |W_t^½ (J q̇ − ẋ)|: what the constraints cost the task
};

// The constraint is a velocity damper: for every critical point k
//   g_k q̇ ≥ b_k = recovery · (influence_k − d_k)
// (g_k its distance gradient). Outside the sphere of influence b_k < 0 allows an approach
// at most `recovery` times the remaining distance, so the point slows down exponentially
// and meets the sphere with zero approach velocity instead of hitting a constraint that
// appears at full speed (which an acceleration-limited arm could not honour in one cycle);
// inside, b_k > 0 pushes it back out. `recovery` → ∞ is the seed's constraint switching on
// exactly at the radius; recovery = 0 is that switch, literally: g_k q̇ ≥ 0 once d_k ≤
// influence_k, nothing before.
//
// Used by every resolver that has a normal-equation form: minimises ½ q̇ᵀ H q̇ − rhsᵀ q̇
// (H = Jᵀ W_t J + W_v, rhs = Jᵀ W_t ẋ) subject to the constraints, by active-set iterations
// on the KKT system: add the most violated, release those whose multiplier says they pull
// the wrong way. A constraint the arm cannot honour (gradient zero, e.g. a link no joint
// before it moves) is skipped. At most 6 are enforced at once.
ObstacleResolution constrain_with_obstacles(const Matrix7& normal, const JointVector& rhs,
                                            const KinematicState& state,
                                            std::span<const CriticalPoint> points, double recovery,
                                            JointVector& qdot) noexcept;

// The task weight of the arm-angle row, relative to the task's own, while a constraint binds.
inline constexpr double kArmAngleYield = 1e-3;

// Weighted damped least squares (eq. 13) subject to the constraints above. When eq. 13's
// own solution violates none it is returned unchanged; otherwise the arm-angle row's weight
// is multiplied by kArmAngleYield, so the constraints take the redundancy (the self-motion)
// first and the hand keeps its path as long as the redundancy suffices (the spheres-of-influence
// patent).
ObstacleResolution resolve_with_obstacles(const CompositeJacobian& jacobian,
                                          const MotionVector& task_weights,
                                          const JointVector& velocity_weights,
                                          const MotionVector& xdot, const KinematicState& state,
                                          std::span<const CriticalPoint> points, double recovery,
                                          JointVector& qdot) noexcept;

}  // namespace tether

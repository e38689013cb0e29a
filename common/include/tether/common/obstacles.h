#pragma once

// Obstacle avoidance with spheres of influence (seed 003).
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

// Weighted damped least squares (eq. 13) subject to the spheres-of-influence constraints:
//   min ‖J q̇ − ẋ‖²_{W_t} + q̇ᵀ W_v q̇   s.t.   g_k q̇ ≥ recovery · (influence_k − d_k)⁺
// for every active critical point k (g_k its distance gradient). `recovery` [1/s] pushes a
// point that is already inside its sphere of influence back out; 0 only stops the approach.
// Active-set iterations on the KKT system of the active constraints: add the violated
// ones, release those whose multiplier says they pull the wrong way. A constraint the arm
// cannot honour (gradient zero, e.g. a link that no joint before it moves) is skipped.
// The task gives way in proportion to 1/W_t: weight the arm-angle row low to let the
// constraints take the redundancy from it first.
ObstacleResolution resolve_with_obstacles(const CompositeJacobian& jacobian,
                                          const MotionVector& task_weights,
                                          const JointVector& velocity_weights,
                                          const MotionVector& xdot, const KinematicState& state,
                                          std::span<const CriticalPoint> points, double recovery,
                                          JointVector& qdot) noexcept;

}  // namespace tether

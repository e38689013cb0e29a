#pragma once

// The 7-DOF S-R-S arm as the SHAKE patent's over-complete point chain, and the way back to joint
// angles.
//
// Points (BASE frame [m]): p_0 = shoulder S (fixed), p_1 = elbow E, p_2 = wrist W and, when
// the tool origin is not at the wrist, p_3 = tool origin T. Links: the upper arm |E − S|,
// the forearm |W − E| and the hand |T − W|, constant for an S-R-S arm (common/srs.h checks
// that). The hand pose fixes W and T (W sits at a constant offset in the tool frame), so E is
// the only free point: it moves on the circle of points at the two arm lengths from S and W,
// whose position carries the arm angle ψ.
//
// Joint recovery: the joint angles that put the tool at a pose and the elbow at a point on
// that circle, by Gauss–Newton steps from a nearby configuration (the last cycle's):
//   residual r(q) = (p_tool* − p_tool(q),  log(R_tool* R_tool(q)ᵀ),  E* − E(q))   (9 rows)
//   J = (tool Jacobian (6 rows, BASE); elbow point Jacobian, linear rows)
//   Δq = (JᵀJ + μ I)⁻¹ Jᵀ r,   μ = 1e-12 · max diag(JᵀJ)
// For a consistent target (E* on the circle of the target's W) the residual goes to zero;
// the tiny μ only keeps a step bounded at a wrist or shoulder singularity, where the
// recovered configuration is still exact but not unique. Positions in m, rotations in rad.
// Allocation-free after construction; usable in the control cycle.

#include "tether/common/kinematics.h"
#include "tether/common/types.h"

namespace tether::remote::shake {

// What of the arm the point chain needs, read from the model at q = 0. Meaningful only for
// an S-R-S arm.
struct SrsGeometry {
  Vector3 shoulder = Vector3::Zero();         // S in BASE [m]
  double upper_arm = 0.0;                     // |E − S| [m]
  double forearm = 0.0;                       // |W − E| [m]
  Vector3 wrist_in_tool = Vector3::Zero();    // W in the tool frame [m]
  Vector3 base_direction = Vector3::UnitZ();  // joint 1's axis in BASE: "link 0" of the chain
  // Joints (0-based) carrying S, E, W: link i of the arm's capsules (common/obstacles.h)
  // between two of them belongs to that chain segment.
  int shoulder_joint = 1, elbow_joint = 3, wrist_joint = 5;
};

SrsGeometry srs_geometry(const KinematicModel& model);

// The point of the elbow circle of (S, W) nearest to `elbow` (its plane through S, W and
// `elbow` keeps the arm angle). Returns false, leaving `elbow` unchanged, when W is out of
// the annulus |L1 − L2| < |W − S| < L1 + L2 or `elbow` lies on the S–W line.
bool project_elbow(const Vector3& shoulder, const Vector3& wrist, double upper_arm, double forearm,
                   Vector3& elbow) noexcept;

struct RecoveryOptions {
  int max_iterations = 20;
  double tolerance = 1e-10;  // on every residual component norm [m | rad]
};

struct RecoveryReport {
  bool converged = false;  // position and rotation residuals below tolerance
  bool singular = false;   // the normal matrix could not be factorised, even damped
  int iterations = 0;
  double position_residual = 0.0;  // max(|p_tool* − p_tool|, |E* − E|) [m]
  double rotation_residual = 0.0;  // |log(R* Rᵀ)| [rad]
};

// From `q` (start, overwritten with the result; on failure the best iterate), into `state`
// (left holding the forward kinematics of the returned q).
RecoveryReport recover_joints(const KinematicModel& model, const Frame& tool, const Vector3& elbow,
                              const RecoveryOptions& options, JointVector& q,
                              KinematicState& state) noexcept;

}  // namespace tether::remote::shake

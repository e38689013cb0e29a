#pragma once

// Arm angle ψ of a 7-DOF arm (the extended-task-space patent): the angle from a reference plane to
// the arm plane through shoulder S, elbow E and wrist W, measured about the S→W axis.
//
// With w = W − S, e = E − S, u = w/|w|:
//   p  = (I − uuᵀ) e        elbow offset from the S–W line (arm plane direction)
//   h  = (I − uuᵀ) V        reference plane direction, V the reference-plane vector
//                           (the seed's h = (w×V)×w, scaled by 1/|w|²)
//   ψ  = atan2(u·(h × p), h·p) ∈ (−π, π]
// Positive ψ turns the arm plane about S→W by the right-hand rule. The default V is the
// BASE z axis, so ψ = 0 is the vertical plane through S and W with the elbow on V's side.
//
// ψ is undefined (an algorithmic singularity, not a mechanical one) when the elbow lies on
// the S–W line (|p| → 0: arm stretched) or when w ∥ V (|h| → 0). Both are reported, and the
// Jacobian is set to zero there so a damped least-squares solve stays bounded.

#include "tether/common/kinematics.h"
#include "tether/common/types.h"

namespace tether {

enum class ArmAngleStatus {
  kOk,
  kElbowOnShoulderWristLine,    // |p| below tolerance
  kReferenceAlongShoulderWrist  // |h| below tolerance
};

struct ArmAngle {
  double psi = 0.0;                            // [rad], wrapped to (−π, π]
  RowJacobian jacobian = RowJacobian::Zero();  // ∂ψ/∂q [rad/rad]
  ArmAngleStatus status = ArmAngleStatus::kOk;
};

class ArmAngleModel {
 public:
  // `reference` is V in BASE coordinates (need not be unit); default vertical.
  explicit ArmAngleModel(const Vector3& reference = Vector3::UnitZ(),
                         double degenerate_tolerance = 1e-6);

  const Vector3& reference() const { return reference_; }

  // ψ alone.
  ArmAngleStatus angle(const KinematicState& state, double& psi) const;
  // ψ and its analytic Jacobian (eq. 12), from the shoulder/elbow/wrist point Jacobians.
  void compute(const KinematicModel& model, const KinematicState& state, ArmAngle& out) const;

 private:
  Vector3 reference_;
  double tolerance_;
};

// Wraps an angle to (−π, π].
double wrap_angle(double angle);

}  // namespace tether

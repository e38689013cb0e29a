#include "tether/common/arm_angle.h"

#include <cmath>
#include <numbers>

namespace tether {

double wrap_angle(double angle) {
  double wrapped = std::remainder(angle, 2.0 * std::numbers::pi);
  if (wrapped <= -std::numbers::pi) wrapped += 2.0 * std::numbers::pi;
  return wrapped;
}

ArmAngleModel::ArmAngleModel(const Vector3& reference, double degenerate_tolerance)
    : reference_(reference), tolerance_(degenerate_tolerance) {}

namespace {

struct PlaneGeometry {
  Vector3 u;  // unit S→W
  Vector3 p;  // elbow offset from the S–W line
  Vector3 h;  // reference direction, perpendicular to u
  double w_norm;
  Vector3 e;  // E − S
  ArmAngleStatus status;
};

PlaneGeometry plane_geometry(const KinematicState& state, const Vector3& V, double tolerance) {
  PlaneGeometry g;
  const Vector3 w = state.wrist - state.shoulder;
  g.e = state.elbow - state.shoulder;
  g.w_norm = w.norm();
  g.u = g.w_norm > 0.0 ? Vector3(w / g.w_norm) : Vector3::UnitZ();
  g.p = g.e - g.u * g.u.dot(g.e);
  g.h = V - g.u * g.u.dot(V);
  // Tolerances are relative to the arm's size so they do not depend on units.
  const double scale = std::max(g.e.norm(), 1e-12);
  if (g.p.norm() < tolerance * scale) {
    g.status = ArmAngleStatus::kElbowOnShoulderWristLine;
  } else if (g.h.norm() < tolerance * V.norm()) {
    g.status = ArmAngleStatus::kReferenceAlongShoulderWrist;
  } else {
    g.status = ArmAngleStatus::kOk;
  }
  return g;
}

}  // namespace

ArmAngleStatus ArmAngleModel::angle(const KinematicState& state, double& psi) const {
  const PlaneGeometry g = plane_geometry(state, reference_, tolerance_);
  psi = g.status == ArmAngleStatus::kOk ? std::atan2(g.u.dot(g.h.cross(g.p)), g.h.dot(g.p)) : 0.0;
  return g.status;
}

// Derivation (checked against central differences in the tests). With a = h·p and
// b = u·(h×p), ψ = atan2(b, a) and a² + b² = |h|²|p|².
//  * ψ depends on e only through p = (I − uuᵀ)e: ∂ψ/∂e = (u × p) / |p|².
//  * ψ depends on w through u; du = (I − uuᵀ) dw / |w|, and (using u·p = u·h = 0)
//      da = c_aᵀ du,  c_a = −(u·V) p − (u·e) h
//      db = c_bᵀ du,  c_b = −(u·V) (p × u) − (u·e) (u × h)
//    so ∂ψ/∂u = (a c_b − b c_a) / (a² + b²) and ∂ψ/∂w = (I − uuᵀ) ∂ψ/∂u / |w|.
// Then J_ψ = (∂ψ/∂e)ᵀ (J_E − J_S) + (∂ψ/∂w)ᵀ (J_W − J_S), J_X the linear-velocity
// Jacobians of the three points. This is eq. 12 of the seed in vector form.
void ArmAngleModel::compute(const KinematicModel& model, const KinematicState& state,
                            ArmAngle& out) const {
  const PlaneGeometry g = plane_geometry(state, reference_, tolerance_);
  out.status = g.status;
  if (g.status != ArmAngleStatus::kOk) {
    out.psi = 0.0;
    out.jacobian.setZero();
    return;
  }
  const Vector3& u = g.u;
  const Vector3& p = g.p;
  const Vector3& h = g.h;
  const double a = h.dot(p);
  const double b = u.dot(h.cross(p));
  out.psi = std::atan2(b, a);

  const double uV = u.dot(reference_);
  const double ue = u.dot(g.e);
  const Vector3 c_a = -uV * p - ue * h;
  const Vector3 c_b = -uV * p.cross(u) - ue * u.cross(h);
  const Vector3 d_psi_du = (a * c_b - b * c_a) / (a * a + b * b);
  const Vector3 d_psi_dw = (d_psi_du - u * u.dot(d_psi_du)) / g.w_norm;
  const Vector3 d_psi_de = u.cross(p) / p.squaredNorm();

  Jacobian3 J_s, J_e, J_w;
  point_linear_jacobian(state, model.point_joint(0), state.shoulder, J_s);
  point_linear_jacobian(state, model.point_joint(1), state.elbow, J_e);
  point_linear_jacobian(state, model.point_joint(2), state.wrist, J_w);
  out.jacobian = d_psi_de.transpose() * (J_e - J_s) + d_psi_dw.transpose() * (J_w - J_s);
}

}  // namespace tether

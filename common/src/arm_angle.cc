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

  // J_ψ = Σ_X g_Xᵀ J_X over X ∈ {E, W, S} with g_E = ∂ψ/∂e, g_W = ∂ψ/∂w,
  // g_S = −(g_E + g_W). Column i of J_X is z_i × (X − p_i) for joints that move X, and
  // g·(z × (X − p)) = z·((X − p) × g) = z·(X × g − p × g), so each column needs only
  // the sums of X × g_X and g_X over the points joint i moves.
  const Vector3 grad[3] = {-(d_psi_de + d_psi_dw), d_psi_de, d_psi_dw};  // S, E, W
  const Vector3* points[3] = {&state.shoulder, &state.elbow, &state.wrist};
  Vector3 moment[3];
  for (int n = 0; n < 3; ++n) moment[n] = points[n]->cross(grad[n]);
  for (int i = 0; i < kArmDof; ++i) {
    Vector3 m = Vector3::Zero();
    Vector3 gsum = Vector3::Zero();
    for (int n = 0; n < 3; ++n) {
      if (i <= model.point_joint(n)) {
        m += moment[n];
        gsum += grad[n];
      }
    }
    const auto k = static_cast<std::size_t>(i);
    out.jacobian[i] = state.R[k].col(2).dot(m - state.p[k].cross(gsum));
  }
}

}  // namespace tether

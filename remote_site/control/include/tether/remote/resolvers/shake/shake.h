#pragma once

// SHAKE (Ryckaert, Ciccotti & Berendsen 1977): restores the constraints of a point chain
// after its points were moved, by iterating over the constraints and correcting one pair of
// points at a time, until every |violation| < tolerance (Gauss–Seidel on the constraints).
//
// Revolute link k with r = p_k − p_{k-1} and the old bond vector r⁰ (same points before the
// move), inverse masses w_k, w_{k-1}:
//   g = (|r|² − L²) / (2 (w_k + w_{k-1}) r·r⁰),  p_k −= g w_k r⁰,  p_{k-1} += g w_{k-1} r⁰.
// The correction is along the old bond, as in the original algorithm; when r·r⁰ <
// 0.1 |r||r⁰| (the move rotated the bond by more than ~84°) the current bond r is used
// instead so that the update stays well defined.
// Prismatic link k: the bond is projected onto its axis d_k and its stroke clamped,
//   Δ = clamp(r·d_k, min, max) d_k − r,  p_k += Δ w_k/(w_k+w_{k-1}),  p_{k-1} −= Δ w_{k-1}/(…).
// A fixed point has inverse mass 0 (the base always; the end effector while it sits on the
// path). A link whose two points are both fixed cannot be corrected; it is reported through
// `converged` = false if it stays violated.

#include <vector>

#include "tether/remote/resolvers/shake/point_chain.h"

namespace tether::remote::shake {

struct ShakeOptions {
  double tolerance = 1e-6;   // on every |constraint residual| [m]
  int max_iterations = 500;  // sweeps over all constraints
};

struct ShakeResult {
  bool converged = false;
  int iterations = 0;          // sweeps performed
  double max_violation = 0.0;  // [m] after the last sweep
};

// Restores the constraints of `chain` in `p` (in place; no allocation). `old_p` holds the
// same points before the move (the old bond vectors); `inverse_mass` has one entry per
// point, 0 for fixed points.
template <int D>
ShakeResult shake(const PointChain<D>& chain, typename PointChain<D>::Points& p,
                  const typename PointChain<D>::Points& old_p,
                  const std::vector<double>& inverse_mass, const ShakeOptions& options);

}  // namespace tether::remote::shake

#include "tether/remote/resolvers/shake/shake.h"

#include <algorithm>
#include <cmath>

namespace tether::remote::shake {

template <int D>
ShakeResult shake(const PointChain<D>& chain, typename PointChain<D>::Points& p,
                  const typename PointChain<D>::Points& old_p,
                  const std::vector<double>& inverse_mass, const ShakeOptions& options) {
  using Vec = typename PointChain<D>::Vec;
  ShakeResult result;
  const int n = chain.link_count();
  for (int sweep = 0; sweep < options.max_iterations; ++sweep) {
    for (int k = 1; k <= n; ++k) {
      const auto i = static_cast<std::size_t>(k);
      const double wi = inverse_mass[i];
      const double wj = inverse_mass[i - 1];
      const double w = wi + wj;
      const Link& l = chain.link(k);
      const Vec r = p[i] - p[i - 1];
      if (l.kind == LinkKind::kRevolute) {
        const double violation = std::abs(r.norm() - l.length);
        if (violation < options.tolerance || w == 0.0) continue;
        Vec r0 = old_p[i] - old_p[i - 1];
        double rr0 = r.dot(r0);
        if (rr0 < 0.1 * r.norm() * r0.norm()) {
          r0 = r;
          rr0 = r.squaredNorm();
        }
        if (rr0 <= 0.0) continue;  // both points coincide: no bond direction to correct along
        const double g = (r.squaredNorm() - l.length * l.length) / (2.0 * w * rr0);
        p[i] -= g * wi * r0;
        p[i - 1] += g * wj * r0;
      } else {
        const Vec d = chain.prismatic_axis(p, k);
        const Vec delta = std::clamp(r.dot(d), l.min_length, l.max_length) * d - r;
        const double violation = delta.norm();
        if (violation < options.tolerance || w == 0.0) continue;
        p[i] += (wi / w) * delta;
        p[i - 1] -= (wj / w) * delta;
      }
    }
    result.iterations = sweep + 1;
    // The corrections of one sweep disturb earlier constraints, so convergence is judged on
    // a fresh measurement after the sweep.
    result.max_violation = chain.max_violation(p);
    if (result.max_violation < options.tolerance) {
      result.converged = true;
      return result;
    }
  }
  return result;
}

template ShakeResult shake<2>(const PointChain<2>&, PointChain<2>::Points&,
                              const PointChain<2>::Points&, const std::vector<double>&,
                              const ShakeOptions&);
template ShakeResult shake<3>(const PointChain<3>&, PointChain<3>::Points&,
                              const PointChain<3>::Points&, const std::vector<double>&,
                              const ShakeOptions&);

}  // namespace tether::remote::shake

#pragma once

// The per-step redundancy resolution of the SHAKE patent. Each step(target):
//   1. the end effector p_N is put on the next path point and fixed;
//   2. SHAKE restores the constraints (the old bond vectors are the previous configuration);
//   3. `trials` times: move every intermediate joint p_1 … p_{N−1} (or one chosen at random)
//      by a random vector with components uniform in [−step_size, step_size], SHAKE, evaluate
//      the objective E and accept by the Metropolis rule: always if ΔE ≤ 0, otherwise with
//      probability exp(−ΔE/T). T = 0 is pure random search (never accepts a worse E). Trials
//      whose SHAKE does not converge are rejected.
// The accepted configuration is appended to the history (velocities, periodic term).
// A seeded std::mt19937_64 makes runs reproducible. Not real-time: a step costs
// trials × (SHAKE + objective) and allocates nothing after construction.

#include <cstdint>
#include <random>
#include <vector>

#include "tether/remote/resolvers/shake/objective.h"
#include "tether/remote/resolvers/shake/point_chain.h"
#include "tether/remote/resolvers/shake/shake.h"

namespace tether::remote::shake {

struct AnnealingOptions {
  double step_size = 0.01;   // [m] per component of the random displacement
  int trials = 20;           // per step
  double temperature = 0.0;  // T, in units of E
  bool move_all = true;      // all intermediate joints, or one random one
  std::uint64_t seed = 1;
  ShakeOptions shake{};
  double cyclic_tolerance = 1e-3;  // [m] on the cyclicity residual
};

struct StepReport {
  bool placed = false;       // SHAKE converged with the end effector on the target
  int shake_iterations = 0;  // of the placement SHAKE
  int accepted = 0;          // accepted trials (worse ones included when T > 0)
  int accepted_worse = 0;
  double objective = 0.0;            // E after the step
  double cyclicity_residual = -1.0;  // [m]; −1 before one period is recorded
  bool cyclic = false;               // periodic term fully on and residual < tolerance
};

template <int D>
class AnnealingResolver {
 public:
  using Vec = typename PointChain<D>::Vec;
  using Points = typename PointChain<D>::Points;

  // Takes the chain's current points as the start (recorded as the first history entry).
  // Throws std::invalid_argument for a non-positive step size or trial count, a negative
  // temperature, or a chain without intermediate joints.
  AnnealingResolver(PointChain<D> chain, const Objective<D>& objective,
                    const AnnealingOptions& options);

  StepReport step(const Vec& target);

  const PointChain<D>& chain() const { return chain_; }
  const Points& points() const { return chain_.points(); }
  const History<D>& history() const { return history_; }
  const Objective<D>& objective() const { return *objective_; }
  std::int64_t first_cyclic_step() const { return first_cyclic_step_; }  // −1: not yet
  std::int64_t steps() const { return steps_; }

 private:
  PointChain<D> chain_;
  const Objective<D>* objective_;
  AnnealingOptions options_;
  History<D> history_;
  std::mt19937_64 rng_;
  std::vector<double> inverse_mass_;
  Points old_, trial_;
  std::int64_t steps_ = 0;
  std::int64_t first_cyclic_step_ = -1;
};

extern template class AnnealingResolver<2>;
extern template class AnnealingResolver<3>;

}  // namespace tether::remote::shake

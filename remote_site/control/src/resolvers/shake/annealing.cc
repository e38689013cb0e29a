#include "tether/remote/resolvers/shake/annealing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tether::remote::shake {

template <int D>
AnnealingResolver<D>::AnnealingResolver(PointChain<D> chain, const Objective<D>& objective,
                                        const AnnealingOptions& options)
    : chain_(std::move(chain)),
      objective_(&objective),
      options_(options),
      history_(std::max(objective.weights().period_steps, 2),
               static_cast<int>(chain_.points().size())),
      rng_(options.seed),
      inverse_mass_(chain_.points().size(), 1.0),
      old_(chain_.points()),
      trial_(chain_.points()) {
  if (!(options_.step_size > 0.0)) {
    throw std::invalid_argument("AnnealingResolver: step_size " +
                                std::to_string(options_.step_size) + " must be > 0");
  }
  if (options_.trials < 1) {
    throw std::invalid_argument("AnnealingResolver: trials " + std::to_string(options_.trials) +
                                " must be >= 1");
  }
  if (!(options_.temperature >= 0.0)) {
    throw std::invalid_argument("AnnealingResolver: temperature " +
                                std::to_string(options_.temperature) + " must be >= 0");
  }
  if (chain_.link_count() < 2) {
    throw std::invalid_argument(
        "AnnealingResolver: the chain needs >= 2 links (an intermediate joint to move)");
  }
  // The base never moves; the end effector is pinned to the path during the whole step.
  inverse_mass_.front() = 0.0;
  inverse_mass_.back() = 0.0;
  history_.push(chain_.points());
}

template <int D>
StepReport AnnealingResolver<D>::step(const Vec& target) {
  StepReport report;
  Points& current = chain_.points();
  std::copy(current.begin(), current.end(), old_.begin());
  current.back() = target;
  const ShakeResult placed = shake<D>(chain_, current, old_, inverse_mass_, options_.shake);
  report.placed = placed.converged;
  report.shake_iterations = placed.iterations;

  double energy = (*objective_)(current, history_);
  std::uniform_real_distribution<double> component(-options_.step_size, options_.step_size);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int intermediate = chain_.link_count() - 1;
  std::uniform_int_distribution<int> pick(1, intermediate);
  for (int trial = 0; trial < options_.trials; ++trial) {
    std::copy(current.begin(), current.end(), trial_.begin());
    const auto displace = [&](std::size_t i) {
      for (int d = 0; d < D; ++d) trial_[i][d] += component(rng_);
    };
    if (options_.move_all) {
      for (int i = 1; i <= intermediate; ++i) displace(static_cast<std::size_t>(i));
    } else {
      displace(static_cast<std::size_t>(pick(rng_)));
    }
    if (!shake<D>(chain_, trial_, current, inverse_mass_, options_.shake).converged) continue;
    const double candidate = (*objective_)(trial_, history_);
    const double delta = candidate - energy;
    bool accept = delta <= 0.0;
    // Only a worse candidate at T > 0 draws the Metropolis number: T = 0 is plain random search.
    if (!accept && options_.temperature > 0.0) {
      accept = unit(rng_) < std::exp(-delta / options_.temperature);
      if (accept) ++report.accepted_worse;
    }
    if (accept) {
      std::swap(current, trial_);
      energy = candidate;
      ++report.accepted;
    }
  }
  report.objective = energy;

  const int period = objective_->weights().period_steps;
  if (period > 0 && history_.size() >= period) {
    report.cyclicity_residual = objective_->cyclicity_residual(current, history_);
    const bool ramped = history_.pushed() >= period + objective_->weights().ramp_steps;
    report.cyclic = ramped && report.cyclicity_residual < options_.cyclic_tolerance;
    if (report.cyclic && first_cyclic_step_ < 0) first_cyclic_step_ = steps_ + 1;
  }
  history_.push(current);
  ++steps_;
  return report;
}

template class AnnealingResolver<2>;
template class AnnealingResolver<3>;

}  // namespace tether::remote::shake

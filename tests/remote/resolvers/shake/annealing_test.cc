#include "tether/remote/resolvers/shake/annealing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace tether::remote::shake {
namespace {

PointChain<2> zigzag_chain() {
  std::vector<Link> links(4, Link{.length = 0.5, .radius = 0.02});
  return PointChain<2>(Eigen::Vector2d::UnitX(), links,
                       {{0, 0}, {0.25, 0.433}, {0.5, 0}, {0.6, -0.49}, {0.7, 0}});
}

Eigen::Vector2d path(int i) { return {0.7 + 0.002 * i, 0.1 * std::sin(0.05 * i)}; }

Objective<2> objective_for(const PointChain<2>& chain) {
  return Objective<2>(chain, {.circles = {Circle{{0.6, 0.6}, 0.1}}},
                      {.obstacle = 0.01, .joint_velocity = 1e-4, .reference = 0.1}, {}, {},
                      stretched_configuration(chain));
}

TEST(AnnealingResolver, AtZeroTemperatureNeverAcceptsAWorseObjective) {
  const auto chain = zigzag_chain();
  const auto objective = objective_for(chain);
  AnnealingResolver<2> resolver(chain, objective, {.step_size = 0.02, .trials = 30, .seed = 7});
  for (int i = 1; i <= 100; ++i) {
    // The objective right after placement, before any trial, bounds the step's result.
    auto placed = resolver.points();
    auto old = placed;
    placed.back() = path(i);
    std::vector<double> w(placed.size(), 1.0);
    w.front() = w.back() = 0.0;
    ASSERT_TRUE(shake<2>(resolver.chain(), placed, old, w, {}).converged);
    const double before = objective(placed, resolver.history());
    const StepReport r = resolver.step(path(i));
    ASSERT_TRUE(r.placed);
    EXPECT_EQ(r.accepted_worse, 0);
    EXPECT_LE(r.objective, before + 1e-12) << "step " << i;
    EXPECT_LT(resolver.chain().max_violation(resolver.points()), 1e-6);
    EXPECT_EQ((resolver.points().back() - path(i)).norm(), 0.0);
  }
}

TEST(AnnealingResolver, AtHighTemperatureAcceptsSomeWorseConfigurations) {
  const auto chain = zigzag_chain();
  const auto objective = objective_for(chain);
  AnnealingResolver<2> resolver(chain, objective,
                                {.step_size = 0.02, .trials = 30, .temperature = 10.0, .seed = 7});
  int worse = 0;
  for (int i = 1; i <= 20; ++i) worse += resolver.step(path(i)).accepted_worse;
  EXPECT_GT(worse, 0);
}

TEST(AnnealingResolver, SameSeedGivesTheIdenticalTrajectory) {
  const auto chain = zigzag_chain();
  const auto objective = objective_for(chain);
  for (bool move_all : {true, false}) {
    const AnnealingOptions options{
        .step_size = 0.02, .trials = 20, .temperature = 1e-3, .move_all = move_all, .seed = 42};
    AnnealingResolver<2> a(chain, objective, options), b(chain, objective, options);
    AnnealingOptions other = options;
    other.seed = 43;
    AnnealingResolver<2> c(chain, objective, other);
    double difference_to_other_seed = 0.0;
    for (int i = 1; i <= 50; ++i) {
      a.step(path(i));
      b.step(path(i));
      c.step(path(i));
      for (std::size_t k = 0; k < a.points().size(); ++k) {
        ASSERT_EQ(a.points()[k], b.points()[k]) << "step " << i << " point " << k;
        difference_to_other_seed += (a.points()[k] - c.points()[k]).norm();
      }
    }
    EXPECT_GT(difference_to_other_seed, 1e-3);
  }
}

TEST(AnnealingResolver, RejectsBadOptionsNamingTheField) {
  const auto chain = zigzag_chain();
  const auto objective = objective_for(chain);
  try {
    const AnnealingResolver<2> refused(chain, objective, {.step_size = 0.0});
    FAIL() << "step size 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("step_size 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(AnnealingResolver<2>(chain, objective, {.trials = 0}), std::invalid_argument);
  EXPECT_THROW(AnnealingResolver<2>(chain, objective, {.temperature = -1.0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace tether::remote::shake

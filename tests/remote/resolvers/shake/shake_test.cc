#include "tether/remote/resolvers/shake/shake.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "tether/remote/resolvers/shake/point_chain.h"

namespace tether::remote::shake {
namespace {

Link revolute(double length) { return Link{.kind = LinkKind::kRevolute, .length = length}; }
Link prismatic(double min, double max, double angle = 0.0) {
  return Link{.kind = LinkKind::kPrismatic,
              .length = 0.0,
              .min_length = min,
              .max_length = max,
              .relative_angle = angle};
}

template <int D>
void perturb(typename PointChain<D>::Points& p, double size, std::mt19937_64& rng, bool move_tip) {
  std::uniform_real_distribution<double> u(-size, size);
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (i + 1 == p.size() && !move_tip) continue;
    for (int d = 0; d < D; ++d) p[i][d] += u(rng);
  }
}

TEST(PointChain, RejectsInconsistentDefinitionsNamingTheField) {
  using Chain = PointChain<2>;
  const Chain::Points three(3, Eigen::Vector2d::Zero());
  EXPECT_THROW(Chain(Eigen::Vector2d::UnitX(), {revolute(1.0)}, three), std::invalid_argument);
  try {
    const Chain refused(Eigen::Vector2d::UnitX(), {revolute(1.0), revolute(-0.5)}, three);
    FAIL() << "negative length accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("link 2 length -0.5"), std::string::npos) << e.what();
  }
  try {
    const PointChain<3> refused(Eigen::Vector3d::UnitZ(), {revolute(1.0), prismatic(0.1, 0.5, 0.3)},
                                PointChain<3>::Points(3, Eigen::Vector3d::Zero()));
    FAIL() << "3-D relative angle accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("relative_angle"), std::string::npos) << e.what();
  }
}

TEST(PointChain, StretchedConfigurationSatisfiesAllConstraints) {
  PointChain<2> chain(Eigen::Vector2d(1.0, 1.0),
                      {revolute(0.4), prismatic(0.2, 0.6, 0.5), revolute(0.3)},
                      PointChain<2>::Points(4, Eigen::Vector2d::Zero()));
  const auto p = stretched_configuration(chain);
  EXPECT_LT(chain.max_violation(p), 1e-12);
  EXPECT_NEAR((p[2] - p[1]).norm(), 0.4, 1e-12);
}

template <int D>
void expect_restores(const std::vector<Link>& links, bool tip_fixed, std::uint64_t seed) {
  using Chain = PointChain<D>;
  typename Chain::Vec base_dir = Chain::Vec::Zero();
  base_dir[0] = 1.0;
  base_dir[1] = 0.3;
  Chain chain(base_dir, links, typename Chain::Points(links.size() + 1, Chain::Vec::Zero()));
  // A zigzag start, far from the stretched singularity where SHAKE with a fixed end effector
  // converges slowly; SHAKE with a free tip then puts the prismatic links on their axes.
  typename Chain::Points start(links.size() + 1, Chain::Vec::Zero());
  for (std::size_t k = 1; k < start.size(); ++k) {
    typename Chain::Vec u = Chain::Vec::Zero();
    u[0] = std::cos(k % 2 ? 0.6 : -0.6);
    u[1] = std::sin(k % 2 ? 0.6 : -0.6);
    if constexpr (D == 3) u[2] = 0.2 * static_cast<double>(k);
    start[k] = start[k - 1] + 0.3 * u.normalized();
  }
  std::mt19937_64 rng(seed);
  std::vector<double> inverse_mass(start.size(), 1.0);
  inverse_mass.front() = 0.0;
  ASSERT_TRUE(shake<D>(chain, start, start, inverse_mass, {.tolerance = 1e-12}).converged);
  if (tip_fixed) inverse_mass.back() = 0.0;
  for (int trial = 0; trial < 50; ++trial) {
    auto p = start;
    perturb<D>(p, 0.05, rng, !tip_fixed);
    const double before = chain.max_violation(p);
    const ShakeResult r =
        shake<D>(chain, p, start, inverse_mass, {.tolerance = 1e-9, .max_iterations = 5000});
    ASSERT_TRUE(r.converged) << "trial " << trial << " violation " << r.max_violation;
    EXPECT_LT(chain.max_violation(p), 1e-9);
    for (int k = 1; k <= chain.link_count(); ++k) {
      if (chain.link(k).kind == LinkKind::kRevolute) {
        EXPECT_NEAR((p[k] - p[k - 1]).norm(), chain.link(k).length, 1e-9);
      }
    }
    EXPECT_GT(before, 1e-4);
    EXPECT_EQ((p.front() - start.front()).norm(), 0.0);
    if (tip_fixed) {
      EXPECT_EQ((p.back() - start.back()).norm(), 0.0);
    }
  }
}

TEST(Shake, RestoresRevoluteLengthsIn2D) {
  expect_restores<2>({revolute(0.5), revolute(0.4), revolute(0.3), revolute(0.3)}, false, 1);
}
TEST(Shake, RestoresRevoluteLengthsIn2DWithTheEndEffectorFixed) {
  expect_restores<2>({revolute(0.5), revolute(0.4), revolute(0.3), revolute(0.3)}, true, 2);
}
TEST(Shake, RestoresRevoluteLengthsIn3DWithTheEndEffectorFixed) {
  expect_restores<3>({revolute(0.4), revolute(0.4), revolute(0.2)}, true, 3);
}
TEST(Shake, RestoresPrismaticDirectionAndStrokeIn2D) {
  expect_restores<2>({revolute(0.5), prismatic(0.2, 0.6, 0.4), revolute(0.3)}, false, 4);
  expect_restores<2>({revolute(0.5), prismatic(0.2, 0.6, -0.3), revolute(0.3), revolute(0.3)}, true,
                     5);
}
TEST(Shake, RestoresPrismaticDirectionAndStrokeIn3D) {
  expect_restores<3>({revolute(0.5), prismatic(0.2, 0.6), revolute(0.3), revolute(0.3)}, true, 6);
}

TEST(Shake, ClampsAPrismaticStrokeToItsLimits) {
  PointChain<2> chain(Eigen::Vector2d::UnitX(), {revolute(0.5), prismatic(0.2, 0.4)},
                      PointChain<2>::Points(3, Eigen::Vector2d::Zero()));
  PointChain<2>::Points p{{0, 0}, {0.5, 0}, {1.5, 0.01}};  // stroke 1.0 > max 0.4
  const auto old = p;
  const ShakeResult r = shake<2>(chain, p, old, {0.0, 1.0, 1.0}, {.tolerance = 1e-10});
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR((p[2] - p[1]).norm(), 0.4, 1e-9);
  const Eigen::Vector2d u1 = p[1] - p[0], u2 = p[2] - p[1];
  EXPECT_NEAR(u1.x() * u2.y() - u1.y() * u2.x(), 0.0, 1e-9);  // collinear with the first link
  EXPECT_GT(u1.dot(u2), 0.0);
}

TEST(Shake, ReportsNonConvergenceForAnUnreachableFixedEndEffector) {
  PointChain<2> chain(Eigen::Vector2d::UnitX(), {revolute(0.5), revolute(0.5)},
                      PointChain<2>::Points(3, Eigen::Vector2d::Zero()));
  PointChain<2>::Points p{{0, 0}, {0.5, 0.1}, {1.5, 0}};  // 1.5 m away, reach 1.0 m
  const auto old = p;
  const ShakeResult r = shake<2>(chain, p, old, {0.0, 1.0, 0.0}, {.max_iterations = 200});
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 200);
  EXPECT_GT(r.max_violation, 0.1);
}

}  // namespace
}  // namespace tether::remote::shake

// The seed's test problems for the SHAKE + annealing resolver. Each scenario asserts the
// physical outcome (clearance, alignment, cyclicity) and writes a picture of the arm over
// time into the working directory: shake_hole.png, shake_circle_<n>dof.png, shake_corners.png.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "tether/common/units.h"
#include "tether/remote/report/shake_picture.h"
#include "tether/remote/resolvers/shake/annealing.h"

namespace tether::remote::shake {
namespace {

using Points2 = PointChain<2>::Points;
using Points3 = PointChain<3>::Points;

constexpr report::Rgb kObstacle{190, 190, 190};
constexpr report::Rgb kPath{30, 90, 220};

// A chain of `lengths` from `base` bent sideways (along `side`) so that its tip sits on
// `tip`: a bulged straight line whose lengths SHAKE then restores with both ends fixed.
template <int D>
PointChain<D> arch(const typename PointChain<D>::Vec& base_direction,
                   const std::vector<double>& lengths, double radius,
                   const typename PointChain<D>::Vec& base, const typename PointChain<D>::Vec& tip,
                   const typename PointChain<D>::Vec& side) {
  std::vector<Link> links;
  links.reserve(lengths.size());
  for (double l : lengths) links.push_back(Link{.length = l, .radius = radius});
  typename PointChain<D>::Points p(lengths.size() + 1);
  const double n = static_cast<double>(lengths.size());
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double t = static_cast<double>(k) / n;
    p[k] = base + t * (tip - base) + std::sin(std::numbers::pi * t) * side;
  }
  PointChain<D> chain(base_direction, links, p);
  std::vector<double> w(lengths.size() + 1, 1.0);
  w[0] = 0.0;
  w[lengths.size()] = 0.0;
  const auto old = p;
  const ShakeResult r =
      shake<D>(chain, chain.points(), old, w, {.tolerance = 1e-9, .max_iterations = 20000});
  EXPECT_TRUE(r.converged) << "initial arch, violation " << r.max_violation;
  return chain;
}

void draw_chain(Canvas& canvas, const Points2& p, report::Rgb color, double thickness) {
  for (std::size_t k = 1; k < p.size(); ++k) canvas.line(p[k - 1], p[k], color, thickness);
  for (const auto& x : p) canvas.dot(x, thickness + 1.0, color);
}

void draw_run(Canvas& canvas, const std::vector<Points2>& run, int every) {
  for (std::size_t i = 0; i < run.size(); i += static_cast<std::size_t>(every)) {
    draw_chain(canvas, run[i], report::palette_color(i / static_cast<std::size_t>(every)), 1.0);
  }
  draw_chain(canvas, run.back(), report::kBlack, 3.0);
}

void draw_path(Canvas& canvas, const std::vector<Eigen::Vector2d>& path) {
  for (std::size_t i = 1; i < path.size(); ++i) canvas.line(path[i - 1], path[i], kPath, 2.0);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// (1) A 4-link planar robot reaches through a hole in a wall and pulls back out.
TEST(ShakeScenario, FourLinkRobotReachesThroughAHoleWithoutTouchingTheWalls) {
  const double radius = 0.03;
  auto chain = arch<2>(Eigen::Vector2d::UnitX(), {0.5, 0.5, 0.5, 0.5}, radius, {0, 0}, {0.7, 0.0},
                       {0.0, 0.45});
  const Obstacles<2> walls{
      .polygons = {Polygon{{{1.0, -1.2}, {1.1, -1.2}, {1.1, -0.12}, {1.0, -0.12}}},
                   Polygon{{{1.0, 0.12}, {1.1, 0.12}, {1.1, 1.2}, {1.0, 1.2}}}}};
  const Objective<2> objective(
      chain, walls, {.dt = 0.01, .obstacle = 0.01, .joint_velocity = 1e-5, .reference = 0.05}, {},
      {}, stretched_configuration(chain));
  AnnealingResolver<2> resolver(chain, objective, {.step_size = 0.01, .trials = 40, .seed = 1});

  std::vector<Eigen::Vector2d> path;
  const int half = 450;
  for (int i = 1; i <= 2 * half; ++i) {
    const double s = i <= half ? double(i) / half : double(2 * half - i) / half;
    path.emplace_back(0.7 + 0.9 * s, 0.0);
  }
  std::vector<Points2> run{resolver.points()};
  double min_clearance = objective.min_clearance(resolver.points());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& target : path) {
    ASSERT_TRUE(resolver.step(target).placed) << "target " << target.transpose();
    min_clearance = std::min(min_clearance, objective.min_clearance(resolver.points()));
    run.push_back(resolver.points());
  }
  const double elapsed = seconds_since(start);
  std::cout << "hole: min clearance " << min_clearance << " m, " << path.size() << " steps in "
            << elapsed << " s\n";
  EXPECT_GT(min_clearance, 0.0);
  const auto deepest = std::max_element(run.begin(), run.end(), [](const auto& a, const auto& b) {
    return a.back().x() < b.back().x();
  });
  EXPECT_NEAR(deepest->back().x(), 1.6, 1e-12);  // the tool went 0.5 m beyond the wall
  EXPECT_LT(run.back().back().x(), 1.0);         // and came back out

  Canvas canvas(900, 700, {-0.3, -1.2}, {1.8, 1.2});
  for (const auto& w : walls.polygons) canvas.polygon(w.vertices, kObstacle, true);
  draw_path(canvas, path);
  draw_run(canvas, run, 60);
  canvas.write_png("shake_hole.png");
}

// (2) One and two redundant DOF machining part of a circular workpiece periodically.
// Returns the largest cyclicity residual of each period (0 for the first one).
std::vector<double> machine_circle(int links, double periodic_weight, bool check) {
  const Eigen::Vector2d centre(1.25, 0.0);
  const double workpiece = 0.3, standoff = 0.06, radius = 0.02;
  const int period = 120, periods = 6;
  const auto tool = [&](int i) {
    const double phi = std::numbers::pi + 0.6 * std::sin(2.0 * std::numbers::pi * i / period);
    return Eigen::Vector2d(centre +
                           (workpiece + standoff) * Eigen::Vector2d(std::cos(phi), std::sin(phi)));
  };
  const std::vector<double> lengths(static_cast<std::size_t>(links), links == 4 ? 0.35 : 0.3);
  auto chain = arch<2>(Eigen::Vector2d::UnitX(), lengths, radius, {0, 0}, tool(0), {0.0, 0.4});
  const Objective<2> objective(chain, {.circles = {Circle{centre, workpiece}}},
                               {.dt = 0.01,
                                .obstacle = 0.002,
                                .joint_velocity = 1e-4,
                                .alignment_strength = 20.0,
                                .alignment_decay = 0.1,
                                .periodic = periodic_weight,
                                .period_steps = period,
                                .ramp_steps = period},
                               {}, {AlignmentSurface<2>{centre, workpiece}});
  AnnealingResolver<2> resolver(
      chain, objective, {.step_size = 0.005, .trials = 60, .seed = 2, .cyclic_tolerance = 5e-3});

  std::vector<Points2> run{resolver.points()};
  std::vector<Eigen::Vector2d> path;
  double min_clearance = std::numeric_limits<double>::infinity();
  double worst_alignment = 0.0;
  std::vector<double> residual(periods, 0.0);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= period * periods; ++i) {
    path.push_back(tool(i));
    const StepReport r = resolver.step(tool(i));
    EXPECT_TRUE(r.placed);
    run.push_back(resolver.points());
    min_clearance = std::min(min_clearance, objective.min_clearance(resolver.points()));
    // The arm starts from an arbitrary arch; judge alignment once it settled (period 2 on).
    if (i > period) {
      worst_alignment = std::max(worst_alignment, objective.alignment_error(resolver.points()));
    }
    auto& period_residual = residual[static_cast<std::size_t>((i - 1) / period)];
    period_residual = std::max(period_residual, r.cyclicity_residual);
  }
  const double elapsed = seconds_since(start);
  const double worst_deg = worst_alignment * kRadToDeg;
  std::cout << "circle " << links - 3 << " redundant DOF, periodic weight " << periodic_weight
            << ": min clearance " << min_clearance << " m, worst alignment " << worst_deg
            << " deg, residual per period [m]";
  for (double x : residual) std::cout << " " << x;
  std::cout << ", first cyclic step " << resolver.first_cyclic_step() << ", " << period * periods
            << " steps in " << elapsed << " s\n";
  if (!check) return residual;
  EXPECT_GT(min_clearance, 0.0);
  EXPECT_LT(worst_deg, 5.0);
  EXPECT_LT(residual.back(), 5e-3);
  EXPECT_GT(resolver.first_cyclic_step(), period);
  EXPECT_LE(resolver.first_cyclic_step(), period * (periods - 1));

  Canvas canvas(900, 700, {-0.3, -0.9}, {1.7, 0.9});
  canvas.circle(centre, workpiece, kObstacle, true);
  draw_path(canvas, path);
  draw_run(canvas, run, 15);
  canvas.write_png("shake_circle_" + std::to_string(links - 3) + "dof.png");
  return residual;
}

TEST(ShakeScenario, OneRedundantDofMachinesACircularWorkpieceCyclically) {
  machine_circle(4, 200.0, true);
}
TEST(ShakeScenario, TwoRedundantDofMachineACircularWorkpieceCyclically) {
  machine_circle(5, 200.0, true);
}
TEST(ShakeScenario, WithoutThePeriodicTermTheTrajectoryIsLessCyclic) {
  const auto with = machine_circle(5, 200.0, false);
  const auto without = machine_circle(5, 0.0, false);
  EXPECT_LT(with.back(), without.back());
}

// (3) A spatial arm traces the front face of a box workpiece, aligned at its four corners.
TEST(ShakeScenario, SpatialArmStaysAlignedAtTheFourFrontCornersOfABox) {
  const Box box{.centre = {1.15, 0.0, 0.4}, .half_extents = {0.15, 0.25, 0.2}};
  const double face = box.centre.x() - box.half_extents.x(), standoff = 0.08;
  std::vector<Eigen::Vector3d> corners, visits;
  for (const auto& [y, z] : {std::pair{-0.25, 0.2}, {0.25, 0.2}, {0.25, 0.6}, {-0.25, 0.6}}) {
    corners.emplace_back(face, y, z);
    visits.emplace_back(face - standoff, y, z);
  }
  std::vector<AlignmentFeature<3>> features;
  features.reserve(corners.size());
  for (const auto& c : corners) features.push_back({c, -Eigen::Vector3d::UnitX()});

  auto chain = arch<3>(Eigen::Vector3d::UnitZ(), {0.4, 0.4, 0.4, 0.4}, 0.03, {0, 0, 0}, visits[0],
                       {-0.1, 0.0, 0.4});
  const Objective<3> objective(chain, {.boxes = {box}},
                               {.dt = 0.01,
                                .obstacle = 0.002,
                                .joint_velocity = 1e-4,
                                .alignment_strength = 2.0,
                                .alignment_decay = 0.1},
                               features);
  AnnealingResolver<3> resolver(chain, objective, {.step_size = 0.005, .trials = 60, .seed = 3});

  const int edge_steps = 150, laps = 2;
  std::vector<Points3> run{resolver.points()};
  std::vector<Eigen::Vector3d> path;
  std::vector<double> corner_error(4, 0.0);
  double min_clearance = std::numeric_limits<double>::infinity();
  const auto start = std::chrono::steady_clock::now();
  for (int lap = 0; lap < laps; ++lap) {
    for (std::size_t e = 0; e < 4; ++e) {
      const auto& from = visits[e];
      const auto& to = visits[(e + 1) % 4];
      for (int i = 1; i <= edge_steps; ++i) {
        const Eigen::Vector3d target = from + (to - from) * (double(i) / edge_steps);
        path.push_back(target);
        ASSERT_TRUE(resolver.step(target).placed);
        run.push_back(resolver.points());
        min_clearance = std::min(min_clearance, objective.min_clearance(resolver.points()));
        // On the last lap the arm arrives at corner e+1 at the end of the edge.
        if (lap == laps - 1 && i == edge_steps) {
          const std::size_t c = (e + 1) % 4;
          corner_error[c] = objective.alignment_error(resolver.points(), features[c]);
        }
      }
    }
  }
  const double elapsed = seconds_since(start);
  std::cout << "corners: min clearance " << min_clearance << " m, alignment at corners [deg]";
  for (double a : corner_error) std::cout << " " << a * kRadToDeg;
  std::cout << ", " << path.size() << " steps in " << elapsed << " s\n";
  EXPECT_GT(min_clearance, 0.0);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_LT(corner_error[c] * kRadToDeg, 5.0) << "corner " << c;
  }

  // Top view (x, y) on the left, side view (x, z) shifted 2 m right.
  const Eigen::Vector2d shift(2.0, 0.0);
  Canvas canvas(1200, 600, {-0.3, -0.8}, {3.6, 1.7});
  const auto top = [](const Eigen::Vector3d& v) -> Eigen::Vector2d {
    return Eigen::Vector2d(v.x(), v.y());
  };
  const auto side = [&](const Eigen::Vector3d& v) -> Eigen::Vector2d {
    return Eigen::Vector2d(v.x(), v.z()) + shift;
  };
  const Eigen::Vector3d lo = box.centre - box.half_extents, hi = box.centre + box.half_extents;
  canvas.polygon({{lo.x(), lo.y()}, {hi.x(), lo.y()}, {hi.x(), hi.y()}, {lo.x(), hi.y()}},
                 kObstacle, true);
  canvas.polygon({Eigen::Vector2d(lo.x(), lo.z()) + shift, Eigen::Vector2d(hi.x(), lo.z()) + shift,
                  Eigen::Vector2d(hi.x(), hi.z()) + shift, Eigen::Vector2d(lo.x(), hi.z()) + shift},
                 kObstacle, true);
  for (std::size_t i = 1; i < path.size(); ++i) {
    canvas.line(top(path[i - 1]), top(path[i]), kPath, 2.0);
    canvas.line(side(path[i - 1]), side(path[i]), kPath, 2.0);
  }
  for (std::size_t i = 0; i < run.size(); i += 50) {
    Points2 a, b;
    for (const auto& p : run[i]) a.push_back(top(p)), b.push_back(side(p));
    draw_chain(canvas, a, report::palette_color(i / 50), 1.0);
    draw_chain(canvas, b, report::palette_color(i / 50), 1.0);
  }
  canvas.write_png("shake_corners.png");
}

}  // namespace
}  // namespace tether::remote::shake

#include "tether/remote/seed/shake_scenarios.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <tuple>
#include <utility>

#include "tether/remote/report/scene.h"
#include "tether/remote/resolvers/shake/annealing.h"

namespace tether::remote::seed {
namespace {

using report::LegendEntry;
using report::Range;
using report::Rgb;
using report::Scene;
using report::View;
using shake::AnnealingResolver;
using shake::PointChain;

constexpr Rgb kWall{120, 120, 120};
constexpr Rgb kWallFill{175, 175, 175};
constexpr Rgb kPath{0, 0, 0};
constexpr Rgb kTarget{214, 39, 40};

// A chain of `lengths` from `base` bent sideways (along `side`) so that its tip sits on
// `tip`: a bulged straight line whose lengths SHAKE then restores with both ends fixed.
template <int D>
PointChain<D> arch(const typename PointChain<D>::Vec& base_direction,
                   const std::vector<double>& lengths, double radius,
                   const typename PointChain<D>::Vec& base, const typename PointChain<D>::Vec& tip,
                   const typename PointChain<D>::Vec& side, bool& converged) {
  std::vector<shake::Link> links;
  links.reserve(lengths.size());
  for (double l : lengths) links.push_back(shake::Link{.length = l, .radius = radius});
  typename PointChain<D>::Points p(lengths.size() + 1);
  const double n = static_cast<double>(lengths.size());
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double t = static_cast<double>(k) / n;
    p[k] = base + t * (tip - base) + std::sin(std::numbers::pi * t) * side;
  }
  PointChain<D> chain(base_direction, links, p);
  std::vector<double> w(lengths.size() + 1, 1.0);
  w.front() = 0.0;
  w.back() = 0.0;
  const auto old = p;
  const shake::ShakeResult r =
      shake::shake<D>(chain, chain.points(), old, w, {.tolerance = 1e-9, .max_iterations = 20000});
  converged = r.converged;
  return chain;
}

template <class Points>
auto copy_points(const Points& p) {
  return std::vector<typename Points::value_type>(p.begin(), p.end());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double step_time(std::size_t k) { return static_cast<double>(k) * kShakeStepTime; }

// Snapshots of a chain at steps [first, last] every `every`, coloured by the time since
// `origin` over `span` seconds: thin lines, the joints as small dots.
void add_chains(View& view, const std::vector<Chain2>& chains, std::size_t first, std::size_t last,
                std::size_t every, double origin, double span) {
  for (std::size_t k = first; k <= last && k < chains.size(); k += every) {
    const Rgb c = report::time_color((step_time(k) - origin) / span);
    view.shapes.push_back(report::polyline(chains[k], c, 1.6));
    view.shapes.push_back(report::dots(chains[k], 2.6, c));
  }
}

void add_path(View& view, const std::vector<Eigen::Vector2d>& path) {
  view.shapes.push_back(report::polyline(path, kPath, 1.4));
}

std::vector<LegendEntry> chain_legend(const char* obstacle,
                                      const char* arm = "arm at one moment (colour = time)") {
  return {{obstacle, LegendEntry::Mark::kPatch, kWall, kWallFill},
          {arm, LegendEntry::Mark::kTimeLine},
          {"end-effector path", LegendEntry::Mark::kLine, kPath}};
}

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

ShakeHoleRun run_shake_hole() {
  ShakeHoleRun out;
  const double radius = 0.03;
  auto chain = arch<2>(Eigen::Vector2d::UnitX(), {0.5, 0.5, 0.5, 0.5}, radius, {0, 0}, {0.7, 0.0},
                       {0.0, 0.45}, out.initial_converged);
  out.walls = {shake::Polygon{{{1.0, -1.2}, {1.1, -1.2}, {1.1, -0.12}, {1.0, -0.12}}},
               shake::Polygon{{{1.0, 0.12}, {1.1, 0.12}, {1.1, 1.2}, {1.0, 1.2}}}};
  const shake::Obstacles<2> walls{.polygons = out.walls};
  const shake::Objective<2> objective(
      chain, walls,
      {.dt = kShakeStepTime, .obstacle = 0.01, .joint_velocity = 1e-5, .reference = 0.05}, {}, {},
      shake::stretched_configuration(chain));
  AnnealingResolver<2> resolver(chain, objective, {.step_size = 0.01, .trials = 40, .seed = 1});

  const int half = 450;
  for (int i = 1; i <= 2 * half; ++i) {
    const double s = i <= half ? double(i) / half : double(2 * half - i) / half;
    out.path.emplace_back(0.7 + 0.9 * s, 0.0);
  }
  out.chains.push_back(copy_points(resolver.points()));
  out.min_clearance = objective.min_clearance(resolver.points());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& target : out.path) {
    if (!resolver.step(target).placed) break;  // the rest would start from a broken chain
    ++out.placed_steps;
    out.min_clearance = std::min(out.min_clearance, objective.min_clearance(resolver.points()));
    out.chains.push_back(copy_points(resolver.points()));
  }
  out.elapsed = seconds_since(start);
  return out;
}

void write_shake_hole_picture(const ShakeHoleRun& run, const std::string& path) {
  const double end = step_time(run.chains.size() - 1);
  const std::size_t turn = run.chains.size() / 2;
  std::vector<Eigen::Vector2d> all;
  for (const auto& c : run.chains) all.insert(all.end(), c.begin(), c.end());
  // Named, not a structured binding: clang 14 (the fuzz and sanitizer builds) cannot
  // capture bindings in the lambdas below.
  const auto ranges = report::bounds(all, 0.12);
  const report::Range xr = ranges.first;
  const report::Range yr = ranges.second;
  Scene scene;
  scene.title = "SHAKE patent, problem 1: a 4-link arm reaches through a hole and back out";
  scene.subtitle = format(
      "SHAKE + simulated annealing; links 0.5 m, capsule radius 3 cm; hole 0.24 m wide; "
      "least clearance to the walls %.0f mm",
      run.min_clearance * 1e3);
  scene.time = report::TimeScale{0.0, end, "time [s]"};
  report::ViewRow row;
  row.height = 560;
  const auto view = [&](const std::string& title, std::size_t first, std::size_t last) {
    View v;
    v.title = title;
    v.x_label = "x [m]";
    v.y_label = "y [m]";
    v.x = xr;
    v.y = yr;
    for (const auto& w : run.walls) {
      v.shapes.push_back(report::polygon(w.vertices, kWallFill, kWall));
    }
    add_chains(v, run.chains, first, last, 75, 0.0, end);
    std::vector<Eigen::Vector2d> tip;
    for (std::size_t k = first; k <= last && k < run.chains.size(); ++k) {
      tip.push_back(run.chains[k].back());
    }
    add_path(v, tip);
    v.shapes.push_back(
        report::dots({run.chains[first].back(), run.chains[last].back()}, 4.0, kPath));
    v.legend = chain_legend("wall");
    v.legend_corner = report::Corner::kBottomLeft;
    return v;
  };
  row.views.push_back(
      view(format("reaching in: %.1f – %.1f s, every 0.75 s", 0.0, step_time(turn)), 0, turn));
  row.views.push_back(view(format("pulling out: %.1f – %.1f s, every 0.75 s", step_time(turn), end),
                           turn, run.chains.size() - 1));
  scene.rows.push_back(std::move(row));
  report::write_scene(scene, path);
}

ShakeCircleRun run_shake_circle(int links, double periodic_weight) {
  ShakeCircleRun out;
  out.links = links;
  out.periodic_weight = periodic_weight;
  out.centre = {1.25, 0.0};
  out.workpiece = 0.3;
  const double standoff = 0.06, radius = 0.02;
  out.period = 120;
  out.periods = 6;
  const Eigen::Vector2d centre = out.centre;
  const double workpiece = out.workpiece;
  const int period = out.period, periods = out.periods;
  const auto tool = [&](int i) {
    const double phi = std::numbers::pi + 0.6 * std::sin(2.0 * std::numbers::pi * i / period);
    return Eigen::Vector2d(centre +
                           (workpiece + standoff) * Eigen::Vector2d(std::cos(phi), std::sin(phi)));
  };
  const std::vector<double> lengths(static_cast<std::size_t>(links), links == 4 ? 0.35 : 0.3);
  auto chain = arch<2>(Eigen::Vector2d::UnitX(), lengths, radius, {0, 0}, tool(0), {0.0, 0.4},
                       out.initial_converged);
  const shake::Objective<2> objective(chain, {.circles = {shake::Circle{centre, workpiece}}},
                                      {.dt = kShakeStepTime,
                                       .obstacle = 0.002,
                                       .joint_velocity = 1e-4,
                                       .alignment_strength = 20.0,
                                       .alignment_decay = 0.1,
                                       .periodic = periodic_weight,
                                       .period_steps = period,
                                       .ramp_steps = period},
                                      {}, {shake::AlignmentSurface<2>{centre, workpiece}});
  AnnealingResolver<2> resolver(
      chain, objective, {.step_size = 0.005, .trials = 60, .seed = 2, .cyclic_tolerance = 5e-3});

  out.chains.push_back(copy_points(resolver.points()));
  out.min_clearance = std::numeric_limits<double>::infinity();
  out.residual.assign(static_cast<std::size_t>(periods), 0.0);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= period * periods; ++i) {
    out.path.push_back(tool(i));
    const shake::StepReport r = resolver.step(tool(i));
    if (r.placed) ++out.placed_steps;
    out.chains.push_back(copy_points(resolver.points()));
    out.min_clearance = std::min(out.min_clearance, objective.min_clearance(resolver.points()));
    if (i > period) {
      out.worst_alignment =
          std::max(out.worst_alignment, objective.alignment_error(resolver.points()));
    }
    auto& period_residual = out.residual[static_cast<std::size_t>((i - 1) / period)];
    period_residual = std::max(period_residual, r.cyclicity_residual);
  }
  out.elapsed = seconds_since(start);
  out.first_cyclic_step = resolver.first_cyclic_step();
  return out;
}

void write_shake_circle_picture(const ShakeCircleRun& run, const std::string& path) {
  const double end = step_time(run.chains.size() - 1);
  const auto period = static_cast<std::size_t>(run.period);
  std::vector<Eigen::Vector2d> all;
  for (const auto& c : run.chains) all.insert(all.end(), c.begin(), c.end());
  all.push_back(run.centre + Eigen::Vector2d(run.workpiece, run.workpiece));
  // Named, not a structured binding: clang 14 (the fuzz and sanitizer builds) cannot
  // capture bindings in the lambdas below.
  const auto ranges = report::bounds(all, 0.08);
  const report::Range xr = ranges.first;
  const report::Range yr = ranges.second;
  Scene scene;
  scene.title = format("SHAKE patent, problem 2: %.0f redundant DOF machining a circular workpiece",
                       run.links - 3.0);
  scene.subtitle = format(
      "%.0f links; gripper kept normal to the surface (worst %.1f° after the first period); "
      "cyclicity residual in the last period %.1f mm",
      run.links, run.worst_alignment * 180.0 / std::numbers::pi, run.residual.back() * 1e3);
  scene.time = report::TimeScale{0.0, step_time(period), "time within the period [s]"};
  report::ViewRow row;
  row.height = 520;
  const auto view = [&](const std::string& title, std::size_t first, std::size_t last) {
    View v;
    v.title = title;
    v.x_label = "x [m]";
    v.y_label = "y [m]";
    v.x = xr;
    v.y = yr;
    v.shapes.push_back(report::circle(run.centre, run.workpiece, kWallFill, kWall));
    // Coloured by the time within the period: where the periods agree, so do the colours.
    add_chains(v, run.chains, first, last, 10, step_time(first), step_time(period));
    std::vector<Eigen::Vector2d> tip;
    for (std::size_t k = first; k <= last && k < run.chains.size(); ++k) {
      tip.push_back(run.chains[k].back());
    }
    add_path(v, tip);
    v.legend = chain_legend("workpiece", "arm at one moment (colour = time in the period)");
    v.legend_corner = report::Corner::kBottomLeft;
    return v;
  };
  const std::size_t last = run.chains.size() - 1;
  row.views.push_back(view(
      format("first period: %.1f – %.1f s (the arm settles), every 0.1 s", 0.0, step_time(period)),
      0, period));
  row.views.push_back(view(
      format("last period: %.1f – %.1f s (cyclic), every 0.1 s", step_time(last - period), end),
      last - period, last));
  scene.rows.push_back(std::move(row));
  report::write_scene(scene, path);
}

ShakeCornersRun run_shake_corners() {
  ShakeCornersRun out;
  out.box = shake::Box{.centre = {1.15, 0.0, 0.4}, .half_extents = {0.15, 0.25, 0.2}};
  const shake::Box& box = out.box;
  const double face = box.centre.x() - box.half_extents.x(), standoff = 0.08;
  std::vector<Eigen::Vector3d> visits;
  for (const auto& [y, z] : {std::pair{-0.25, 0.2}, {0.25, 0.2}, {0.25, 0.6}, {-0.25, 0.6}}) {
    out.corners.emplace_back(face, y, z);
    visits.emplace_back(face - standoff, y, z);
  }
  std::vector<shake::AlignmentFeature<3>> features;
  features.reserve(out.corners.size());
  for (const auto& c : out.corners) features.push_back({c, -Eigen::Vector3d::UnitX()});

  auto chain = arch<3>(Eigen::Vector3d::UnitZ(), {0.4, 0.4, 0.4, 0.4}, 0.03, {0, 0, 0}, visits[0],
                       {-0.1, 0.0, 0.4}, out.initial_converged);
  const shake::Objective<3> objective(chain, {.boxes = {box}},
                                      {.dt = kShakeStepTime,
                                       .obstacle = 0.002,
                                       .joint_velocity = 1e-4,
                                       .alignment_strength = 2.0,
                                       .alignment_decay = 0.1},
                                      features);
  AnnealingResolver<3> resolver(chain, objective, {.step_size = 0.005, .trials = 60, .seed = 3});

  const int edge_steps = 150, laps = 2;
  out.chains.push_back(copy_points(resolver.points()));
  out.corner_error.assign(4, 0.0);
  out.min_clearance = std::numeric_limits<double>::infinity();
  const auto start = std::chrono::steady_clock::now();
  for (int lap = 0; lap < laps; ++lap) {
    for (std::size_t e = 0; e < 4; ++e) {
      const auto& from = visits[e];
      const auto& to = visits[(e + 1) % 4];
      for (int i = 1; i <= edge_steps; ++i) {
        const Eigen::Vector3d target = from + (to - from) * (double(i) / edge_steps);
        out.path.push_back(target);
        if (!resolver.step(target).placed) {
          out.elapsed = seconds_since(start);
          return out;
        }
        ++out.placed_steps;
        out.chains.push_back(copy_points(resolver.points()));
        out.min_clearance = std::min(out.min_clearance, objective.min_clearance(resolver.points()));
        // On the last lap the arm arrives at corner e+1 at the end of the edge.
        if (lap == laps - 1 && i == edge_steps) {
          const std::size_t c = (e + 1) % 4;
          out.corner_error[c] = objective.alignment_error(resolver.points(), features[c]);
        }
      }
    }
  }
  out.elapsed = seconds_since(start);
  return out;
}

void write_shake_corners_picture(const ShakeCornersRun& run, const std::string& path) {
  const double end = step_time(run.chains.size() - 1);
  const std::size_t lap = (run.chains.size() - 1) / 2;
  const Eigen::Vector3d lo = run.box.centre - run.box.half_extents;
  const Eigen::Vector3d hi = run.box.centre + run.box.half_extents;
  double worst = 0.0;
  for (double e : run.corner_error) worst = std::max(worst, e);
  Scene scene;
  scene.title =
      "SHAKE patent, problem 3: a spatial arm traces a box's front face, aligned at its corners";
  scene.subtitle = format(
      "second lap, every 0.5 s; worst gripper misalignment at a corner %.1f°; least clearance "
      "to the box %.0f mm",
      worst * 180.0 / std::numbers::pi, run.min_clearance * 1e3);
  scene.time = report::TimeScale{step_time(lap), end, "time [s]"};
  report::ViewRow row;
  row.height = 540;
  // Plane projections: a = horizontal axis, b = vertical axis of the view.
  const auto view = [&](const std::string& title, const char* y_label, int a, int b) {
    View v;
    v.title = title;
    v.x_label = "x [m]";
    v.y_label = y_label;
    const auto project = [a, b](const Eigen::Vector3d& p) { return Eigen::Vector2d(p[a], p[b]); };
    std::vector<Eigen::Vector2d> all;
    for (std::size_t k = lap; k < run.chains.size(); ++k) {
      for (const auto& p : run.chains[k]) all.push_back(project(p));
    }
    all.push_back(project(hi));
    all.push_back(project(lo));
    std::tie(v.x, v.y) = report::bounds(all, 0.08);
    v.shapes.push_back(report::polygon(
        {{lo[a], lo[b]}, {hi[a], lo[b]}, {hi[a], hi[b]}, {lo[a], hi[b]}}, kWallFill, kWall));
    for (std::size_t k = lap; k < run.chains.size(); k += 50) {
      std::vector<Eigen::Vector2d> c;
      for (const auto& p : run.chains[k]) c.push_back(project(p));
      const Rgb color =
          report::time_color((step_time(k) - step_time(lap)) / (end - step_time(lap)));
      v.shapes.push_back(report::polyline(c, color, 1.6));
      v.shapes.push_back(report::dots(c, 2.6, color));
    }
    std::vector<Eigen::Vector2d> tip, corners;
    for (std::size_t k = lap; k < run.chains.size(); ++k)
      tip.push_back(project(run.chains[k].back()));
    v.shapes.push_back(report::polyline(tip, kPath, 1.4));
    for (const auto& c : run.corners) corners.push_back(project(c));
    v.shapes.push_back(report::dots(corners, 4.5, kTarget));
    v.legend = {{"box workpiece", LegendEntry::Mark::kPatch, kWall, kWallFill},
                {"arm at one moment (colour = time)", LegendEntry::Mark::kTimeLine},
                {"end-effector path", LegendEntry::Mark::kLine, kPath},
                {"front corners (alignment)", LegendEntry::Mark::kDot, kTarget}};
    v.legend_corner = report::Corner::kTopLeft;
    return v;
  };
  row.views.push_back(view("top view (x–y)", "y [m]", 0, 1));
  row.views.push_back(view("side view (x–z)", "z [m]", 0, 2));
  scene.rows.push_back(std::move(row));
  report::write_scene(scene, path);
}

}  // namespace tether::remote::seed

#include "tether/remote/seed/sphere_pass.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "tether/common/kinematics.h"
#include "tether/remote/bounds/bounds_monitor.h"
#include "tether/remote/comparison/resolver_comparison.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/report/scene.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote::seed {
namespace {

using report::LegendEntry;
using report::Rgb;
using report::View;

// The comparison's free-space start: the elbow bent and the wrist clear of every limit.
const JointVector kStart = (JointVector() << -0.45, 0.5, 0.0, -1.4, 0.0, 0.9, 0.0).finished();
constexpr double kDuration = 4.5;  // [s] the 4 s slide and half a second to settle

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

SpherePassRun run_sphere_pass(const ArmModel& arm_model) {
  SpherePassRun out;
  // The comparison's task (trajectory, spheres, link radius) with DLS, the resolver the
  // spheres-of-influence patent constrains.
  const TaskParameters task =
      scenario_task(Scenario::kObstaclePass, ResolverKind::kDls, arm_model, ComparisonOptions{});
  const KinematicModel model(arm_model);
  SimulationOptions options;
  options.scene = SceneKind::kFreeSpace;
  options.initial_position = kStart;
  SimulatedArm arm(arm_model, options);
  HandControllerQueue queue;
  Executor executor(arm_model, queue);
  executor.submit(task);
  const Frame base_T_world = task.world_T_base.inverse();
  for (const auto& o : task.obstacle_avoidance.obstacles) {
    out.obstacles.push_back({base_T_world * o.centre, o.radius, o.influence});
  }
  out.link_radius = task.obstacle_avoidance.link_radius[0];
  out.closest.resize(out.obstacles.size());
  out.closest_time.assign(out.obstacles.size(), 0.0);
  for (CriticalPoint& c : out.closest) c.distance = std::numeric_limits<double>::infinity();
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  KinematicState measured;
  ArmState state;
  JointCommand command;
  double arm_time = 0.0;
  const auto cycles = static_cast<int>(std::lround(kDuration / task.period));
  out.completed = true;
  for (int k = 0; k < cycles; ++k) {
    const ArmStatus status = arm.read(state);
    const ExecutorState s = executor.cycle(state, status, command);
    arm.write(command);
    arm_time += task.period;
    arm.advance_to(arm_time);
    if (s != ExecutorState::kRunning) {
      out.completed = false;
      out.breach = describe(executor.status().breach);
      break;
    }
    out.tracking_error = std::max(out.tracking_error, executor.last_cycle().error.head<3>().norm());
    forward_kinematics(model, state.position, measured);
    std::array<Vector3, kArmDof + 1> joints;
    for (int j = 0; j < kArmDof; ++j) joints[static_cast<std::size_t>(j)] = measured.p[j];
    joints[kArmDof] = measured.tool.p;
    const std::size_t n =
        critical_points(measured, task.obstacle_avoidance.link_radius, out.obstacles, points);
    JointVector d = JointVector::Constant(std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
      d[points[i].link] = std::min(d[points[i].link], points[i].distance);
      CriticalPoint& c = out.closest[static_cast<std::size_t>(points[i].obstacle)];
      if (points[i].distance < c.distance) {
        c = points[i];
        out.closest_time[static_cast<std::size_t>(points[i].obstacle)] = arm_time;
      }
    }
    out.least = out.least.cwiseMin(d);
    out.times.push_back(arm_time);
    out.joints.push_back(joints);
    out.critical_distance.push_back(d);
  }
  return out;
}

void write_sphere_pass_picture(const SpherePassRun& run, const std::string& path) {
  const double end = run.times.back();
  const double influence = run.obstacles.empty() ? 0.0 : run.obstacles.front().influence;
  constexpr Rgb kObstacle{90, 90, 90}, kInfluence{222, 222, 222}, kHand{0, 0, 0};
  constexpr Rgb kCritical{214, 39, 40};
  report::Scene scene;
  scene.title = "Spheres-of-influence patent: the arm slides past two obstacle spheres";
  scene.width = 1120;  // with the heights below, keeps the PNG under 150 kB for docs/seeds.md
  scene.subtitle = format(
      "iiwa7, DLS + obstacle constraints, the hand slides 0.55 m in 4 s; spheres r %.0f mm, "
      "influence %.0f mm; links capsules r %.0f mm; views projected, distances 3-D",
      run.obstacles.empty() ? 0.0 : run.obstacles.front().radius * 1e3, influence * 1e3,
      run.link_radius * 1e3);
  scene.time = report::TimeScale{0.0, end, "time [s]"};

  report::ViewRow arms;
  arms.height = 450;
  const auto view = [&](const std::string& title, const char* x_label, const char* y_label, int a,
                        int b, bool annotate) {
    View v;
    v.title = title;
    v.x_label = x_label;
    v.y_label = y_label;
    const auto project = [a, b](const Vector3& p) { return Eigen::Vector2d(p[a], p[b]); };
    std::vector<Eigen::Vector2d> all, hand;
    for (std::size_t i = 0; i < run.joints.size(); ++i) {
      for (const Vector3& p : run.joints[i]) all.push_back(project(p));
      // Every 10 ms: sub-pixel steps add only antialiasing noise (and PNG bytes).
      if (i % 10 == 0 || i + 1 == run.joints.size()) hand.push_back(project(run.joints[i].back()));
    }
    std::tie(v.x, v.y) = report::bounds(all, 0.1);
    // The sphere of influence is around the obstacle's surface: the centre's distance at
    // which a link's axis is at `influence` from it, grown by the link's capsule radius.
    for (const SphereObstacle& o : run.obstacles) {
      const Eigen::Vector2d c = project(o.centre);
      v.shapes.push_back(report::circle(c, o.radius + o.influence + run.link_radius, kInfluence,
                                        kObstacle, 1.0, true));
      v.shapes.push_back(report::circle(c, o.radius, kObstacle, kObstacle));
    }
    const std::size_t every = std::max<std::size_t>(run.joints.size() / 9, 1);
    for (std::size_t i = 0; i < run.joints.size(); i += every) {
      const Rgb color = report::time_color(run.times[i] / end);
      std::vector<Eigen::Vector2d> pts{Eigen::Vector2d::Zero()};
      for (const Vector3& p : run.joints[i]) pts.push_back(project(p));
      v.shapes.push_back(report::polyline(pts, color, 1.6));
      v.shapes.push_back(report::dots(pts, 2.4, color));
    }
    v.shapes.push_back(report::polyline(hand, kHand, 2.0));
    // Each obstacle's closest approach: the critical distance, from the sphere's surface to
    // the link's surface along the normal, projected.
    for (std::size_t o = 0; o < run.obstacles.size(); ++o) {
      const CriticalPoint& c = run.closest[o];
      const SphereObstacle& s = run.obstacles[o];
      const Vector3 from = s.centre + s.radius * c.normal;
      const Vector3 to = c.point - run.link_radius * c.normal;
      v.shapes.push_back(report::polyline({project(from), project(to)}, kCritical, 2.5));
      v.shapes.push_back(report::dots({project(from), project(to)}, 3.0, kCritical));
      if (!annotate) continue;
      v.shapes.push_back(report::label(
          project(s.centre) + Eigen::Vector2d(s.radius + 0.01, 0.01),
          format("closest: link %.0f, %.1f mm", c.link + 1.0, c.distance * 1e3), kCritical));
    }
    if (annotate) return v;  // the legend goes where the view has room: the side view
    v.legend = {{"links as segments (colour = time)", LegendEntry::Mark::kTimeLine},
                {"hand path", LegendEntry::Mark::kLine, kHand},
                {"obstacle sphere", LegendEntry::Mark::kRing, kObstacle, kObstacle},
                {"sphere of influence, grown by the link radius", LegendEntry::Mark::kRing,
                 kObstacle, kInfluence},
                {"closest approach (critical distance)", LegendEntry::Mark::kLine, kCritical}};
    v.legend_corner = report::Corner::kBottomRight;
    return v;
  };
  arms.views.push_back(view("top view, BASE x–y", "x [m]", "y [m]", 0, 1, true));
  arms.views.push_back(view("side view, BASE x–z", "x [m]", "z [m]", 0, 2, false));
  scene.rows.push_back(std::move(arms));

  report::ViewRow d_row;
  d_row.height = 280;
  View d;
  d.title = "critical distance of each link (surface to surface, nearest obstacle)";
  d.x_label = "time [s]";
  d.y_label = "critical distance [m]";
  d.equal_aspect = false;
  d.x = {0.0, end};
  d.y = {0.0, 0.45};
  d.shapes.push_back(
      report::polyline({{0.0, influence}, {end, influence}}, report::kBlack, 1.2, true));
  for (int k = 0; k < kArmDof; ++k) {
    std::vector<Eigen::Vector2d> line;
    // Every 10th cycle (10 ms): finer than a pixel column, and sub-pixel steps only add
    // antialiasing noise that bloats the PNG.
    for (std::size_t i = 0; i < run.times.size(); i += 10) {
      line.emplace_back(run.times[i], std::min(run.critical_distance[i][k], 1.0));
    }
    d.shapes.push_back(
        report::polyline(line, report::palette_color(static_cast<std::size_t>(k)), 1.8));
    d.legend.push_back({format("link %.0f, least %.1f mm", k + 1.0, run.least[k] * 1e3),
                        LegendEntry::Mark::kLine,
                        report::palette_color(static_cast<std::size_t>(k))});
  }
  d.legend.push_back({"radius of influence", LegendEntry::Mark::kDashed, report::kBlack});
  d.legend_corner = report::Corner::kTopRight;
  d.legend_columns = 4;
  d_row.views.push_back(std::move(d));
  scene.rows.push_back(std::move(d_row));
  report::write_scene(scene, path);
}

}  // namespace tether::remote::seed

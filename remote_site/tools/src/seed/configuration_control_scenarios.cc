#include "tether/remote/seed/configuration_control_scenarios.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <tuple>

#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/report/scene.h"
#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"
#include "tether/remote/resolvers/resolver.h"

namespace tether::remote::seed {
namespace {

using configuration_control::GravityTorqueModel;
using report::LegendEntry;
using report::Rgb;
using report::View;

constexpr double kDt = 0.001;

// The resolver's inputs at a configuration, built the way the executor builds them: forward
// kinematics, the composite Jacobian with rows 0-5 in MOTION axes, ψ.
struct Arm {
  Arm() : model(load_arm_by_name("iiwa7", UrdfLoadOptions{})) {}

  void at(const JointVector& q) {
    forward_kinematics(model, q, state);
    ArmAngle psi;
    composite_jacobian(model, state, arm_angle_model, tool_T_motion, jacobian, psi);
    motion_pose = motion_frame_pose(state, tool_T_motion);
    express_in_frame(motion_pose.R, jacobian);
    input.model = &model;
    input.state = &state;
    input.jacobian = &jacobian;
    input.motion_pose = motion_pose;
    input.tool_T_motion = tool_T_motion;
    input.arm_angle = psi.psi;
    input.q = q;
  }

  KinematicModel model;
  ArmAngleModel arm_angle_model;
  Frame tool_T_motion = Frame::Identity();
  KinematicState state;
  CompositeJacobian jacobian = CompositeJacobian::Zero();
  Frame motion_pose;
  ResolverInput input;
};

ArmChain chain_of(const KinematicState& s) {
  return {Vector3::Zero(), s.shoulder, s.elbow, s.wrist, s.tool.p};
}

JointVector start_posture() {
  JointVector q;
  q << 0.2, 0.7, 0.3, -1.4, -0.2, 0.8, 0.1;
  return q;
}

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

double arm_angle_rate_towards(double target, double psi) {
  return std::clamp(2.0 * wrap_angle(target - psi), -0.5, 0.5);
}

double arm_angle_at(const JointVector& q) {
  Arm arm;
  arm.at(q);
  return arm.input.arm_angle;
}

ConfigurationControlRun run_configuration_control(const JointVector& q0,
                                                  const ConfigurationControlScenario& run) {
  Arm f;
  ConfigurationControlResolver resolver(f.model);
  const GravityTorqueModel gravity(f.model);
  TaskParameters task;
  task.resolver.kind = ResolverKind::kConfigurationControl;
  task.resolver.configuration_control.functions = run.functions;
  ConfigurationControlRun rec;
  JointVector q = q0;
  f.at(q);
  const Frame start = f.motion_pose;
  resolver.reset(task, f.input);
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  const int steps = static_cast<int>(std::lround(run.seconds / kDt));
  for (int step = 0; step <= steps; ++step) {
    f.at(q);
    const Vector3 dp = f.motion_pose.p - start.p;
    const Eigen::AngleAxisd dr(start.R.transpose() * f.motion_pose.R);
    rec.max_position_drift = std::max(rec.max_position_drift, dp.norm());
    rec.max_orientation_drift = std::max(rec.max_orientation_drift, std::abs(dr.angle()));
    rec.min_limit_margin = std::min({rec.min_limit_margin, (q - f.model.lower_limits()).minCoeff(),
                                     (f.model.upper_limits() - q).minCoeff()});
    std::size_t count = 0;
    double clearance = std::numeric_limits<double>::infinity();
    if (!run.obstacles.empty()) {
      count = critical_points(f.state, LinkRadii::Constant(0.06), run.obstacles, points);
      for (std::size_t k = 0; k < count; ++k) {
        clearance = std::min(clearance, points[k].distance - points[k].influence);
      }
      rec.min_clearance_to_influence = std::min(rec.min_clearance_to_influence, clearance);
    }
    if (step % 100 == 0) {
      rec.times.push_back(step * kDt);
      rec.chains.push_back(chain_of(f.state));
      rec.psi.push_back(f.input.arm_angle);
      rec.cost.push_back(gravity.cost(f.state, nullptr));
      rec.clearance_to_influence.push_back(clearance);
    }
    if (step == steps) break;
    f.input.xd.setZero();
    f.input.xd[6] = run.arm_angle_rate(f.input.arm_angle);
    f.input.time = step * kDt;
    f.input.dt = kDt;
    f.input.critical_points = std::span<const CriticalPoint>(points.data(), count);
    f.input.obstacle_recovery = 2.0;
    ResolverResult out;
    resolver.resolve(task, f.input, out);
    if (out.status != ResolverStatus::kOk) {
      ++rec.failed_steps;
      break;
    }
    rec.min_achieved_fraction = std::min(rec.min_achieved_fraction, out.achieved_fraction);
    if (out.active_constraints > 0) ++rec.active_steps;
    rec.max_speed = std::max(rec.max_speed, out.qd.cwiseAbs().maxCoeff());
    q += out.qd * kDt;
  }
  rec.q = q;
  return rec;
}

namespace {

KinematicFunctionParameters function(KinematicFunctionKind kind, double weight, double gain) {
  KinematicFunctionParameters p;
  p.kind = kind;
  p.weight = weight;
  p.gain = gain;
  return p;
}

ConfigurationControlScenario turning_toward(double target, double weight, double seconds) {
  ConfigurationControlScenario scenario;
  scenario.functions = {function(KinematicFunctionKind::kArmAngle, weight, 1.0)};
  scenario.seconds = seconds;
  scenario.arm_angle_rate = [target](double psi) { return arm_angle_rate_towards(target, psi); };
  return scenario;
}

}  // namespace

GravityTorqueRun run_gravity_torque() {
  GravityTorqueRun out;
  JointVector q;
  q << 0.0, 0.6, 1.2, -1.4, 0.0, 0.6, 0.0;
  out.turn =
      run_configuration_control(q, turning_toward(wrap_angle(arm_angle_at(q) - 2.0), 1.0, 6.0));
  out.start = out.turn.q;
  ConfigurationControlScenario scenario;
  scenario.functions = {function(KinematicFunctionKind::kGravityTorque, 1.0, 2.0)};
  scenario.seconds = 5.0;
  out.run = run_configuration_control(out.start, scenario);
  return out;
}

ElbowObstacleRun run_elbow_obstacle() {
  ElbowObstacleRun out;
  out.psi_start = arm_angle_at(start_posture());
  out.target = wrap_angle(out.psi_start + 0.8);
  out.unobstructed =
      run_configuration_control(start_posture(), turning_toward(out.target, 1.0, 3.0));
  out.obstacle = {.centre = out.unobstructed.chains.back()[2], .radius = 0.04, .influence = 0.05};
  ConfigurationControlScenario scenario = turning_toward(out.target, 1e-4, 3.0);
  scenario.obstacles = {out.obstacle};
  out.run = run_configuration_control(start_posture(), scenario);
  return out;
}

ElbowPlaneRun run_elbow_plane() {
  ElbowPlaneRun out;
  out.psi_start = arm_angle_at(start_posture());
  out.target = wrap_angle(out.psi_start + 0.8);
  KinematicFunctionParameters arm_angle;
  arm_angle.kind = KinematicFunctionKind::kArmAngle;
  arm_angle.weight = 1.0;
  arm_angle.gain = 1.0;
  ConfigurationControlScenario scenario;
  scenario.functions = {arm_angle};
  scenario.seconds = 4.0;
  scenario.arm_angle_rate = [target = out.target](double psi) {
    return arm_angle_rate_towards(target, psi);
  };
  out.run = run_configuration_control(start_posture(), scenario);
  return out;
}

void write_configuration_control_picture(const ConfigurationControlRun& run,
                                         const std::vector<SphereObstacle>& obstacles,
                                         const std::string& title, const std::string& subtitle,
                                         double psi_target, const std::string& path,
                                         bool show_gravity_cost) {
  const ArmChain& first = run.chains.front();
  // View 1 looks along the shoulder→wrist axis: its u axis horizontal-ish, v up-ish.
  const Vector3 w = (first[3] - first[1]).normalized();
  Vector3 axis_u = w.cross((Vector3::UnitZ() - Vector3::UnitZ().dot(w) * w).normalized());
  Vector3 axis_v = w.cross(axis_u);
  if (axis_v.z() < 0) {
    axis_u = -axis_u;
    axis_v = -axis_v;
  }
  const auto along = [&](const Vector3& p) {
    return Eigen::Vector2d(p.dot(axis_u), p.dot(axis_v));
  };
  const auto side = [](const Vector3& p) { return Eigen::Vector2d(p.x(), p.z()); };
  const double end = run.times.back();
  constexpr Rgb kObstacle{110, 110, 110}, kInfluence{215, 215, 215};

  report::Scene scene;
  scene.title = title;
  scene.subtitle = subtitle;
  scene.time = report::TimeScale{0.0, end, "time [s]"};
  report::ViewRow arms;
  arms.height = 520;
  const auto view = [&](const std::string& view_title, const char* x_label, const char* y_label,
                        const auto& project) {
    View v;
    v.title = view_title;
    v.x_label = x_label;
    v.y_label = y_label;
    std::vector<Eigen::Vector2d> all;
    for (const ArmChain& c : run.chains) {
      for (const Vector3& p : c) all.push_back(project(p));
    }
    std::tie(v.x, v.y) = report::bounds(all, 0.1);
    for (const SphereObstacle& o : obstacles) {
      v.shapes.push_back(report::circle(project(o.centre), o.radius + o.influence, kInfluence,
                                        kObstacle, 1.0, true));
      v.shapes.push_back(report::circle(project(o.centre), o.radius, kObstacle, kObstacle));
    }
    // Every 200 ms, coloured by time; the elbow marked, the hand still.
    for (std::size_t i = 0; i < run.chains.size(); i += 2) {
      const Rgb c = report::time_color(run.times[i] / end);
      std::vector<Eigen::Vector2d> pts;
      for (const Vector3& p : run.chains[i]) pts.push_back(project(p));
      v.shapes.push_back(report::polyline(pts, c, 1.6));
      v.shapes.push_back(report::dots({pts[2]}, 3.5, c));
      v.shapes.push_back(report::dots({pts[1], pts[3]}, 2.2, c));
    }
    const std::vector<Eigen::Vector2d> marks = {project(first[0]), project(first[4])};
    v.shapes.push_back(report::dots(marks, 4.5, report::kBlack));
    v.shapes.push_back(report::label(project(first[0]) + Eigen::Vector2d(0.02, -0.04), "base"));
    v.shapes.push_back(report::label(project(first[4]) + Eigen::Vector2d(0.02, 0.02), "hand"));
    v.legend = {{"arm (colour = time)", LegendEntry::Mark::kTimeLine},
                {"elbow", LegendEntry::Mark::kDot, report::time_color(0.5)}};
    if (!obstacles.empty()) {
      v.legend.push_back({"obstacle", LegendEntry::Mark::kRing, kObstacle, kObstacle});
      v.legend.push_back({"sphere of influence", LegendEntry::Mark::kRing, kObstacle, kInfluence});
    }
    v.legend_corner = report::Corner::kAuto;
    return v;
  };
  arms.views.push_back(
      view("seen along the shoulder→wrist axis", "u [m] (⊥ shoulder→wrist)", "v [m]", along));
  arms.views.push_back(view("side view, BASE x–z", "x [m]", "z [m]", side));
  scene.rows.push_back(std::move(arms));

  report::ViewRow plots;
  plots.height = 260;
  View psi;
  psi.title = "arm angle ψ (the elbow plane)";
  psi.x_label = "time [s]";
  psi.y_label = "ψ [rad]";
  psi.equal_aspect = false;
  std::vector<Eigen::Vector2d> line;
  double lo = psi_target, hi = psi_target;
  for (std::size_t i = 0; i < run.times.size(); ++i) {
    line.emplace_back(run.times[i], run.psi[i]);
    lo = std::min(lo, run.psi[i]);
    hi = std::max(hi, run.psi[i]);
  }
  if (!std::isfinite(psi_target)) {
    lo = *std::min_element(run.psi.begin(), run.psi.end());
    hi = *std::max_element(run.psi.begin(), run.psi.end());
  }
  const double pad = std::max(0.1 * (hi - lo), 0.05);
  psi.x = {0.0, end};
  psi.y = {lo - pad, hi + 4.0 * pad};  // room above the curves for the legend
  if (std::isfinite(psi_target)) {
    psi.shapes.push_back(report::polyline({{0.0, psi_target}, {end, psi_target}},
                                          report::palette_color(1), 1.2, true));
    psi.legend.push_back({"target", LegendEntry::Mark::kDashed, report::palette_color(1)});
  }
  psi.shapes.push_back(report::polyline(line, report::palette_color(0), 2.0));
  psi.legend.insert(psi.legend.begin(), {"ψ", LegendEntry::Mark::kLine, report::palette_color(0)});
  psi.legend_corner = report::Corner::kTopRight;
  psi.legend_columns = 2;
  plots.views.push_back(std::move(psi));
  if (show_gravity_cost) {
    View g;
    g.title = "G = Σ τ_g², the sum of squared gravitational joint torques";
    g.x_label = "time [s]";
    g.y_label = "G [N²·m²]";
    g.equal_aspect = false;
    std::vector<Eigen::Vector2d> cost;
    for (std::size_t i = 0; i < run.times.size(); ++i) cost.emplace_back(run.times[i], run.cost[i]);
    const double g_lo = *std::min_element(run.cost.begin(), run.cost.end());
    const double g_hi = *std::max_element(run.cost.begin(), run.cost.end());
    const double g_pad = std::max(0.1 * (g_hi - g_lo), 1.0);
    g.x = {0.0, end};
    g.y = {g_lo - g_pad, g_hi + 3.0 * g_pad};
    g.shapes.push_back(report::polyline(cost, report::palette_color(3), 2.0));
    g.legend = {{"G", LegendEntry::Mark::kLine, report::palette_color(3)}};
    g.legend_corner = report::Corner::kTopRight;
    plots.views.push_back(std::move(g));
  }
  scene.rows.push_back(std::move(plots));
  report::write_scene(scene, path);
}

void write_elbow_plane_picture(const ElbowPlaneRun& r, const std::string& path) {
  write_configuration_control_picture(
      r.run, {},
      "Configuration-control patent: the elbow plane turns while the hand holds its pose",
      format("iiwa7, user kinematic function: the arm angle ψ, %.2f → %.2f rad; hand drift %.2f mm",
             r.psi_start, r.run.psi.back(), r.run.max_position_drift * 1e3),
      r.target, path);
}

}  // namespace tether::remote::seed

namespace tether::remote::seed {

void write_gravity_torque_picture(const GravityTorqueRun& r, const std::string& path) {
  write_configuration_control_picture(
      r.run, {}, "Configuration-control patent: the gravitational joint torques minimised",
      format("iiwa7, user kinematic function: the sum of squared gravity torques G, %.0f → %.0f "
             "N²·m² (%.0f %% lower), the hand still",
             r.run.cost.front(), r.run.cost.back(),
             100.0 * (1.0 - r.run.cost.back() / r.run.cost.front())),
      std::numeric_limits<double>::quiet_NaN(), path, true);
}

void write_elbow_obstacle_picture(const ElbowObstacleRun& r, const std::string& path) {
  write_configuration_control_picture(
      r.run, {r.obstacle},
      "Configuration-control patent: an obstacle stops the elbow at its sphere of influence",
      format("iiwa7, the arm angle turned toward %+.2f rad stops at %+.2f rad; least distance − "
             "influence %.2f mm",
             0.8, wrap_angle(r.run.psi.back() - r.psi_start),
             r.run.min_clearance_to_influence * 1e3),
      r.target, path);
}

}  // namespace tether::remote::seed

// The configuration-control patent's configuration control on the iiwa7 at the kinematic level: the
// hand holds its pose (ẋ_c head = 0) while a user kinematic function reconfigures the arm, q +=
// q̇·dt at 1 ms. Each scenario asserts the physical outcome and writes a picture of the arm over
// time into the working directory (configuration_control_<name>.png): the base–shoulder–elbow–
// wrist–tool chain seen along the shoulder→wrist axis (left) and in BASE x–z (right),
// earlier poses lighter, the last one black.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "arm_fixture.h"
#include "tether/common/arm_angle.h"
#include "tether/common/obstacles.h"
#include "tether/remote/report/shake_picture.h"
#include "tether/remote/resolvers/configuration_control/configuration_control_resolver.h"

namespace tether::remote {
namespace {

using configuration_control::GravityTorqueModel;
using testing::ArmFixture;

constexpr double kDt = 0.001;

using Chain = std::array<Vector3, 5>;  // base, shoulder, elbow, wrist, tool

Chain chain_of(const KinematicState& s) {
  return {Vector3::Zero(), s.shoulder, s.elbow, s.wrist, s.tool.p};
}

struct RunRecord {
  std::vector<Chain> chains;  // every 100 ms
  std::vector<double> psi, cost;
  double max_position_drift = 0.0;                                              // [m]
  double max_orientation_drift = 0.0;                                           // [rad]
  double min_limit_margin = std::numeric_limits<double>::infinity();            // [rad]
  double min_clearance_to_influence = std::numeric_limits<double>::infinity();  // d − influence
  double max_speed = 0.0;  // max |q̇_i| [rad/s]
  int active_steps = 0;
  JointVector q;
};

struct Scenario {
  const KinematicFunctionParameters* functions = nullptr;
  std::size_t function_count = 0;
  double seconds = 3.0;
  // ẋ_c[6] from ψ, as the impedance law's spring on the arm angle would give it.
  std::function<double(double psi)> arm_angle_rate = [](double) { return 0.0; };
  std::vector<SphereObstacle> obstacles;
};

RunRecord simulate(ArmFixture& f, const JointVector& q0, const Scenario& run) {
  ConfigurationControlResolver resolver(f.model);
  const GravityTorqueModel gravity(f.model);
  TaskParameters task;
  task.resolver.kind = ResolverKind::kConfigurationControl;
  task.resolver.configuration_control.functions.assign(run.functions,
                                                       run.functions + run.function_count);
  RunRecord rec;
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
    if (!run.obstacles.empty()) {
      count = critical_points(f.state, LinkRadii::Constant(0.06), run.obstacles, points);
      for (std::size_t k = 0; k < count; ++k) {
        rec.min_clearance_to_influence =
            std::min(rec.min_clearance_to_influence, points[k].distance - points[k].influence);
      }
    }
    if (step % 100 == 0) {
      rec.chains.push_back(chain_of(f.state));
      rec.psi.push_back(f.input.arm_angle);
      rec.cost.push_back(gravity.cost(f.state, nullptr));
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
    EXPECT_EQ(out.status, ResolverStatus::kOk) << "step " << step;
    if (out.status != ResolverStatus::kOk) break;
    EXPECT_EQ(out.achieved_fraction, 1.0);
    if (out.active_constraints > 0) ++rec.active_steps;
    rec.max_speed = std::max(rec.max_speed, out.qd.cwiseAbs().maxCoeff());
    q += out.qd * kDt;
  }
  rec.q = q;
  return rec;
}

// Projection of BASE points on two views, placed side by side.
struct Views {
  Vector3 axis_u, axis_v;  // view 1: the plane ⊥ shoulder→wrist
  double offset = 0.0;     // view 2 shifted right by this [m]
  Eigen::Vector2d first(const Vector3& p) const { return {p.dot(axis_u), p.dot(axis_v)}; }
  Eigen::Vector2d second(const Vector3& p) const { return {p.x() + offset, p.z()}; }
};

report::Rgb shade(double t) {  // t = 0 light, 1 dark
  const auto mix = [t](double a, double b) {
    return static_cast<std::uint8_t>(std::lround(a + t * (b - a)));
  };
  return {mix(205, 30), mix(215, 70), mix(240, 170)};
}

void draw(const RunRecord& rec, const std::vector<SphereObstacle>& obstacles,
          const std::string& file) {
  const Chain& first = rec.chains.front();
  Views views;
  const Vector3 w = (first[3] - first[1]).normalized();
  views.axis_u = (Vector3::UnitZ() - Vector3::UnitZ().dot(w) * w).normalized();
  views.axis_u = w.cross(views.axis_u);  // horizontal-ish in view 1
  views.axis_v = w.cross(views.axis_u);
  if (views.axis_v.z() < 0) {
    views.axis_u = -views.axis_u;
    views.axis_v = -views.axis_v;
  }
  Eigen::Vector2d lo1 = Eigen::Vector2d::Constant(1e9), hi1 = -lo1, lo2 = lo1, hi2 = hi1;
  for (const Chain& c : rec.chains) {
    for (const Vector3& p : c) {
      lo1 = lo1.cwiseMin(views.first(p));
      hi1 = hi1.cwiseMax(views.first(p));
      lo2 = lo2.cwiseMin(views.second(p));
      hi2 = hi2.cwiseMax(views.second(p));
    }
  }
  views.offset = hi1.x() - lo2.x() + 0.25;
  lo2.x() += views.offset;
  hi2.x() += views.offset;
  const Eigen::Vector2d margin(0.1, 0.1);
  shake::Canvas canvas(1200, 600, lo1.cwiseMin(lo2) - margin, hi1.cwiseMax(hi2) + margin);
  for (const SphereObstacle& o : obstacles) {
    for (const auto& centre : {views.first(o.centre), views.second(o.centre)}) {
      canvas.circle(centre, o.radius + o.influence, {225, 225, 225}, true);
      canvas.circle(centre, o.radius, {150, 150, 150}, true);
    }
  }
  const std::size_t n = rec.chains.size();
  for (std::size_t i = 0; i < n; ++i) {
    const bool last = i + 1 == n;
    const report::Rgb color = last ? report::kBlack : shade(double(i) / double(n - 1));
    const double thickness = last ? 3.0 : 1.5;
    const Chain& c = rec.chains[i];
    for (std::size_t k = 1; k < c.size(); ++k) {
      canvas.line(views.first(c[k - 1]), views.first(c[k]), color, thickness);
      canvas.line(views.second(c[k - 1]), views.second(c[k]), color, thickness);
    }
    canvas.dot(views.first(c[2]), thickness + 1.5, color);  // the elbow
    canvas.dot(views.second(c[2]), thickness + 1.5, color);
  }
  canvas.write_png(file);
}

JointVector start_posture() {
  JointVector q;
  q << 0.2, 0.7, 0.3, -1.4, -0.2, 0.8, 0.1;
  return q;
}

KinematicFunctionParameters function(KinematicFunctionKind kind, double weight, double gain) {
  KinematicFunctionParameters p;
  p.kind = kind;
  p.weight = weight;
  p.gain = gain;
  return p;
}

double rate_towards(double target, double psi) {
  return std::clamp(2.0 * wrap_angle(target - psi), -0.5, 0.5);
}

// `count` functions for `seconds`; with a target, ẋ_c[6] turns ψ towards it.
Scenario scenario(const KinematicFunctionParameters* functions, std::size_t count, double seconds,
                  std::optional<double> arm_angle_target = std::nullopt) {
  Scenario run;
  run.functions = functions;
  run.function_count = count;
  run.seconds = seconds;
  if (arm_angle_target) {
    run.arm_angle_rate = [target = *arm_angle_target](double psi) {
      return rate_towards(target, psi);
    };
  }
  return run;
}

TEST(ConfigurationControlScenario, ElbowPlaneTurnsToANewAngleWhileTheHandHoldsItsPose) {
  ArmFixture f;
  f.at(start_posture());
  const double psi0 = f.input.arm_angle;
  const double target = wrap_angle(psi0 + 0.8);
  const KinematicFunctionParameters functions[] = {
      function(KinematicFunctionKind::kArmAngle, 1.0, 1.0)};
  const Scenario run = scenario(functions, 1, 4.0, target);
  const RunRecord rec = simulate(f, start_posture(), run);
  f.at(rec.q);
  std::cout << "elbow plane: psi " << psi0 << " -> " << f.input.arm_angle << " rad (target "
            << target << "), hand drift " << rec.max_position_drift * 1e3 << " mm, "
            << rec.max_orientation_drift * 1e3 << " mrad, min joint-limit margin "
            << rec.min_limit_margin << " rad, max |qdot| " << rec.max_speed << " rad/s\n";
  EXPECT_NEAR(wrap_angle(f.input.arm_angle - target), 0.0, 1e-3);
  EXPECT_LT(rec.max_position_drift, 2e-4);
  EXPECT_LT(rec.max_orientation_drift, 4e-4);
  EXPECT_GT(rec.min_limit_margin, 0.0);
  draw(rec, {}, "configuration_control_elbow_plane.png");
}

// An arm reaching low and forward (its elbow plane the seed's redundancy) whose elbow was
// turned to the side by the arm-angle function: G is far from its minimum along the
// self-motion.
JointVector elbow_out_posture(ArmFixture& f) {
  JointVector q;
  q << 0.0, 0.6, 1.2, -1.4, 0.0, 0.6, 0.0;
  f.at(q);
  const double target = wrap_angle(f.input.arm_angle - 2.0);
  const KinematicFunctionParameters functions[] = {
      function(KinematicFunctionKind::kArmAngle, 1.0, 1.0)};
  const Scenario turn = scenario(functions, 1, 6.0, target);
  const RunRecord rec = simulate(f, q, turn);
  EXPECT_GT(rec.min_limit_margin, 0.0);
  return rec.q;
}

TEST(ConfigurationControlScenario, GravityTorqueFunctionLowersTheSumOfSquaredTorques) {
  ArmFixture f;
  const JointVector start = elbow_out_posture(f);
  const KinematicFunctionParameters functions[] = {
      function(KinematicFunctionKind::kGravityTorque, 1.0, 2.0)};
  const Scenario run = scenario(functions, 1, 5.0);
  const RunRecord rec = simulate(f, start, run);
  const double reduction = 1.0 - rec.cost.back() / rec.cost.front();
  ConfigurationControlResolver resolver(f.model);
  double phi0 = 0.0, phi = 0.0;
  ASSERT_TRUE(resolver.functions().optimality_condition(KinematicFunctionKind::kGravityTorque,
                                                        start, phi0));
  ASSERT_TRUE(
      resolver.functions().optimality_condition(KinematicFunctionKind::kGravityTorque, rec.q, phi));
  std::cout << "gravity torque: G " << rec.cost.front() << " -> " << rec.cost.back() << " N^2m^2 ("
            << reduction * 100.0 << " % lower), psi " << rec.psi.front() << " -> " << rec.psi.back()
            << " rad, optimality condition " << phi0 << " -> " << phi << ", hand drift "
            << rec.max_position_drift * 1e3 << " mm, " << rec.max_orientation_drift * 1e3
            << " mrad, min joint-limit margin " << rec.min_limit_margin << " rad, max |qdot| "
            << rec.max_speed << " rad/s\n";
  for (std::size_t i = 1; i < rec.cost.size(); ++i) {
    EXPECT_LE(rec.cost[i], rec.cost[i - 1] + 1e-9) << "sample " << i;
  }
  EXPECT_GT(reduction, 0.2);
  // At the end the optimality condition holds: G is stationary along the self-motion.
  EXPECT_LT(std::abs(phi), 1e-2 * std::abs(phi0));
  EXPECT_LE(rec.max_speed, f.model.velocity_limits().minCoeff() * 1.01);
  EXPECT_LT(rec.max_position_drift, 2e-4);
  EXPECT_LT(rec.max_orientation_drift, 4.5e-4);
  EXPECT_GT(rec.min_limit_margin, 0.0);
  draw(rec, {}, "configuration_control_gravity_torque.png");
}

TEST(ConfigurationControlScenario, ObstacleStopsTheElbowOutsideItsSphereOfInfluence) {
  ArmFixture f;
  // Where the elbow would be half-way through the first scenario's swing.
  f.at(start_posture());
  const double psi0 = f.input.arm_angle;
  const KinematicFunctionParameters free_functions[] = {
      function(KinematicFunctionKind::kArmAngle, 1.0, 1.0)};
  Scenario free = scenario(free_functions, 1, 3.0);
  const double target = wrap_angle(psi0 + 0.8);
  free.arm_angle_rate = [target](double psi) { return rate_towards(target, psi); };
  const RunRecord unobstructed = simulate(f, start_posture(), free);
  const Vector3 elbow_end = unobstructed.chains.back()[2];
  const SphereObstacle obstacle{.centre = elbow_end, .radius = 0.04, .influence = 0.05};

  // The arm-angle function yields (low weight) where the hand cannot: the constraint takes
  // the self-motion, the hand keeps its pose.
  const KinematicFunctionParameters functions[] = {
      function(KinematicFunctionKind::kArmAngle, 1e-4, 1.0)};
  Scenario run = scenario(functions, 1, 3.0);
  run.arm_angle_rate = free.arm_angle_rate;
  run.obstacles = {obstacle};
  const RunRecord rec = simulate(f, start_posture(), run);
  std::cout << "obstacle: psi " << psi0 << " -> " << rec.psi.back() << " rad (free run "
            << unobstructed.psi.back() << "), min distance - influence "
            << rec.min_clearance_to_influence * 1e3 << " mm, constraint active " << rec.active_steps
            << " steps, hand drift " << rec.max_position_drift * 1e3 << " mm, "
            << rec.max_orientation_drift * 1e3 << " mrad\n";
  EXPECT_GT(rec.active_steps, 100);
  EXPECT_GE(rec.min_clearance_to_influence, -1e-4);
  EXPECT_LT(std::abs(wrap_angle(rec.psi.back() - psi0)), 0.7);  // stopped short of 0.8
  EXPECT_GT(std::abs(wrap_angle(rec.psi.back() - psi0)), 0.1);  // but did turn
  EXPECT_LT(rec.max_position_drift, 5e-4);
  EXPECT_LT(rec.max_orientation_drift, 5e-4);
  draw(rec, {obstacle}, "configuration_control_obstacle.png");
}

}  // namespace
}  // namespace tether::remote

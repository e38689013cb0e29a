#include "tether/remote/seed/constrained_optimisation_guidance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "tether/common/kinematics.h"
#include "tether/remote/report/scene.h"
#include "tether/remote/resolvers/constrained_optimisation/solver.h"

namespace tether::remote::seed {
namespace {

using report::LegendEntry;
using report::Rgb;
using report::View;
using Problem = ConstrainedOptimisationProblem;
using Status = ConstrainedOptimisationResult::Status;

constexpr int kSamples = 300;  // 3 s at 100 Hz

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

GuidanceRun run_guidance_into_limits(const ArmModel& arm, const MotionVector& push) {
  GuidanceRun out;
  const KinematicModel model(arm);
  KinematicState state;
  ConstrainedOptimisationParameters params;
  params.alpha.setOnes();
  params.gamma.setConstant(0.1);
  params.max_translation = 0.005;
  params.track_arm_angle = false;  // the seed's form: six task rows, the self-motion free
  ConstrainedOptimisationResolver resolver(params);
  Problem pr;
  pr.dt = out.dt;
  pr.task_rows = 6;
  pr.lower = model.lower_limits();
  pr.upper = model.upper_limits();
  pr.velocity_limit = model.velocity_limits();
  pr.acceleration_limit = model.acceleration_limits();
  out.lower = pr.lower;
  out.upper = pr.upper;
  // Back toward the base and down, the hand's orientation held: the elbow folds until joint
  // 4 meets its limit, the other joints give what they can, then nothing can: p falls. The
  // operator's hand ramps up over half a second so the start is within the joints' acceleration.
  out.push = push;
  JointVector q;
  q << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  JointVector q_previous = q;
  JointVector closest = JointVector::Constant(1e9);  // smallest margin per joint [rad]
  for (int i = 0; i <= kSamples; ++i) {
    forward_kinematics(model, q, state);
    out.times.push_back(i * out.dt);
    out.hand.push_back(state.tool.p);
    out.q.push_back(q);
    out.chains.push_back({Vector3::Zero(), state.shoulder, state.elbow, state.wrist, state.tool.p});
    for (int j = 0; j < kArmDof; ++j) {
      out.worst_limit_excess =
          std::max({out.worst_limit_excess, pr.lower[j] - q[j], q[j] - pr.upper[j]});
      closest[j] = std::min({closest[j], q[j] - pr.lower[j], pr.upper[j] - q[j]});
    }
    if (i == kSamples) break;
    Jacobian6 J;
    tool_jacobian(state, J);
    pr.jacobian.setZero();
    pr.jacobian.topRows<6>() = J;
    pr.q = q;
    pr.q_previous = q_previous;
    pr.commanded_shift = out.push * std::min(1.0, i / 50.0);
    const ConstrainedOptimisationResult result = resolver.solve(pr);
    if (result.status == Status::kNonFinite) ++out.non_finite;
    if (result.status == Status::kInfeasible) ++out.infeasible;
    // Before the hand moves p is undefined (0/0); the solver reports 1 for a zero shift.
    out.p.push_back(result.p);
    out.min_p = std::min(out.min_p, result.p);
    if (i >= 1 && i <= 10) out.early_p = std::min(out.early_p, result.p);
    q_previous = q;
    q = result.q;
  }
  out.p.push_back(out.p.back());  // one per sample: the last solve's p holds
  closest.minCoeff(&out.limit_joint);
  return out;
}

void write_guidance_picture(const GuidanceRun& run, const std::string& path) {
  const double end = run.times.back();
  constexpr Rgb kHand{0, 0, 0};
  const Rgb warn{150, 150, 150};
  report::Scene scene;
  scene.title = "Constrained-optimisation patent: guidance into the joint limits, p falling";
  const int j = run.limit_joint;
  const double speed = run.push.head<3>().norm() / run.dt;
  scene.subtitle =
      format(
          "iiwa7, the hand commanded back and down at %.2f m/s, orientation held; joint %.0f "
          "meets its limit and p falls to %.3f; ",
          speed, j + 1.0, run.p.back()) +
      (run.worst_limit_excess <= 1e-9
           ? std::string("no joint ever beyond a limit")
           : format("worst excursion beyond a limit %.3f mrad", run.worst_limit_excess * 1e3));
  scene.time = report::TimeScale{0.0, end, "time [s]"};

  report::ViewRow top;
  top.height = 470;
  View v;
  v.title = "side view, BASE x–z: the arm every 0.25 s";
  v.x_label = "x [m]";
  v.y_label = "z [m]";
  const auto project = [](const Vector3& p) { return Eigen::Vector2d(p.x(), p.z()); };
  std::vector<Eigen::Vector2d> all, hand;
  for (const auto& c : run.chains) {
    for (const Vector3& p : c) all.push_back(project(p));
  }
  for (const Vector3& h : run.hand) hand.push_back(project(h));
  std::tie(v.x, v.y) = report::bounds(all, 0.06);
  v.x.max += 0.3;  // room for the legend beside the arm, not over it
  for (std::size_t i = 0; i < run.chains.size(); i += 25) {
    const Rgb c = report::time_color(run.times[i] / end);
    std::vector<Eigen::Vector2d> pts;
    for (const Vector3& p : run.chains[i]) pts.push_back(project(p));
    v.shapes.push_back(report::polyline(pts, c, 1.6));
    v.shapes.push_back(report::dots(pts, 2.6, c));
  }
  v.shapes.push_back(report::polyline(hand, kHand, 2.2));
  v.shapes.push_back(report::dots({hand.front()}, 4.5, report::palette_color(2)));
  v.shapes.push_back(report::dots({hand.back()}, 4.5, report::palette_color(1)));
  v.legend = {{"arm (colour = time)", LegendEntry::Mark::kTimeLine},
              {"hand path", LegendEntry::Mark::kLine, kHand},
              {"hand at the start", LegendEntry::Mark::kDot, report::palette_color(2)},
              {"hand at the end", LegendEntry::Mark::kDot, report::palette_color(1)}};
  v.legend_corner = report::Corner::kBottomRight;
  top.views.push_back(std::move(v));

  View p;
  p.title = "p, the fraction of the commanded shift attained";
  p.x_label = "time [s]";
  p.y_label = "p";
  p.equal_aspect = false;
  p.x = {0.0, end};
  p.y = {-0.05, 1.1};
  std::vector<Eigen::Vector2d> p_line;
  for (std::size_t i = 0; i < run.p.size(); ++i) p_line.emplace_back(run.times[i], run.p[i]);
  p.shapes.push_back(report::polyline({{0.0, 0.5}, {end, 0.5}}, warn, 1.0, true));
  // The time colours under the curve tie it to the arm's snapshots.
  for (std::size_t i = 0; i + 1 < run.p.size(); ++i) {
    // Each strip reaches into the next so antialiased edges leave no seams.
    const double right = run.times[std::min(i + 2, run.p.size() - 1)];
    p.shapes.push_back(report::polygon(
        {{run.times[i], -0.05}, {right, -0.05}, {right, -0.02}, {run.times[i], -0.02}},
        report::time_color(run.times[i] / end), report::kWhite, 0.0));
  }
  p.shapes.push_back(report::polyline(p_line, report::palette_color(0), 2.2));
  p.legend = {{"p (shown to the operator)", LegendEntry::Mark::kLine, report::palette_color(0)},
              {"operator warned below 0.5", LegendEntry::Mark::kDashed, warn}};
  p.legend_corner = report::Corner::kTopRight;
  top.views.push_back(std::move(p));
  scene.rows.push_back(std::move(top));

  report::ViewRow q_row;
  q_row.height = 330;
  View q;
  q.title = "joint positions within their limits: −1 at the lower limit, +1 at the upper";
  q.x_label = "time [s]";
  q.y_label = "(q − mid) / half-range";
  q.equal_aspect = false;
  q.x = {0.0, end};
  q.y = {-1.15, 1.6};
  for (double limit : {-1.0, 1.0}) {
    q.shapes.push_back(report::polyline({{0.0, limit}, {end, limit}}, report::kBlack, 1.2, true));
  }
  for (int k = 0; k < kArmDof; ++k) {
    std::vector<Eigen::Vector2d> line;
    const double mid = 0.5 * (run.lower[k] + run.upper[k]);
    const double half = 0.5 * (run.upper[k] - run.lower[k]);
    for (std::size_t i = 0; i < run.q.size(); ++i) {
      line.emplace_back(run.times[i], (run.q[i][k] - mid) / half);
    }
    q.shapes.push_back(report::polyline(line, report::palette_color(static_cast<std::size_t>(k)),
                                        k == j ? 3.0 : 1.6));
    q.legend.push_back({format(k == j ? "joint %.0f (meets its limit)" : "joint %.0f", k + 1.0),
                        LegendEntry::Mark::kLine,
                        report::palette_color(static_cast<std::size_t>(k))});
  }
  q.legend.push_back({"limits", LegendEntry::Mark::kDashed, report::kBlack});
  q.legend_corner = report::Corner::kTopRight;
  q.legend_columns = 4;
  q_row.views.push_back(std::move(q));
  scene.rows.push_back(std::move(q_row));
  report::write_scene(scene, path);
}

}  // namespace tether::remote::seed

#include "tether/remote/resolvers/shake/shake_resolver.h"

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tether/common/arm_angle.h"
#include "tether/common/spatial.h"
#include "tether/common/srs.h"

namespace tether::remote::shake {
namespace {

// A hand link shorter than this is left out of the chain: its point would coincide with W.
constexpr double kMinHandLength = 1e-3;  // [m]
constexpr int kBisections = 12;          // reach fraction to 2.4e-4
// Below this reciprocal condition number of the composite Jacobian the joints are not
// predicted from the elbow.
constexpr double kMinRcond = 1e-9;

double barrier(double c) {
  return c >= kMinClearance
             ? 1.0 / c
             : 1.0 / kMinClearance + (kMinClearance - c) / (kMinClearance * kMinClearance);
}

PointChain<3> make_chain(const SrsGeometry& g, const KinematicModel& model) {
  KinematicState state;
  forward_kinematics(model, JointVector::Zero(), state);
  // Set-up must not fail for an arm that is not S-R-S (it is refused per cycle), so
  // degenerate lengths are kept positive here.
  const auto length = [](double l) { return std::max(l, 1e-6); };
  std::vector<Link> links{Link{.length = length(g.upper_arm)}, Link{.length = length(g.forearm)}};
  PointChain<3>::Points points{state.shoulder, state.elbow, state.wrist};
  if (g.wrist_in_tool.norm() > kMinHandLength) {
    links.push_back(Link{.length = g.wrist_in_tool.norm()});
    points.push_back(state.tool.p);
  }
  return PointChain<3>(g.base_direction, std::move(links), std::move(points));
}

}  // namespace

ShakeResolver::ShakeResolver(const KinematicModel& model, int max_period_steps)
    : model_(&model),
      geometry_(srs_geometry(model)),
      srs_problem_(srs_violation(model)),
      chain_(make_chain(geometry_, model)),
      rates_(chain_, {}, ObjectiveWeights{.dt = 1.0}),
      inverse_mass_(chain_.points().size(), 0.0),
      current_(chain_.points()),
      previous_(chain_.points()),
      placed_(chain_.points()),
      trial_(chain_.points()),
      chosen_(chain_.points()),
      look_(chain_.points()),
      rates_now_(static_cast<std::size_t>(chain_.link_count())),
      rates_previous_(rates_now_),
      rates_trial_(rates_now_) {
  if (max_period_steps < 1) {
    throw std::invalid_argument("ShakeResolver: max_period_steps " +
                                std::to_string(max_period_steps) + " must be >= 1");
  }
  ring_.assign(static_cast<std::size_t>(max_period_steps), Vector3::Zero());
  // Only the elbow is searched: S is fixed, W and T sit where the hand pose puts them.
  inverse_mass_[1] = 1.0;
}

void ShakeResolver::reset(const TaskParameters& task, const ResolverInput&) noexcept {
  const ShakeParameters& p = task.resolver.shake;
  rng_.seed(p.seed);
  ring_next_ = 0;
  cycles_ = 0;
  have_previous_ = false;
  const double dt = task.period > 0.0 ? task.period : 0.0;
  const auto steps = [&](double seconds) {
    return dt > 0.0 && seconds > 0.0 ? static_cast<int>(std::lround(seconds / dt)) : 0;
  };
  period_steps_ = std::min(steps(p.period), max_period_steps());
  ramp_steps_ = std::max(1, steps(p.periodic_ramp));
  forward_kinematics(*model_, p.q_reference, scratch_);
  elbow_reference_ = scratch_.elbow;
  report_ = ShakeCycleReport{};
}

double ShakeResolver::segment_radius(const ResolverInput& input, int from_joint,
                                     int to_joint) const noexcept {
  double r = 0.0;
  for (int i = std::max(from_joint, 0); i < std::min(to_joint, kArmDof); ++i) {
    r = std::max(r, input.link_radius[i]);
  }
  return r;
}

double ShakeResolver::objective(const TaskParameters& task, const ResolverInput& input,
                                const PointChain<3>::Points& p, ShakeTerms& e,
                                Feasibility& feasible) noexcept {
  const ShakeParameters& w = task.resolver.shake;
  e = ShakeTerms{};
  feasible = Feasibility{};
  scratch_.shoulder = p[0];
  scratch_.elbow = p[1];
  scratch_.wrist = p[2];
  double psi = 0.0;
  // The elbow cannot reach the S–W line on a circle of positive radius; if it ever did, ψ
  // is undefined: the terms that need it have nothing to say and the prediction is skipped.
  const bool psi_ok =
      ArmAngleModel(task.arm_angle_reference).angle(scratch_, psi) == ArmAngleStatus::kOk;
  // The position terms and hard limits are judged where the self-motion could stop at the
  // acceleration bound (ψ + v|v|/(2 Δψ_max), v = this cycle's ψ step): a greedy choice of the
  // next sample alone would overshoot a strong pull (it oscillates and grows), and could
  // not brake in time for a joint limit or a sphere of influence.
  std::copy(p.begin(), p.end(), look_.begin());
  double psi_look = psi;
  const bool look_ahead =
      psi_ok && predicted_ && std::isfinite(max_self_motion_) && max_self_motion_ > 0.0;
  const Vector3 axis = (p[2] - p[0]).normalized();
  if (look_ahead) {
    const double v = wrap_angle(psi - psi_now_);
    const double stop = v * std::abs(v) / (2.0 * max_self_motion_);
    look_[1] = p[0] + Eigen::AngleAxisd(psi_sense_ * stop, axis) * (p[1] - p[0]);
    psi_look = psi + stop;
  }
  const PointChain<3>::Points& q = look_;
  const std::size_t n = std::min(input.obstacles.size(), kMaxObstacles);
  if (n > 0) {
    const double radius[2] = {
        segment_radius(input, geometry_.shoulder_joint, geometry_.elbow_joint),
        segment_radius(input, geometry_.elbow_joint, geometry_.wrist_joint)};
    for (int k = 0; k < 2; ++k) {
      const auto i = static_cast<std::size_t>(k);
      for (std::size_t o = 0; o < n; ++o) {
        const SphereObstacle& s = input.obstacles[o];
        // Measured from the sphere of influence: the seed's individual minimum distance.
        const double c =
            segment_distance(Sphere{s.centre, s.radius}, q[i], q[i + 1]) - radius[k] - s.influence;
        if (w.obstacle_weight > 0.0) e.obstacle += w.obstacle_weight * barrier(c);
        feasible.obstacle = std::max(feasible.obstacle, kInfluenceMargin - c);
      }
    }
  }
  if (w.velocity_weight > 0.0 || w.acceleration_weight > 0.0) {
    rates_.joint_rates(current_, p, rates_trial_);
    const double inv_dt = 1.0 / input.dt;
    for (std::size_t k = 0; k < rates_trial_.size(); ++k) {
      const Vector3 omega = rates_trial_[k] * inv_dt;
      e.velocity += w.velocity_weight * omega.squaredNorm();
      if (have_previous_ && w.acceleration_weight > 0.0) {
        const Vector3 alpha = (omega - rates_previous_[k]) * inv_dt;
        e.acceleration += w.acceleration_weight * alpha.squaredNorm();
      }
    }
  }
  if (w.reference_weight > 0.0) {
    e.reference = w.reference_weight * (q[1] - elbow_reference_).squaredNorm();
  }
  if (psi_ok && w.arm_angle_weight > 0.0) {
    const double d = wrap_angle(psi - psi_target_);
    e.arm_angle = w.arm_angle_weight * d * d;
  }
  feasible.room = std::numeric_limits<double>::infinity();
  if (psi_ok && predicted_) {
    feasible.self_motion =
        std::max(0.0, std::abs(wrap_angle(psi - psi_placed_)) - max_self_motion_);
    q_trial_ = q_hand_ + null_direction_ * wrap_angle(psi_look - psi_now_);
    for (int i = 0; i < kArmDof; ++i) {
      const double room = std::min(q_trial_[i] - lower_[i], upper_[i] - q_trial_[i]);
      feasible.room = std::min(feasible.room, room);
      feasible.joint = std::max(feasible.joint, -room);
      const double sigma = std::max(0.0, 1.0 - room / kJointLimitZone);
      e.joint_limit += kJointLimitWeight * sigma * sigma;
    }
  }
  if (w.periodic_weight > 0.0 && period_steps_ > 0 && cycles_ >= period_steps_) {
    const double x =
        std::clamp(static_cast<double>(cycles_ - period_steps_) / ramp_steps_, 0.0, 1.0);
    const double rho = x * x * (3.0 - 2.0 * x);
    const int size = max_period_steps();
    // Not looked ahead: its target moves, and braking on the motion relative to it amplifies
    // the search's noise from one period into the next at 1 kHz. The target was itself
    // reached under the acceleration bound, so a greedy pull follows it.
    const Vector3& before =
        ring_[static_cast<std::size_t>(((ring_next_ - period_steps_) % size + size) % size)];
    e.periodic = w.periodic_weight * rho * (p[1] - before).squaredNorm();
  }
  return e.total();
}

namespace {

// Whether a trial with hard-limit excursions `trial` may replace the configuration with
// `chosen`: each limit it breaks, it breaks no more than the chosen one does.
bool within_limits(double trial, double chosen) { return trial <= std::max(chosen, 0.0); }

}  // namespace

void ShakeResolver::resolve(const TaskParameters& task, const ResolverInput& in,
                            ResolverResult& out) noexcept {
  out.qd.setZero();
  out.achieved_fraction = 0.0;
  out.active_constraints = 0;
  report_ = ShakeCycleReport{};
  if (!in.xd.allFinite() || !in.q.allFinite() || !in.motion_pose.p.allFinite() ||
      !in.motion_pose.R.allFinite() || !std::isfinite(in.arm_angle) || !(in.dt > 0.0) ||
      !std::isfinite(in.dt)) {
    out.status = ResolverStatus::kNonFiniteInput;
    return;
  }
  if (!is_srs()) {
    out.status = ResolverStatus::kSingular;
    return;
  }
  const ShakeParameters& par = task.resolver.shake;
  const KinematicState& state = *in.state;
  const bool has_hand = current_.size() == 4;
  current_[0] = state.shoulder;
  current_[1] = state.elbow;
  current_[2] = state.wrist;
  if (has_hand) current_[3] = state.tool.p;
  psi_target_ = wrap_angle(in.arm_angle + in.xd[6] * in.dt);
  if (have_previous_) {
    rates_.joint_rates(previous_, current_, rates_previous_);
    for (auto& r : rates_previous_) r /= previous_dt_;
  }

  // 1. The hand's target for the next sample, cut back to the reachable fraction of it.
  const Frame motion_T_tool = in.tool_T_motion.inverse();
  const auto tool_target = [&](double s) {
    const Frame motion{in.motion_pose.R * so3_exp(in.xd.segment<3>(3) * (s * in.dt)),
                       in.motion_pose.p + in.motion_pose.R * in.xd.head<3>() * (s * in.dt)};
    return motion * motion_T_tool;
  };
  const double l1 = geometry_.upper_arm, l2 = geometry_.forearm;
  const auto circle_radius = [&](const Vector3& wrist) {
    const double d = (wrist - state.shoulder).norm();
    if (!(d > std::abs(l1 - l2)) || !(d < l1 + l2)) return 0.0;
    const double along = (l1 * l1 - l2 * l2 + d * d) / (2.0 * d);
    return std::sqrt(std::max(l1 * l1 - along * along, 0.0));
  };
  // An arm already closer to stretched than the margin may move, but not further in.
  const double min_radius =
      std::min(kMinElbowOffset * std::min(l1, l2), circle_radius(state.wrist));
  const auto reachable = [&](const Frame& tool) {
    const double r = circle_radius(tool * geometry_.wrist_in_tool);
    return r > 0.0 && r >= min_radius;
  };
  Frame tool = tool_target(1.0);
  double fraction = 1.0;
  if (!reachable(tool)) {
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < kBisections; ++i) {
      const double mid = 0.5 * (lo + hi);
      (reachable(tool_target(mid)) ? lo : hi) = mid;
    }
    fraction = lo;
    tool = tool_target(fraction);
  }
  report_.fraction = fraction;

  // The joints as a function of the elbow for this cycle: q ≈ q_hand + n wrap(ψ − ψ(q)).
  const ArmAngleModel arm_angle(task.arm_angle_reference);
  predicted_ = false;
  max_self_motion_ = std::numeric_limits<double>::infinity();
  scratch_.shoulder = current_[0];
  scratch_.elbow = current_[1];
  scratch_.wrist = current_[2];
  const Eigen::PartialPivLU<Matrix7> lu(*in.jacobian);
  if (arm_angle.angle(scratch_, psi_now_) == ArmAngleStatus::kOk && lu.rcond() > kMinRcond) {
    null_direction_ = lu.solve(JointVector::Unit(kArmDof - 1));
    MotionVector hand = MotionVector::Zero();
    hand.head<6>() = in.xd.head<6>() * (fraction * in.dt);
    q_hand_ = in.q + lu.solve(hand);
    const JointVector& a = model_->acceleration_limits();
    for (int i = 0; i < kArmDof; ++i) {
      const double n = std::abs(null_direction_[i]);
      if (n > 0.0 && a[i] > 0.0) {
        max_self_motion_ = std::min(max_self_motion_, kSelfMotionShare * a[i] * in.dt * in.dt / n);
      }
    }
    const JointVector narrow =
        task.bounds.joint_limit_margin + JointVector::Constant(kJointLimitBuffer);
    lower_ = model_->lower_limits() + narrow;
    upper_ = model_->upper_limits() - narrow;
    predicted_ = null_direction_.allFinite() && q_hand_.allFinite();
  }

  // 2. Place the hand with the elbow carried on by last cycle's joint velocity, restore the
  // chain, then search the elbow.
  std::copy(current_.begin(), current_.end(), placed_.begin());
  {
    Jacobian6 elbow_j;
    point_jacobian(state, geometry_.elbow_joint, state.elbow, elbow_j);
    const Vector3 carried = state.elbow + elbow_j.topRows<3>() * in.qd_previous * in.dt;
    if (carried.allFinite()) placed_[1] = carried;
  }
  placed_[2] = tool * geometry_.wrist_in_tool;
  if (has_hand) placed_[3] = tool.p;
  const ShakeOptions shake_options{.tolerance = par.shake_tolerance,
                                   .max_iterations = par.shake_iterations};
  const ShakeResult placement = shake<3>(chain_, placed_, current_, inverse_mass_, shake_options);
  report_.placement_iterations = placement.iterations;
  if (!placement.converged) {
    report_.placement_projected = true;
    if (!project_elbow(placed_[0], placed_[2], l1, l2, placed_[1])) {
      out.status = ResolverStatus::kSingular;
      return;
    }
  }
  scratch_.shoulder = placed_[0];
  scratch_.elbow = placed_[1];
  scratch_.wrist = placed_[2];
  if (predicted_ && arm_angle.angle(scratch_, psi_placed_) != ArmAngleStatus::kOk) {
    predicted_ = false;
  }
  if (predicted_) {
    // Which way a rotation of the elbow about S→W turns ψ (the look-ahead rotates by ψ).
    constexpr double kProbe = 1e-4;  // [rad]
    const Vector3 axis = (placed_[2] - placed_[0]).normalized();
    scratch_.elbow = placed_[0] + Eigen::AngleAxisd(kProbe, axis) * (placed_[1] - placed_[0]);
    double psi = 0.0;
    predicted_ = arm_angle.angle(scratch_, psi) == ArmAngleStatus::kOk;
    psi_sense_ = wrap_angle(psi - psi_placed_) >= 0.0 ? 1.0 : -1.0;
  }
  if (!predicted_) max_self_motion_ = std::numeric_limits<double>::infinity();
  report_.predicted = predicted_;
  report_.max_self_motion = max_self_motion_;
  ShakeTerms terms;
  Feasibility feasible;
  double energy = objective(task, in, placed_, terms, feasible);
  std::copy(placed_.begin(), placed_.end(), chosen_.begin());
  // Random steps no larger than the acceleration bound lets the elbow go: a larger one could
  // only be rejected.
  double step = par.step;
  const double radius = circle_radius(placed_[2]);
  if (predicted_ && radius * max_self_motion_ > 0.0) {
    step = std::min(step, radius * max_self_motion_);
  }
  std::uniform_real_distribution<double> component(-step, step);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto excess = [](const Feasibility& f) { return f.self_motion + f.joint + f.obstacle; };
  for (int t = 0; t < par.trials; ++t) {
    std::copy(chosen_.begin(), chosen_.end(), trial_.begin());
    for (int d = 0; d < 3; ++d) trial_[1][d] += component(rng_);
    if (!shake<3>(chain_, trial_, chosen_, inverse_mass_, shake_options).converged) {
      ++report_.rejected_unconverged;
      continue;
    }
    ShakeTerms candidate_terms;
    Feasibility candidate_feasible;
    const double candidate = objective(task, in, trial_, candidate_terms, candidate_feasible);
    // Hard limits first: no limit broken further; a trial that repairs what the chosen
    // configuration breaks is taken whatever its objective.
    if (!within_limits(candidate_feasible.self_motion, feasible.self_motion) ||
        !within_limits(candidate_feasible.joint, feasible.joint) ||
        !within_limits(candidate_feasible.obstacle, feasible.obstacle)) {
      ++report_.rejected_limits;
      continue;
    }
    const double delta = candidate - energy;
    bool accept = delta <= 0.0 || excess(candidate_feasible) < excess(feasible);
    if (!accept && par.temperature > 0.0) {
      accept = unit(rng_) < std::exp(-delta / par.temperature);
      if (accept) ++report_.accepted_worse;
    }
    if (accept) {
      std::swap(chosen_, trial_);
      energy = candidate;
      terms = candidate_terms;
      feasible = candidate_feasible;
      ++report_.accepted;
    }
  }
  report_.min_joint_room = feasible.room;
  // SHAKE leaves the lengths within its tolerance; the recovery wants them exact.
  project_elbow(chosen_[0], chosen_[2], l1, l2, chosen_[1]);
  report_.terms = terms;

  // 3. Joint angles, from those predicted for the chosen elbow (else the commanded ones).
  JointVector q = in.q;
  if (predicted_) {
    scratch_.shoulder = chosen_[0];
    scratch_.elbow = chosen_[1];
    scratch_.wrist = chosen_[2];
    double psi = 0.0;
    if (arm_angle.angle(scratch_, psi) == ArmAngleStatus::kOk) {
      q = q_hand_ + null_direction_ * wrap_angle(psi - psi_now_);
    }
  }
  report_.recovery = recover_joints(*model_, tool, chosen_[1], RecoveryOptions{}, q, scratch_);
  if (report_.recovery.singular || !q.allFinite()) {
    out.status = ResolverStatus::kSingular;
    return;
  }
  out.qd = (q - in.q) / in.dt;

  // 4. How much of the commanded hand motion the recovered configuration delivers.
  const Frame achieved = scratch_.tool * in.tool_T_motion;
  Vector6 done;
  done.head<3>() = in.motion_pose.R.transpose() * (achieved.p - in.motion_pose.p);
  done.tail<3>() = so3_log(in.motion_pose.R.transpose() * achieved.R);
  const Vector6 asked = in.xd.head<6>() * in.dt;
  const double asked2 = asked.squaredNorm();
  out.achieved_fraction = asked2 > 0.0 ? std::clamp(done.dot(asked) / asked2, 0.0, 1.0) : fraction;
  out.status = report_.recovery.converged && fraction == 1.0 ? ResolverStatus::kOk
                                                             : ResolverStatus::kInfeasible;

  // Clearance of the chosen arm, W–T included; obstacles within their influence count as
  // the constraints this cycle shaped.
  report_.min_clearance = std::numeric_limits<double>::infinity();
  const std::size_t n_obstacles = std::min(in.obstacles.size(), kMaxObstacles);
  const int joints[4] = {geometry_.shoulder_joint, geometry_.elbow_joint, geometry_.wrist_joint,
                         kArmDof};
  for (std::size_t k = 0; k + 1 < chosen_.size(); ++k) {
    const double radius = segment_radius(in, joints[k], joints[k + 1]);
    for (std::size_t o = 0; o < n_obstacles; ++o) {
      const SphereObstacle& s = in.obstacles[o];
      const double c =
          segment_distance(Sphere{s.centre, s.radius}, chosen_[k], chosen_[k + 1]) - radius;
      report_.min_clearance = std::min(report_.min_clearance, c);
      if (c <= s.influence) ++out.active_constraints;
    }
  }

  if (predicted_ && feasible.room < kJointLimitZone) ++out.active_constraints;

  // History: the periodic ring and the previous configuration for the rates.
  if (period_steps_ > 0) {
    const int size = max_period_steps();
    if (cycles_ >= period_steps_) {
      report_.cyclicity_residual =
          (chosen_[1] -
           ring_[static_cast<std::size_t>(((ring_next_ - period_steps_) % size + size) % size)])
              .norm();
    }
    ring_[static_cast<std::size_t>(ring_next_)] = chosen_[1];
    ring_next_ = (ring_next_ + 1) % size;
  }
  std::copy(current_.begin(), current_.end(), previous_.begin());
  previous_dt_ = in.dt;
  have_previous_ = true;
  ++cycles_;
}

}  // namespace tether::remote::shake

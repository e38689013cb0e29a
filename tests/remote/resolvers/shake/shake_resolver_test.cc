// The SHAKE resolver on the iiwa7, driven the way the executor drives it: each cycle the
// commanded configuration's kinematics, a motion-space velocity that asks for the next
// sample of a tool path, resolve(), and q += q̇ dt. Each scenario prints its figures and
// writes a picture of the arm over time (side view x–z on the left, top view x–y on the
// right; old configurations blue, late ones red) into the working directory.

#include "tether/remote/resolvers/shake/shake_resolver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "tether/common/arm_angle.h"
#include "tether/common/motion_space.h"
#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/report/shake_picture.h"
#include "tether/remote/resolvers/dls/dls_resolver.h"
#include "tether/remote/resolvers/resolver_set.h"

namespace tether::remote::shake {
namespace {

constexpr double kDt = 0.01;  // [s]
const JointVector kStart = (JointVector() << 0.0, 0.5, 0.0, -1.5, 0.0, 0.8, 0.0).finished();

// One arm and the executor's per-cycle bookkeeping around a resolver.
class Rig {
 public:
  explicit Rig(const std::string& name = "iiwa7", double dt = kDt)
      : model_(load_arm_by_name(name, {})), q_(kStart), dt_(dt) {
    task_.period = dt;
    task_.resolver.kind = ResolverKind::kShake;
    task_.resolver.shake.step = 0.01;
    task_.resolver.shake.velocity_weight = 1e-3;
    update();
  }

  const KinematicModel& model() const { return model_; }
  TaskParameters& task() { return task_; }
  const KinematicState& state() const { return state_; }
  const JointVector& q() const { return q_; }
  double psi() const { return psi_.psi; }
  // The joints and the velocity that took them there (the next input's qd_previous).
  void set_q(const JointVector& q, const JointVector& qd = JointVector::Zero()) {
    q_ = q;
    qd_ = qd;
    update();
  }
  std::vector<SphereObstacle> obstacles;
  LinkRadii radii = LinkRadii::Constant(0.04);

  ResolverInput input(const MotionVector& xd) const {
    ResolverInput in;
    in.model = &model_;
    in.state = &state_;
    in.jacobian = &jacobian_;
    in.motion_pose = motion_frame_pose(state_, task_.tool_T_motion);
    in.tool_T_motion = task_.tool_T_motion;
    in.arm_angle = psi_.psi;
    in.q = q_;
    in.qd_previous = qd_;
    in.xd = xd;
    in.joint_weights = task_.resolver.joint_weights;
    in.dt = dt_;
    in.obstacles = obstacles;
    in.link_radius = radii;
    return in;
  }

  // The motion-space velocity that puts the tool at `p` with the orientation `R` after one
  // period, holding the arm angle (closed loop on the commanded configuration, as the
  // impedance law would be with a stiff reference).
  MotionVector toward(const Vector3& p, const Matrix3& R) const {
    const Frame m = motion_frame_pose(state_, task_.tool_T_motion);
    MotionVector xd = MotionVector::Zero();
    xd.head<3>() = m.R.transpose() * (p - m.p) / dt_;
    xd.segment<3>(3) = so3_log(m.R.transpose() * R) / dt_;
    return xd;
  }

  ResolverResult step(Resolver& resolver, const MotionVector& xd) {
    ResolverResult out;
    resolver.resolve(task_, input(xd), out);
    set_q(q_ + out.qd * dt_, out.qd);
    return out;
  }

  // Clearance of the arm's capsules (the S–E–W–T chain the resolver sees) to the obstacles.
  double clearance() const {
    double c = std::numeric_limits<double>::infinity();
    const Vector3 p[4] = {state_.shoulder, state_.elbow, state_.wrist, state_.tool.p};
    for (const auto& o : obstacles) {
      for (int k = 0; k < 3; ++k) {
        c = std::min(c, segment_distance(Sphere{o.centre, o.radius}, p[k], p[k + 1]) - 0.04);
      }
    }
    return c;
  }

 private:
  void update() {
    forward_kinematics(model_, q_, state_);
    composite_jacobian(model_, state_, ArmAngleModel(task_.arm_angle_reference),
                       task_.tool_T_motion, jacobian_, psi_);
    express_in_frame(motion_frame_pose(state_, task_.tool_T_motion).R, jacobian_);
  }

  KinematicModel model_;
  TaskParameters task_;
  JointVector q_;
  JointVector qd_ = JointVector::Zero();
  double dt_;
  KinematicState state_;
  CompositeJacobian jacobian_ = CompositeJacobian::Zero();
  ArmAngle psi_;
};

// Base, S, E, W, T of the rig's arm now.
std::vector<Vector3> arm_points(const Rig& rig) {
  const KinematicState& s = rig.state();
  return {Vector3::Zero(), s.shoulder, s.elbow, s.wrist, s.tool.p};
}

struct Picture {
  std::vector<std::vector<Vector3>> frames;
  std::vector<Vector3> path;
  std::vector<SphereObstacle> obstacles;

  void write(const std::string& file) const {
    // Side view x–z at the origin, top view x–y shifted right by 1.3 m.
    constexpr double kShift = 1.3;
    Canvas canvas(1100, 560, {-0.45, -0.5}, {kShift + 0.95, 1.25});
    const auto side = [](const Vector3& v) { return Eigen::Vector2d(v.x(), v.z()); };
    const auto top = [&](const Vector3& v) { return Eigen::Vector2d(v.x() + kShift, v.y()); };
    for (const auto& view : {+0, 1}) {
      const auto project = [&](const Vector3& v) { return view == 0 ? side(v) : top(v); };
      canvas.line(project(Vector3(-0.3, -0.3, 0)), project(Vector3(0.9, -0.3, 0)),
                  report::Rgb{120, 120, 120}, 1.0);
      for (const auto& o : obstacles) {
        canvas.circle(project(o.centre), o.radius, report::Rgb{190, 190, 190}, true);
        canvas.circle(project(o.centre), o.radius + 0.04, report::Rgb{150, 150, 150}, false);
      }
      const std::size_t n = frames.size();
      const std::size_t every = std::max<std::size_t>(1, n / 25);
      for (std::size_t i = 0; i < n; i += every) {
        const double t = n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0;
        const report::Rgb c{static_cast<std::uint8_t>(40 + 200 * t), 60,
                            static_cast<std::uint8_t>(230 - 200 * t)};
        const auto& f = frames[i];
        for (std::size_t k = 1; k < f.size(); ++k)
          canvas.line(project(f[k - 1]), project(f[k]), c, 1.5);
        canvas.dot(project(f[2]), 3.0, c);
      }
      for (std::size_t k = 1; k < path.size(); ++k) {
        canvas.line(project(path[k - 1]), project(path[k]), report::Rgb{20, 160, 60}, 2.0);
      }
    }
    canvas.write_png(file);
  }
};

// A horizontal circle of radius 0.1 m through the start tool position, `period` seconds a loop.
Vector3 circle_point(const Vector3& start, double t, double period) {
  const double a = 2.0 * std::numbers::pi * t / period;
  return start + 0.1 * Vector3(std::cos(a) - 1.0, std::sin(a), 0.0);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

TEST(ShakeResolver, KeepsTheToolOnACommandedCircle) {
  Rig rig;
  ShakeResolver resolver(rig.model());
  resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
  const Vector3 p0 = rig.state().tool.p;
  const Matrix3 R0 = rig.state().tool.R;
  constexpr double kLoop = 4.0;
  Picture picture;
  double worst = 0.0, worst_rotation = 0.0, worst_recovery = 0.0;
  std::vector<double> micros;
  for (int n = 1; n <= 400; ++n) {
    const Vector3 target = circle_point(p0, n * kDt, kLoop);
    picture.path.push_back(target);
    ResolverResult out;
    const ResolverInput in = rig.input(rig.toward(target, R0));
    const auto t0 = std::chrono::steady_clock::now();
    resolver.resolve(rig.task(), in, out);
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_EQ(out.status, ResolverStatus::kOk) << "cycle " << n;
    EXPECT_NEAR(out.achieved_fraction, 1.0, 1e-6);
    rig.set_q(rig.q() + out.qd * kDt, out.qd);
    worst = std::max(worst, (rig.state().tool.p - target).norm());
    worst_rotation = std::max(worst_rotation, orientation_error(R0, rig.state().tool.R).norm());
    worst_recovery = std::max(worst_recovery, resolver.last_cycle().recovery.position_residual);
    picture.frames.push_back(arm_points(rig));
  }
  picture.write("shake_resolver_circle.png");
  std::cout << "[circle] tracking error max " << worst << " m, orientation " << worst_rotation
            << " rad, recovery residual max " << worst_recovery << " m; resolve median "
            << median(micros) << " us (16 trials)\n";
  EXPECT_LT(worst, 1e-9);
  EXPECT_LT(worst_rotation, 1e-9);
  EXPECT_LT(median(micros), 5000.0);  // sanity only: it is tens of µs
}

// A tool path that swings the elbow (held arm angle) through a sphere: DLS without obstacle
// avoidance runs into it, the SHAKE resolver's elbow goes around it on its circle.
struct ObstacleRun {
  double min_clearance = std::numeric_limits<double>::infinity();
  double worst_tracking = 0.0;
  std::vector<JointVector> qs;
  Picture picture;
};

Vector3 line_point(const Vector3& start, double t) {
  const double s = 0.5 - 0.5 * std::cos(std::numbers::pi * std::min(t / 3.0, 1.0));
  return start + s * Vector3(0.0, 0.45, -0.1);
}

ObstacleRun run_line(Resolver& resolver, Rig& rig, int steps) {
  ObstacleRun run;
  const Vector3 p0 = rig.state().tool.p;
  const Matrix3 R0 = rig.state().tool.R;
  resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
  run.picture.obstacles = rig.obstacles;
  for (int n = 1; n <= steps; ++n) {
    const Vector3 target = line_point(p0, n * kDt);
    run.picture.path.push_back(target);
    const ResolverResult out = rig.step(resolver, rig.toward(target, R0));
    EXPECT_NE(out.status, ResolverStatus::kSingular) << "cycle " << n;
    run.qs.push_back(rig.q());
    run.min_clearance = std::min(run.min_clearance, rig.clearance());
    run.worst_tracking = std::max(run.worst_tracking, (rig.state().tool.p - target).norm());
    run.picture.frames.push_back(arm_points(rig));
  }
  return run;
}

std::vector<SphereObstacle> sphere_on_dls_elbow_path() {
  // Where DLS takes the elbow at 60 % of the motion, 2 cm further along the way.
  Rig rig;
  DlsResolver dls;
  const ObstacleRun free = run_line(dls, rig, 400);
  KinematicState s;
  forward_kinematics(rig.model(), free.qs[180], s);
  KinematicState later;
  forward_kinematics(rig.model(), free.qs[190], later);
  const Vector3 along = (later.elbow - s.elbow).normalized();
  return {SphereObstacle{.centre = s.elbow + 0.02 * along, .radius = 0.05, .influence = 0.1}};
}

TEST(ShakeResolver, ElbowAvoidsASphereThatDlsHits) {
  const std::vector<SphereObstacle> sphere = sphere_on_dls_elbow_path();

  Rig dls_rig;
  dls_rig.obstacles = sphere;
  DlsResolver dls;
  const ObstacleRun with_dls = run_line(dls, dls_rig, 400);
  with_dls.picture.write("shake_resolver_obstacle_dls.png");

  Rig rig;
  rig.obstacles = sphere;
  rig.task().resolver.shake.obstacle_weight = 1e-2;
  rig.task().resolver.shake.arm_angle_weight = 0.0;  // ψ is what the obstacle takes
  // The elbow's place at the start pulls it back once the sphere is passed.
  rig.task().resolver.shake.reference_weight = 1.0;
  rig.task().resolver.shake.q_reference = kStart;
  ShakeResolver resolver(rig.model());
  const Vector3 elbow_start = rig.state().elbow;
  const ObstacleRun with_shake = run_line(resolver, rig, 400);
  with_shake.picture.write("shake_resolver_obstacle.png");
  double largest_detour = 0.0;
  for (const auto& f : with_shake.picture.frames) {
    largest_detour = std::max(largest_detour, (f[2] - elbow_start).norm());
  }

  std::cout << "[obstacle] min clearance: DLS (no avoidance) " << with_dls.min_clearance
            << " m, SHAKE " << with_shake.min_clearance << " m; SHAKE tracking error max "
            << with_shake.worst_tracking << " m; elbow detour from its start: largest "
            << largest_detour << " m\n";
  EXPECT_LT(with_dls.min_clearance, -0.02);  // the sphere is really in the way
  EXPECT_GT(with_shake.min_clearance, 0.0);
  EXPECT_LT(with_shake.worst_tracking, 1e-9);
}

// The arm angle is driven at 1 rad/s with the hand held (arm-angle weight 1e4, far above the
// joint-limit term's), so the self-motion turns joint 1 towards a limit narrowed to ±0.3 rad by
// the task's joint-limit margin. Nothing clamps the joints here (q += q̇ dt): SHAKE's own hard
// limit and joint-limit term stop the self-motion at the limit while the hand stays put;
// without the margin the same command takes joint 1 past 0.3 rad. Kept within half the
// resolver's 10 mrad buffer (the joints are predicted linearly from the elbow), so inside the
// task's margin.
TEST(ShakeResolver, KeepsAJointLimitItselfWhileTheArmAngleIsDrivenIntoIt) {
  constexpr double kAllowed = 0.3;  // [rad] |q_1| after the margin and the resolver's buffer
  for (const double direction : {+1.0, -1.0}) {
    double free_excursion = 0.0;
    for (const bool narrowed : {false, true}) {
      Rig rig;
      rig.task().resolver.shake.arm_angle_weight = 1e4;
      if (narrowed) {
        const double upper = rig.model().upper_limits()[0];
        rig.task().bounds.joint_limit_margin[0] = upper - kAllowed - kJointLimitBuffer;
      }
      ShakeResolver resolver(rig.model());
      resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
      const Vector3 p0 = rig.state().tool.p;
      const Matrix3 R0 = rig.state().tool.R;
      double excursion = 0.0, hand = 0.0;
      int limited = 0;
      for (int n = 0; n < 300; ++n) {
        MotionVector xd = rig.toward(p0, R0);
        xd[6] = direction * 1.0;
        const ResolverResult out = rig.step(resolver, xd);
        ASSERT_NE(out.status, ResolverStatus::kSingular) << "cycle " << n;
        excursion = std::max(excursion, std::abs(rig.q()[0]));
        hand = std::max(hand, (rig.state().tool.p - p0).norm());
        if (resolver.last_cycle().min_joint_room < kJointLimitZone) ++limited;
      }
      std::cout << (narrowed ? "limit ±0.3 rad" : "no margin") << ", direction " << direction
                << ": joint 1 reached " << excursion << " rad, hand moved " << hand * 1e3 << " mm, "
                << limited << " cycles in the limit zone\n";
      EXPECT_LT(hand, 1e-3);
      if (!narrowed) {
        free_excursion = excursion;
        EXPECT_GT(free_excursion, kAllowed + 0.05) << "the command must reach past the limit";
      } else {
        EXPECT_LE(excursion, kAllowed + 0.5 * kJointLimitBuffer);  // kept, with no clamp
        EXPECT_GT(excursion, kAllowed - 0.02);                     // and approached
        EXPECT_GT(limited, 0);
      }
    }
  }
}

TEST(ShakeResolver, SameSeedSameMotionOtherSeedAnother) {
  const std::vector<SphereObstacle> sphere = sphere_on_dls_elbow_path();
  const auto run = [&](std::uint64_t seed) {
    Rig rig;
    rig.obstacles = sphere;
    rig.task().resolver.shake.obstacle_weight = 1e-2;
    rig.task().resolver.shake.arm_angle_weight = 0.0;
    rig.task().resolver.shake.temperature = 1e-3;
    rig.task().resolver.shake.seed = seed;
    ShakeResolver resolver(rig.model());
    return run_line(resolver, rig, 150).qs;
  };
  const auto a = run(11), b = run(11), c = run(12);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t n = 0; n < a.size(); ++n) ASSERT_EQ(a[n], b[n]) << "cycle " << n;
  EXPECT_NE(a.back(), c.back());
}

// Ten loops of the circle; the joint drift per loop is max_i |q_i(end of loop k) − q_i(end of
// loop k − 1)|. Random search with velocity terms only lets the elbow wander on its circle.
struct DriftRun {
  std::vector<double> drift;  // per loop [rad]
  double final_residual = -1.0;
  Picture picture;
};

DriftRun run_loops(double periodic_weight, int loops) {
  // At the executor's 1 kHz: the self-motion is acceleration-bounded, and at 100 Hz a pull
  // strong enough to hold the elbow overshoots under that bound.
  constexpr double kRate = 0.001;  // [s]
  Rig rig("iiwa7", kRate);
  constexpr double kLoop = 2.0;
  rig.task().resolver.shake.arm_angle_weight = 0.0;
  rig.task().resolver.shake.temperature = 0.0;
  rig.task().resolver.shake.step = 0.002;
  rig.task().resolver.shake.period = kLoop;
  rig.task().resolver.shake.periodic_weight = periodic_weight;
  rig.task().resolver.shake.periodic_ramp = 1.0;
  ShakeResolver resolver(rig.model());
  resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
  const Vector3 p0 = rig.state().tool.p;
  const Matrix3 R0 = rig.state().tool.R;
  const int per_loop = static_cast<int>(std::lround(kLoop / kRate));
  DriftRun run;
  JointVector last = rig.q();
  for (int n = 1; n <= loops * per_loop; ++n) {
    // Half the other tests' circle: the full one takes a wrist joint to within 8 mrad of its
    // limit every loop, where the joint-limit term, not the periodic one, decides.
    const Vector3 target = p0 + 0.5 * (circle_point(p0, n * kRate, kLoop) - p0);
    const ResolverResult out = rig.step(resolver, rig.toward(target, R0));
    EXPECT_NE(out.status, ResolverStatus::kSingular);
    if (n % 40 == 0) run.picture.frames.push_back(arm_points(rig));
    if (n % per_loop == 0) {
      run.drift.push_back((rig.q() - last).cwiseAbs().maxCoeff());
      last = rig.q();
      run.final_residual = resolver.last_cycle().cyclicity_residual;
    }
    if (n <= per_loop && n % 10 == 0) run.picture.path.push_back(target);
  }
  return run;
}

TEST(ShakeResolver, PeriodicTermStopsTheJointDriftOnARepeatedPath) {
  constexpr int kLoops = 10;
  const DriftRun free = run_loops(0.0, kLoops);
  const DriftRun periodic = run_loops(1e3, kLoops);
  free.picture.write("shake_resolver_periodic_off.png");
  periodic.picture.write("shake_resolver_periodic_on.png");
  const auto print = [](const char* name, const DriftRun& r) {
    std::cout << "[periodic] " << name << " joint drift per loop [rad]:";
    for (double d : r.drift) std::cout << " " << d;
    std::cout << "; elbow cyclicity residual at the end " << r.final_residual << " m\n";
  };
  print("off", free);
  print("on ", periodic);
  const double free_late = *std::max_element(free.drift.end() - 3, free.drift.end());
  const double periodic_late = *std::max_element(periodic.drift.end() - 3, periodic.drift.end());
  // Random search (T = 0) at 1 kHz: what remains is micro-radians.
  EXPECT_LT(periodic_late, 3e-3);
  EXPECT_LT(periodic_late, 0.05 * free_late);
  EXPECT_LT(periodic.final_residual, 1e-3);
}

TEST(ShakeResolver, TakesTheReachableFractionOfAMotionOutOfReach) {
  Rig rig;
  ShakeResolver resolver(rig.model());
  resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
  // 2 m/s away from the shoulder for one 10 ms cycle, from an almost stretched arm.
  JointVector q = kStart;
  q[3] = -0.05;
  rig.set_q(q);
  const Vector3 out_dir = (rig.state().wrist - rig.state().shoulder).normalized();
  MotionVector xd = MotionVector::Zero();
  const Frame m = motion_frame_pose(rig.state(), rig.task().tool_T_motion);
  xd.head<3>() = m.R.transpose() * out_dir * 2.0;
  const ResolverResult out = rig.step(resolver, xd);
  EXPECT_EQ(out.status, ResolverStatus::kInfeasible);
  EXPECT_GT(out.achieved_fraction, 0.0);
  EXPECT_LT(out.achieved_fraction, 1.0);
  EXPECT_NEAR(out.achieved_fraction, resolver.last_cycle().fraction, 1e-6);
  EXPECT_TRUE(resolver.last_cycle().recovery.converged);
  EXPECT_TRUE(out.qd.allFinite());
}

TEST(ShakeResolver, RefusesNonFiniteInputAndANonSrsArm) {
  Rig rig;
  ShakeResolver resolver(rig.model());
  EXPECT_TRUE(resolver.is_srs());
  resolver.reset(rig.task(), rig.input(MotionVector::Zero()));
  MotionVector xd = MotionVector::Zero();
  xd[2] = std::numeric_limits<double>::quiet_NaN();
  ResolverResult out;
  resolver.resolve(rig.task(), rig.input(xd), out);
  EXPECT_EQ(out.status, ResolverStatus::kNonFiniteInput);
  EXPECT_EQ(out.qd, JointVector::Zero());

  Rig panda("panda");
  ShakeResolver on_panda(panda.model());
  EXPECT_FALSE(on_panda.is_srs());
  EXPECT_NE(on_panda.srs_problem(), "");
  on_panda.reset(panda.task(), panda.input(MotionVector::Zero()));
  on_panda.resolve(panda.task(), panda.input(MotionVector::Zero()), out);
  EXPECT_EQ(out.status, ResolverStatus::kSingular);
  EXPECT_EQ(out.qd, JointVector::Zero());
}

TEST(ShakeResolver, IsWhatTheResolverSetSelectsForKindShake) {
  const KinematicModel model(load_arm_by_name("iiwa7", {}));
  ResolverSet set(model);
  EXPECT_NE(dynamic_cast<ShakeResolver*>(&set.select(ResolverKind::kShake)), nullptr);
  EXPECT_EQ(dynamic_cast<ShakeResolver*>(&set.select(ResolverKind::kDls)), nullptr);
}

TEST(ShakeResolver, RefusesAnEmptyRing) {
  Rig rig;
  EXPECT_THROW(ShakeResolver(rig.model(), 0), std::invalid_argument);
}

}  // namespace
}  // namespace tether::remote::shake

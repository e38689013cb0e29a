#include "tether/common/obstacles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "allocation_counter.h"
#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"

namespace tether {
namespace {

TEST(ClosestPointOnSegment, ClampsToTheEndsAndProjectsInBetween) {
  const Vector3 a(0, 0, 0), b(1, 0, 0);
  double t = 0.0;
  EXPECT_TRUE(closest_point_on_segment(a, b, Vector3(0.3, 2, 0), t).isApprox(Vector3(0.3, 0, 0)));
  EXPECT_DOUBLE_EQ(t, 0.3);
  EXPECT_TRUE(closest_point_on_segment(a, b, Vector3(-1, 1, 0), t).isApprox(a));
  EXPECT_DOUBLE_EQ(t, 0.0);
  EXPECT_TRUE(closest_point_on_segment(a, b, Vector3(5, -1, 1), t).isApprox(b));
  EXPECT_DOUBLE_EQ(t, 1.0);
  EXPECT_TRUE(closest_point_on_segment(a, a, Vector3(5, -1, 1), t).isApprox(a));
}

// A random configuration's critical distances against brute-force sampling of each link.
TEST(CriticalPoints, AreTheClosestPointsOfEveryLinkToEveryObstacle) {
  const KinematicModel model(load_default_arm());
  KinematicState state;
  std::srand(7);
  forward_kinematics(model, JointVector::Random() * 1.5, state);
  const std::vector<SphereObstacle> obstacles{{Vector3(0.4, 0.1, 0.6), 0.05, 0.1},
                                              {Vector3(-0.2, 0.3, 0.3), 0.0, 0.05}};
  const LinkRadii radii = LinkRadii::Constant(0.04);
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  ASSERT_EQ(critical_points(state, radii, obstacles, points), 14u);
  for (std::size_t k = 0; k < 14; ++k) {
    const CriticalPoint& c = points[k];
    const Vector3& a = state.p[static_cast<std::size_t>(c.link)];
    const Vector3& b = c.link < 6 ? state.p[static_cast<std::size_t>(c.link) + 1] : state.tool.p;
    const SphereObstacle& o = obstacles[static_cast<std::size_t>(c.obstacle)];
    double best = 1e9;
    for (int i = 0; i <= 10000; ++i) {
      best = std::min(best, (a + (b - a) * (i / 10000.0) - o.centre).norm());
    }
    EXPECT_NEAR(c.distance, best - o.radius - 0.04, 1e-6) << "link " << c.link;
    EXPECT_NEAR(c.normal.norm(), 1.0, 1e-12);
    EXPECT_NEAR((c.point - o.centre).dot(c.normal), (c.point - o.centre).norm(), 1e-12);
  }
}

TEST(DistanceGradient, PredictsTheChangeOfTheCriticalDistance) {
  const KinematicModel model(load_default_arm());
  KinematicState state, moved;
  const JointVector q = (JointVector() << 0.3, 0.7, -0.2, -1.3, 0.4, 0.8, 0.1).finished();
  forward_kinematics(model, q, state);
  const std::vector<SphereObstacle> obstacles{{Vector3(0.35, 0.25, 0.55), 0.05, 0.1}};
  std::array<CriticalPoint, kMaxCriticalPoints> before, after;
  critical_points(state, LinkRadii::Zero(), obstacles, before);
  const JointVector dq = JointVector::Constant(1e-6).cwiseProduct(
      (JointVector() << 1, -2, 3, -1, 2, -3, 1).finished());
  forward_kinematics(model, q + dq, moved);
  critical_points(moved, LinkRadii::Zero(), obstacles, after);
  for (int link = 0; link < kArmDof; ++link) {
    const auto k = static_cast<std::size_t>(link);
    const double predicted = distance_gradient(state, before[k]).dot(dq);
    EXPECT_NEAR(after[k].distance - before[k].distance, predicted, 1e-10) << "link " << link;
  }
}

struct PassResult {
  std::vector<Vector3> forearm;       // joint-5 origin (mid forearm) every sample
  double min_clearance_margin = 1e9;  // min over time of (distance − influence)
  double max_tracking_error = 0.0;    // [m]
  double start_margin = 0.0;
  int max_active = 0;
};

// The tool moves 0.55 m sideways at constant orientation in 4 s while obstacles sit above the
// forearm's path; the arm angle is left to the redundancy (weight 0 on its row).
PassResult pass_obstacles(const std::vector<SphereObstacle>& obstacles, bool avoid) {
  const KinematicModel model(load_default_arm());
  KinematicState state;
  JointVector q = (JointVector() << -0.45, 0.5, 0.0, -1.4, 0.0, 0.9, 0.0).finished();
  forward_kinematics(model, q, state);
  const Frame start = state.tool;
  const Vector3 travel(0.0, 0.55, 0.0);
  const double duration = 4.0, dt = 0.002;
  MotionVector weights = MotionVector::Ones();
  weights[6] = 0.0;
  const JointVector damping = JointVector::Constant(1e-6);
  const LinkRadii radii = LinkRadii::Constant(0.04);
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  PassResult r;
  for (double t = 0.0; t < duration; t += dt) {
    forward_kinematics(model, q, state);
    r.forearm.push_back(state.p[4]);
    const std::size_t n = critical_points(state, radii, obstacles, points);
    for (std::size_t k = 0; k < n; ++k) {
      r.min_clearance_margin =
          std::min(r.min_clearance_margin, points[k].distance - points[k].influence);
    }
    if (t == 0.0) r.start_margin = r.min_clearance_margin;
    const double s = t / duration;
    const double blend = 3 * s * s - 2 * s * s * s;  // smooth start and stop
    const double blend_rate = (6 * s - 6 * s * s) / duration;
    const Vector3 p_ref = start.p + blend * travel;
    r.max_tracking_error = std::max(r.max_tracking_error, (p_ref - state.tool.p).norm());
    Jacobian6 j6;
    tool_jacobian(state, j6);
    CompositeJacobian j = CompositeJacobian::Zero();
    j.topRows<6>() = j6;
    MotionVector xdot = MotionVector::Zero();
    xdot.head<3>() = blend_rate * travel + 20.0 * (p_ref - state.tool.p);
    xdot.segment<3>(3) = 20.0 * orientation_error(start.R, state.tool.R);
    JointVector qdot;
    const ObstacleResolution res = resolve_with_obstacles(
        j, weights, damping, xdot, state,
        std::span<const CriticalPoint>(points.data(), avoid ? n : 0), 5.0, qdot);
    EXPECT_EQ(res.status, DlsStatus::kOk);
    r.max_active = std::max(r.max_active, res.active_constraints);
    q += qdot * dt;
  }
  return r;
}

// Two spheres in succession just above where the forearm passes at 45 % and 90 % of the way
// (placed from an unobstructed pass), so that the forearm would cut 3 cm into their spheres
// of influence: obstacle radius 3 cm, influence 5 cm, link radius 4 cm, 9 cm from the path.
std::vector<SphereObstacle> obstacles_above_the_forearm() {
  const PassResult free = pass_obstacles({}, false);
  std::vector<SphereObstacle> obstacles;
  for (double fraction : {0.45, 0.9}) {
    const auto k = static_cast<std::size_t>(fraction * static_cast<double>(free.forearm.size()));
    obstacles.push_back({free.forearm[k] + Vector3(0.0, 0.0, 0.09), 0.03, 0.05});
  }
  return obstacles;
}

TEST(SpheresOfInfluence, WithoutAvoidanceTheForearmEntersTheSpheresOfInfluence) {
  const PassResult r = pass_obstacles(obstacles_above_the_forearm(), false);
  EXPECT_GT(r.start_margin, 0.0);
  EXPECT_LT(r.min_clearance_margin, -0.02) << "the scenario must put the obstacles in the way";
  EXPECT_LT(r.max_tracking_error, 1e-3);
}

TEST(SpheresOfInfluence, CriticalDistanceNeverFallsBelowTheRadiusWhileTheToolKeepsItsPath) {
  const PassResult r = pass_obstacles(obstacles_above_the_forearm(), true);
  const PassResult free = pass_obstacles(obstacles_above_the_forearm(), false);
  std::cout << "closest approach to a sphere of influence: " << r.min_clearance_margin * 1e3
            << " mm with avoidance, " << free.min_clearance_margin * 1e3
            << " mm without; tool path error " << r.max_tracking_error * 1e3 << " mm; up to "
            << r.max_active << " constraints active\n";
  EXPECT_GT(r.start_margin, 0.0);
  // The constraint acts at the velocity level from the sample the sphere is reached: one
  // sample of approach (at most ~2 mm here) is the stated tolerance.
  EXPECT_GT(r.min_clearance_margin, -2e-3);
  EXPECT_GE(r.max_active, 1);
  EXPECT_LT(r.max_tracking_error, 2e-3);
}

TEST(ResolveWithObstacles, EqualsPlainDlsWhenNoConstraintIsActive) {
  const KinematicModel model(load_default_arm());
  KinematicState state;
  forward_kinematics(model, (JointVector() << 0.1, 0.5, 0.2, -1.2, 0.3, 0.8, 0.1).finished(),
                     state);
  Jacobian6 j6;
  tool_jacobian(state, j6);
  CompositeJacobian j = CompositeJacobian::Zero();
  j.topRows<6>() = j6;
  j(6, 2) = 1.0;
  MotionVector xdot;
  xdot << 0.1, -0.05, 0.02, 0.1, 0.0, -0.2, 0.05;
  JointVector expected, qdot;
  ASSERT_EQ(weighted_dls<7>(j, MotionVector::Ones(), JointVector::Zero(), xdot, expected),
            DlsStatus::kOk);
  const ObstacleResolution r = resolve_with_obstacles(j, MotionVector::Ones(), JointVector::Zero(),
                                                      xdot, state, {}, 1.0, qdot);
  EXPECT_EQ(r.status, DlsStatus::kOk);
  EXPECT_EQ(r.active_constraints, 0);
  EXPECT_LT((qdot - expected).norm(), 1e-9);
  EXPECT_LT(r.residual, 1e-9);
}

TEST(ResolveWithObstacles, AllocatesNothing) {
  const KinematicModel model(load_default_arm());
  KinematicState state;
  forward_kinematics(model, (JointVector() << 0.0, 0.5, 0.0, -1.4, 0.0, 0.9, 0.0).finished(),
                     state);
  const std::vector<SphereObstacle> obstacles{{state.p[3] + Vector3(0.0, 0.06, 0.0), 0.0, 0.1},
                                              {state.p[5] + Vector3(0.05, 0.0, 0.0), 0.0, 0.1}};
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  Jacobian6 j6;
  tool_jacobian(state, j6);
  CompositeJacobian j = CompositeJacobian::Zero();
  j.topRows<6>() = j6;
  MotionVector weights = MotionVector::Ones();
  weights[6] = 0.0;
  MotionVector xdot = MotionVector::Zero();
  xdot[1] = 0.2;
  JointVector qdot;
  ObstacleResolution r;
  std::size_t allocations = 0;
  {
    testing::ScopedAllocationCounter counter;
    const std::size_t n = critical_points(state, LinkRadii::Constant(0.04), obstacles, points);
    r = resolve_with_obstacles(j, weights, JointVector::Constant(1e-6), xdot, state,
                               std::span<const CriticalPoint>(points.data(), n), 1.0, qdot);
    allocations = counter.count();
  }
  EXPECT_EQ(allocations, 0u);
  EXPECT_GE(r.active_constraints, 1);
}

TEST(ResolveWithObstacles, RejectsNonFiniteInputWithZeroVelocity) {
  KinematicState state;
  MotionVector xdot = MotionVector::Zero();
  xdot[0] = std::nan("");
  JointVector qdot = JointVector::Ones();
  const ObstacleResolution r =
      resolve_with_obstacles(CompositeJacobian::Identity(), MotionVector::Ones(),
                             JointVector::Zero(), xdot, state, {}, 1.0, qdot);
  EXPECT_EQ(r.status, DlsStatus::kNonFiniteInput);
  EXPECT_TRUE(qdot.isZero());
}

}  // namespace
}  // namespace tether

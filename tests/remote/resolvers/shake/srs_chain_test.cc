// The S-R-S arm as a point chain: the structure check, the elbow circle and the joint-angle
// recovery from (tool pose, elbow point).

#include "tether/remote/resolvers/shake/srs_chain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

#include "tether/common/spatial.h"
#include "tether/common/srs.h"
#include "tether/common/urdf_loader.h"

namespace tether::remote::shake {
namespace {

KinematicModel arm(const std::string& name) { return KinematicModel(load_arm_by_name(name, {})); }

TEST(SrsCheck, AcceptsTheIiwa) { EXPECT_EQ(srs_violation(arm("iiwa7")), ""); }

TEST(SrsCheck, RefusesThePandaNamingTheOffset) {
  // The Panda's elbow and wrist are offset from the joint axes (8.25 and 8.8 cm link offsets).
  const std::string why = srs_violation(arm("panda"));
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("off the axis of joint"), std::string::npos) << why;
  EXPECT_NE(why.find("q = ("), std::string::npos) << why;
}

TEST(SrsGeometry, ReadsTheIiwaLengthsAndShoulder) {
  const SrsGeometry g = srs_geometry(arm("iiwa7"));
  EXPECT_NEAR(g.upper_arm, 0.4, 1e-12);
  EXPECT_NEAR(g.forearm, 0.4, 1e-12);
  EXPECT_NEAR(g.shoulder.z(), 0.34, 1e-12);
  EXPECT_NEAR(g.wrist_in_tool.norm(), 0.126, 1e-12);  // 0.081 to joint 7 + 0.045 flange
  EXPECT_EQ(g.elbow_joint, 3);
}

TEST(ProjectElbow, PutsTheElbowOnItsCircleKeepingItsPlane) {
  const Vector3 s(0, 0, 0.34), w(0.5, 0.1, 0.6);
  Vector3 e(0.1, -0.3, 0.6);
  const Vector3 plane_normal = (w - s).cross(e - s).normalized();
  const Vector3 u = (w - s).normalized();
  const auto off_line = [&](const Vector3& x) { return (x - s) - (x - s).dot(u) * u; };
  const Vector3 before = off_line(e);
  ASSERT_TRUE(project_elbow(s, w, 0.4, 0.4, e));
  EXPECT_NEAR((e - s).norm(), 0.4, 1e-14);
  EXPECT_NEAR((w - e).norm(), 0.4, 1e-14);
  EXPECT_NEAR(plane_normal.dot(e - s), 0.0, 1e-14);
  EXPECT_GT(off_line(e).dot(before), 0.0);  // same side of the S–W line as before
}

TEST(ProjectElbow, RefusesAWristOutOfReach) {
  Vector3 e(0.1, 0.0, 0.6);
  const Vector3 before = e;
  EXPECT_FALSE(project_elbow(Vector3(0, 0, 0.34), Vector3(0, 0, 1.2), 0.4, 0.4, e));
  EXPECT_EQ(e, before);
}

// Seeded configurations away from the elbow singularity (|q4| > 0.3), forward kinematics to
// (tool pose, elbow), recovery from a start perturbed by up to 0.05 rad per joint.
TEST(RecoverJoints, RoundTripsRandomConfigurations) {
  const KinematicModel model = arm("iiwa7");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0), jitter(-0.05, 0.05);
  KinematicState truth, state;
  double worst_position = 0.0, worst_rotation = 0.0, worst_wrist = 0.0;
  int worst_iterations = 0, cases = 0;
  while (cases < 500) {
    JointVector q;
    for (int i = 0; i < kArmDof; ++i) {
      const double lo = model.lower_limits()[i] + 0.1, hi = model.upper_limits()[i] - 0.1;
      q[i] = lo + (hi - lo) * unit(rng);
    }
    if (std::abs(q[3]) < 0.3) continue;
    ++cases;
    forward_kinematics(model, q, truth);
    JointVector start = q;
    for (int i = 0; i < kArmDof; ++i) start[i] += jitter(rng);
    const RecoveryReport r = recover_joints(model, truth.tool, truth.elbow, {}, start, state);
    ASSERT_TRUE(r.converged) << "case " << cases << " residual " << r.position_residual << " m, "
                             << r.rotation_residual << " rad";
    EXPECT_FALSE(r.singular);
    worst_position = std::max(
        {worst_position, (state.tool.p - truth.tool.p).norm(), (state.elbow - truth.elbow).norm()});
    worst_rotation = std::max(worst_rotation, orientation_error(truth.tool.R, state.tool.R).norm());
    worst_wrist = std::max({worst_wrist, (state.wrist - truth.wrist).norm(),
                            (state.shoulder - truth.shoulder).norm()});
    worst_iterations = std::max(worst_iterations, r.iterations);
  }
  std::cout << "[recovery] " << cases << " configurations: worst tool/elbow " << worst_position
            << " m, rotation " << worst_rotation << " rad, S/W " << worst_wrist
            << " m, worst iterations " << worst_iterations << "\n";
  EXPECT_LT(worst_position, 1e-9);
  EXPECT_LT(worst_rotation, 1e-9);
  EXPECT_LT(worst_wrist, 1e-9);
}

TEST(RecoverJoints, StaysExactAtAWristSingularity) {
  // q6 = 0 lines up joints 5 and 7: the configuration is still determined up to q5 + q7.
  const KinematicModel model = arm("iiwa7");
  const JointVector q = (JointVector() << 0.3, 0.7, -0.2, -1.5, 0.4, 0.0, -0.1).finished();
  KinematicState truth, state;
  forward_kinematics(model, q, truth);
  JointVector start = q + JointVector::Constant(0.02);
  const RecoveryReport r = recover_joints(model, truth.tool, truth.elbow, {}, start, state);
  EXPECT_TRUE(r.converged) << r.position_residual << " m, " << r.rotation_residual << " rad";
  EXPECT_LT((state.tool.p - truth.tool.p).norm(), 1e-9);
  EXPECT_NEAR(start[4] + start[6], q[4] + q[6], 1e-8);
}

TEST(RecoverJoints, ReportsAnUnreachableTargetAsNotConverged) {
  const KinematicModel model = arm("iiwa7");
  JointVector q = (JointVector() << 0.0, 0.5, 0.0, -1.5, 0.0, 0.8, 0.0).finished();
  KinematicState state;
  forward_kinematics(model, q, state);
  Frame far = state.tool;
  far.p += Vector3(2.0, 0.0, 0.0);  // beyond the arm's reach
  const RecoveryReport r = recover_joints(model, far, state.elbow, {}, q, state);
  EXPECT_FALSE(r.converged);
  EXPECT_GT(r.position_residual, 0.5);
  EXPECT_TRUE(q.allFinite());
}

}  // namespace
}  // namespace tether::remote::shake

// Scene set-up: the shared initial posture, the door geometry in TOOL coordinates and the
// door arc the arm must be able to follow, default obstacles and the proximity target.

#include "tether/remote/sim/scene.h"

#include <gtest/gtest.h>

#include <Eigen/SVD>

#include "sim_test_support.h"
#include "tether/common/motion_space.h"

namespace tether::remote {
namespace {

using testing::kDeg;

TEST(DefaultInitialPosition, PointsToolZAlongBaseXWithToolXDownAndTheElbowUp) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    const KinematicModel model(arm.model);
    const JointVector q = default_initial_position(SceneKind::kDoor, arm.model);
    EXPECT_TRUE((q.array() >= model.lower_limits().array()).all());
    EXPECT_TRUE((q.array() <= model.upper_limits().array()).all());
    KinematicState state;
    forward_kinematics(model, q, state);
    EXPECT_NEAR(state.tool.R.col(2).dot(Vector3::UnitX()), 1.0, 1e-9);
    EXPECT_NEAR(state.tool.R.col(0).dot(-Vector3::UnitZ()), 1.0, 1e-9);
    // Elbow up: arm angle 0 puts the elbow on the vertical reference's side of S→W.
    EXPECT_NEAR(testing::arm_angle(model, q), 0.0, 1e-9);
    EXPECT_GT(state.elbow.z(), 0.5 * (state.shoulder.z() + state.wrist.z()));
    // Every scene starts from the same posture.
    EXPECT_TRUE(default_initial_position(SceneKind::kWall, arm.model).isApprox(q));
  }
}

TEST(SolveToolPose, ReachesAReachablePoseAndReportsAnUnreachableOne) {
  const ArmModel arm = load_default_arm();
  const KinematicModel model(arm);
  JointVector target_q;
  target_q << 0.3, 0.5, -0.2, -1.2, 0.4, 0.8, -0.3;
  KinematicState state;
  forward_kinematics(model, target_q, state);
  const double psi = testing::arm_angle(model, target_q);
  JointVector q = JointVector::Zero();
  q[3] = -1.0;
  ASSERT_TRUE(solve_tool_pose(model, state.tool, psi, q));
  KinematicState solved;
  forward_kinematics(model, q, solved);
  EXPECT_LT((solved.tool.p - state.tool.p).norm(), 1e-9);
  EXPECT_LT(orientation_error(state.tool.R, solved.tool.R).norm(), 1e-9);

  Frame far = state.tool;
  far.p = Vector3(2.0, 0.0, 0.3);  // beyond the iiwa7's 1.3 m reach
  JointVector q_far = JointVector::Zero();
  EXPECT_FALSE(solve_tool_pose(model, far, 0.0, q_far));
}

TEST(DoorHinge, XIsTheVerticalAxisAndPositiveRotationPullsTheHandleTowardsTheRobot) {
  const ArmModel arm = load_default_arm();
  const KinematicModel model(arm);
  KinematicState state;
  forward_kinematics(model, default_initial_position(SceneKind::kDoor, arm), state);
  const DoorParameters door;
  const GripperParameters gripper;
  const Frame hinge = state.tool * door_hinge_in_tool(door, gripper);
  EXPECT_TRUE(hinge.R.col(0).isApprox(Vector3::UnitZ(), 1e-12));
  EXPECT_NEAR(hinge.R.determinant(), 1.0, 1e-12);
  // Origin at grasp height, handle_to_hinge from the grasp point across the panel.
  const Vector3 grasp = state.tool * Vector3(0.0, 0.0, gripper.grasp_depth);
  EXPECT_NEAR(hinge.p.z(), grasp.z(), 1e-12);
  const Vector3 offset = grasp - hinge.p;
  EXPECT_NEAR(offset.dot(hinge.R.col(1)), door.handle_to_hinge, 1e-12);
  EXPECT_NEAR(offset.dot(hinge.R.col(2)), door.handle_standoff, 1e-12);
  // Opening by 30° moves the grasp point towards the robot base (−x) by ~w·sin 30°.
  const Frame opened =
      testing::door_arc_pose(state.tool, door_hinge_in_tool(door, gripper), 30.0 * kDeg);
  const Vector3 moved = opened * Vector3(0.0, 0.0, gripper.grasp_depth);
  EXPECT_LT(moved.x() - grasp.x(), -0.25);
  EXPECT_NEAR((moved - hinge.p).norm(), offset.norm(), 1e-12);
}

TEST(DoorArc, Iiwa7FollowsTheHandleFrom0To50DegreesAwayFromLimitsAndSingularities) {
  const ArmModel arm = load_default_arm();
  const KinematicModel model(arm);
  const JointVector q0 = default_initial_position(SceneKind::kDoor, arm);
  const auto path =
      testing::door_arc_joints(arm, q0, door_hinge_in_tool({}, {}), 50.0 * kDeg, 1.0 * kDeg);
  const ArmAngleModel arm_angle;
  KinematicState state;
  CompositeJacobian J;
  ArmAngle psi;
  double min_margin = 1e9;
  double min_singular = 1e9;
  double max_step = 0.0;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const JointVector& q = path[k];
    min_margin = std::min(
        {min_margin, (q - model.lower_limits()).minCoeff(), (model.upper_limits() - q).minCoeff()});
    forward_kinematics(model, q, state);
    composite_jacobian(model, state, arm_angle, Frame::Identity(), J, psi);
    ASSERT_EQ(psi.status, ArmAngleStatus::kOk);
    min_singular =
        std::min(min_singular, Eigen::JacobiSVD<CompositeJacobian>(J).singularValues()[6]);
    if (k > 0) max_step = std::max(max_step, (q - path[k - 1]).cwiseAbs().maxCoeff());
  }
  EXPECT_GT(min_margin, 10.0 * kDeg);
  EXPECT_GT(min_singular, 0.05);
  // Continuous: no branch flips between 1° steps (the fastest joint, the elbow near the
  // start, turns 3.2° per degree of door).
  EXPECT_LT(max_step, 4.0 * kDeg);
}

TEST(DefaultObstacles, SitBesideTheElbowAndForearmClearOfTheLinks) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    const KinematicModel model(arm.model);
    const JointVector q = default_initial_position(SceneKind::kObstacles, arm.model);
    KinematicState state;
    forward_kinematics(model, q, state);
    const auto spheres = default_obstacles(arm.model, q);
    ASSERT_EQ(spheres.size(), 3u);
    for (const Sphere& sphere : spheres) {
      const double to_elbow = (sphere.center - state.elbow).norm();
      // Within 25 cm of the elbow's surface, and ≥ 5 cm clear of the 6 cm link capsules.
      EXPECT_LT(to_elbow - sphere.radius, 0.25);
      EXPECT_GT(to_elbow - sphere.radius - 0.06, 0.05);
    }
  }
}

TEST(ProximityTarget, PlateCrossesTheBeamAtTheDistanceWithTheTiltAsked) {
  ProximityTargetParameters target;
  target.distance = 0.2;
  target.tilt_x = 4.0 * kDeg;
  target.tilt_y = 0.0;
  const Frame plate = proximity_target_in_sensor(target);
  EXPECT_TRUE(plate.p.isApprox(Vector3(0.0, 0.0, -0.2)));
  EXPECT_NEAR(std::acos(plate.R.col(2).z()), 4.0 * kDeg, 1e-12);
  // Tilt about L's x turns the normal towards −y.
  EXPECT_LT(plate.R.col(2).y(), 0.0);
}

TEST(WallInTool, SurfaceIsTheClearanceBeyondTheGripperTipFacingTheArm) {
  WallParameters wall;
  wall.clearance = 0.04;
  GripperParameters gripper;
  gripper.length = 0.15;
  const Frame surface = wall_in_tool(wall, gripper);
  EXPECT_TRUE(surface.p.isApprox(Vector3(0.0, 0.0, 0.19)));
  EXPECT_TRUE(surface.R.col(2).isApprox(-Vector3::UnitZ()));
  EXPECT_NEAR(surface.R.determinant(), 1.0, 1e-12);
}

TEST(SceneKindNames, NameEveryScene) {
  EXPECT_STREQ(to_string(SceneKind::kDoor), "door");
  EXPECT_STREQ(to_string(SceneKind::kProximityTarget), "proximity target");
}

TEST(WristComplianceSpec, ReadsRigidDefaultAndStiffnessPairsWithTheDampingRatioKept) {
  EXPECT_FALSE(wrist_compliance_from_spec("rigid").enabled);
  const WristComplianceParameters d = wrist_compliance_from_spec("default");
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.translational_stiffness, WristComplianceParameters{}.translational_stiffness);
  const WristComplianceParameters w = wrist_compliance_from_spec("20000:2000");
  EXPECT_TRUE(w.enabled);
  EXPECT_EQ(w.translational_stiffness, 20000.0);
  EXPECT_EQ(w.rotational_stiffness, 2000.0);
  // Four times stiffer, twice the damping: the same damping ratio on the same gripper.
  EXPECT_DOUBLE_EQ(w.translational_damping, 2.0 * d.translational_damping);
  EXPECT_DOUBLE_EQ(w.rotational_damping, 2.0 * d.rotational_damping);
}

TEST(WristComplianceSpec, RejectsASpecNamingThePartItsValueAndTheRange) {
  const auto message = [](const char* spec) -> std::string {
    try {
      wrist_compliance_from_spec(spec);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message("5000"),
            "wrist stiffness '5000': no ':' between K_T and K_R (expected rigid, default or "
            "K_T:K_R, e.g. 5000:500)");
  EXPECT_NE(message("50:500").find("K_T [N/m] = 50 is outside [100, 10000000]"), std::string::npos)
      << message("50:500");
  EXPECT_NE(message("5000:abc").find("K_R [N·m/rad] 'abc' is not a number"), std::string::npos)
      << message("5000:abc");
  EXPECT_NE(message("5000:1e6").find("outside [1, 100000]"), std::string::npos)
      << message("5000:1e6");
}

}  // namespace
}  // namespace tether::remote

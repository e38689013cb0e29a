// The extended-task-space patent's composite example, shared-control polishing, on the wall
// scene with the task shipped in remote_site/tasks: the operator drives the tip over a
// 0.2 m × 0.2 m raster in 8 s while force control presses it onto the wall with 10 N and
// manipulability, joint-limit, obstacle and singularity avoidance all run at once.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/obstacles.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote {
namespace {

TaskParameters shipped() {
  return proto::load_task_file(std::string(TETHER_TASK_DIR) + "/polish.textproto");
}

// The tip's path over the surface, TELEOP (= MOTION = TOOL) x and y from where it touched:
// first to a corner, then five passes of 0.2 m joined by 5 cm steps.
// TOOL x points down at the start: the raster lies above the point of contact, where the
// shoulder is far from its limit (below it, the shoulder pitch nears its upper limit).
constexpr std::array<std::array<double, 2>, 11> kRaster = {{{0.0, 0.0},
                                                            {-0.2, -0.1},
                                                            {0.0, -0.1},
                                                            {0.0, -0.05},
                                                            {-0.2, -0.05},
                                                            {-0.2, 0.0},
                                                            {0.0, 0.0},
                                                            {0.0, 0.05},
                                                            {-0.2, 0.05},
                                                            {-0.2, 0.1},
                                                            {0.0, 0.1}}};

// Where the hand wants the tip at time s of the raster, the raster taking `duration` after a
// 1 s move to its first corner.
Eigen::Vector2d raster_point(double s, double duration) {
  if (s <= 0.0) return Eigen::Vector2d::Zero();
  const Eigen::Vector2d corner(kRaster[1][0], kRaster[1][1]);
  if (s < 1.0) return s * corner;
  double length = 0.0;
  for (std::size_t k = 2; k < kRaster.size(); ++k) {
    length += std::hypot(kRaster[k][0] - kRaster[k - 1][0], kRaster[k][1] - kRaster[k - 1][1]);
  }
  double along = std::min(s - 1.0, duration) / duration * length;
  for (std::size_t k = 2; k < kRaster.size(); ++k) {
    const Eigen::Vector2d a(kRaster[k - 1][0], kRaster[k - 1][1]);
    const Eigen::Vector2d b(kRaster[k][0], kRaster[k][1]);
    const double segment = (b - a).norm();
    if (along <= segment) return a + (along / segment) * (b - a);
    along -= segment;
  }
  return Eigen::Vector2d(kRaster.back()[0], kRaster.back()[1]);
}

TEST(Polishing, TheTipPressesWith10NWithin1NOverA20CmRasterIn8sWithEveryBehaviourOn) {
  const ArmModel model = load_default_arm();
  SimulationOptions options;
  options.scene = SceneKind::kWall;
  options.initial_position = default_initial_position(SceneKind::kWall, model);
  SimulatedArm arm(model, options);
  const TaskParameters task = shipped();
  // The composite behaviour of the patent, all at once.
  EXPECT_TRUE(task.teleoperation.enabled);
  EXPECT_TRUE(task.force_control.enabled);
  EXPECT_TRUE(task.manipulability.enabled);
  EXPECT_TRUE(task.joint_limit_avoidance.enabled);
  EXPECT_TRUE(task.obstacle_avoidance.enabled);
  EXPECT_TRUE(task.singularity_avoidance.enabled);
  // The task's obstacle is the scene's sphere beside the elbow.
  ASSERT_EQ(arm.obstacles().size(), 1u);
  ASSERT_EQ(task.obstacle_avoidance.obstacles.size(), 1u);
  EXPECT_LT((task.obstacle_avoidance.obstacles[0].centre - arm.obstacles()[0].center).norm(), 1e-3);
  // Tangential only: the hand has no gain along the normal or in rotation.
  EXPECT_EQ(task.teleoperation.gain[2], 0.0);
  EXPECT_EQ(task.teleoperation.gain.segment<3>(3), Vector3::Zero());

  constexpr double kContact = 2.0;  // [s] the tip has reached the wall by then
  constexpr double kRasterTime = 8.0;
  const double rate = task.impedance.damping[0] / task.teleoperation.gain[0];  // hand per tip
  Eigen::Vector2d previous = Eigen::Vector2d::Zero();
  auto hand = [&](double time, double /*dt*/) {
    HandControllerSample s;
    const Eigen::Vector2d now = raster_point(time - kContact, kRasterTime);
    s.increment[0] = rate * (now.x() - previous.x());
    s.increment[1] = rate * (now.y() - previous.y());
    previous = now;
    return s;
  };
  // The sphere's clearance from every link, each cycle, from the measured joints.
  const KinematicModel kinematics(model);
  const std::array<SphereObstacle, 1> spheres = {
      SphereObstacle{arm.obstacles()[0].center, arm.obstacles()[0].radius,
                     task.obstacle_avoidance.obstacles[0].influence}};
  const auto clearance = [&](const JointVector& q) {
    KinematicState state;
    forward_kinematics(kinematics, q, state);
    std::array<CriticalPoint, kMaxCriticalPoints> points;
    const std::size_t n =
        critical_points(state, task.obstacle_avoidance.link_radius, spheres, points);
    double least = 1e9;
    for (std::size_t i = 0; i < n; ++i) least = std::min(least, points[i].distance);
    return least;
  };

  TaskRunOptions run;
  run.duration = kContact + 1.0 + kRasterTime + 0.5;
  run.hand_controller = hand;
  const TaskRunRecord r = run_task(arm, task, run);
  EXPECT_FALSE(r.breach) << describe(r.breach);
  EXPECT_EQ(r.final_state, ExecutorState::kRunning);
  EXPECT_EQ(r.teleoperation.lost, 0u);
  // Normal force (MOTION z, into the wall) from contact to the end of the raster.
  double low = 1e9;
  double high = -1e9;
  double least_clearance = 1e9;
  double psi_min = 1e9;
  double psi_max = -1e9;
  Vector3 tip_low = Vector3::Constant(1e9);
  Vector3 tip_high = Vector3::Constant(-1e9);
  const Frame start = motion_frame_pose(
      [&] {
        KinematicState s;
        forward_kinematics(kinematics, r.measured_joints.front(), s);
        return s;
      }(),
      task.tool_T_motion);
  for (std::size_t k = 0; k < r.time.size(); ++k) {
    least_clearance = std::min(least_clearance, clearance(r.measured_joints[k]));
    if (r.time[k] < kContact) continue;
    low = std::min(low, r.wrench[k][2]);
    high = std::max(high, r.wrench[k][2]);
    KinematicState s;
    forward_kinematics(kinematics, r.measured_joints[k], s);
    const Vector3 tip =
        start.R.transpose() * (motion_frame_pose(s, task.tool_T_motion).p - start.p);
    tip_low = tip_low.cwiseMin(tip);
    tip_high = tip_high.cwiseMax(tip);
    double psi = 0.0;
    if (ArmAngleModel().angle(s, psi) == ArmAngleStatus::kOk) {
      psi_min = std::min(psi_min, psi);
      psi_max = std::max(psi_max, psi);
    }
  }
  std::printf(
      "polishing: normal force %.2f .. %.2f N over the raster; tip swept %.3f x %.3f m; least "
      "clearance to the sphere %.3f m (influence %.2f); arm angle swung %.2f rad\n",
      low, high, tip_high.x() - tip_low.x(), tip_high.y() - tip_low.y(), least_clearance,
      spheres[0].influence, psi_max - psi_min);
  EXPECT_GT(low, 9.0);
  EXPECT_LT(high, 11.0);
  // The hand's raster reached the surface's 0.2 m x 0.2 m, less what friction held back.
  EXPECT_GT(tip_high.x() - tip_low.x(), 0.18);
  EXPECT_GT(tip_high.y() - tip_low.y(), 0.18);
  // The sphere: the arm never touched it, and avoiding it swung the elbow.
  EXPECT_GT(least_clearance, 0.0);
  EXPECT_GT(psi_max - psi_min, 0.2);
}

}  // namespace
}  // namespace tether::remote

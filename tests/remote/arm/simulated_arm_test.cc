// The simulated arm through its ArmInterface: joint servo behaviour, the wrist wrench and
// its signs, contact with the wall and obstacles, the proximity sensor, the wrist camera
// (rendered, and its geometric oracle), time and errors.

#include "tether/remote/sim/simulated_arm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "offscreen_renderer.h"
#include "sim_test_support.h"
#include "tether/remote/vision/tag_detector.h"

namespace tether::remote {
namespace {

using testing::kDeg;
using testing::kPi;

// Holds the arm at its initial position for `milliseconds` of arm time from 0, one 1 kHz step
// each wall-clock millisecond, as a real-time site paces it; `after(t)` follows each step.
void hold_in_real_time(SimulatedArm& sim, int milliseconds,
                       const std::function<void(double)>& after = {}) {
  JointCommand hold;
  hold.position = sim.initial_position();
  const auto start = std::chrono::steady_clock::now();
  for (int k = 1; k <= milliseconds; ++k) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(k));
    sim.write(hold);
    sim.advance_to(1e-3 * k);
    if (after) after(1e-3 * k);
  }
}

// The gripper's rotation on its wrist hinges (x, then y, then z about the moved axes).
Matrix3 wrist_rotation(const Vector6& deflection) {
  return (Eigen::AngleAxisd(deflection[3], Vector3::UnitX()) *
          Eigen::AngleAxisd(deflection[4], Vector3::UnitY()) *
          Eigen::AngleAxisd(deflection[5], Vector3::UnitZ()))
      .toRotationMatrix();
}

// Cameras render inside the physics step here, so a test's outcome does not depend on how
// fast the machine is (the render thread is tested on its own, paced in real time).
SimulationOptions scene_options(SceneKind kind) {
  SimulationOptions options;
  options.scene = kind;
  options.render_timing = RenderTiming::kSynchronous;
  return options;
}

SimulationOptions camera_scene(CameraSource source) {
  SimulationOptions options = scene_options(SceneKind::kVisualTarget);
  options.camera.source = source;
  return options;
}

TEST(SimulatedArmServo, StepResponseSettlesWithoutOvershoot) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    for (int joint = 0; joint < 7; ++joint) {
      SCOPED_TRACE("joint " + std::to_string(joint));
      SimulatedArm sim(arm.model);
      const JointVector q0 = sim.initial_position();
      // A step whose initial torque demand is 40 % of the joint's effort limit (the linear
      // range; larger steps saturate the drive, which then overshoots).
      const double step = 0.4 * arm.model.joints[static_cast<std::size_t>(joint)].limits.effort /
                          sim.servo_stiffness()[joint];
      JointVector target = q0;
      target[joint] += step;
      double peak = q0[joint];
      double at_100ms = 0.0;
      const ArmState end = testing::run(
          sim, 0.3, [&](double, const ArmState&) { return testing::hold(target); },
          [&](const ArmState& s) {
            peak = std::max(peak, s.position[joint]);
            if (std::abs(s.time - 0.1) < 1e-9) at_100ms = s.position[joint];
          });
      EXPECT_LT(peak - target[joint], 0.1 * step);
      EXPECT_NEAR(at_100ms, target[joint], 0.05 * step);
      EXPECT_NEAR(end.position[joint], target[joint], 0.02 * step);
      // The other joints barely move.
      JointVector others = end.position - target;
      others[joint] = 0.0;
      EXPECT_LT(others.cwiseAbs().maxCoeff(), 0.1 * step);
    }
  }
}

TEST(SimulatedArmServo, TracksASinusoidWithVelocityFeedForward) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulatedArm sim(arm.model);
    const JointVector q0 = sim.initial_position();
    const double amplitude = 0.1;
    const double omega = 2.0 * kPi * 0.5;
    auto command = [&](double t, const ArmState&) {
      JointCommand c;
      c.position = q0 + JointVector::Constant(amplitude * std::sin(omega * t));
      c.velocity = JointVector::Constant(amplitude * omega * std::cos(omega * t));
      return c;
    };
    double max_error = 0.0;
    testing::run(sim, 3.0, command, [&](const ArmState& s) {
      if (s.time < 0.5) return;
      const JointVector reference =
          q0 + JointVector::Constant(amplitude * std::sin(omega * s.time));
      max_error = std::max(max_error, (s.position - reference).cwiseAbs().maxCoeff());
    });
    // 0.31 rad/s peak velocity: the servo lags by a fraction of a milliradian.
    EXPECT_LT(max_error, 1e-3);
  }
}

TEST(SimulatedArmServo, StaysStableForTenSecondsOfRandomCommands) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulatedArm sim(arm.model);
    const KinematicModel model(arm.model);
    const JointVector q0 = sim.initial_position();
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    // Every 0.5 s a new random goal within ±0.4 rad of the start (inside the limits); the
    // commands move towards it within the arm's velocity limits and half its acceleration
    // limits, as the executor's would. (All joints at full acceleration at once can ask more
    // than a Panda's 87 N·m shoulder has left beside gravity; the drive then saturates.)
    JointVector goal = q0;
    JointVector command_q = q0;
    JointVector command_v = JointVector::Zero();
    const JointVector lower = model.lower_limits().array() + 0.1;
    const JointVector upper = model.upper_limits().array() - 0.1;
    const JointVector& v_max = model.velocity_limits();
    const JointVector a_max = 0.5 * model.acceleration_limits();
    constexpr double kDt = 0.001;
    double max_error = 0.0;
    bool finite = true;
    auto command = [&](double t, const ArmState&) {
      if (std::fmod(t, 0.5) < 1e-6) {
        for (int i = 0; i < 7; ++i) goal[i] = q0[i] + 0.4 * unit(rng);
        goal = goal.cwiseMax(lower).cwiseMin(upper);
      }
      for (int i = 0; i < 7; ++i) {
        const double e = goal[i] - command_q[i];
        // Fastest approach that can still brake in time.
        const double v_target =
            std::copysign(std::min(v_max[i], std::sqrt(2.0 * a_max[i] * std::abs(e))), e);
        command_v[i] += std::clamp(v_target - command_v[i], -a_max[i] * kDt, a_max[i] * kDt);
        command_q[i] += command_v[i] * kDt;
      }
      JointCommand c;
      c.position = command_q;
      c.velocity = command_v;
      return c;
    };
    const ArmState end = testing::run(sim, 10.0, command, [&](const ArmState& s) {
      finite = finite && s.position.allFinite() && s.velocity.allFinite() && s.wrench.allFinite();
      max_error = std::max(max_error, (s.position - command_q).cwiseAbs().maxCoeff());
    });
    EXPECT_TRUE(finite);
    EXPECT_NEAR(end.time, 10.0, 1e-9);
    EXPECT_LT(max_error, 0.005);
    EXPECT_LT((end.velocity - command_v).cwiseAbs().maxCoeff(), 0.1);
  }
}

TEST(SimulatedArmWrench, AtRestReadsTheGrippersWeightUpwardsInToolAxes) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulatedArm sim(arm.model);
    const ArmState s = testing::run(
        sim, 0.2, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); });
    ASSERT_TRUE(s.wrench_valid);
    // The sensor rides on the gripper, turned by its deflection on the wrist compliance.
    const Matrix3 R = sim.initial_tool_pose().R * wrist_rotation(sim.wrist_deflection());
    const Vector3 f = R.transpose() * Vector3(0.0, 0.0, sim.gripper().mass * 9.81);
    const Vector3 tau = sim.gripper().center_of_mass.cross(f);
    EXPECT_LT((s.wrench.head<3>() - f).norm(), 1e-3) << s.wrench.transpose();
    EXPECT_LT((s.wrench.tail<3>() - tau).norm(), 1e-3) << s.wrench.transpose();
    // The initial posture points TOOL x down: the weight reads along TOOL −x.
    EXPECT_NEAR(s.wrench[0], -0.8 * 9.81, 1e-3);
  }
}

TEST(SimulatedArmWrist, TheGripperDeflectsByTheChangeOfItsLoadOverTheWristStiffness) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulatedArm sim(arm.model);
    const WristComplianceParameters& wrist = sim.options().wrist;
    ASSERT_TRUE(wrist.enabled);  // the default: the seed's arm had a compliant wrist and grasp
    // At the initial posture the springs carry the gripper's weight undeflected.
    const JointVector q0 = sim.initial_position();
    testing::run(sim, 0.3, [&](double, const ArmState&) { return testing::hold(q0); });
    EXPECT_LT(sim.wrist_deflection().norm(), 1e-6) << sim.wrist_deflection().transpose();
    // Turn the last joint by 90°: gravity moves from TOOL x to another TOOL axis, and the
    // gripper gives by the change of its weight (and of its moment) over the stiffness.
    JointVector q1 = q0;
    q1[6] += 90.0 * kDeg;
    const double t0 = sim.time();
    testing::run(sim, 1.5, [&](double t, const ArmState&) {
      return testing::hold(q0 + std::min(1.0, (t - t0) / 0.5) * (q1 - q0));
    });
    const KinematicModel model(arm.model);
    const auto load = [&](const JointVector& q) {
      KinematicState state;
      forward_kinematics(model, q, state);
      Vector6 w;
      w.head<3>() = state.tool.R.transpose() * Vector3(0.0, 0.0, -sim.gripper().mass * 9.81);
      w.tail<3>() = sim.gripper().center_of_mass.cross(Vector3(w.head<3>()));
      return w;
    };
    const Vector6 change = load(q1) - load(q0);
    const Vector6 d = sim.wrist_deflection();
    EXPECT_LT((d.head<3>() - change.head<3>() / wrist.translational_stiffness).norm(), 2e-5)
        << d.transpose();
    EXPECT_LT((d.tail<3>() - change.tail<3>() / wrist.rotational_stiffness).norm(), 2e-5)
        << d.transpose();
    EXPECT_GT(d.head<3>().norm(), 1e-3);  // 0.8 kg turned by 90° on 5 kN/m: 2.2 mm
  }
}

TEST(SimulatedArmWrist, ARigidWristHasNoComplianceJointsAndNoDeflection) {
  SimulationOptions options;
  options.wrist = wrist_compliance_from_spec("rigid");
  SimulatedArm sim(load_default_arm(), options);
  EXPECT_EQ(sim.mjcf().find("wrist_x"), std::string::npos);
  testing::run(sim, 0.2,
               [&](double, const ArmState&) { return testing::hold(sim.initial_position()); });
  EXPECT_EQ(sim.wrist_deflection(), Vector6::Zero());
}

// Tool poses pushed `depth` along TOOL +z from the initial one, as joint commands.
JointVector pushed(const SimulatedArm& sim, double depth) {
  const KinematicModel model(sim.model());
  Frame target = sim.initial_tool_pose();
  target.p += depth * target.R.col(2);
  JointVector q = sim.initial_position();
  EXPECT_TRUE(solve_tool_pose(model, target, testing::arm_angle(model, q), q));
  return q;
}

TEST(SimulatedArmWrench, PressingIntoTheWallReadsForceIntoTheWall) {
  SimulatedArm sim(load_default_arm(), scene_options(SceneKind::kWall));
  const Frame wall = sim.initial_tool_pose() * sim.wall_in_tool();
  EXPECT_NEAR((wall.p - sim.initial_tool_pose().p).norm(), 0.12 + 0.03, 1e-12);
  const JointVector q0 = sim.initial_position();
  double force_before = 0.0;
  for (const double beyond : {0.002, 0.005}) {
    const JointVector q1 = pushed(sim, 0.03 + beyond);
    // Approach over 1 s, then hold.
    const double t0 = sim.time();
    const ArmState s = testing::run(sim, 1.5, [&](double t, const ArmState&) {
      const double a = std::min(1.0, (t - t0) / 1.0);
      return testing::hold(q0 + a * (q1 - q0));
    });
    SCOPED_TRACE("commanded " + std::to_string(beyond * 1000) + " mm into the wall");
    EXPECT_GE(s.aux[2], 1.0) << "no contact";
    // Force along TOOL +z, i.e. into the wall, and more of it the deeper the command.
    EXPECT_GT(s.wrench[2], 5.0);
    EXPECT_GT(s.wrench[2], force_before);
    force_before = s.wrench[2];
    // The wall stops the tip: the TOOL advanced by the clearance, not by the command, less
    // what the gripper gives on its wrist compliance (F / K_T along TOOL z).
    KinematicState state;
    forward_kinematics(KinematicModel(sim.model()), s.position, state);
    const double advance = (state.tool.p - sim.initial_tool_pose().p).dot(state.tool.R.col(2));
    const double give = sim.wrist_deflection()[2];
    EXPECT_NEAR(give, -s.wrench[2] / sim.options().wrist.translational_stiffness, 2e-4);
    EXPECT_NEAR(advance + give, 0.03, 0.002);
  }
}

TEST(SimulatedArmObstacles, ASphereStopsTheElbowThatIsDrivenIntoIt) {
  SimulatedArm sim(load_default_arm(), scene_options(SceneKind::kObstacles));
  const KinematicModel model(sim.model());
  const Sphere sphere = sim.obstacles().at(0);
  KinematicState state;
  forward_kinematics(model, sim.initial_position(), state);
  // Turning joint 1 swings the elbow sideways; turn it towards the first sphere.
  const Vector3 sideways = Vector3::UnitZ().cross(state.elbow);
  const double direction = sideways.dot(sphere.center - state.elbow) > 0.0 ? 1.0 : -1.0;
  JointVector q1 = sim.initial_position();
  q1[0] += direction * 0.4;
  const JointVector q0 = sim.initial_position();
  double max_contacts = 0.0;
  const ArmState s = testing::run(
      sim, 2.0,
      [&](double t, const ArmState&) { return testing::hold(q0 + std::min(1.0, t) * (q1 - q0)); },
      [&](const ArmState& st) { max_contacts = std::max(max_contacts, st.aux[2]); });
  EXPECT_GE(max_contacts, 1.0);
  // Joint 1 is held back well short of its command, the elbow at the sphere's surface.
  EXPECT_GT(std::abs(q1[0] - s.position[0]), 0.1);
  forward_kinematics(model, s.position, state);
  const double gap = (state.elbow - sphere.center).norm() - sphere.radius - 0.06;
  EXPECT_NEAR(gap, 0.0, 0.01);
}

TEST(SimulatedArmProximity, ReadsThePlatesDistanceAndTiltBack) {
  for (const auto& arm : testing::shipped_arms()) {
    SCOPED_TRACE(arm.name);
    SimulationOptions options = scene_options(SceneKind::kProximityTarget);
    options.proximity_target.distance = 0.15;
    options.proximity_target.tilt_x = 3.0 * kDeg;
    options.proximity_target.tilt_y = -4.0 * kDeg;
    SimulatedArm sim(arm.model, options);
    const ArmState s = testing::run(
        sim, 0.1, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); });
    ASSERT_TRUE(s.proximity.valid);
    EXPECT_NEAR(s.proximity.distance, 0.15, 1e-3);
    const Vector3 expected = sim.proximity_target_in_sensor().R.col(2);
    const double angle = std::acos(std::clamp(s.proximity.surface_normal.dot(expected), -1.0, 1.0));
    EXPECT_LT(angle, 0.2 * kDeg);
    // Pointing at the sensor, tilted by the 5° the plate was given.
    EXPECT_GT(s.proximity.surface_normal.z(), 0.0);
    EXPECT_NEAR(std::acos(s.proximity.surface_normal.z()), 5.0 * kDeg, 0.2 * kDeg);
  }
}

TEST(SimulatedArmProximity, SeesTheWallAndNothingInFreeSpace) {
  SimulatedArm wall(load_default_arm(), scene_options(SceneKind::kWall));
  ArmState s;
  wall.read(s);
  ASSERT_TRUE(s.proximity.valid);
  // Sensor 0.08 m along TOOL z, wall surface at 0.12 + 0.03 m.
  EXPECT_NEAR(s.proximity.distance, 0.07, 1e-9);
  EXPECT_LT((s.proximity.surface_normal - Vector3::UnitZ()).norm(), 1e-9);

  SimulatedArm free(load_default_arm(), scene_options(SceneKind::kFreeSpace));
  free.read(s);
  EXPECT_FALSE(s.proximity.valid);
}

TEST(SimulatedArmProximity, BeamsIgnoreTheArmAndGripper) {
  SimulationOptions options = scene_options(SceneKind::kFreeSpace);
  // L beside the gripper, its beam (−z_L = TOOL −y) straight through the gripper body.
  options.proximity_sensor.tool_T_sensor.R << 1, 0, 0, 0, 0, 1, 0, -1, 0;
  options.proximity_sensor.tool_T_sensor.p = Vector3(0.0, 0.1, 0.06);
  SimulatedArm sim(load_default_arm(), options);
  ArmState s;
  sim.read(s);
  EXPECT_FALSE(s.proximity.valid);
}

TEST(SimulatedArmTime, AdvancesInWholeStepsToTheRequestedTime) {
  SimulatedArm sim(load_default_arm());
  EXPECT_EQ(sim.time(), 0.0);
  sim.advance_to(0.001);
  EXPECT_NEAR(sim.time(), 0.001, 1e-12);
  sim.advance_to(0.0005);  // the past: nothing happens
  EXPECT_NEAR(sim.time(), 0.001, 1e-12);
  sim.advance_to(0.0105);
  EXPECT_NEAR(sim.time(), 0.0105, 1e-12);
  ArmState s;
  EXPECT_EQ(sim.read(s), ArmStatus::kOk);
  EXPECT_NEAR(s.time, 0.0105, 1e-12);
}

TEST(SimulatedArmCommand, RefusesNonFiniteCommandsAndKeepsThePreviousOne) {
  SimulatedArm sim(load_default_arm());
  JointCommand bad = testing::hold(sim.initial_position());
  bad.position[3] = std::nan("");
  EXPECT_EQ(sim.write(bad), ArmStatus::kFault);
  sim.advance_to(0.1);
  ArmState s;
  EXPECT_EQ(sim.read(s), ArmStatus::kOk);
  EXPECT_LT((s.position - sim.initial_position()).norm(), 1e-6);
}

TEST(SimulatedArmOptions, RejectsBadOptionsWithContext) {
  const ArmModel arm = load_default_arm();
  auto message = [&](const SimulationOptions& options) -> std::string {
    try {
      SimulatedArm sim(arm, options);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  SimulationOptions options;
  options.timestep = 0.0;
  EXPECT_NE(message(options).find("timestep"), std::string::npos);

  options = SimulationOptions{};
  JointVector q = JointVector::Zero();
  q[3] = 3.0;
  options.initial_position = q;
  EXPECT_NE(message(options).find("iiwa_joint_4"), std::string::npos) << message(options);

  options = scene_options(SceneKind::kDoor);
  options.initial_position = JointVector::Zero();  // TOOL x horizontal: hinge not vertical
  EXPECT_NE(message(options).find("TOOL x axis pointing down"), std::string::npos);

  options = scene_options(SceneKind::kObstacles);
  KinematicState state;
  forward_kinematics(KinematicModel(arm), default_initial_position(SceneKind::kObstacles, arm),
                     state);
  options.obstacles.spheres = {{state.elbow, 0.05}};
  EXPECT_NE(message(options).find("starts in contact"), std::string::npos) << message(options);

  options = SimulationOptions{};
  options.wrist.rotational_stiffness = 0.0;
  EXPECT_EQ(message(options),
            "SimulatedArm: wrist compliance rotational_stiffness [N·m/rad] = 0.000000: must be "
            "finite and > 0");
  options.wrist.enabled = false;  // a rigid wrist ignores its springs
  EXPECT_EQ(message(options), "accepted");

  SimulatedArm wall(arm, scene_options(SceneKind::kWall));
  EXPECT_THROW(wall.hinge_in_tool(), std::logic_error);
}

TEST(SimulatedArmCamera, TheGeometricOracleDeliversThirtyImagesASecondFiftyMillisecondsLate) {
  SimulationOptions options = camera_scene(CameraSource::kGeometric);
  options.visual_target.start = 100.0;  // at rest
  SimulatedArm sim(load_default_arm(), options);
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  double worst_age = 0.0;
  double least_age = 1.0;
  double worst_lateral = 0.0;
  double worst_depth = 0.0;
  const Vector3 truth = sim.visual_target_in_camera();  // nothing moves
  EXPECT_LT((truth - Vector3(0.0, 0.0, 0.3)).norm(), 1e-4) << truth.transpose();
  testing::run(
      sim, 2.0, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); },
      [&](const ArmState& s) {
        if (s.visual.frame == 0) return;
        if (first == 0) first = s.visual.frame;
        if (s.visual.frame != last) {
          last = s.visual.frame;
          ASSERT_TRUE(s.visual.valid);
          least_age = std::min(least_age, s.time - s.visual.capture_time);
          worst_lateral =
              std::max(worst_lateral, (s.visual.target_in_camera - truth).head<2>().norm());
          worst_depth = std::max(worst_depth, std::abs(s.visual.target_in_camera.z() - truth.z()));
        }
        worst_age = std::max(worst_age, s.time - s.visual.capture_time);
      });
  // 2 s at 30 Hz, less the first 50 ms of latency.
  EXPECT_NEAR(static_cast<double>(last - first + 1), 59.0, 1.0);
  EXPECT_GE(least_age, 0.05 - 1e-9);                // never before its latency
  EXPECT_LE(worst_age, 0.05 + 1.0 / 30.0 + 0.002);  // and replaced by the next in time
  // 1 px of noise on each corner of a 10 cm target at 0.3 m (f = 554 px): the centroid is
  // good to about 0.3 mm, the depth from the side length to a few mm.
  EXPECT_LT(worst_lateral, 0.0015);
  EXPECT_LT(worst_depth, 0.012);
  EXPECT_GT(worst_depth, 0.0);  // the noise is there
}

TEST(SimulatedArmCamera, ATargetOutOfTheImageIsReportedAsNotSeen) {
  SimulationOptions options = scene_options(SceneKind::kVisualTarget);
  options.visual_target.leave_at = 0.5;
  SimulatedArm sim(load_default_arm(), options);
  const ArmState s = testing::run(
      sim, 1.0, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); });
  EXPECT_GT(s.visual.frame, 20u);
  EXPECT_FALSE(s.visual.valid);
  EXPECT_GT(sim.visual_target_in_camera().x(), 0.9);  // 1 m along the image's x

  SimulatedArm free(load_default_arm());
  ArmState none;
  free.read(none);
  EXPECT_EQ(none.visual.frame, 0u);
  EXPECT_THROW(free.visual_target_in_camera(), std::logic_error);
}

// The wrist camera as a real one: MuJoCo renders its image, libapriltag finds the tag in it.
// At rest, every image shows the tag and its centre comes out within a millimetre sideways
// and two in depth of where the target truly is (the geometric oracle, with its 1 px noise,
// is good to 1.5 and 12 mm: see the test above).
TEST(SimulatedArmRenderedCamera, FindsTheTagInEveryImageWithinAMillimetreAtRest) {
  SimulationOptions options = camera_scene(CameraSource::kRendered);
  options.visual_target.start = 100.0;  // at rest
  SimulatedArm sim(load_default_arm(), options);
  const Vector3 truth = sim.visual_target_in_camera();
  std::uint64_t last = 0;
  int images = 0;
  double worst_lateral = 0.0;
  double worst_depth = 0.0;
  double least_age = 1.0;
  testing::run(
      sim, 1.0, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); },
      [&](const ArmState& s) {
        if (s.visual.frame == 0 || s.visual.frame == last) return;
        last = s.visual.frame;
        ++images;
        ASSERT_TRUE(s.visual.valid) << "frame " << s.visual.frame;
        least_age = std::min(least_age, s.time - s.visual.capture_time);
        worst_lateral =
            std::max(worst_lateral, (s.visual.target_in_camera - truth).head<2>().norm());
        worst_depth = std::max(worst_depth, std::abs(s.visual.target_in_camera.z() - truth.z()));
      });
  const CameraStatistics stats = sim.camera_statistics();
  std::printf(
      "rendered camera at rest: lateral %.3f mm, depth %.3f mm; render %.1f ms, "
      "detection %.1f ms (worst %.1f) per image\n",
      1e3 * worst_lateral, 1e3 * worst_depth, 1e3 * stats.mean_render_time,
      1e3 * stats.mean_detection_time, 1e3 * stats.worst_detection_time);
  EXPECT_NEAR(images, 29, 1);  // 1 s at 30 Hz, less the first 50 ms of latency
  EXPECT_GE(least_age, 0.05 - 1e-9);
  EXPECT_LT(worst_lateral, 0.001);
  EXPECT_LT(worst_depth, 0.002);
  EXPECT_EQ(stats.detected, stats.images);
  EXPECT_GE(stats.images, 30u);
  EXPECT_GT(stats.mean_detection_time, 0.0);
}

TEST(SimulatedArmRenderedCamera, ATagThatLeavesTheImageIsNotFound) {
  SimulationOptions options = camera_scene(CameraSource::kRendered);
  options.visual_target.leave_at = 0.5;
  SimulatedArm sim(load_default_arm(), options);
  bool seen_before = false;
  const ArmState s = testing::run(
      sim, 1.0, [&](double, const ArmState&) { return testing::hold(sim.initial_position()); },
      [&](const ArmState& state) {
        if (state.visual.valid && state.visual.capture_time < 0.5) seen_before = true;
      });
  EXPECT_TRUE(seen_before);
  EXPECT_GT(s.visual.frame, 20u);
  EXPECT_FALSE(s.visual.valid);
  EXPECT_GT(sim.camera_statistics().images, sim.camera_statistics().detected);
}

// Another tag than the one the scene's camera looks for is not the target.
TEST(SimulatedArmRenderedCamera, OnlyTheScenesTagIsTheTarget) {
  SimulationOptions options = camera_scene(CameraSource::kRendered);
  options.visual_target.tag_id = 7;
  SimulatedArm seven(load_default_arm(), options);
  const ArmState s = testing::run(
      seven, 0.3, [&](double, const ArmState&) { return testing::hold(seven.initial_position()); });
  EXPECT_TRUE(s.visual.valid);  // the scene prints tag 7 and looks for it

  options.visual_target.tag_id = 587;
  try {
    SimulatedArm bad(load_default_arm(), options);
    ADD_FAILURE() << "tag 587 accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("visual_target.tag_id = 587"), std::string::npos) << message;
    EXPECT_NE(message.find("[0, 586]"), std::string::npos) << message;
  }
}

// A real-time site renders on a thread of its own: paced in real time, the readings arrive
// as the synchronous path's do, at 30 Hz, each at least its latency after capture.
TEST(SimulatedArmRenderedCamera, ARenderThreadFeedsARealTimeRunWithoutHoldingThePhysics) {
  SimulationOptions options = camera_scene(CameraSource::kRendered);
  options.render_timing = RenderTiming::kThread;
  options.visual_target.start = 100.0;
  SimulatedArm sim(load_default_arm(), options);
  const Vector3 truth = sim.visual_target_in_camera();
  ArmState s;
  std::uint64_t last = 0;
  int readings = 0;
  double worst_lateral = 0.0;
  hold_in_real_time(sim, 1000, [&](double) {
    sim.read(s);
    if (s.visual.frame != 0 && s.visual.frame != last) {
      last = s.visual.frame;
      ++readings;
      EXPECT_TRUE(s.visual.valid);
      EXPECT_GE(s.time - s.visual.capture_time, 0.05 - 1e-9);
      worst_lateral = std::max(worst_lateral, (s.visual.target_in_camera - truth).head<2>().norm());
    }
  });
  const CameraStatistics stats = sim.camera_statistics();
  std::printf("render thread: %d readings in 1 s, %llu images, %llu skipped\n", readings,
              static_cast<unsigned long long>(stats.images),
              static_cast<unsigned long long>(stats.skipped));
  // How many images the thread keeps up with depends on the machine (a loaded one skips
  // captures, never holding the physics); every capture is rendered or counted as skipped,
  // but for the one or two still in hand when the run ends.
  EXPECT_GE(readings, 3);
  EXPECT_GE(stats.images + stats.skipped, 28u);
  EXPECT_LE(stats.images + stats.skipped, 31u);
  EXPECT_LT(worst_lateral, 0.001);
}

// The cameras an operator may watch: the wrist camera in every scene, an overview, and in the
// door scene a stereo pair 10 cm apart on the camera mount.
TEST(SimulatedArmCameras, EveryScenesCamerasAreDescribedWithTheStereoPairAroundItsEyeFrame) {
  SimulatedArm free(load_default_arm(), scene_options(SceneKind::kFreeSpace));
  std::vector<std::string> names;
  for (const SceneCamera& c : free.cameras()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"wrist", "overview"}));
  SimulatedArm door(load_default_arm(), scene_options(SceneKind::kDoor));
  const std::vector<SceneCamera>& cameras = door.cameras();
  ASSERT_EQ(cameras.size(), 4u);
  EXPECT_EQ(cameras[2].name, "stereo_left");
  EXPECT_EQ(cameras[3].stereo_partner, "stereo_left");
  EXPECT_NEAR((cameras[3].pose.p - cameras[2].pose.p).norm(), kStereoBaseline, 1e-12);
  // Parallel axes; the right camera to the right in the image (+x of C).
  EXPECT_LT((cameras[2].pose.R - cameras[3].pose.R).norm(), 1e-12);
  EXPECT_GT((cameras[2].pose.R.transpose() * (cameras[3].pose.p - cameras[2].pose.p)).x(), 0.0);
  // The wrist camera is where the gripper carries it.
  EXPECT_LT((cameras[0].pose.p - (door.initial_tool_pose() * door.options().camera.tool_T_camera).p)
                .norm(),
            1e-12);
  EXPECT_EQ(door.scene_description().cameras, cameras);
}

// Paced in real time, a watched camera's images arrive at its rate from its own thread, show
// the scene (not a blank), and stop when the watch ends; an unknown camera is refused by name.
TEST(SimulatedArmCameras, AWatchedCameraDeliversImagesUntilTheWatchEnds) {
  SimulatedArm sim(load_default_arm(), scene_options(SceneKind::kDoor));
  std::mutex mutex;
  std::vector<double> times;
  double spread = 0.0;
  int width = 0;
  auto watch = sim.watch("overview", [&](const camera::CameraImage& image) {
    double sum = 0.0;
    double squares = 0.0;
    double n = 0.0;
    for (std::size_t i = 0; i < image.rgb.size(); i += 97) {
      sum += image.rgb[i];
      squares += static_cast<double>(image.rgb[i]) * image.rgb[i];
      n += 1.0;
    }
    std::lock_guard lock(mutex);
    times.push_back(image.arm_time);
    spread = std::max(spread, std::sqrt(std::max(0.0, squares / n - (sum / n) * (sum / n))));
    width = image.width;
  });
  hold_in_real_time(sim, 1000);
  watch.reset();
  std::size_t seen = 0;
  {
    std::lock_guard lock(mutex);
    seen = times.size();
    std::printf("overview camera: %zu images in 1 s, pixel spread %.1f\n", seen, spread);
    ASSERT_GE(seen, 3u);  // 15 Hz when the machine keeps up; a loaded one skips, never waits
    EXPECT_EQ(width, 640);
    EXPECT_GT(spread, 10.0);  // the arm and the door on the background, not a blank
    for (std::size_t i = 1; i < times.size(); ++i) {
      EXPECT_GE(times[i] - times[i - 1], 1.0 / 15.0 - 1e-3);  // never faster than its rate
    }
  }
  JointCommand hold;
  hold.position = sim.initial_position();
  for (int k = 1001; k <= 1300; ++k) {
    sim.write(hold);
    sim.advance_to(1e-3 * k);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(times.size(), seen);  // none after the watch ended
  }
  try {
    sim.watch("ceiling", [](const camera::CameraImage&) {});
    ADD_FAILURE() << "an unknown camera was watched";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "camera 'ceiling': no such camera here (there are: wrist, overview, stereo_left, "
              "stereo_right)");
  }
}

// A watcher slower than the camera (its sink takes 200 ms an image, as an encoder on a loaded
// machine might, against 15 Hz) gets the newest state each time it is free, not a backlog:
// every image it gets was captured at most one sink's time and one frame period before.
TEST(SimulatedArmCameras, ASlowWatcherGetsTheNewestImageNotABacklog) {
  SimulatedArm sim(load_default_arm(), scene_options(SceneKind::kDoor));
  std::atomic<double> now{0.0};  // arm time, set by the stepping thread
  std::mutex mutex;
  std::vector<double> ages;  // arm time at delivery minus the image's arm time, s
  auto watch = sim.watch("overview", [&](const camera::CameraImage& image) {
    {
      std::lock_guard lock(mutex);
      ages.push_back(now.load() - image.arm_time);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  hold_in_real_time(sim, 2500, [&](double t) { now.store(t); });
  watch.reset();
  std::lock_guard lock(mutex);
  double oldest = 0.0;
  for (const double age : ages) oldest = std::max(oldest, age);
  std::printf("slow watcher: %zu images in 2.5 s, the oldest %.0f ms old when handed over\n",
              ages.size(), 1e3 * oldest);
  ASSERT_GE(ages.size(), 4u);
  // A render is 7-20 ms here; FIFO order would have handed images over 1.6 s old (8 queued).
  EXPECT_LT(oldest, 0.2 + 1.0 / 15.0 + 0.15);
}

// The scene says the visual target carries its tag on its +z face (SceneTag), and the console
// draws the tag's cells there: row 0 at the body's +y edge, column 0 at its -x edge, as read
// from +z (web_protocol.cc). The rendered tag is found under its own id (a mirrored print
// decodes as no tag36h11 id) and the tag frame (x along the columns, y down the rows, z into
// the face) is the body's turned half a turn about its x axis.
TEST(SimulatedArmCameras, TheTargetsTagIsPrintedUprightOnTheFaceTheSceneDescribes) {
  SimulationOptions options = camera_scene(CameraSource::kRendered);
  options.visual_target.start = 100.0;  // at rest
  options.visual_target.tag_id = 42;
  SimulatedArm sim(load_default_arm(), options);
  const SceneDescription& scene = sim.scene_description();
  const auto marker = std::find_if(scene.bodies.begin(), scene.bodies.end(),
                                   [](const SceneBody& b) { return b.tag.has_value(); });
  ASSERT_NE(marker, scene.bodies.end());
  ASSERT_EQ(marker->tag->id, 42);
  std::mutex mutex;
  std::optional<vision::TagDetection> found;
  Frame base_T_camera;
  vision::TagDetector detector;
  auto watch = sim.watch("wrist", [&](const camera::CameraImage& image) {
    std::vector<std::uint8_t> grey(static_cast<std::size_t>(image.width) * image.height);
    detail::rgb_to_gray(image.rgb.data(), image.width, image.height, grey.data());
    const auto camera = vision::CameraIntrinsics::from_field_of_view(image.width, image.height,
                                                                     image.camera->field_of_view);
    const auto tag = detector.find({grey.data(), image.width, image.height, image.width}, camera,
                                   marker->tag->size, marker->tag->id);
    std::lock_guard lock(mutex);
    if (tag && image.pose_known && !found) {
      found = tag;
      base_T_camera = image.base_T_camera;
    }
  });
  hold_in_real_time(sim, 500);
  watch.reset();
  ASSERT_TRUE(found.has_value()) << "tag 42 was not found in the wrist camera's images";
  const Matrix3 body_R_tag = marker->pose.R.transpose() * base_T_camera.R * found->camera_T_tag.R;
  const Matrix3 half_turn_about_x = Vector3(1.0, -1.0, -1.0).asDiagonal();
  const double off = Eigen::AngleAxisd(half_turn_about_x.transpose() * body_R_tag).angle();
  std::printf("tag 42 on the visual target: %.2f deg from upright on its +z face\n",
              off * 180.0 / 3.14159265358979323846);
  EXPECT_LT(off, 3.0 * 3.14159265358979323846 / 180.0);
}

}  // namespace
}  // namespace tether::remote

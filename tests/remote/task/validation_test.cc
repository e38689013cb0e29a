#include "tether/remote/task/validation.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tether/common/spatial.h"
#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"

namespace tether {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const KinematicModel& iiwa() {
  static const KinematicModel model(load_default_arm());
  return model;
}

// The seed's force-controlled door opening (FIGS. 7-8): MOTION x on the hinge, K = 0,
// 18 N·m about MOTION x, 20 ms period; with force and torque bounds.
TaskParameters door_force_task() {
  TaskParameters t;
  t.name = "door_force";
  t.period = 0.02;
  t.tool_T_motion = Frame{so3_exp(Vector3(0.0, -M_PI / 2, 0.0)), Vector3(0.0, 0.0, 0.12)};
  t.impedance.mass << 10, 10, 10, 2, 2, 2, 2;
  t.impedance.damping << 350, 350, 350, 80, 80, 80, 80;
  t.impedance.stiffness.setZero();
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 0, 0, 0, 18, 0, 0;
  t.bounds.max_force = 80.0;
  t.bounds.max_torque = 30.0;
  return t;
}

std::string all_messages(const std::vector<ValidationIssue>& issues) {
  std::string out;
  for (const auto& issue : issues) out += "\n  [" + issue.field + "] " + issue.message;
  return out;
}

TEST(TaskValidation, TheSeedsDoorForceTaskIsValid) {
  const auto issues = validate_task(door_force_task(), iiwa());
  EXPECT_TRUE(issues.empty()) << all_messages(issues);
  EXPECT_NO_THROW(require_valid_task(door_force_task(), iiwa()));
}

TEST(TaskValidation, TheSeedsSpringTrajectoryDoorTaskIsValid) {
  TaskParameters t = door_force_task();
  t.name = "door_spring";
  t.force_control.reference_wrench.setZero();
  t.impedance.stiffness << 100, 100, 100, 10, 10, 10, 10;
  t.spring_trajectory.enabled = true;
  t.spring_trajectory.destination.R = so3_exp(Vector3(35.0 * kDegToRad, 0.0, 0.0));
  t.spring_trajectory.max_rotation = 0.2;
  const auto issues = validate_task(t, iiwa());
  EXPECT_TRUE(issues.empty()) << all_messages(issues);
}

TEST(TaskValidation, DisabledBehavioursDefaultsDoNotConstrainTheLongestPeriod) {
  TaskParameters t = door_force_task();
  t.period =
      find_field_rule("period_s")->max;  // the default dither period (0.1 s) is then ≤ 2·period
  t.impedance.damping << 150, 150, 150, 30, 30, 30, 30;  // stable at 100 ms: dt·b/m = 1.5
  const auto issues = validate_task(t, iiwa());
  EXPECT_TRUE(issues.empty()) << all_messages(issues);
  t.dither.enabled = true;
  t.dither.amplitude[0] = 0.001;
  const auto enabled = validate_task(t, iiwa());
  ASSERT_EQ(enabled.size(), 1u) << all_messages(enabled);
  EXPECT_EQ(enabled[0].field, "dither.period_s");
}

TEST(TaskValidation, DefaultTaskIsValidOnBothShippedArms) {
  const TaskParameters t;
  const auto iiwa_issues = validate_task(t, iiwa());
  EXPECT_TRUE(iiwa_issues.empty()) << all_messages(iiwa_issues);
  const KinematicModel panda(load_panda_arm());
  const auto panda_issues = validate_task(t, panda);
  EXPECT_TRUE(panda_issues.empty()) << all_messages(panda_issues);
}

struct BadTask {
  std::string name;
  std::function<void(TaskParameters&)> mutate;
  std::string field;                  // the issue must name this field
  std::vector<std::string> expected;  // and its message contain each of these
};

void PrintTo(const BadTask& bad, std::ostream* os) { *os << bad.name; }

class RejectsBadTask : public ::testing::TestWithParam<BadTask> {};

TEST_P(RejectsBadTask, NamingFieldValueAndAllowedRange) {
  const BadTask& bad = GetParam();
  TaskParameters task = door_force_task();
  bad.mutate(task);
  const auto issues = validate_task(task, iiwa());
  // One mistake, one message: nothing else in the base task may be reported.
  ASSERT_EQ(issues.size(), 1u) << all_messages(issues);
  EXPECT_EQ(issues[0].field, bad.field) << all_messages(issues);
  EXPECT_EQ(issues[0].message.rfind(bad.field, 0), 0u) << "message must start with the path";
  for (const std::string& part : bad.expected) {
    EXPECT_NE(issues[0].message.find(part), std::string::npos)
        << "missing \"" << part << "\" in\n  " << issues[0].message;
  }
  try {
    require_valid_task(task, iiwa());
    ADD_FAILURE() << "require_valid_task accepted " << bad.name;
  } catch (const TaskValidationError& e) {
    EXPECT_NE(std::string(e.what()).find(issues[0].message), std::string::npos) << e.what();
  }
}

Waypoint waypoint(double time) {
  Waypoint w;
  w.time = time;
  return w;
}

std::vector<BadTask> bad_tasks() {
  return {
      // Control period.
      {"PeriodLongerThan100ms",
       [](TaskParameters& t) { t.period = 0.2; },
       "period_s",
       {"period_s = 0.2: must be finite and in [0.0001, 0.1] s"}},
      {"PeriodShorterThan100us",
       [](TaskParameters& t) { t.period = 1e-5; },
       "period_s",
       {"period_s = 1e-05: must be finite and in [0.0001, 0.1] s"}},
      {"PeriodNaN",
       [](TaskParameters& t) { t.period = kNaN; },
       "period_s",
       {"period_s = nan: must be finite and in"}},
      // Frames.
      {"MotionFrameIsAReflection",
       [](TaskParameters& t) { t.tool_T_motion.R = Vector3(1, 1, -1).asDiagonal(); },
       "tool_T_motion.rotation",
       {"tool_T_motion.rotation: max |R·Rᵀ − I| = 0, det = -1: must be a proper rotation"}},
      {"MotionFrameIsScaled",
       [](TaskParameters& t) { t.tool_T_motion.R *= 1.001; },
       "tool_T_motion.rotation",
       {"max |R·Rᵀ − I| = 0.002001", "within 1e-6"}},
      {"BasePositionInfinite",
       [](TaskParameters& t) { t.world_T_base.p.y() = std::numeric_limits<double>::infinity(); },
       "world_T_base.position.y",
       {"world_T_base.position.y = inf: must be finite"}},
      {"ArmAngleReferenceZeroLength",
       [](TaskParameters& t) { t.arm_angle_reference.setZero(); },
       "arm_angle_reference",
       {"arm_angle_reference = (0, 0, 0): must have length ≥ 1e-06"}},
      // Impedance, per value.
      {"NegativeMass",
       [](TaskParameters& t) { t.impedance.mass[2] = -1; },
       "impedance.mass.translation.z",
       {"impedance.mass.translation.z = -1: must be finite and > 0"}},
      {"NaNArmAngleMass",
       [](TaskParameters& t) { t.impedance.mass[6] = kNaN; },
       "impedance.mass.arm_angle",
       {"impedance.mass.arm_angle = nan: must be finite and > 0"}},
      {"ZeroDamping",
       [](TaskParameters& t) { t.impedance.damping[4] = 0; },
       "impedance.damping.rotation.y",
       {"impedance.damping.rotation.y = 0: must be finite and > 0", "B⁻¹ is used by the velocity"}},
      {"NegativeStiffness",
       [](TaskParameters& t) { t.impedance.stiffness[1] = -5; },
       "impedance.stiffness.translation.y",
       {"impedance.stiffness.translation.y = -5: must be finite and ≥ 0"}},
      // Impedance stability at 20 ms: acceleration level needs 4m > dt·(dt·k + 2b).
      {"AccelerationLevelDampingTooHighForThePeriod",
       [](TaskParameters& t) { t.impedance.damping[0] = 1100; },
       "impedance.damping.translation.x",
       {"impedance.damping.translation.x = 1100: the acceleration-level impedance update",
        "spectral radius 1.2 ≥ 1", "largest stable damping is < 1000 N·s/m",
        "raise impedance.mass.translation.x above 11 kg"}},
      {"AccelerationLevelStiffnessTooHighForThePeriod",
       [](TaskParameters& t) { t.impedance.stiffness[1] = 1e5; },
       "impedance.stiffness.translation.y",
       {"impedance.stiffness.translation.y = 100000: the acceleration-level",
        "on axis translation.y", "largest stable stiffness is < 65000 N/m"}},
      {"AccelerationLevelMassTooSmallForAnyDampingOrStiffness",
       [](TaskParameters& t) {
         t.impedance.mass[1] = 0.001;
         t.impedance.stiffness[1] = 1000;
       },
       "impedance.mass.translation.y",
       {"impedance.mass.translation.y = 0.001: the acceleration-level",
        "smallest stable mass is > 3.6 kg"}},
      {"VelocityLevelStiffnessTooHighForThePeriod",
       [](TaskParameters& t) {
         t.impedance.formulation = Formulation::kVelocity;
         t.impedance.stiffness[0] = 20000;
       },
       "impedance.stiffness.translation.x",
       {"impedance.stiffness.translation.x = 20000: the velocity-level impedance update",
        "dt·k/b = 1.142857143 ≥ 1", "spectral radius |1 − dt·k/b| = 0.1428571429",
        "change sign every cycle", "largest stable stiffness is < 17500 N/m",
        "impedance.damping.translation.x above 400"}},
      // Resolver.
      {"NegativeTaskWeight",
       [](TaskParameters& t) { t.resolver.task_weights[5] = -1; },
       "resolver.task_weights.rotation.z",
       {"resolver.task_weights.rotation.z = -1: must be finite and ≥ 0"}},
      {"AllTaskWeightsZero",
       [](TaskParameters& t) { t.resolver.task_weights.setZero(); },
       "resolver.task_weights",
       {"resolver.task_weights = 0 on every row"}},
      {"ZeroTaskWeightWithoutJointWeights",
       [](TaskParameters& t) { t.resolver.task_weights[6] = 0; },
       "resolver.task_weights.arm_angle",
       {"resolver.task_weights.arm_angle = 0 while every resolver.joint_weights is 0", "rank < 7"}},
      {"NegativeJointWeight",
       [](TaskParameters& t) { t.resolver.joint_weights[2] = -0.1; },
       "resolver.joint_weights.values[2]",
       {"resolver.joint_weights.values[2] = -0.1: must be finite and ≥ 0"}},
      // Wrench sensor.
      {"NegativeToolMass",
       [](TaskParameters& t) { t.wrench_sensor.tool_mass = -0.5; },
       "wrench_sensor.tool_mass_kg",
       {"wrench_sensor.tool_mass_kg = -0.5: must be finite and ≥ 0"}},
      {"ToolCenterOfMassNaN",
       [](TaskParameters& t) { t.wrench_sensor.tool_center_of_mass.y() = kNaN; },
       "wrench_sensor.tool_center_of_mass.y",
       {"wrench_sensor.tool_center_of_mass.y = nan: must be finite"}},
      {"FilterCutoffAtNyquist",
       [](TaskParameters& t) { t.wrench_sensor.filter_cutoff = 25; },
       "wrench_sensor.filter_cutoff_hz",
       {"wrench_sensor.filter_cutoff_hz = 25: must be in [0, 25) Hz", "Nyquist"}},
      {"NegativeFilterCutoff",
       [](TaskParameters& t) { t.wrench_sensor.filter_cutoff = -1; },
       "wrench_sensor.filter_cutoff_hz",
       {"wrench_sensor.filter_cutoff_hz = -1: must be finite and ≥ 0 Hz"}},
      // Trajectories.
      {"TrajectoryEnabledWithoutWaypoints",
       [](TaskParameters& t) { t.trajectory.enabled = true; },
       "trajectory.waypoints",
       {"trajectory.waypoints: empty, but trajectory.enabled is true"}},
      {"WaypointTimesNotStrictlyIncreasing",
       [](TaskParameters& t) {
         t.trajectory.waypoints = {waypoint(0.5), waypoint(1.0), waypoint(1.0), waypoint(2.0)};
       },
       "trajectory.waypoints[2].time_s",
       {"trajectory.waypoints[2].time_s = 1: must be > trajectory.waypoints[1].time_s = 1",
        "strictly increasing"}},
      {"FirstWaypointBeforeTheStart",
       [](TaskParameters& t) {
         t.trajectory.waypoints = {waypoint(-0.1), waypoint(1.0)};
       },
       "trajectory.waypoints[0].time_s",
       {"trajectory.waypoints[0].time_s = -0.1: must be finite and ≥ 0 s"}},
      {"WaypointArmAngleNaN",
       [](TaskParameters& t) {
         t.trajectory.waypoints = {waypoint(1.0), waypoint(2.0)};
         t.trajectory.waypoints[1].arm_angle = kNaN;
       },
       "trajectory.waypoints[1].arm_angle_rad",
       {"trajectory.waypoints[1].arm_angle_rad = nan: must be finite"}},
      {"WaypointRotationNotProper",
       [](TaskParameters& t) {
         t.trajectory.waypoints = {waypoint(1.0)};
         t.trajectory.waypoints[0].pose.R(0, 1) = 0.1;
       },
       "trajectory.waypoints[0].pose.rotation",
       {"trajectory.waypoints[0].pose.rotation: max |R·Rᵀ − I| = 0.1"}},
      {"TrajectoryAndSpringTrajectoryBothEnabled",
       [](TaskParameters& t) {
         t.trajectory.enabled = true;
         t.trajectory.waypoints = {waypoint(1.0)};
         t.spring_trajectory.enabled = true;
       },
       "spring_trajectory.enabled",
       {"spring_trajectory.enabled = true while trajectory.enabled is true",
        "combination is undefined"}},
      {"SpringMaxTranslationZero",
       [](TaskParameters& t) { t.spring_trajectory.max_translation.y() = 0; },
       "spring_trajectory.max_translation.y",
       {"spring_trajectory.max_translation.y = 0: must be > 0 m (leave it out for no bound)"}},
      {"SpringMaxRotationNaN",
       [](TaskParameters& t) { t.spring_trajectory.max_rotation = kNaN; },
       "spring_trajectory.max_rotation_rad",
       {"spring_trajectory.max_rotation_rad = nan: must be > 0 rad"}},
      {"SpringMaxArmAngleNegative",
       [](TaskParameters& t) { t.spring_trajectory.max_arm_angle = -0.1; },
       "spring_trajectory.max_arm_angle_rad",
       {"spring_trajectory.max_arm_angle_rad = -0.1: must be > 0 rad"}},
      // Teleoperation.
      {"StallTimeoutLongerThanOneSecond",
       [](TaskParameters& t) { t.teleoperation.stall_timeout = 2; },
       "teleoperation.stall_timeout_s",
       {"teleoperation.stall_timeout_s = 2: must be finite and in (0, 1] s"}},
      {"StallTimeoutZero",
       [](TaskParameters& t) { t.teleoperation.stall_timeout = 0; },
       "teleoperation.stall_timeout_s",
       {"teleoperation.stall_timeout_s = 0: must be finite and in (0, 1] s"}},
      {"NegativeTeleoperationGain",
       [](TaskParameters& t) { t.teleoperation.gain[3] = -80; },
       "teleoperation.gain.rotation.x",
       {"teleoperation.gain.rotation.x = -80: must be finite and ≥ 0"}},
      {"TeleoperationEnabledWithoutAnyGain",
       [](TaskParameters& t) { t.teleoperation.enabled = true; },
       "teleoperation.gain",
       {"teleoperation.gain = 0 on every row, but teleoperation.enabled is true"}},
      {"CameraModeEyeFrameNotARotation",
       [](TaskParameters& t) {
         t.teleoperation.enabled = true;
         t.teleoperation.mode = TeleopMode::kCamera;
         t.teleoperation.gain[3] = 80;
         t.teleoperation.world_R_eye = 2.0 * Matrix3::Identity();
       },
       "teleoperation.world_R_eye",
       {"teleoperation.world_R_eye: max |R·Rᵀ − I| = 3, det = 8: must be a proper rotation"}},
      {"HandleRotationNaN",
       [](TaskParameters& t) { t.teleoperation.teleop_R_handle(2, 2) = kNaN; },
       "teleoperation.teleop_R_handle",
       {"has non-finite entries"}},
      // Force control combinations.
      {"ForceSetPointOnAStiffAxis",
       [](TaskParameters& t) { t.impedance.stiffness[3] = 10; },
       "force_control.reference_wrench.torque.x",
       {"force_control.reference_wrench.torque.x = 18 with impedance.stiffness.rotation.x = 10",
        "exact force tracking (seed eq. 15-17) needs stiffness 0"}},
      {"ReferenceTorqueBeyondTheTorqueBound",
       [](TaskParameters& t) { t.bounds.max_torque = 15; },
       "force_control.reference_wrench.torque",
       {"force_control.reference_wrench.torque = (18, 0, 0) (|τ| = 18 N·m): must be < "
        "bounds.max_torque_nm = 15 N·m"}},
      {"ReferenceForceBeyondTheForceBound",
       [](TaskParameters& t) { t.force_control.reference_wrench.head<3>() << 60, 0, 80; },
       "force_control.reference_wrench.force",
       {"(|f| = 100 N): must be < bounds.max_force_n = 80 N"}},
      {"ReferenceWrenchNaN",
       [](TaskParameters& t) { t.force_control.reference_wrench[1] = kNaN; },
       "force_control.reference_wrench.force.y",
       {"force_control.reference_wrench.force.y = nan: must be finite"}},
      // Joint-limit avoidance.
      {"JointLimitZoneZero",
       [](TaskParameters& t) { t.joint_limit_avoidance.zone[0] = 0; },
       "joint_limit_avoidance.zone.values[0]",
       {"joint_limit_avoidance.zone.values[0] = 0: must be finite and > 0"}},
      {"JointLimitZoneWiderThanHalfTheRange",
       [](TaskParameters& t) {
         t.joint_limit_avoidance.enabled = true;
         t.joint_limit_avoidance.zone[1] = 2.5;
       },
       "joint_limit_avoidance.zone.values[1]",
       {"joint_limit_avoidance.zone.values[1] = 2.5: must be ≤ 2.094395102 rad, half the range "
        "[-2.094395102, 2.094395102] rad of joint 2"}},
      {"NegativeJointLimitGain",
       [](TaskParameters& t) { t.joint_limit_avoidance.gain[5] = -1; },
       "joint_limit_avoidance.gain.values[5]",
       {"joint_limit_avoidance.gain.values[5] = -1: must be finite and ≥ 0"}},
      {"JointLimitZoneInsideTheBoundMargin",
       [](TaskParameters& t) {
         t.joint_limit_avoidance.enabled = true;
         t.bounds.joint_limit_margin[3] = 0.3;
       },
       "joint_limit_avoidance.zone.values[3]",
       {"joint_limit_avoidance.zone.values[3] = 0.2: must be > bounds.joint_limit_margin.values[3] "
        "= 0.3"}},
      {"ForceInputJointLimitAvoidanceWithoutDamping",
       [](TaskParameters& t) {
         t.joint_limit_avoidance.enabled = true;
         t.joint_limit_avoidance.damping.setZero();
       },
       "joint_limit_avoidance.damping",
       {"joint_limit_avoidance.damping = 0 on every row, but joint_limit_avoidance.input is "
        "INPUT_KIND_FORCE"}},
      // Singularities.
      {"SingularityRadiiInverted",
       [](TaskParameters& t) { t.singularity_avoidance.r_min = 1.2; },
       "singularity_avoidance.r_min_m",
       {"singularity_avoidance.r_min_m = 1.2: must be < singularity_avoidance.r_max_m = 1.1"}},
      {"NegativeRobustnessInnerRadius",
       [](TaskParameters& t) { t.singularity_robustness.r_min = -0.1; },
       "singularity_robustness.r_min_m",
       {"singularity_robustness.r_min_m = -0.1: must be finite and ≥ 0"}},
      {"NegativeSingularityGain",
       [](TaskParameters& t) { t.singularity_avoidance.gain = -1000; },
       "singularity_avoidance.gain",
       {"singularity_avoidance.gain = -1000: must be finite and ≥ 0"}},
      // Dither.
      {"DitherPeriodNotLongerThanTwoCycles",
       [](TaskParameters& t) {
         t.dither.enabled = true;
         t.dither.amplitude[3] = 0.01;
         t.dither.period = 0.04;
       },
       "dither.period_s",
       {"dither.period_s = 0.04: must be finite and > 0.04 s (2·period_s"}},
      {"NegativeDitherAmplitude",
       [](TaskParameters& t) { t.dither.amplitude[4] = -0.01; },
       "dither.amplitude.angular.y",
       {"dither.amplitude.angular.y = -0.01: must be finite and ≥ 0"}},
      {"DitherFrameNotARotation",
       [](TaskParameters& t) { t.dither.motion_T_dither.R *= -1.0; },
       "dither.motion_T_dither.rotation",
       {"det = -1: must be a proper rotation"}},
      // Proximity.
      {"ProximityReferenceDistanceZero",
       [](TaskParameters& t) { t.proximity.reference_distance = 0; },
       "proximity.reference_distance_m",
       {"proximity.reference_distance_m = 0: must be finite and > 0"}},
      {"NegativeProximityTiltGain",
       [](TaskParameters& t) { t.proximity.tilt_gain = -2; },
       "proximity.tilt_gain",
       {"proximity.tilt_gain = -2: must be finite and ≥ 0"}},
      {"ForceInputProximityWithASeparateSensorFrame",
       [](TaskParameters& t) {
         t.proximity.enabled = true;
         t.proximity.input = InputKind::kForce;
         t.proximity.tool_T_sensor = t.tool_T_motion;
         t.proximity.tool_T_sensor.p.x() += 0.05;
       },
       "proximity.tool_T_sensor",
       {"proximity.tool_T_sensor: differs from tool_T_motion (max |ΔR| = 0, max |Δp| = 0.05 m)",
        "the sensor frame L and the MOTION frame must be the same"}},
      {"ProximityReferenceOutsideTheBoundsWindow",
       [](TaskParameters& t) {
         t.proximity.enabled = true;
         t.bounds.min_proximity_distance = 0.12;
       },
       "proximity.reference_distance_m",
       {"proximity.reference_distance_m = 0.1: must lie inside the bounds window (0.12, inf) m"}},
      // Manipulability.
      {"NegativeManipulabilityGain",
       [](TaskParameters& t) { t.manipulability.gain = -1; },
       "manipulability.gain",
       {"manipulability.gain = -1: must be finite and ≥ 0"}},
      {"ForceInputManipulabilityWithoutDamping",
       [](TaskParameters& t) {
         t.manipulability.enabled = true;
         t.manipulability.input = InputKind::kForce;
         t.manipulability.damping = 0;
       },
       "manipulability.damping",
       {"manipulability.damping = 0: must be > 0 when manipulability.input is INPUT_KIND_FORCE"}},
      // Bounds.
      {"ForceBoundZero",
       [](TaskParameters& t) { t.bounds.max_force = 0; },
       "bounds.max_force_n",
       {"bounds.max_force_n = 0: must be > 0 N (leave it out for no bound)"}},
      {"RotationDeviationBoundNaN",
       [](TaskParameters& t) { t.bounds.max_rotation_deviation = kNaN; },
       "bounds.max_rotation_deviation_rad",
       {"bounds.max_rotation_deviation_rad = nan: must be > 0"}},
      {"EmptyProximityWindow",
       [](TaskParameters& t) {
         t.proximity.enabled = true;
         t.bounds.min_proximity_distance = 0.2;
         t.bounds.max_proximity_distance = 0.1;
       },
       "bounds.min_proximity_distance_m",
       {"bounds.min_proximity_distance_m = 0.2: must be < bounds.max_proximity_distance_m = 0.1"}},
      {"ProximityBoundWithoutProximity",
       [](TaskParameters& t) { t.bounds.max_proximity_distance = 0.3; },
       "bounds.max_proximity_distance_m",
       {"bounds.max_proximity_distance_m = 0.3: proximity distance bounds need "
        "proximity.enabled"}},
      {"JointLimitMarginOfHalfTheRange",
       [](TaskParameters& t) { t.bounds.joint_limit_margin[6] = 3.1; },
       "bounds.joint_limit_margin.values[6]",
       {"bounds.joint_limit_margin.values[6] = 3.1: must be < 3.054326191 rad, half the range",
        "joint 7"}},
      {"NegativeJointLimitMargin",
       [](TaskParameters& t) { t.bounds.joint_limit_margin[0] = -0.1; },
       "bounds.joint_limit_margin.values[0]",
       {"bounds.joint_limit_margin.values[0] = -0.1: must be finite and ≥ 0"}},
      {"StopTimeLongerThanFiveSeconds",
       [](TaskParameters& t) { t.bounds.stop_time = 6; },
       "bounds.stop_time_s",
       {"bounds.stop_time_s = 6: must be finite and in (0, 5] s"}},
      {"StopTimeShorterThanACycle",
       [](TaskParameters& t) { t.bounds.stop_time = 0.01; },
       "bounds.stop_time_s",
       {"bounds.stop_time_s = 0.01: must be ≥ period_s = 0.02 s"}},
      {"NoOverrunAllowed",
       [](TaskParameters& t) { t.bounds.max_consecutive_overruns = 0; },
       "bounds.max_consecutive_overruns",
       {"bounds.max_consecutive_overruns = 0: must be ≥ 1"}},
  };
}

INSTANTIATE_TEST_SUITE_P(TaskValidation, RejectsBadTask, ::testing::ValuesIn(bad_tasks()),
                         [](const auto& info) { return info.param.name; });

TEST(TaskValidation, ReportsEveryProblemAtOnce) {
  TaskParameters t = door_force_task();
  t.impedance.mass[2] = -1;
  t.period = 0.5;
  t.trajectory.enabled = true;
  t.bounds.max_consecutive_overruns = 0;
  t.proximity.tilt_gain = -1;
  const auto issues = validate_task(t, iiwa());
  ASSERT_EQ(issues.size(), 5u) << all_messages(issues);
  // Schema order.
  EXPECT_EQ(issues[0].field, "period_s");
  EXPECT_EQ(issues[1].field, "impedance.mass.translation.z");
  EXPECT_EQ(issues[2].field, "trajectory.waypoints");
  EXPECT_EQ(issues[3].field, "proximity.tilt_gain");
  EXPECT_EQ(issues[4].field, "bounds.max_consecutive_overruns");
  try {
    require_valid_task(t, iiwa());
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("task 'door_force' is invalid (5 problems):\n  period_s = 0.5", 0), 0u)
        << what;
    for (const auto& issue : issues) {
      EXPECT_NE(what.find("\n  " + issue.message), std::string::npos) << what;
    }
    const auto* typed = dynamic_cast<const TaskValidationError*>(&e);
    ASSERT_NE(typed, nullptr);
    EXPECT_EQ(typed->issues().size(), 5u);
  }
}

TEST(TaskValidation, EveryIssueCarriesItsFieldPathUnplaced) {
  TaskParameters t = door_force_task();
  t.impedance.mass[3] = -2;
  t.bounds.joint_limit_margin[2] = -0.1;
  t.dither.amplitude[4] = -0.01;
  const auto issues = validate_task(t, iiwa());
  ASSERT_EQ(issues.size(), 3u) << all_messages(issues);
  EXPECT_EQ(issues[0].path, FieldPath("impedance.mass").motion_row(3));
  EXPECT_EQ(issues[0].path.segments(),
            (std::vector<FieldPath::Segment>{
                {"impedance", -1}, {"mass", -1}, {"rotation", -1}, {"x", -1}}));
  EXPECT_EQ(issues[1].path, FieldPath("dither.amplitude.angular.y"));
  EXPECT_EQ(issues[2].path, FieldPath("bounds.joint_limit_margin").joint(2));
  EXPECT_EQ(issues[2].path.segments().back(), (FieldPath::Segment{"values", 2}));
  for (const ValidationIssue& issue : issues) {
    EXPECT_FALSE(issue.path.position().has_value()) << issue.field;
    EXPECT_EQ(issue.field, issue.path.to_string());
    EXPECT_EQ(issue.message.rfind(issue.field + " = ", 0), 0u) << issue.message;
  }
}

TEST(TaskValidation, APlacedIssueStartsWithItsPositionInTheFile) {
  TaskParameters t = door_force_task();
  t.impedance.mass[3] = -2;
  const auto issues = validate_task(t, iiwa());
  ASSERT_EQ(issues.size(), 1u) << all_messages(issues);
  const ValidationIssue at = placed(issues[0], {"door.textproto", 3, 22});
  EXPECT_EQ(at.message,
            "door.textproto:3:22: impedance.mass.rotation.x = -2: must be finite and > 0");
  EXPECT_EQ(at.field, "impedance.mass.rotation.x");
  EXPECT_EQ(at.path.position(), (SourcePosition{"door.textproto", 3, 22}));
  // Placed again, the issue moves: positions never stack up.
  EXPECT_EQ(placed(at, {"door.json"}).message,
            "door.json: impedance.mass.rotation.x = -2: must be finite and > 0");
  try {
    throw TaskValidationError(t.name, {at});
  } catch (const TaskValidationError& e) {
    EXPECT_EQ(std::string(e.what()),
              "task 'door_force' is invalid (1 problem):\n  door.textproto:3:22: "
              "impedance.mass.rotation.x = -2: must be finite and > 0");
  }
}

TEST(TaskValidation, DisabledBoundsAreInfinityAndAccepted) {
  TaskParameters t = door_force_task();
  t.bounds.max_force = kUnbounded;
  t.bounds.max_torque = kUnbounded;
  t.spring_trajectory.max_translation.setConstant(kUnbounded);
  EXPECT_TRUE(validate_task(t, iiwa()).empty());
  t.bounds.max_force = -kUnbounded;
  const auto issues = validate_task(t, iiwa());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message,
            "bounds.max_force_n = -inf: must be > 0 N (leave it out for no bound)");
}

TEST(TaskValidation, VelocityLevelStabilityLimitIsDtTimesKOverBBelowOne) {
  TaskParameters t = door_force_task();
  t.impedance.formulation = Formulation::kVelocity;
  t.impedance.stiffness[1] = 0.999 * 350 / 0.02;
  EXPECT_TRUE(validate_task(t, iiwa()).empty());
  t.impedance.stiffness[1] = 350 / 0.02;
  const auto issues = validate_task(t, iiwa());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].field, "impedance.stiffness.translation.y");
}

TEST(TaskValidation, AccelerationLevelStabilityLimitIsFourMassOverDtTimesDtKPlusTwoB) {
  TaskParameters t = door_force_task();
  // Axis 2: m = 10, b = 350, dt = 0.02 → k_max = (4·10 − 2·0.02·350) / 0.02² = 65000.
  t.impedance.stiffness[2] = 0.999 * 65000;
  EXPECT_TRUE(validate_task(t, iiwa()).empty());
  t.impedance.stiffness[2] = 1.001 * 65000;
  EXPECT_EQ(validate_task(t, iiwa()).size(), 1u);
}

// Simulates eq. 7-9 on one axis with no input: the state decays exactly when the spectral
// radius the validator reports is below one, and that radius is A's largest |eigenvalue|.
TEST(ImpedanceSpectralRadius, PredictsDecayOfTheSimulatedAccelerationLevelUpdate) {
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> log_unit(-1.0, 1.0);
  int stable = 0;
  int unstable = 0;
  for (int n = 0; n < 400; ++n) {
    const double dt = 0.001 * std::pow(10.0, 1.0 + log_unit(rng));  // 1 ms .. 100 ms
    const double m = 5.0 * std::pow(10.0, log_unit(rng));
    const double b = 300.0 * std::pow(10.0, log_unit(rng));
    const double k = n % 5 == 0 ? 0.0 : 5e3 * std::pow(10.0, 2.0 * log_unit(rng));
    const double rho = impedance_spectral_radius(Formulation::kAcceleration, dt, m, b, k);

    Eigen::Matrix2d A;
    A << 1 - dt * b / m, -dt * k / m, dt * (1 - dt * b / m), 1 - dt * dt * k / m;
    if (k > 0.0) {
      EXPECT_NEAR(rho, A.eigenvalues().cwiseAbs().maxCoeff(), 1e-9 * std::max(1.0, rho));
    }
    if (std::abs(rho - 1.0) < 0.01) continue;
    double v = 1.0;  // velocity error [m/s]
    double x = 0.0;  // position error [m]
    for (int step = 0; step < 3000; ++step) {
      const double a = (-b * v - k * x) / m;  // eq. 7 with ΣF = 0, x_r = ẋ_r = ẍ_r = 0
      v += a * dt;                            // eq. 8
      x += v * dt;                            // eq. 9
      if (std::abs(v) > 1e12) break;
    }
    if (rho < 1.0) {
      ++stable;
      EXPECT_LT(std::abs(v), 1e-6) << "dt " << dt << " m " << m << " b " << b << " k " << k;
    } else {
      ++unstable;
      EXPECT_GT(std::abs(v), 1e6) << "dt " << dt << " m " << m << " b " << b << " k " << k;
    }
  }
  EXPECT_GT(stable, 50);
  EXPECT_GT(unstable, 50);
}

}  // namespace
}  // namespace tether

#include "tether/proto/task_io.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "tether/common/spatial.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/convert.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

const KinematicModel& iiwa() {
  static const KinematicModel model(load_default_arm());
  return model;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConversionError& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The seed's force-controlled door opening (004, FIGS. 7-8), as an operator writes it.
constexpr const char* kDoorForceText = R"task(# proto-file: tether/v1/task.proto
# proto-message: tether.v1.TaskParameters
# The extended-task-space patent, FIGS. 7-8: force-controlled door opening. K = 0 on every axis and a torque set
# point of 18 N·m about the hinge (MOTION x) open the door.
name: "door_force"
period_s: 0.02  # the seed's 20 ms joint command period
# MOTION frame on the hinge, 0.6 m from the handle along tool -y, its x axis (the hinge)
# along tool z.
tool_T_motion {
  position { y: -0.6 }
  rotation { rpy { pitch_deg: -90 } }
}
impedance {
  formulation: FORMULATION_ACCELERATION
  # kg | kg·m² (rotation and arm angle)
  mass { translation { x: 10 y: 10 z: 10 } rotation { x: 2 y: 2 z: 2 } arm_angle: 2 }
  # N·s/m | N·m·s/rad
  damping { translation { x: 350 y: 350 z: 350 } rotation { x: 80 y: 80 z: 80 } arm_angle: 80 }
  stiffness {}  # K = 0: exact force tracking on every axis
}
force_control {
  enabled: true
  reference_wrench { torque { x: 18 } }  # N·m about the hinge
}
wrench_sensor { filter_cutoff_hz: 5 }
bounds {
  max_force_n: 80
  max_torque_nm: 30
}
)task";

constexpr const char* kDoorForceJson = R"({
  "name": "door_force",
  "periodS": 0.02,
  "tool_T_motion": {"position": {"y": -0.6}, "rotation": {"rpy": {"pitchDeg": -90}}},
  "impedance": {
    "formulation": "FORMULATION_ACCELERATION",
    "mass": {"translation": {"x": 10, "y": 10, "z": 10}, "rotation": {"x": 2, "y": 2, "z": 2},
             "armAngle": 2},
    "damping": {"translation": {"x": 350, "y": 350, "z": 350},
                "rotation": {"x": 80, "y": 80, "z": 80}, "arm_angle": 80},
    "stiffness": {}
  },
  "force_control": {"enabled": true, "reference_wrench": {"torque": {"x": 18}}},
  "wrench_sensor": {"filter_cutoff_hz": 5},
  "bounds": {"max_force_n": 80, "maxTorqueNm": 30}
})";

// Every domain field set to something other than its default.
TaskParameters full_task() {
  TaskParameters t;
  t.name = "everything";
  t.period = 0.004;
  t.world_T_base = Frame{so3_exp(Vector3(0.1, 0.2, 0.3)), Vector3(1.0, -2.0, 0.5)};
  t.tool_T_motion = Frame{so3_exp(Vector3(0.0, -M_PI / 2, 0.0)), Vector3(0.0, -0.6, 0.1)};
  t.arm_angle_reference = Vector3(0.0, 1.0, 1.0);
  t.impedance.formulation = Formulation::kVelocity;
  t.impedance.mass << 11, 12, 13, 2.1, 2.2, 2.3, 2.4;
  t.impedance.damping << 351, 352, 353, 81, 82, 83, 84;
  t.impedance.stiffness << 0, 101, 102, 0, 11, 12, 13;
  t.resolver.task_weights << 1, 1, 1, 0.5, 0.5, 0.5, 0.25;
  t.resolver.joint_weights << 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07;
  t.resolver.kind = ResolverKind::kConstrainedOptimisation;
  {
    KinematicFunctionParameters f;
    f.kind = KinematicFunctionKind::kArmPoint;
    f.weight = 0.5;
    f.gain = 3.0;
    f.joint = 4;
    f.offset = Vector3(0.0, 0.01, 0.1);
    f.target = Vector3(0.4, -0.2, 0.6);
    f.axes = Vector3(1.0, 0.0, 1.0);
    f.desired << 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7;
    f.weights.push_back(JointWeightKnot{0.0, JointVector::Constant(0.5)});
    f.weights.push_back(JointWeightKnot{2.0, JointVector::Constant(2.0)});
    t.resolver.configuration_control.functions.push_back(f);
    KinematicFunctionParameters g;
    g.kind = KinematicFunctionKind::kGravityTorque;
    t.resolver.configuration_control.functions.push_back(g);
  }
  {
    ConstrainedOptimisationParameters& c = t.resolver.constrained_optimisation;
    c.alpha << 1, 2, 3, 4, 5, 6, 7;
    c.beta << 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7;
    c.gamma << 7, 6, 5, 4, 3, 2, 1;
    c.q_ref << 0.0, 0.5, 0.0, -1.2, 0.0, 0.7, 0.1;
    c.max_translation = 0.003;
    c.max_rotation = 0.02;
    c.max_arm_angle = 0.015;
    c.track_arm_angle = false;
    c.mode = ConstrainedOptimisationParameters::Mode::kWeighted;
    c.weight_p = 500.0;
    c.tolerance = 1e-11;
    c.feasibility_tolerance = 1e-9;
    c.max_iterations = 60;
    c.warn_below_p = 0.3;
  }
  {
    ShakeParameters& k = t.resolver.shake;
    k.seed = 42;
    k.trials = 12;
    k.step = 0.004;
    k.temperature = 1e-4;
    k.shake_tolerance = 1e-8;
    k.shake_iterations = 40;
    k.obstacle_weight = 0.002;
    k.velocity_weight = 0.5;
    k.acceleration_weight = 0.1;
    k.reference_weight = 0.2;
    k.q_reference << 0.1, 0.4, 0.0, -1.0, 0.0, 0.6, 0.0;
    k.arm_angle_weight = 0.7;
    k.period = 4.0;
    k.periodic_weight = 3.0;
    k.periodic_ramp = 0.5;
  }
  t.wrench_sensor.tool_mass = 1.25;
  t.wrench_sensor.tool_center_of_mass = Vector3(0.0, 0.01, 0.08);
  t.wrench_sensor.filter_cutoff = 12.5;
  t.wrench_sensor.zero_on_start = true;
  t.trajectory.enabled = true;
  t.trajectory.relative = false;
  for (int i = 0; i < 3; ++i) {
    Waypoint w;
    w.time = 0.5 + i;
    w.pose = Frame{so3_exp(Vector3(0.1 * i, 0.0, 0.2)), Vector3(0.5, 0.1 * i, 0.4)};
    w.arm_angle = 0.3 - 0.1 * i + 0.01;
    t.trajectory.waypoints.push_back(w);
  }
  t.spring_trajectory.enabled = true;
  t.spring_trajectory.relative = false;
  t.spring_trajectory.destination =
      Frame{so3_exp(Vector3(0.61, 0.0, 0.0)), Vector3(0.0, 0.0, 0.01)};
  t.spring_trajectory.arm_angle = -0.2;
  t.spring_trajectory.max_translation = Vector3(0.05, kUnbounded, 0.02);
  t.spring_trajectory.max_rotation = 0.2;
  t.spring_trajectory.max_arm_angle = 0.1;
  t.teleoperation.enabled = true;
  t.teleoperation.mode = TeleopMode::kCamera;
  t.teleoperation.gain << 0, 0, 0, 80, 0, 0, 5;
  t.teleoperation.tool_T_teleop = Frame{so3_exp(Vector3(0.0, 0.0, 0.5)), Vector3(0.0, 0.0, 0.2)};
  t.teleoperation.teleop_R_handle = so3_exp(Vector3(0.3, 0.0, 0.0));
  t.teleoperation.world_R_hc_base = so3_exp(Vector3(0.0, 0.0, M_PI));
  t.teleoperation.screen_R_hc_base = so3_exp(Vector3(-0.4, 0.1, 0.0));
  t.teleoperation.world_R_eye = so3_exp(Vector3(1.0, -1.0, 0.5));
  t.teleoperation.eye_time_ns = 1'234'567'890'123;
  t.teleoperation.stall_timeout = 0.25;
  t.teleoperation.max_playout_delay = 0.4;
  t.teleoperation.hold_all_when_disabled = true;
  t.teleoperation.reflect_all_axes = true;
  t.teleoperation.reflection = ReflectionMethod::kWave;
  t.teleoperation.wave_impedance = WaveImpedance{80.0, 8.0, 3.0};
  t.teleoperation.drift = DriftCompensation{0.7, 0.3, 0.02, 0.1};
  t.force_control.enabled = true;
  t.force_control.reference_wrench << 1, 2, 3, 18, 0.5, 0.25;
  t.joint_limit_avoidance.enabled = true;
  t.joint_limit_avoidance.zone << 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7;
  t.joint_limit_avoidance.gain << 0.01, 0.01, 0.02, 0.02, 0.03, 0.03, 0.04;
  t.joint_limit_avoidance.input = InputKind::kVelocity;
  t.joint_limit_avoidance.damping << 300, 300, 300, 70, 70, 70, 70;
  t.singularity_avoidance.enabled = true;
  t.singularity_avoidance.r_min = 0.25;
  t.singularity_avoidance.r_max = 1.0;
  t.singularity_avoidance.gain = 500;
  t.singularity_robustness.enabled = true;
  t.singularity_robustness.r_min = 0.3;
  t.singularity_robustness.r_max = 0.95;
  t.singularity_robustness.gain = 2;
  t.dither.enabled = true;
  t.dither.amplitude << 0.001, 0.002, 0, 0.01, 0, 0.02;
  t.dither.period = 0.2;
  t.dither.motion_T_dither = Frame{so3_exp(Vector3(0.0, 0.7, 0.0)), Vector3(0.01, 0.0, 0.0)};
  t.dither.input = InputKind::kForce;
  t.dither.damping << 100, 100, 100, 20, 20, 20, 20;
  t.proximity.enabled = true;
  t.proximity.reference_distance = 0.08;
  t.proximity.distance_gain = 3;
  t.proximity.tilt_gain = 1.5;
  t.proximity.tool_T_sensor = Frame{so3_exp(Vector3(0.0, 0.0, 0.1)), Vector3(0.05, 0.0, 0.1)};
  t.proximity.input = InputKind::kForce;
  t.proximity.damping << 200, 200, 200, 40, 40, 40, 40;
  t.visual_tracking.enabled = true;
  t.visual_tracking.tool_T_camera =
      Frame{so3_exp(Vector3(0.0, 0.0, -M_PI / 2)), Vector3(0.0, 0.06, 0.05)};
  t.visual_tracking.reference_position = Vector3(0.01, -0.02, 0.25);
  t.visual_tracking.gain = 6;
  t.visual_tracking.velocity_filter_hz = 2;
  t.visual_tracking.max_speed = 0.1;
  t.visual_tracking.lost_timeout = 0.8;
  t.visual_tracking.input = InputKind::kForce;
  t.visual_tracking.damping << 300, 300, 300, 50, 50, 50, 50;
  t.manipulability.enabled = true;
  t.manipulability.gain = 0.5;
  t.manipulability.input = InputKind::kForce;
  t.manipulability.damping = 12;
  t.obstacle_avoidance.enabled = true;
  t.obstacle_avoidance.obstacles.push_back(
      ObstacleSphereParameters{Vector3(0.5, 0.2, 0.6), 0.05, 0.12});
  t.obstacle_avoidance.obstacles.push_back(
      ObstacleSphereParameters{Vector3(0.3, -0.2, 0.9), 0.0, 0.08});
  t.obstacle_avoidance.link_radius << 0.07, 0.07, 0.06, 0.06, 0.05, 0.05, 0.04;
  t.obstacle_avoidance.constrain_resolver = false;
  t.obstacle_avoidance.recovery = 5.0;
  t.obstacle_avoidance.behaviour_gain = 300.0;
  t.bounds.max_translation_deviation = 0.05;
  t.bounds.max_rotation_deviation = 0.3;
  t.bounds.max_arm_angle_deviation = 0.4;
  t.bounds.max_force = 80;
  t.bounds.max_torque = 30;
  t.bounds.min_proximity_distance = 0.02;
  t.bounds.max_proximity_distance = 0.3;
  t.bounds.joint_limit_margin << 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.01;
  t.bounds.max_consecutive_overruns = 5;
  t.bounds.stop_time = 0.5;
  return t;
}

// Rotations travel as quaternions, so they come back to within a few ulps.
void expect_frame(const Frame& a, const Frame& b, const std::string& what) {
  EXPECT_LE((a.R - b.R).cwiseAbs().maxCoeff(), 1e-15) << what;
  EXPECT_EQ(a.p, b.p) << what;
}
void expect_rotation(const Matrix3& a, const Matrix3& b, const std::string& what) {
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-15) << what;
}

#define EXPECT_SAME(field) EXPECT_EQ(a.field, b.field) << #field
#define EXPECT_SAME_FRAME(field) expect_frame(a.field, b.field, #field)
#define EXPECT_SAME_ROTATION(field) expect_rotation(a.field, b.field, #field)

void expect_same_task(const TaskParameters& a, const TaskParameters& b) {
  EXPECT_SAME(name);
  EXPECT_SAME(period);
  EXPECT_SAME_FRAME(world_T_base);
  EXPECT_SAME_FRAME(tool_T_motion);
  EXPECT_SAME(arm_angle_reference);
  EXPECT_SAME(impedance.formulation);
  EXPECT_SAME(impedance.mass);
  EXPECT_SAME(impedance.damping);
  EXPECT_SAME(impedance.stiffness);
  EXPECT_SAME(resolver.task_weights);
  EXPECT_SAME(resolver.joint_weights);
  EXPECT_SAME(wrench_sensor.tool_mass);
  EXPECT_SAME(wrench_sensor.tool_center_of_mass);
  EXPECT_SAME(wrench_sensor.filter_cutoff);
  EXPECT_SAME(wrench_sensor.zero_on_start);
  EXPECT_SAME(trajectory.enabled);
  EXPECT_SAME(trajectory.relative);
  ASSERT_EQ(a.trajectory.waypoints.size(), b.trajectory.waypoints.size());
  for (std::size_t i = 0; i < a.trajectory.waypoints.size(); ++i) {
    EXPECT_SAME(trajectory.waypoints[i].time);
    EXPECT_SAME_FRAME(trajectory.waypoints[i].pose);
    EXPECT_SAME(trajectory.waypoints[i].arm_angle);
  }
  EXPECT_SAME(spring_trajectory.enabled);
  EXPECT_SAME(spring_trajectory.relative);
  EXPECT_SAME_FRAME(spring_trajectory.destination);
  EXPECT_SAME(spring_trajectory.arm_angle);
  EXPECT_SAME(spring_trajectory.max_translation);
  EXPECT_SAME(spring_trajectory.max_rotation);
  EXPECT_SAME(spring_trajectory.max_arm_angle);
  EXPECT_SAME(teleoperation.enabled);
  EXPECT_SAME(teleoperation.mode);
  EXPECT_SAME(teleoperation.gain);
  EXPECT_SAME_FRAME(teleoperation.tool_T_teleop);
  EXPECT_SAME_ROTATION(teleoperation.teleop_R_handle);
  EXPECT_SAME_ROTATION(teleoperation.world_R_hc_base);
  EXPECT_SAME_ROTATION(teleoperation.screen_R_hc_base);
  EXPECT_SAME_ROTATION(teleoperation.world_R_eye);
  EXPECT_SAME(teleoperation.eye_time_ns);
  EXPECT_SAME(teleoperation.stall_timeout);
  EXPECT_SAME(teleoperation.max_playout_delay);
  EXPECT_SAME(teleoperation.hold_all_when_disabled);
  EXPECT_SAME(teleoperation.reflect_all_axes);
  EXPECT_SAME(teleoperation.reflection);
  EXPECT_SAME(teleoperation.wave_impedance.translation);
  EXPECT_SAME(teleoperation.wave_impedance.rotation);
  EXPECT_SAME(teleoperation.wave_impedance.filter_hz);
  EXPECT_SAME(teleoperation.drift.time_constant);
  EXPECT_SAME(teleoperation.drift.energy_share);
  EXPECT_SAME(teleoperation.drift.max_speed_translation);
  EXPECT_SAME(teleoperation.drift.max_speed_rotation);
  EXPECT_SAME(force_control.enabled);
  EXPECT_SAME(force_control.reference_wrench);
  EXPECT_SAME(joint_limit_avoidance.enabled);
  EXPECT_SAME(joint_limit_avoidance.zone);
  EXPECT_SAME(joint_limit_avoidance.gain);
  EXPECT_SAME(joint_limit_avoidance.input);
  EXPECT_SAME(joint_limit_avoidance.damping);
  EXPECT_SAME(singularity_avoidance.enabled);
  EXPECT_SAME(singularity_avoidance.r_min);
  EXPECT_SAME(singularity_avoidance.r_max);
  EXPECT_SAME(singularity_avoidance.gain);
  EXPECT_SAME(singularity_robustness.enabled);
  EXPECT_SAME(singularity_robustness.r_min);
  EXPECT_SAME(singularity_robustness.r_max);
  EXPECT_SAME(singularity_robustness.gain);
  EXPECT_SAME(dither.enabled);
  EXPECT_SAME(dither.amplitude);
  EXPECT_SAME(dither.period);
  EXPECT_SAME_FRAME(dither.motion_T_dither);
  EXPECT_SAME(dither.input);
  EXPECT_SAME(dither.damping);
  EXPECT_SAME(proximity.enabled);
  EXPECT_SAME(proximity.reference_distance);
  EXPECT_SAME(proximity.distance_gain);
  EXPECT_SAME(proximity.tilt_gain);
  EXPECT_SAME_FRAME(proximity.tool_T_sensor);
  EXPECT_SAME(proximity.input);
  EXPECT_SAME(proximity.damping);
  EXPECT_SAME(visual_tracking.enabled);
  EXPECT_SAME_FRAME(visual_tracking.tool_T_camera);
  EXPECT_SAME(visual_tracking.reference_position);
  EXPECT_SAME(visual_tracking.gain);
  EXPECT_SAME(visual_tracking.velocity_filter_hz);
  EXPECT_SAME(visual_tracking.max_speed);
  EXPECT_SAME(visual_tracking.lost_timeout);
  EXPECT_SAME(visual_tracking.input);
  EXPECT_SAME(visual_tracking.damping);
  EXPECT_SAME(manipulability.enabled);
  EXPECT_SAME(manipulability.gain);
  EXPECT_SAME(manipulability.input);
  EXPECT_SAME(manipulability.damping);
  EXPECT_SAME(resolver.kind);
  ASSERT_EQ(a.resolver.configuration_control.functions.size(),
            b.resolver.configuration_control.functions.size());
  for (std::size_t k = 0; k < a.resolver.configuration_control.functions.size(); ++k) {
    EXPECT_SAME(resolver.configuration_control.functions[k].kind);
    EXPECT_SAME(resolver.configuration_control.functions[k].weight);
    EXPECT_SAME(resolver.configuration_control.functions[k].gain);
    EXPECT_SAME(resolver.configuration_control.functions[k].joint);
    EXPECT_SAME(resolver.configuration_control.functions[k].offset);
    EXPECT_SAME(resolver.configuration_control.functions[k].target);
    EXPECT_SAME(resolver.configuration_control.functions[k].axes);
    EXPECT_SAME(resolver.configuration_control.functions[k].desired);
    ASSERT_EQ(a.resolver.configuration_control.functions[k].weights.size(),
              b.resolver.configuration_control.functions[k].weights.size());
    for (std::size_t j = 0; j < a.resolver.configuration_control.functions[k].weights.size(); ++j) {
      EXPECT_SAME(resolver.configuration_control.functions[k].weights[j].time);
      EXPECT_SAME(resolver.configuration_control.functions[k].weights[j].weights);
    }
  }
  EXPECT_SAME(resolver.constrained_optimisation.alpha);
  EXPECT_SAME(resolver.constrained_optimisation.beta);
  EXPECT_SAME(resolver.constrained_optimisation.gamma);
  EXPECT_SAME(resolver.constrained_optimisation.q_ref);
  EXPECT_SAME(resolver.constrained_optimisation.max_translation);
  EXPECT_SAME(resolver.constrained_optimisation.max_rotation);
  EXPECT_SAME(resolver.constrained_optimisation.max_arm_angle);
  EXPECT_SAME(resolver.constrained_optimisation.track_arm_angle);
  EXPECT_SAME(resolver.constrained_optimisation.mode);
  EXPECT_SAME(resolver.constrained_optimisation.weight_p);
  EXPECT_SAME(resolver.constrained_optimisation.tolerance);
  EXPECT_SAME(resolver.constrained_optimisation.feasibility_tolerance);
  EXPECT_SAME(resolver.constrained_optimisation.max_iterations);
  EXPECT_SAME(resolver.constrained_optimisation.warn_below_p);
  EXPECT_SAME(resolver.shake.seed);
  EXPECT_SAME(resolver.shake.trials);
  EXPECT_SAME(resolver.shake.step);
  EXPECT_SAME(resolver.shake.temperature);
  EXPECT_SAME(resolver.shake.shake_tolerance);
  EXPECT_SAME(resolver.shake.shake_iterations);
  EXPECT_SAME(resolver.shake.obstacle_weight);
  EXPECT_SAME(resolver.shake.velocity_weight);
  EXPECT_SAME(resolver.shake.acceleration_weight);
  EXPECT_SAME(resolver.shake.reference_weight);
  EXPECT_SAME(resolver.shake.q_reference);
  EXPECT_SAME(resolver.shake.arm_angle_weight);
  EXPECT_SAME(resolver.shake.period);
  EXPECT_SAME(resolver.shake.periodic_weight);
  EXPECT_SAME(resolver.shake.periodic_ramp);
  EXPECT_SAME(obstacle_avoidance.enabled);
  ASSERT_EQ(a.obstacle_avoidance.obstacles.size(), b.obstacle_avoidance.obstacles.size());
  for (std::size_t k = 0; k < a.obstacle_avoidance.obstacles.size(); ++k) {
    EXPECT_SAME(obstacle_avoidance.obstacles[k].centre);
    EXPECT_SAME(obstacle_avoidance.obstacles[k].radius);
    EXPECT_SAME(obstacle_avoidance.obstacles[k].influence);
  }
  EXPECT_SAME(obstacle_avoidance.link_radius);
  EXPECT_SAME(obstacle_avoidance.constrain_resolver);
  EXPECT_SAME(obstacle_avoidance.recovery);
  EXPECT_SAME(obstacle_avoidance.behaviour_gain);
  EXPECT_SAME(bounds.max_translation_deviation);
  EXPECT_SAME(bounds.max_rotation_deviation);
  EXPECT_SAME(bounds.max_arm_angle_deviation);
  EXPECT_SAME(bounds.max_force);
  EXPECT_SAME(bounds.max_torque);
  EXPECT_SAME(bounds.min_proximity_distance);
  EXPECT_SAME(bounds.max_proximity_distance);
  EXPECT_SAME(bounds.joint_limit_margin);
  EXPECT_SAME(bounds.max_consecutive_overruns);
  EXPECT_SAME(bounds.stop_time);
}

// ---- the door task ----------------------------------------------------------------------

TEST(TaskText, ReadsTheSeedsDoorForceTaskAndItValidates) {
  const TaskParameters t = parse_task_text(kDoorForceText, "door_force.textproto");
  EXPECT_EQ(t.name, "door_force");
  EXPECT_EQ(t.period, 0.02);
  EXPECT_EQ(t.impedance.formulation, Formulation::kAcceleration);
  EXPECT_EQ(t.impedance.mass, (MotionVector() << 10, 10, 10, 2, 2, 2, 2).finished());
  EXPECT_EQ(t.impedance.damping, (MotionVector() << 350, 350, 350, 80, 80, 80, 80).finished());
  EXPECT_EQ(t.impedance.stiffness, MotionVector::Zero());
  EXPECT_TRUE(t.force_control.enabled);
  EXPECT_EQ(t.force_control.reference_wrench, (Vector6() << 0, 0, 0, 18, 0, 0).finished());
  // MOTION x (the hinge) is tool z; the origin is 0.6 m along tool −y.
  EXPECT_LE((t.tool_T_motion.R * Vector3::UnitX() - Vector3::UnitZ()).norm(), 1e-15);
  EXPECT_EQ(t.tool_T_motion.p, Vector3(0.0, -0.6, 0.0));
  EXPECT_EQ(t.wrench_sensor.filter_cutoff, 5.0);
  EXPECT_EQ(t.bounds.max_force, 80.0);
  EXPECT_EQ(t.bounds.max_torque, 30.0);
  // Everything not written keeps its domain default.
  EXPECT_EQ(t.bounds.max_translation_deviation, kUnbounded);
  EXPECT_EQ(t.bounds.stop_time, BoundsParameters{}.stop_time);
  EXPECT_EQ(t.joint_limit_avoidance.input, InputKind::kForce);
  EXPECT_FALSE(t.trajectory.enabled);
  EXPECT_TRUE(t.trajectory.relative);
  const auto issues = validate_task(t, iiwa());
  EXPECT_TRUE(issues.empty()) << (issues.empty() ? "" : issues[0].message);
}

TEST(TaskJson, ReadsTheSameDoorTaskWithProtoAndCamelCaseNames) {
  expect_same_task(parse_task_json(kDoorForceJson, "door_force.json"),
                   parse_task_text(kDoorForceText, "door_force.textproto"));
}

TEST(TaskText, AbsentFieldsTakeTheDomainDefaults) {
  TaskParameters expected;
  expected.name = "bare";
  expect_same_task(parse_task_text("name: \"bare\"", "bare.textproto"), expected);
  expect_same_task(parse_task_json("{\"name\": \"bare\"}", "bare.json"), expected);
}

TEST(TaskText, UnspecifiedEnumsTakeEachBehavioursOwnDefault) {
  const TaskParameters t = parse_task_text(
      "joint_limit_avoidance { input: INPUT_KIND_UNSPECIFIED } dither { enabled: true }",
      "enums.textproto");
  EXPECT_EQ(t.joint_limit_avoidance.input, InputKind::kForce);
  EXPECT_EQ(t.dither.input, InputKind::kVelocity);
  EXPECT_EQ(t.teleoperation.mode, TeleopMode::kTool);
}

TEST(TaskText, AnExplicitInfiniteBoundIsNoBound) {
  const TaskParameters t =
      parse_task_text("bounds { max_force_n: inf max_torque_nm: 12 }", "bounds.textproto");
  EXPECT_EQ(t.bounds.max_force, kUnbounded);
  EXPECT_EQ(t.bounds.max_torque, 12.0);
}

// ---- round trips ------------------------------------------------------------------------

TEST(TaskRoundTrip, EveryFieldSurvivesDomainToTextToDomain) {
  const TaskParameters original = full_task();
  const std::string text = to_text(original);
  expect_same_task(parse_task_text(text, "roundtrip.textproto"), original);
}

TEST(TaskRoundTrip, EveryFieldSurvivesDomainToJsonToDomain) {
  const TaskParameters original = full_task();
  expect_same_task(parse_task_json(to_json(original), "roundtrip.json"), original);
}

TEST(TaskRoundTrip, EveryFieldSurvivesDomainToMessageToDomain) {
  const TaskParameters original = full_task();
  expect_same_task(to_task(from_task(original)), original);
  const TaskParameters defaults;
  expect_same_task(to_task(from_task(defaults)), defaults);
}

// Every schema field is written for a task that sets everything, so the schema has no
// field the domain type cannot fill (the round trip shows the converse).
void expect_every_field_present(const Message& m, const std::string& path) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string field_path = path + f->name();
    if (f->is_repeated()) {
      EXPECT_GT(r->FieldSize(m, f), 0) << field_path;
      continue;
    }
    if (f->has_presence()) {
      // AxisLimits: one component is unbounded on purpose.
      if (d->name() == "AxisLimits") continue;
      EXPECT_TRUE(r->HasField(m, f)) << field_path;
    } else {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_DOUBLE:
          EXPECT_NE(r->GetDouble(m, f), 0.0) << field_path;
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          EXPECT_TRUE(r->GetBool(m, f)) << field_path;
          break;
        case FieldDescriptor::CPPTYPE_STRING:
          EXPECT_FALSE(r->GetString(m, f).empty()) << field_path;
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          EXPECT_NE(r->GetEnumValue(m, f), 0) << field_path;
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          EXPECT_NE(r->GetUInt64(m, f), 0u) << field_path;
          break;
        default:
          ADD_FAILURE() << "unexpected field type " << field_path;
      }
    }
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && r->HasField(m, f) &&
        f->message_type()->file() != v1::Vector3::descriptor()->file()) {
      // Every tether message but geometry.proto's is walked: the behaviours' messages live
      // in their own files (tether/v1/behaviours/).
      expect_every_field_present(r->GetMessage(m, f), field_path + ".");
    }
  }
}

TEST(TaskSchema, EverySchemaFieldCarriesADomainField) {
  const v1::TaskParameters message = from_task(full_task());
  expect_every_field_present(message, "");
  for (const auto& w : message.trajectory().waypoints()) expect_every_field_present(w, "waypoint.");
}

TEST(TaskText, WritesOnlyWhatDiffersFromTheDefaults) {
  TaskParameters t;
  t.name = "short";
  t.bounds.max_force = 50;
  EXPECT_EQ(to_text(t),
            "# proto-file: tether/v1/task.proto\n"
            "# proto-message: tether.v1.TaskParameters\n"
            "name: \"short\"\n"
            "bounds {\n"
            "  max_force_n: 50\n"
            "}\n");
}

TEST(TaskText, WritesAnImproperRotationAsAMatrixSoReadingItBackFails) {
  TaskParameters t;
  t.tool_T_motion.R = Vector3(1, 1, -1).asDiagonal();
  const std::string text = to_text(t);
  EXPECT_TRUE(contains(text, "matrix")) << text;
  const std::string message = error_of([&] { parse_task_text(text, "mirror.textproto"); });
  EXPECT_TRUE(contains(message,
                       "mirror.textproto:6:7: tool_T_motion.rotation.matrix.rows: not a "
                       "rotation"))
      << message << "\n"
      << text;
}

// ---- errors: text format ----------------------------------------------------------------

TEST(TaskTextErrors, UnknownFieldNamesFileLineColumnAndTheField) {
  const std::string message = error_of([] {
    parse_task_text("name: \"x\"\nimpedance {\n  masss { arm_angle: 1 }\n}\n", "typo.textproto");
  });
  EXPECT_EQ(message,
            "typo.textproto:3:3: Message type \"tether.v1.ImpedanceParameters\" has no field "
            "named \"masss\".\n"
            "      masss { arm_angle: 1 }\n"
            "      ^");
}

TEST(TaskTextErrors, SyntaxErrorNamesFileAndLine) {
  const std::string message = error_of(
      [] { parse_task_text("name: \"x\"\nbounds {\n  max_force_n 80\n}\n", "colon.textproto"); });
  EXPECT_EQ(message,
            "colon.textproto:3:15: Expected \":\", found \"80\".\n"
            "      max_force_n 80\n"
            "                  ^");
}

TEST(TaskTextErrors, WrongValueTypeNamesTheField) {
  const std::string message =
      error_of([] { parse_task_text("period_s: fast\n", "type.textproto"); });
  EXPECT_TRUE(contains(message, "type.textproto:1:11: ")) << message;
  EXPECT_TRUE(contains(message, "period_s")) << message;
}

TEST(TaskTextErrors, UnknownEnumNameNamesTheValueAndField) {
  const std::string message =
      error_of([] { parse_task_text("impedance {\n  formulation: JERK\n}\n", "enum.textproto"); });
  EXPECT_TRUE(contains(message, "enum.textproto:2:16: ")) << message;
  EXPECT_TRUE(contains(message, "JERK")) << message;
  EXPECT_TRUE(contains(message, "formulation")) << message;
}

TEST(TaskTextErrors, UnknownEnumNumberIsRejectedAtTheField) {
  const std::string message =
      error_of([] { parse_task_text("impedance {\n  formulation: 7\n}\n", "enum.textproto"); });
  EXPECT_EQ(message,
            "enum.textproto:2:3: impedance.formulation = 7: unknown value; use "
            "FORMULATION_ACCELERATION or FORMULATION_VELOCITY");
}

TEST(TaskTextErrors, NaNIsRejectedAtItsLineAndColumn) {
  const std::string message = error_of([] {
    parse_task_text("name: \"x\"\nimpedance {\n  mass { translation { x: 1 y: nan } }\n}\n",
                    "nan.textproto");
  });
  EXPECT_EQ(message, "nan.textproto:3:29: impedance.mass.translation.y = nan: must be finite");
}

TEST(TaskTextErrors, JointVectorOfTheWrongSizeNamesFieldAndCount) {
  const std::string message = error_of([] {
    parse_task_text("joint_limit_avoidance {\n  zone { values: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1] }\n}",
                    "zone.textproto");
  });
  EXPECT_EQ(message,
            "zone.textproto:2:10: joint_limit_avoidance.zone.values: 6 values, the arm has 7 "
            "joints");
}

TEST(TaskTextErrors, NonUnitQuaternionNamesTheFrame) {
  const std::string message = error_of([] {
    parse_task_text("tool_T_motion {\n  rotation { quaternion { w: 0.5 } }\n}", "q.textproto");
  });
  EXPECT_EQ(message,
            "q.textproto:2:14: tool_T_motion.rotation.quaternion: norm 0.5, a rotation needs a "
            "unit quaternion (norm 1 ± 1e-6)");
}

TEST(TaskTextErrors, WaypointErrorsNameTheWaypoint) {
  const std::string message = error_of([] {
    parse_task_text(
        "trajectory {\n  waypoints { time_s: 1 }\n  waypoints { time_s: 2 arm_angle_rad: inf }\n}",
        "wp.textproto");
  });
  EXPECT_EQ(message,
            "wp.textproto:3:25: trajectory.waypoints[1].arm_angle_rad = inf: must be finite");
}

TEST(TaskTextErrors, NaNBoundIsNotANoBound) {
  const std::string message =
      error_of([] { parse_task_text("bounds { max_force_n: nan }", "b.textproto"); });
  EXPECT_EQ(message,
            "b.textproto:1:10: bounds.max_force_n = nan: must be a number (leave the field out "
            "for no bound)");
}

TEST(TaskTextErrors, TheErrorCarriesTheFieldPathAndItsPosition) {
  try {
    parse_task_text("name: \"x\"\nimpedance {\n  mass { translation { x: 1 y: nan } }\n}\n",
                    "nan.textproto");
    FAIL() << "accepted nan";
  } catch (const ConversionError& e) {
    EXPECT_EQ(e.path().unplaced(), FieldPath("impedance.mass").motion_row(1));
    EXPECT_EQ(e.path().position(), (SourcePosition{"nan.textproto", 3, 29}));
    EXPECT_EQ(e.detail(), " = nan: must be finite");
  }
}

TEST(TaskTextErrors, AnElementOfARepeatedFieldIsPlacedAtItsOwnLine) {
  const std::string message = error_of([] {
    parse_task_text(
        "obstacle_avoidance {\n  obstacles { radius_m: 0.1 }\n  obstacles {\n"
        "    centre { x: 0.5 z: inf }\n  }\n}\n",
        "obstacles.textproto");
  });
  EXPECT_EQ(message,
            "obstacles.textproto:4:21: obstacle_avoidance.obstacles[1].centre.z = inf: must be "
            "finite");
}

TEST(TaskTextErrors, ParserErrorsArePlacedInTheFileWithNoFieldPath) {
  try {
    parse_task_text("name: \"x\"\nbounds {\n  max_force_n 80\n}\n", "colon.textproto");
    FAIL() << "accepted a missing colon";
  } catch (const ConversionError& e) {
    EXPECT_TRUE(e.path().empty());
    EXPECT_EQ(e.path().position(), (SourcePosition{"colon.textproto", 3, 15}));
  }
}

// ---- errors: JSON -----------------------------------------------------------------------

TEST(TaskJsonErrors, UnknownFieldInAnArrayElementNamesLineAndPath) {
  const std::string message = error_of([] {
    parse_task_json(
        "{\n  \"trajectory\": {\n    \"waypoints\": [\n      {\"time_s\": 1},\n"
        "      {\"time_s\": 2,\n       \"posee\": {}}\n    ]\n  }\n}\n",
        "wp.json");
  });
  EXPECT_EQ(message, "wp.json:6:8: (trajectory.waypoints[1]) posee: Cannot find field.");
}

TEST(TaskJsonErrors, SyntaxErrorNamesLineAndColumn) {
  const std::string message = error_of([] {
    parse_task_json("{\n  \"name\": \"x\",\n  \"period_s\": 0.02\n  \"bounds\": {}\n}\n",
                    "comma.json");
  });
  EXPECT_TRUE(contains(message, "comma.json:4:3: Expected , or } after key:value pair."))
      << message;
}

TEST(TaskJsonErrors, WrongValueTypeNamesLineAndField) {
  const std::string message = error_of(
      [] { parse_task_json("{\n  \"name\": \"x\",\n  \"periodS\": \"fast\"\n}", "type.json"); });
  EXPECT_TRUE(contains(message, "type.json:3:3: (period_s): invalid value \"fast\"")) << message;
}

TEST(TaskJsonErrors, ConversionErrorsNameLineAndField) {
  const std::string message = error_of([] {
    parse_task_json(
        "{\n  \"name\": \"x\",\n  \"tool_T_motion\": {\n    \"rotation\": {\"matrix\": "
        "{\"rows\": [1, 0, 0, 0, 1, 0, 0, 0]}}\n  }\n}",
        "rows.json");
  });
  EXPECT_EQ(message,
            "rows.json:4:29: tool_T_motion.rotation.matrix.rows: 8 values, a 3x3 rotation needs 9 "
            "(row-major)");
}

TEST(TaskJsonErrors, AJointVectorElementIsPlacedAtItsValue) {
  const std::string message = error_of([] {
    parse_task_json(
        "{\n  \"joint_limit_avoidance\": {\n    \"zone\": {\"values\": [0.2, 0.2,\n"
        "      \"NaN\", 0.2, 0.2, 0.2, 0.2]}\n  }\n}\n",
        "zone.json");
  });
  EXPECT_EQ(message, "zone.json:4:7: joint_limit_avoidance.zone.values[2] = nan: must be finite");
}

TEST(TaskJsonErrors, UnknownTopLevelFieldIsNotSilentlyIgnored) {
  const std::string message =
      error_of([] { parse_task_json("{\"name\": \"x\", \"perod_s\": 0.01}", "top.json"); });
  EXPECT_EQ(message, "top.json:1:15: perod_s: Cannot find field.");
}

// ---- files ------------------------------------------------------------------------------

class TaskFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tether_task_io_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << content;
    return path.string();
  }
  fs::path dir_;
};

TEST_F(TaskFiles, ChoosesTheFormatByExtension) {
  for (const char* name : {"door.textproto", "door.txtpb", "door.PBTXT"}) {
    expect_same_task(load_task_file(write(name, kDoorForceText)),
                     parse_task_text(kDoorForceText, "reference"));
  }
  expect_same_task(load_task_file(write("door.json", kDoorForceJson)),
                   parse_task_text(kDoorForceText, "reference"));
}

TEST_F(TaskFiles, ErrorsNameThePathOfTheFile) {
  const std::string path = write("bad.textproto", "name: \"x\"\nperiod_s: [1]\n");
  const std::string message = error_of([&] { load_task_file(path); });
  EXPECT_EQ(message.rfind(path + ":2:", 0), 0u) << message;
}

TEST_F(TaskFiles, RejectsAnUnknownExtension) {
  const std::string path = write("door.yaml", "name: x");
  EXPECT_EQ(error_of([&] { load_task_file(path); }),
            path +
                ": unknown task file extension '.yaml'; use .textproto, .txtpb or .pbtxt "
                "(text format) or .json");
}

TEST_F(TaskFiles, RejectsAMissingFile) {
  const std::string path = (dir_ / "missing.textproto").string();
  EXPECT_EQ(error_of([&] { load_task_file(path); }),
            path + ": cannot read the task file (No such file or directory)");
}

TEST_F(TaskFiles, AValidFileLoadsAsLoadTaskFileReadsIt) {
  for (const char* name : {"door.textproto", "door.json"}) {
    const std::string path =
        write(name, std::string(name).ends_with(".json") ? kDoorForceJson : kDoorForceText);
    expect_same_task(load_valid_task_file(path, iiwa()), load_task_file(path));
  }
}

std::vector<std::string> issue_messages(const std::function<void()>& load) {
  try {
    load();
  } catch (const TaskValidationError& e) {
    std::vector<std::string> messages;
    for (const ValidationIssue& issue : e.issues()) {
      EXPECT_EQ(issue.message.rfind(issue.path.to_string(), 0), 0u) << issue.message;
      EXPECT_EQ(issue.field, issue.path.unplaced().to_string());
      messages.push_back(issue.message);
    }
    return messages;
  }
  ADD_FAILURE() << "no TaskValidationError";
  return {};
}

TEST_F(TaskFiles, ValidationIssuesArePlacedAtTheirFieldsInATextFile) {
  const std::string path = write("bad.textproto",
                                 "name: \"bad\"\n"
                                 "impedance {\n"
                                 "  mass { translation { x: 10 y: 10 z: 10 }\n"
                                 "         rotation { x: -2 y: 2 z: 2 } arm_angle: 2 }\n"
                                 "}\n"
                                 "trajectory { enabled: true }\n"
                                 "joint_limit_avoidance {\n"
                                 "  enabled: true\n"
                                 "  zone { values: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 5] }\n"
                                 "}\n");
  const std::vector<std::string> messages =
      issue_messages([&] { load_valid_task_file(path, iiwa()); });
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0], path + ":4:21: impedance.mass.rotation.x = -2: must be finite and > 0");
  // A field the file leaves out is placed at the message around it that the file gives.
  EXPECT_EQ(messages[1], path +
                             ":6:1: trajectory.waypoints: empty, but trajectory.enabled is true: "
                             "give at least one waypoint");
  // protobuf records a list written in brackets once, at its name.
  EXPECT_EQ(
      messages[2].rfind(path + ":9:10: joint_limit_avoidance.zone.values[6] = 5: must be ≤ ", 0),
      0u)
      << messages[2];
}

TEST_F(TaskFiles, ValidationIssuesArePlacedAtTheirFieldsInAJsonFile) {
  const std::string path =
      write("bad.json",
            "{\n"
            "  \"name\": \"bad\",\n"
            "  \"impedance\": {\"mass\": {\"translation\": {\"x\": 10, \"y\": 10, \"z\": 10},\n"
            "                \"rotation\": {\"x\": -2, \"y\": 2, \"z\": 2}, \"armAngle\": 2}},\n"
            "  \"jointLimitAvoidance\": {\n"
            "    \"enabled\": true,\n"
            "    \"zone\": {\"values\": [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 5]}\n"
            "  }\n"
            "}\n");
  const std::vector<std::string> messages =
      issue_messages([&] { load_valid_task_file(path, iiwa()); });
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], path + ":4:30: impedance.mass.rotation.x = -2: must be finite and > 0");
  EXPECT_EQ(
      messages[1].rfind(path + ":7:55: joint_limit_avoidance.zone.values[6] = 5: must be ≤ ", 0),
      0u)
      << messages[1];
}

TEST_F(TaskFiles, AFileThatDoesNotParseIsAConversionErrorBeforeValidation) {
  const std::string path = write("nan.textproto", "period_s: nan\n");
  EXPECT_EQ(error_of([&] { load_valid_task_file(path, iiwa()); }),
            path + ":1:1: period_s = nan: must be finite");
}

TEST_F(TaskFiles, WrittenTextIsReadBackAsTheSameTask) {
  const TaskParameters original = full_task();
  expect_same_task(load_task_file(write("full.textproto", to_text(original))), original);
  expect_same_task(load_task_file(write("full.json", to_json(original))), original);
}

// Every task shipped with the remote site must load and be valid on the default arm.
TEST(RemoteSiteTaskFiles, EveryShippedTaskParsesAndValidatesOnTheDefaultArm) {
  const fs::path dir = fs::path(TETHER_SOURCE_DIR) / "remote_site" / "tasks";
  std::vector<fs::path> files;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".textproto" || ext == ".txtpb" || ext == ".pbtxt" || ext == ".json") {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    TaskParameters task;
    try {
      task = load_task_file(file.string());
    } catch (const ConversionError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    for (const auto& issue : validate_task(task, iiwa())) ADD_FAILURE() << issue.message;
  }
  RecordProperty("task_files", static_cast<int>(files.size()));
  std::cout << "[   INFO   ] " << files.size() << " task file(s) checked in " << dir.string()
            << "\n";
}

// ---- validation paths are schema paths --------------------------------------------------

// Resolves `path` against the schema: every segment names a field of the message before it,
// and an index is given exactly on repeated fields (a path may end on a whole list).
bool resolves(const FieldPath& path) {
  const Descriptor* d = v1::TaskParameters::descriptor();
  const auto& segments = path.segments();
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (d == nullptr) return false;
    const FieldDescriptor* f = d->FindFieldByName(segments[i].name);
    if (f == nullptr) return false;
    const bool last = i + 1 == segments.size();
    if ((segments[i].index >= 0) != f->is_repeated() && !(last && segments[i].index < 0)) {
      return false;
    }
    d = f->message_type();
  }
  return !segments.empty();
}

TEST(TaskValidationPaths, EveryIssueNamesAFieldOfTheSchema) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  TaskParameters t = full_task();
  t.period = 0.5;
  t.world_T_base.R *= 2.0;
  t.tool_T_motion.p.x() = kNaN;
  t.arm_angle_reference.setZero();
  t.impedance.mass.setConstant(-1.0);
  t.impedance.damping.setConstant(0.0);
  t.impedance.stiffness.setConstant(-1.0);
  t.resolver.task_weights.setConstant(-1.0);
  t.resolver.joint_weights.setConstant(-1.0);
  t.wrench_sensor.tool_mass = -1;
  t.wrench_sensor.tool_center_of_mass.setConstant(kNaN);
  t.wrench_sensor.filter_cutoff = 1000;
  t.trajectory.waypoints[1].time = -1;
  t.trajectory.waypoints[2].pose.R *= -1.0;
  t.trajectory.waypoints[2].arm_angle = kNaN;
  t.spring_trajectory.destination.R *= 3.0;
  t.spring_trajectory.arm_angle = kNaN;
  t.spring_trajectory.max_translation.setConstant(-1.0);
  t.spring_trajectory.max_rotation = 0;
  t.spring_trajectory.max_arm_angle = kNaN;
  t.teleoperation.gain.setConstant(-1.0);
  t.teleoperation.tool_T_teleop.p.setConstant(kNaN);
  t.teleoperation.teleop_R_handle *= 2.0;
  t.teleoperation.world_R_hc_base *= 2.0;
  t.teleoperation.screen_R_hc_base *= 2.0;
  t.teleoperation.world_R_eye *= 2.0;
  t.teleoperation.stall_timeout = 5;
  t.force_control.reference_wrench.setConstant(kNaN);
  t.joint_limit_avoidance.zone.setConstant(-1.0);
  t.joint_limit_avoidance.gain.setConstant(-1.0);
  t.joint_limit_avoidance.damping.setConstant(-1.0);
  t.singularity_avoidance.r_min = 2;
  t.singularity_avoidance.gain = -1;
  t.singularity_robustness.r_min = -1;
  t.singularity_robustness.r_max = kNaN;
  t.dither.amplitude.setConstant(-1.0);
  t.dither.period = 0.001;
  t.dither.motion_T_dither.R *= 2.0;
  t.dither.damping.setZero();
  t.proximity.reference_distance = -1;
  t.proximity.distance_gain = -1;
  t.proximity.tilt_gain = -1;
  t.proximity.damping.setConstant(-1.0);
  t.visual_tracking.gain = -1;
  t.visual_tracking.reference_position.z() = 0.0;
  t.visual_tracking.max_speed = 0;
  t.visual_tracking.lost_timeout = -1;
  t.manipulability.gain = -1;
  t.manipulability.damping = 0;
  t.bounds.max_translation_deviation = 0;
  t.bounds.max_rotation_deviation = -1;
  t.bounds.max_arm_angle_deviation = kNaN;
  t.bounds.max_force = 0;
  t.bounds.max_torque = 0;
  t.bounds.min_proximity_distance = 0.5;
  t.bounds.joint_limit_margin.setConstant(3.5);
  t.bounds.max_consecutive_overruns = 0;
  t.bounds.stop_time = 10;
  t.resolver.configuration_control.functions[0].joint = 9;
  t.resolver.configuration_control.functions[0].axes.x() = 0.5;
  t.resolver.configuration_control.functions[0].weights[1].time = -1;
  t.resolver.configuration_control.functions[0].weights[0].weights[2] = -1;
  t.resolver.constrained_optimisation.max_translation = 0;
  t.resolver.constrained_optimisation.warn_below_p = 2;
  t.resolver.constrained_optimisation.max_iterations = 0;
  t.resolver.shake.trials = 0;
  t.resolver.shake.step = -1;
  t.resolver.shake.period = 1000;
  t.obstacle_avoidance.obstacles[0].influence = 0;
  t.obstacle_avoidance.link_radius.setConstant(-1.0);
  t.obstacle_avoidance.recovery = -1;
  const auto issues = validate_task(t, iiwa());
  EXPECT_GE(issues.size(), 100u);
  std::vector<std::string> sections;
  for (const auto& issue : issues) {
    EXPECT_TRUE(resolves(issue.path)) << issue.field << "\n  " << issue.message;
    EXPECT_EQ(FieldPath::parse(issue.field), issue.path) << issue.field;
    const std::string section = issue.field.substr(0, issue.field.find_first_of(".["));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  // Every field of tether.v1.TaskParameters except `name` has at least one rule.
  EXPECT_EQ(static_cast<int>(sections.size()), v1::TaskParameters::descriptor()->field_count() - 1);
}

}  // namespace
}  // namespace tether::proto

#include "tether/local/console/preview.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "tether/common/kinematics.h"
#include "tether/common/units.h"
#include "tether/common/urdf_loader.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/bounds/bounds_monitor.h"
#include "tether/remote/loop/task_runner.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {
namespace {

constexpr double kDefaultDuration = 5.0;  // [s] without a trajectory to follow
constexpr double kAfterTrajectory = 1.0;  // [s] to settle after the last waypoint
remote::SceneKind scene_kind(const std::string& name) {
  if (const std::optional<remote::SceneKind> scene = remote::scene_from_name(name)) return *scene;
  throw std::invalid_argument("scene '" + name + "': expected " + remote::kSceneNames);
}

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, a, b, c);
  return buffer;
}

}  // namespace

ArmModel load_preview_arm(const std::string& name) {
  // Only the shipped arms: load_arm_by_name reads any other name as a URDF file, which also
  // needs its base and tool links, and the console takes neither.
  if (name != "iiwa7" && name != "panda") {
    throw std::invalid_argument("arm '" + name + "': expected iiwa7 or panda");
  }
  return load_arm_by_name(name, UrdfLoadOptions{});
}

void check_preview_scene(const std::string& name) { scene_kind(name); }

double natural_duration(const TaskParameters& task) {
  if (task.trajectory.enabled && !task.trajectory.waypoints.empty()) {
    return task.trajectory.waypoints.back().time + kAfterTrajectory;
  }
  return kDefaultDuration;
}

bool teleoperation_only(const TaskParameters& task) {
  if (!task.teleoperation.enabled) return false;
  const bool pushes = task.force_control.enabled && !task.force_control.reference_wrench.isZero();
  const bool dithers = task.dither.enabled && !task.dither.amplitude.isZero();
  return !task.trajectory.enabled && !task.spring_trajectory.enabled && !pushes && !dithers;
}

PreviewReport preview_task(const TaskParameters& task, const PreviewOptions& options) {
  const ArmModel arm_model = load_preview_arm(options.arm);
  const remote::SceneKind scene = scene_kind(options.scene);
  const double duration = options.duration.value_or(natural_duration(task));
  if (!(duration > 0.0) || !std::isfinite(duration)) {
    throw std::invalid_argument("preview duration = " + std::to_string(duration) +
                                " s: must be finite and > 0");
  }

  remote::SimulationOptions sim;

  // The ground has no images of the site: its model of the wrist camera is the geometric

  // one (no off-screen GL context on the operator's machine).

  sim.camera.source = remote::CameraSource::kGeometric;
  sim.scene = scene;
  sim.initial_position = remote::default_initial_position(scene, arm_model);
  remote::SimulatedArm arm(arm_model, sim);

  remote::TaskRunOptions run;
  run.duration = duration;
  run.pacing = remote::Pacing::kBatch;
  if (task.teleoperation.enabled) {
    // A still hand controller, one sample per cycle: the stream stays alive, so the stall
    // bound cannot trip on the preview's lack of an operator.
    run.hand_controller = [](double, double) { return remote::HandControllerSample{}; };
  }
  const remote::TaskRunRecord record = remote::run_task(arm, task, run);

  PreviewReport report;
  report.task_name = task.name;
  report.arm = arm_model.name;
  report.scene = options.scene;
  report.duration = duration;
  report.cycles = record.cycles;
  report.final_state = to_string(record.final_state);
  report.peak_force = record.peak_force;
  report.peak_torque = record.peak_torque;
  report.teleoperation_enabled = task.teleoperation.enabled;
  report.teleoperation_only = teleoperation_only(task);
  if (record.breach) {
    PredictedBreach b;
    b.cause = to_string(record.breach.cause);
    b.description = remote::describe(record.breach);
    b.value = record.breach.value;
    b.bound = record.breach.bound;
    b.time = record.breach.time;
    b.joint = record.breach.index;
    report.breach = b;
  }
  for (const MotionVector& e : record.error) {
    report.max_translation_deviation =
        std::max(report.max_translation_deviation, e.head<3>().norm());
    report.max_rotation_deviation = std::max(report.max_rotation_deviation, e.segment<3>(3).norm());
    report.max_arm_angle_deviation = std::max(report.max_arm_angle_deviation, std::abs(e[6]));
  }
  const KinematicModel model(arm_model);
  report.min_joint_limit_margin = std::numeric_limits<double>::infinity();
  for (const JointVector& q : record.measured_joints) {
    const JointVector margin = (q - model.lower_limits()).cwiseMin(model.upper_limits() - q);
    int joint = 0;
    const double smallest = margin.minCoeff(&joint);
    if (smallest < report.min_joint_limit_margin) {
      report.min_joint_limit_margin = smallest;
      report.min_margin_joint = joint;
    }
  }
  report.door_scene = scene == remote::SceneKind::kDoor;
  if (report.door_scene && !record.aux0.empty()) report.final_door_angle = record.aux0.back();
  return report;
}

std::string format_preview(const PreviewReport& r) {
  std::string out =
      "preview of task '" + r.task_name + "' on " + r.arm + ", scene " + r.scene +
      format(", %.3g s (%.0f cycles, batch):\n", r.duration, static_cast<double>(r.cycles));
  if (r.breach) {
    out += "  PREDICTED BREACH  " + r.breach->description + "\n";
  } else {
    out += "  no breach predicted\n";
  }
  out += "  final state       " + r.final_state + "\n";
  out += format("  peak force        %.2f N\n  peak torque       %.2f N·m\n", r.peak_force,
                r.peak_torque);
  out += format("  max x_c - x_r     %.4f m, %.3f deg, arm angle %.3f deg\n",
                r.max_translation_deviation, r.max_rotation_deviation * kRadToDeg,
                r.max_arm_angle_deviation * kRadToDeg);
  if (std::isfinite(r.min_joint_limit_margin)) {
    out +=
        format("  min joint margin  %.4f rad (%.2f deg) at joint %.0f\n", r.min_joint_limit_margin,
               r.min_joint_limit_margin * kRadToDeg, r.min_margin_joint + 1.0);
  }
  if (r.door_scene) {
    out += format("  door angle        %.2f deg at the end\n", r.final_door_angle * kRadToDeg);
  }
  if (r.teleoperation_only) {
    out +=
        "  note: this task is driven by teleoperation only; without operator input the "
        "preview\n        holds the hand controller still (stall bound not exercised), so "
        "it only\n        checks the task's bounds at rest\n";
  } else if (r.teleoperation_enabled) {
    out +=
        "  note: teleoperation previewed with the hand controller held still (stall bound "
        "not exercised)\n";
  }
  return out;
}

}  // namespace tether::local

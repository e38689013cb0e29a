#pragma once

// Local preview (dry run) of a task parameter set: the ground station runs the task with the
// remote site's own executor code (tether::remote run_task) against a MuJoCo-simulated arm
// on this machine, as fast as the physics allows, and reports what would happen on the
// remote site — the first predicted bound breach and how close the run came to the others —
// before the set is sent.
//
// A preview is a prediction from a model: the simulated scene stands in for the real
// environment, so it catches bounds that are too tight, unstable gains and tasks that run
// into joint limits, not surprises of the real world.
//
// Teleoperation cannot be previewed without the operator: a task with teleoperation
// enabled runs with a hand controller held still (zero increments, deadman held, one sample
// per cycle), so the stall bound never trips and the preview shows what the task does
// without operator input. A task driven by teleoperation alone is flagged as such.

#include <cstdint>
#include <optional>
#include <string>

#include "tether/common/arm_model.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

struct PreviewOptions {
  std::string arm = "iiwa7";       // iiwa7 or panda
  std::string scene = "free";      // free, door, wall, obstacles, proximity (see remote scene.h)
  std::optional<double> duration;  // [s] task time; empty: natural_duration(task)
};

struct PredictedBreach {
  std::string cause;        // e.g. "torque"
  std::string description;  // value, bound, units and task time
  double value = 0.0;       // in the units of the cause
  double bound = 0.0;
  double time = 0.0;  // [s] task time
  int joint = -1;     // per-joint causes only
};

struct PreviewReport {
  std::string task_name, arm, scene;
  double duration = 0.0;  // [s] task time simulated
  std::uint64_t cycles = 0;
  std::optional<PredictedBreach> breach;  // the first one; empty: none predicted
  std::string final_state;                // executor state at the end
  double peak_force = 0.0;                // [N] |f| at the MOTION origin, compensated and filtered
  double peak_torque = 0.0;               // [N·m]
  // Largest x_c − x_r over the run: translation [m], rotation [rad], arm angle [rad].
  double max_translation_deviation = 0.0;
  double max_rotation_deviation = 0.0;
  double max_arm_angle_deviation = 0.0;
  // Smallest distance of a measured joint to its nearer position limit [rad], and which.
  double min_joint_limit_margin = 0.0;
  int min_margin_joint = 0;  // 0-based
  bool door_scene = false;
  double final_door_angle = 0.0;       // [rad] aux[0] at the end, door scene only
  bool teleoperation_enabled = false;  // previewed with a still hand controller
  bool teleoperation_only = false;     // nothing but teleoperation moves the arm
};

// The arms and scenes a preview can use. Each throws std::invalid_argument listing the
// choices for an unknown name.
ArmModel load_preview_arm(const std::string& name);  // iiwa7 or panda
void check_preview_scene(const std::string& name);

// Last trajectory waypoint + 1 s with the trajectory enabled, else 5 s.
double natural_duration(const TaskParameters& task);

// True when teleoperation is enabled and no other behaviour would move the arm on its own
// (no trajectory, spring trajectory, force control with a non-zero reference, dither).
bool teleoperation_only(const TaskParameters& task);

// Runs the preview. Throws std::invalid_argument for an unknown arm or scene (listing the
// choices), TaskValidationError if the task is invalid for the arm.
PreviewReport preview_task(const TaskParameters& task, const PreviewOptions& options);

// Multi-line report for operators: breach (or "no breach predicted"), peaks, deviations,
// margin, the teleoperation note.
std::string format_preview(const PreviewReport& report);

}  // namespace tether::local

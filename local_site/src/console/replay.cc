#include "tether/local/console/replay.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tether/local/console/preview.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {

namespace {

bool stopping(ExecutorState s) {
  return s == ExecutorState::kStopping || s == ExecutorState::kStopped;
}

}  // namespace

ReplayReport replay(const RecordingContents& recording, const ReplayOptions& options) {
  ReplayReport report;
  const auto site = [&](const char* key) {
    const auto found = recording.site.find(key);
    return found != recording.site.end() ? found->second : std::string();
  };
  report.arm = !options.arm.empty() ? options.arm : site("arm");
  report.scene = !options.scene.empty() ? options.scene : site("scene");
  if (report.arm.empty()) {
    throw std::runtime_error("the recording does not name its arm: give it (--arm iiwa7|panda)");
  }
  if (report.scene.empty()) {
    throw std::runtime_error(
        "the recording does not name a simulated scene (a real arm's recording cannot be "
        "replayed on the simulation unless you name one: --scene)");
  }
  const std::optional<remote::SceneKind> scene = remote::scene_from_name(report.scene);
  if (!scene) {
    throw std::runtime_error("scene '" + report.scene + "': expected " + remote::kSceneNames);
  }

  // Where to start: a task started from rest, with the arm's checkpoint and its set.
  const std::vector<RecordedCycle>& cycles = recording.cycles;
  std::size_t first = cycles.size();
  std::string lacking;
  for (std::size_t k = 0; k < cycles.size(); ++k) {
    const remote::CycleInputs& in = cycles[k].inputs;
    if (!in.restart || !in.from_rest) continue;
    const auto task = recording.tasks.find(in.submission);
    if (cycles[k].checkpoint.size == 0) {
      lacking = "cycle " + std::to_string(cycles[k].cycle) + " started task #" +
                std::to_string(in.submission) +
                " without the arm's checkpoint (not a simulated arm)";
      continue;
    }
    if (task == recording.tasks.end() || !task->second.has_parameters) {
      lacking = "task #" + std::to_string(in.submission) + " started in cycle " +
                std::to_string(cycles[k].cycle) + ", but its parameter set is not recorded";
      continue;
    }
    first = k;
    break;
  }
  if (first == cycles.size()) {
    throw std::runtime_error(
        "nothing to replay: the recording (" + std::to_string(cycles.size()) +
        " cycles) holds no task started from rest with its set and the arm's state" +
        (lacking.empty() ? std::string() : " (" + lacking + ")"));
  }

  const ArmModel arm_model = load_preview_arm(report.arm);
  remote::SimulationOptions sim;
  // The ground has no images of the site: its model of the wrist camera is the geometric
  // one (no off-screen GL context on the operator's machine).
  sim.camera.source = remote::CameraSource::kGeometric;
  sim.scene = *scene;
  sim.initial_position = remote::default_initial_position(*scene, arm_model);
  remote::SimulatedArm arm(arm_model, sim);
  if (!arm.restore(cycles[first].checkpoint)) {
    throw std::runtime_error(
        "the arm's checkpoint of cycle " + std::to_string(cycles[first].cycle) + " (" +
        std::to_string(cycles[first].checkpoint.size) + " values) does not fit arm " + report.arm +
        " in scene " + report.scene);
  }
  remote::HandControllerQueue queue;
  remote::Executor executor(arm.model(), queue);
  executor.seed_command(cycles[first].inputs.prior_command);

  report.first_cycle = cycles[first].cycle;
  report.task = recording.tasks.at(cycles[first].inputs.submission).name;
  std::map<std::uint64_t, std::uint64_t> ids;  // recorded id → this executor's
  remote::ArmState state;
  remote::JointCommand command;
  for (std::size_t k = first; k < cycles.size(); ++k) {
    const RecordedCycle& r = cycles[k];
    if (k > first && r.run != cycles[k - 1].run) {
      report.ended = "the site restarted after cycle " + std::to_string(cycles[k - 1].cycle) +
                     ": the replay ends there";
      break;
    }
    if (k > first && (r.cycle != cycles[k - 1].cycle + 1)) {
      report.ended = "cycle " + std::to_string(cycles[k - 1].cycle + 1) +
                     " is missing from the recording (telemetry dropped): the replay ends there";
      break;
    }
    const remote::CycleInputs& in = r.inputs;
    if (in.submission != 0) {
      const auto task = recording.tasks.find(in.submission);
      if (task == recording.tasks.end() || !task->second.has_parameters) {
        report.ended = "cycle " + std::to_string(r.cycle) + " took task #" +
                       std::to_string(in.submission) +
                       ", whose parameter set is not recorded: the replay ends there";
        break;
      }
      ids[in.submission] = executor.submit(task->second.task, in.restart);
    }
    if (in.stop != BreachCause::kNone) executor.request_stop(in.stop);
    if (in.reset) executor.request_reset();
    if (in.recovery) executor.request_recovery(in.recovery_request);
    executor.replay_inputs(in);

    const remote::ArmStatus status = arm.read(state);
    executor.cycle(state, status, command);
    arm.write(command);
    arm.advance_to(state.time + executor.period());

    const remote::CycleTelemetry& t = executor.last_cycle();
    ++report.cycles;
    const double dq = (t.measured_joints - r.measured_joints).cwiseAbs().maxCoeff();
    const double dc = (t.commanded_joints - r.commanded_joints).cwiseAbs().maxCoeff();
    const double df = (t.wrench.head<3>() - r.wrench.head<3>()).norm();
    report.max_joint_error = std::max(report.max_joint_error, dq);
    report.max_command_error = std::max(report.max_command_error, dc);
    report.max_wrench_error = std::max(report.max_wrench_error, df);
    report.final_joint_error = dq;
    if (*scene == remote::SceneKind::kDoor) {
      report.max_door_error = std::max(report.max_door_error, std::abs(t.aux[0] - r.aux[0]));
    }
    const auto offset = static_cast<std::uint64_t>(k - first);
    if (!report.departed_at && std::max(dq, dc) > options.tolerance) report.departed_at = offset;
    if (!report.recorded_breach && stopping(r.state) && r.breach) {
      report.recorded_breach = ReplayedBreach{to_string(r.breach.cause), offset, r.task_time};
    }
    if (!report.replayed_breach && stopping(t.state) && t.breach) {
      report.replayed_breach = ReplayedBreach{to_string(t.breach.cause), offset, t.task_time};
    }
  }
  report.same_breach =
      report.recorded_breach.has_value() == report.replayed_breach.has_value() &&
      (!report.recorded_breach || (report.recorded_breach->cause == report.replayed_breach->cause &&
                                   report.recorded_breach->cycle == report.replayed_breach->cycle));
  report.within_tolerance =
      report.max_joint_error <= options.tolerance && report.max_command_error <= options.tolerance;
  return report;
}

}  // namespace tether::local

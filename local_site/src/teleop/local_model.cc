#include "tether/local/teleop/local_model.h"

#include <cmath>
#include <stdexcept>

#include "tether/local/console/preview.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {

LocalModelOptions parse_local_model(const std::string& text) {
  LocalModelOptions o;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    o.scene = text;
  } else {
    o.arm = text.substr(0, colon);
    o.scene = text.substr(colon + 1);
  }
  try {
    load_preview_arm(o.arm);
    check_preview_scene(o.scene);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + text + "': expected [ARM:]SCENE (" + e.what() + ")");
  }
  return o;
}

struct LocalModel::Impl {
  Impl(const ArmModel& model, const remote::SimulationOptions& sim, const TaskParameters& t)
      : arm_model(model),
        arm(arm_model, sim),
        executor(arm.model(), queue),
        loop(arm, executor, remote::Pacing::kBatch),
        task(t) {}
  ArmModel arm_model;
  remote::SimulatedArm arm;
  remote::HandControllerQueue queue;
  remote::Executor executor;
  remote::ControlLoop loop;
  TaskParameters task;
};

LocalModel::LocalModel(const LocalModelOptions& options, const TaskParameters& task) {
  const ArmModel arm_model = load_preview_arm(options.arm);
  const std::optional<remote::SceneKind> scene = remote::scene_from_name(options.scene);
  if (!scene) {
    throw std::invalid_argument("scene '" + options.scene + "': expected " + remote::kSceneNames);
  }
  remote::SimulationOptions sim;
  sim.scene = *scene;
  sim.initial_position = remote::default_initial_position(*scene, arm_model);
  initial_joints_ = *sim.initial_position;
  TaskParameters local = task;
  // The model follows its increments at once: there is no link to de-jitter.
  local.teleoperation.max_playout_delay = 0.0;
  // Wave variables need the link's wave; the model is the hand's direct partner.
  if (local.teleoperation.reflection == ReflectionMethod::kWave) {
    local.teleoperation.reflection = ReflectionMethod::kNone;
  }
  impl_ = std::make_unique<Impl>(arm_model, sim, local);
  impl_->executor.submit(local, true);
  impl_->loop.run_cycles(1);  // picks the task up
}

LocalModel::~LocalModel() = default;

void LocalModel::step(const Vector6& increment, double arm_angle_increment, TeleopMode mode,
                      bool enabled, double master_in, double dt) noexcept {
  remote::HandControllerSample s;
  s.sequence = ++sequence_;
  s.increment = increment;
  s.arm_angle_increment = arm_angle_increment;
  s.mode = mode;
  s.deadman = enabled;
  s.master_in = master_in;
  impl_->queue.push(s);
  carry_ += dt;
  const double period = impl_->task.period;
  // At least one cycle per sample, so the increment is applied now.
  int cycles = std::max(1, static_cast<int>(std::floor(carry_ / period + 1e-9)));
  carry_ = std::max(0.0, carry_ - cycles * period);
  for (int k = 0; k < cycles; ++k) impl_->loop.run_cycles(1);
  const remote::CycleTelemetry& t = impl_->executor.last_cycle();
  const Matrix3& R = t.hand_controller_R_motion;
  wrench_.head<3>() = R * t.wrench.head<3>();
  wrench_.tail<3>() = R * t.wrench.tail<3>();
  aux0_ = t.aux[0];
  time_ = t.task_time;
  state_ = t.state;
  slave_in_ = t.channel.slave.in;
}

}  // namespace tether::local

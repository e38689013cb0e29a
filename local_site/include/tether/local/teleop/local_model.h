#pragma once

// The ground's model of the remote site for teleoperation across a delayed link: the remote
// site's own executor (tether::control) running the same task on a MuJoCo-simulated arm and
// scene on this machine, driven by the operator's increments the moment they are sampled —
// no link in between. It predicts what the remote will do one link delay later (the
// predictive display of JPL's shared compliant control, Bejczy and Kim), and its wrench can
// be what the operator feels (the seed's reflection split between local and remote
// computation when video and force arrive with different delays).
//
// The model runs in lock-step with the ground's sampling: one executor cycle of the task's
// period per sample when the two rates agree, else as many whole cycles as fit (the ground
// samples at 1 kHz and the shipped tasks run at 1 ms, so one each on this 2-core machine).
// Stepping allocates nothing; construction compiles the MuJoCo scene (not real time).
//
// The hand and the model close a loop with no link delay, but not without lag (one sample,
// the wrench filter): at a high reflection gain it rings like the remote's own loop. With
// the passivity channel the model keeps its slave port and the hand balances against it, so
// the local loop is kept passive by the same observers as the delayed one.
//
// Frames: wrench() is the modelled F_a (robot on environment) at the MOTION origin rotated
// into the hand-controller axes of the last increment's mode, as the remote's reflection is.

#include <cstdint>
#include <memory>
#include <string>

#include "tether/common/types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

struct LocalModelOptions {
  std::string arm = "iiwa7";   // iiwa7 or panda
  std::string scene = "door";  // free, door, wall, obstacles, proximity
};

// "ARM:SCENE" (e.g. "iiwa7:door") or "SCENE" (arm iiwa7); throws std::invalid_argument
// naming the text and the choices.
LocalModelOptions parse_local_model(const std::string& text);

class LocalModel {
 public:
  // Throws std::invalid_argument for an unknown arm or scene, TaskValidationError for a
  // task the arm cannot run.
  LocalModel(const LocalModelOptions& options, const TaskParameters& task);
  ~LocalModel();
  LocalModel(const LocalModel&) = delete;
  LocalModel& operator=(const LocalModel&) = delete;

  // One ground sample of `dt` seconds: the increment (hand-controller axes of `mode`,
  // remote units) is applied by the model's teleoperation behaviour at once, then the
  // model advances by the whole task periods in dt.
  // `master_in` is the hand port's cumulative input energy [J]: with the passivity channel
  // the model's own slave port spends it, at once, as the remote does a link delay later.
  void step(const Vector6& increment, double arm_angle_increment, TeleopMode mode, bool enabled,
            double master_in, double dt) noexcept;

  const Vector6& wrench() const noexcept { return wrench_; }  // hand-controller axes [N, N·m]
  double aux0() const noexcept { return aux0_; }              // door angle [rad] in the door scene
  double time() const noexcept { return time_; }              // [s] model task time
  ExecutorState state() const noexcept { return state_; }
  // The model's slave port: cumulative input energy [J], what the hand's passivity observer
  // balances against when the hand feels the model.
  double slave_in() const noexcept { return slave_in_; }
  // Where the model's arm starts: its scene's initial configuration [rad]. The scene is
  // built around it, so the model predicts the remote only from the same start (the ground
  // warns when the remote's arm is elsewhere).
  const JointVector& initial_joints() const noexcept { return initial_joints_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Vector6 wrench_ = Vector6::Zero();
  double aux0_ = 0.0;
  double time_ = 0.0;
  double carry_ = 0.0;  // [s] sampled time not yet stepped
  double slave_in_ = 0.0;
  JointVector initial_joints_ = JointVector::Zero();
  std::uint64_t sequence_ = 0;
  ExecutorState state_ = ExecutorState::kIdle;
};

}  // namespace tether::local

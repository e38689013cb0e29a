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
// The remote's delayed telemetry corrects the prediction, as a Smith predictor corrects its
// model's output: each remote sample (its task time τ, door angle, measured joints) is set
// against what the model itself had at task time τ (its own history, interpolated), and
// that difference, low-passed, is added to what the model predicts now. A remote that
// started elsewhere, or a scene that differs from the model's, is thereby followed within
// about a second, while the model's own state runs on untouched (so the hand's passivity
// accounting against the model's port stays whole). Task times align the two: the remote
// starts when the start call arrives and applies the increments sampled from then on, so
// its task time τ has applied the same increments as the model's τ.
//
// Frames: wrench() is the modelled F_a (robot on environment) at the MOTION origin along the
// directions the hand drives, rotated into the hand-controller axes of the last increment's
// mode, as the remote's reflection (ForceReflection.reflected) is.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// How well the display predicted the remote, over every remote sample so far: the error
// [rad] of the door angle (aux[0]) and the largest joint's, at the remote sample's task time,
// of what the operator was shown at that moment.
struct PredictionError {
  std::uint64_t samples = 0;  // remote samples compared
  double delayed_rms = 0.0;   // showing the newest remote sample (no prediction)
  double delayed_max = 0.0;
  double model_rms = 0.0;  // the model alone
  double model_max = 0.0;
  double corrected_rms = 0.0;  // the model corrected by the remote's telemetry
  double corrected_max = 0.0;
  double joints_corrected_max = 0.0;  // largest joint error, corrected [rad]
};

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
  // The EYE frame (EYE axes in WORLD) the remote last reported with its reflection
  // (ForceReflection.eye): the cameras may ride on an arm, and the task the model was built
  // with has only the frame it started with. From the next step, camera-mode increments are
  // mapped, and wrench() is expressed, through this frame, as the remote does.
  void set_eye(const Matrix3& world_R_eye) noexcept {
    world_R_eye_ = world_R_eye;
    has_eye_ = true;
  }

  // A remote telemetry sample, from any thread: its task time [s], door angle [rad] and
  // measured joints [rad]. Samples of a time the model has not reached, or has forgotten
  // (more than kHistory ago), are ignored.
  void observe(double remote_task_time, double remote_aux0,
               const JointVector& remote_joints) noexcept;
  // The prediction shown to the operator: the model corrected by the remote's telemetry.
  double predicted_aux0() const noexcept;
  JointVector predicted_joints() const noexcept;
  PredictionError prediction_error() const noexcept;
  // [s] how far back the model keeps its history (the longest round trip it can correct).
  static constexpr double kHistory = 8.0;

  const Vector6& wrench() const noexcept { return wrench_; }  // hand-controller axes [N, N·m]
  double aux0() const noexcept { return aux0_; }              // the model's own door angle [rad]
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
  Matrix3 world_R_eye_ = Matrix3::Identity();  // set_eye()
  bool has_eye_ = false;
  double aux0_ = 0.0;
  double time_ = 0.0;
  double carry_ = 0.0;  // [s] sampled time not yet stepped
  double slave_in_ = 0.0;
  JointVector initial_joints_ = JointVector::Zero();
  std::uint64_t sequence_ = 0;
  ExecutorState state_ = ExecutorState::kIdle;

  // The model's history, one row per step, and what was shown then (ring, preallocated).
  struct Row {
    double time = 0.0;  // model task time [s]
    double aux0 = 0.0;
    double shown_aux0 = 0.0;  // corrected prediction at that step
    JointVector q = JointVector::Zero();
    JointVector shown_q = JointVector::Zero();
  };
  // Remote samples as they arrived: their value, and the model's time when they did (what
  // the operator was shown without prediction from then on).
  struct Arrival {
    double arrived = 0.0;  // model task time at arrival [s]
    double aux0 = 0.0;
  };
  bool row_at(double time, Row& out) const noexcept;  // interpolated; mutex_ held
  mutable std::mutex mutex_;  // the history, the correction and the statistics
  std::vector<Row> rows_;
  std::size_t rows_head_ = 0, rows_size_ = 0;
  std::vector<Arrival> arrivals_;
  std::size_t arrivals_head_ = 0, arrivals_size_ = 0;
  double correction_aux0_ = 0.0;
  JointVector correction_q_ = JointVector::Zero();
  bool corrected_ = false;
  double newest_observed_ = -1.0;
  JointVector q_ = JointVector::Zero();  // the model's measured joints, last step
  PredictionError error_;
  double delayed_sq_ = 0.0, model_sq_ = 0.0, corrected_sq_ = 0.0;
};

}  // namespace tether::local

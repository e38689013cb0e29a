#include "tether/local/teleop/local_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tether/local/console/preview.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/sim/scene.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::local {

namespace {
// The history covers kHistory at the highest sampling rate a session allows (5 kHz).
constexpr std::size_t kRows = static_cast<std::size_t>(LocalModel::kHistory * 5000.0);
constexpr std::size_t kArrivals = 4096;  // remote samples kept (every one, at 100 Hz+)
// The correction follows the remote's samples with this time constant [s] of task time:
// short enough to take up an offset within about a second, long enough that the 10 Hz
// telemetry's steps and noise do not show.
constexpr double kCorrectionTimeConstant = 0.3;
}  // namespace

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
  // The ground has no images of the site: its model of the wrist camera is the geometric
  // one (no off-screen GL context on the operator's machine).
  sim.camera.source = remote::CameraSource::kGeometric;
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
  rows_.resize(kRows);
  arrivals_.resize(kArrivals);
  q_ = initial_joints_;
}

LocalModel::~LocalModel() = default;

void LocalModel::step(const Vector6& increment, double arm_angle_increment, TeleopMode mode,
                      bool enabled, double master_in, double dt) noexcept {
  carry_ += dt;
  const double period = impl_->task.period;
  // At least one cycle per sample, so the increment is applied now.
  const int cycles = std::max(1, static_cast<int>(std::floor(carry_ / period + 1e-9)));
  carry_ = std::max(0.0, carry_ - cycles * period);
  // A late sample (the ground's thread was held up) carries the motion of every cycle it
  // covers: spread over them, as the hand moved, rather than applied in the first as a
  // velocity spike B_t turns into a torque spike the operator then feels.
  // The remote's EYE frame against the model's: C takes the hand-controller base axes of
  // camera mode as the remote maps them (screen → EYE_remote → WORLD) into those the model's
  // task maps the same way in WORLD (through its own EYE), so an increment moves the model's
  // tool as the remote's, and Cᵀ takes the model's wrench back into the remote's axes.
  const TeleoperationParameters& tp = impl_->task.teleoperation;
  Matrix3 C = Matrix3::Identity();
  if (has_eye_) {
    C = tp.screen_R_hc_base.transpose() * tp.world_R_eye.transpose() * world_R_eye_ *
        tp.screen_R_hc_base;
  }
  Vector6 mapped = increment;
  if (mode == TeleopMode::kCamera) {
    mapped.head<3>() = C * increment.head<3>();
    mapped.tail<3>() = C * increment.tail<3>();
  }
  remote::HandControllerSample s;
  s.increment = mapped / cycles;
  s.arm_angle_increment = arm_angle_increment / cycles;
  s.mode = mode;
  s.deadman = enabled;
  s.master_in = master_in;
  for (int k = 0; k < cycles; ++k) {
    s.sequence = ++sequence_;
    impl_->queue.push(s);
    impl_->loop.run_cycles(1);
  }
  const remote::CycleTelemetry& t = impl_->executor.last_cycle();
  // What the remote's reflection carries: F_a along the directions the hand drives.
  wrench_ = t.reflected_wrench;
  if (t.teleop_mode == TeleopMode::kCamera) {
    wrench_.head<3>() = C.transpose() * t.reflected_wrench.head<3>();
    wrench_.tail<3>() = C.transpose() * t.reflected_wrench.tail<3>();
  }
  aux0_ = t.aux[0];
  time_ = t.task_time;
  state_ = t.state;
  slave_in_ = t.channel.slave.in;
  q_ = t.measured_joints;

  std::lock_guard lock(mutex_);
  if (rows_size_ > 0 && !(time_ > rows_[(rows_head_ + rows_size_ - 1) % kRows].time)) {
    // A held task's time stands still: the newest row stays the one for this time.
    --rows_size_;
  }
  Row& row = rows_[(rows_head_ + rows_size_) % kRows];
  row.time = time_;
  row.aux0 = aux0_;
  row.shown_aux0 = aux0_ + correction_aux0_;
  row.q = q_;
  row.shown_q = q_ + correction_q_;
  if (rows_size_ < kRows) {
    ++rows_size_;
  } else {
    rows_head_ = (rows_head_ + 1) % kRows;
  }
}

bool LocalModel::row_at(double time, Row& out) const noexcept {
  if (rows_size_ == 0) return false;
  const auto at = [&](std::size_t i) -> const Row& { return rows_[(rows_head_ + i) % kRows]; };
  if (time < at(0).time || time > at(rows_size_ - 1).time) return false;
  // The first row at or after `time`.
  std::size_t lo = 0, hi = rows_size_ - 1;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (at(mid).time < time) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const Row& b = at(lo);
  if (lo == 0 || b.time == time) {
    out = b;
    return true;
  }
  const Row& a = at(lo - 1);
  const double w = (time - a.time) / (b.time - a.time);
  out.time = time;
  out.aux0 = a.aux0 + w * (b.aux0 - a.aux0);
  out.shown_aux0 = a.shown_aux0 + w * (b.shown_aux0 - a.shown_aux0);
  out.q = a.q + w * (b.q - a.q);
  out.shown_q = a.shown_q + w * (b.shown_q - a.shown_q);
  return true;
}

void LocalModel::observe(double remote_task_time, double remote_aux0,
                         const JointVector& remote_joints) noexcept {
  if (!std::isfinite(remote_task_time) || !std::isfinite(remote_aux0) ||
      !remote_joints.allFinite()) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (remote_task_time <= newest_observed_) return;
  Row then;
  if (!row_at(remote_task_time, then)) return;
  const double previous = newest_observed_;
  newest_observed_ = remote_task_time;

  // What the operator was shown at the remote sample's time: with prediction, the row's
  // corrected value; without, the newest remote sample that had arrived by then.
  bool delayed_known = false;
  double delayed_shown = 0.0;
  for (std::size_t i = arrivals_size_; i-- > 0;) {
    const Arrival& a = arrivals_[(arrivals_head_ + i) % kArrivals];
    if (a.arrived <= remote_task_time) {
      delayed_known = true;
      delayed_shown = a.aux0;
      break;
    }
  }
  if (delayed_known) {
    const double e_delayed = std::abs(remote_aux0 - delayed_shown);
    const double e_model = std::abs(remote_aux0 - then.aux0);
    const double e_corrected = std::abs(remote_aux0 - then.shown_aux0);
    ++error_.samples;
    const auto n = static_cast<double>(error_.samples);
    delayed_sq_ += e_delayed * e_delayed;
    model_sq_ += e_model * e_model;
    corrected_sq_ += e_corrected * e_corrected;
    error_.delayed_rms = std::sqrt(delayed_sq_ / n);
    error_.model_rms = std::sqrt(model_sq_ / n);
    error_.corrected_rms = std::sqrt(corrected_sq_ / n);
    error_.delayed_max = std::max(error_.delayed_max, e_delayed);
    error_.model_max = std::max(error_.model_max, e_model);
    error_.corrected_max = std::max(error_.corrected_max, e_corrected);
    error_.joints_corrected_max =
        std::max(error_.joints_corrected_max, (remote_joints - then.shown_q).cwiseAbs().maxCoeff());
  }

  // The model's error at that time, low-passed into the correction (the first taken whole:
  // a remote that started elsewhere is followed at once).
  const double e_aux0 = remote_aux0 - then.aux0;
  const JointVector e_q = remote_joints - then.q;
  if (!corrected_) {
    corrected_ = true;
    correction_aux0_ = e_aux0;
    correction_q_ = e_q;
  } else {
    const double a = 1.0 - std::exp(-(remote_task_time - previous) / kCorrectionTimeConstant);
    correction_aux0_ += a * (e_aux0 - correction_aux0_);
    correction_q_ += a * (e_q - correction_q_);
  }

  Arrival& arrival = arrivals_[(arrivals_head_ + arrivals_size_) % kArrivals];
  arrival.arrived = rows_[(rows_head_ + rows_size_ - 1) % kRows].time;
  arrival.aux0 = remote_aux0;
  if (arrivals_size_ < kArrivals) {
    ++arrivals_size_;
  } else {
    arrivals_head_ = (arrivals_head_ + 1) % kArrivals;
  }
}

// The newest step's state with the newest correction (a sample observed since that step
// counts at once).
double LocalModel::predicted_aux0() const noexcept {
  std::lock_guard lock(mutex_);
  const double own = rows_size_ == 0 ? 0.0 : rows_[(rows_head_ + rows_size_ - 1) % kRows].aux0;
  return own + correction_aux0_;
}

JointVector LocalModel::predicted_joints() const noexcept {
  std::lock_guard lock(mutex_);
  const JointVector own =
      rows_size_ == 0 ? initial_joints_ : rows_[(rows_head_ + rows_size_ - 1) % kRows].q;
  return own + correction_q_;
}

PredictionError LocalModel::prediction_error() const noexcept {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace tether::local

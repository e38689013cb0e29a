#include "rendered_camera.h"

#include <mujoco/mujoco.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <future>
#include <stdexcept>
#include <string>

#include "offscreen_renderer.h"
#include "tether/remote/vision/tag_detector.h"

namespace tether::remote::detail {

namespace {

// The render thread's niceness: the control loop and the services come first.
constexpr int kRenderNice = 5;

void add(std::atomic<double>& sum, double v) noexcept {
  double old = sum.load(std::memory_order_relaxed);
  while (!sum.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct RenderedCamera::Worker {
  Worker(const mjModel* model, const CameraParameters& camera)
      : renderer(model, camera.width, camera.height),
        intrinsics(vision::CameraIntrinsics::from_field_of_view(camera.width, camera.height,
                                                                camera.field_of_view)),
        data(mj_makeData(model)),
        rgb(static_cast<std::size_t>(camera.width) * camera.height * 3),
        gray(static_cast<std::size_t>(camera.width) * camera.height) {
    if (data == nullptr) throw std::runtime_error("rendered camera: MuJoCo could not allocate");
  }
  ~Worker() { mj_deleteData(data); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  OffscreenRenderer renderer;
  vision::TagDetector detector;
  vision::CameraIntrinsics intrinsics;
  mjData* data;
  std::vector<std::uint8_t> rgb;
  std::vector<std::uint8_t> gray;
};

RenderedCamera::RenderedCamera(const mjModel* model, int camera_id, const CameraParameters& camera,
                               double tag_size, int tag_id, RenderTiming timing)
    : model_(model),
      camera_id_(camera_id),
      camera_(camera),
      tag_size_(tag_size),
      tag_id_(tag_id),
      timing_(timing) {
  if (static_cast<std::size_t>(model->nq) > kMaxPositions ||
      static_cast<std::size_t>(model->nmocap) > kMaxMocap) {
    throw std::runtime_error("rendered camera: the model has " + std::to_string(model->nq) +
                             " positions and " + std::to_string(model->nmocap) +
                             " mocap bodies; snapshots carry at most " +
                             std::to_string(kMaxPositions) + " and " + std::to_string(kMaxMocap));
  }
  if (timing == RenderTiming::kSynchronous) {
    worker_ = std::make_unique<Worker>(model, camera);
    // The physics step renders, on whichever thread advances the arm.
    worker_->renderer.release();
    return;
  }
  std::promise<void> ready;
  std::future<void> started = ready.get_future();
  thread_ = std::thread([this, &ready] {
    try {
      worker_ = std::make_unique<Worker>(model_, camera_);
      ready.set_value();
    } catch (...) {
      ready.set_exception(std::current_exception());
      return;
    }
    run();
  });
  try {
    started.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

RenderedCamera::~RenderedCamera() {
  if (thread_.joinable()) {
    stop_.store(true);
    wake_.fetch_add(1);
    wake_.notify_one();
    thread_.join();
  }
  // The worker's GL context is released by the thread that made it current, or made
  // current here to be freed.
}

void RenderedCamera::run() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kRenderNice);
  std::uint64_t seen = 0;
  Snapshot shot;
  while (!stop_.load()) {
    wake_.wait(seen);
    seen = wake_.load();
    // Only the newest capture is worth the time: older ones waiting are replaced by it.
    bool any = false;
    Snapshot next;
    while (captures_.pop(next)) {
      if (any) skipped_.fetch_add(1, std::memory_order_relaxed);
      shot = next;
      any = true;
    }
    if (!any || stop_.load()) continue;
    const VisualReading reading = process(shot);
    if (!results_.push(reading)) skipped_.fetch_add(1, std::memory_order_relaxed);
  }
  worker_->renderer.release();
}

VisualReading RenderedCamera::process(const Snapshot& shot) noexcept {
  mjData* d = worker_->data;
  set_render_state(model_, d, shot.qpos.data(), shot.mocap_pos.data(), shot.mocap_quat.data(),
                   shot.time);
  return analyse(d, shot.frame, shot.time);
}

VisualReading RenderedCamera::analyse(const mjData* d, std::uint64_t frame, double time) noexcept {
  Worker& w = *worker_;
  VisualReading reading;
  reading.frame = frame;
  reading.capture_time = time;
  try {
    const auto start = std::chrono::steady_clock::now();
    if (!w.renderer.render(d, camera_id_, camera_.width, camera_.height, w.rgb.data())) {
      return reading;  // not valid: no image
    }
    rgb_to_gray(w.rgb.data(), camera_.width, camera_.height, w.gray.data());
    add(render_seconds_, seconds_since(start));
    const vision::GrayImage image{w.gray.data(), camera_.width, camera_.height, camera_.width};
    const std::optional<vision::TagDetection> tag =
        w.detector.find(image, w.intrinsics, tag_size_, tag_id_);
    const double detect = w.detector.last_detection_time();
    add(detect_seconds_, detect);
    if (detect > worst_detect_.load(std::memory_order_relaxed)) worst_detect_.store(detect);
    processed_.fetch_add(1, std::memory_order_relaxed);
    if (tag) {
      reading.valid = true;
      reading.target_in_camera = tag->camera_T_tag.p;
      detected_.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    // A failed detection (allocation) is an image without the target: the behaviour's
    // lost-target timeout stops the arm if it lasts.
  }
  return reading;
}

void RenderedCamera::step(double t, const mjData* data) noexcept {
  if (t + 1e-9 < next_capture_) return;
  next_capture_ += 1.0 / camera_.frame_rate;
  Snapshot shot;
  shot.frame = ++frames_;
  shot.time = t;
  if (timing_ == RenderTiming::kSynchronous) {
    // From the simulation's own data, whose kinematics and camera poses are of time t.
    deliver(analyse(data, shot.frame, t));
    return;
  }
  for (int i = 0; i < model_->nq; ++i) shot.qpos[static_cast<std::size_t>(i)] = data->qpos[i];
  for (int i = 0; i < 3 * model_->nmocap; ++i) {
    shot.mocap_pos[static_cast<std::size_t>(i)] = data->mocap_pos[i];
  }
  for (int i = 0; i < 4 * model_->nmocap; ++i) {
    shot.mocap_quat[static_cast<std::size_t>(i)] = data->mocap_quat[i];
  }
  if (!captures_.push(shot)) skipped_.fetch_add(1, std::memory_order_relaxed);
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_one();
}

void RenderedCamera::deliver(const VisualReading& reading) noexcept {
  if (pending_count_ == static_cast<int>(pending_.size())) return;  // never at these rates
  Pending& slot =
      pending_[static_cast<std::size_t>((pending_head_ + pending_count_) % pending_.size())];
  slot.available = reading.capture_time + camera_.latency;
  slot.reading = reading;
  ++pending_count_;
}

const VisualReading& RenderedCamera::reading(double t) noexcept {
  VisualReading done;
  while (results_.pop(done)) deliver(done);
  while (pending_count_ > 0) {
    const Pending& oldest = pending_[static_cast<std::size_t>(pending_head_)];
    if (oldest.available > t + 1e-9) break;
    delivered_ = oldest.reading;
    pending_head_ = (pending_head_ + 1) % static_cast<int>(pending_.size());
    --pending_count_;
  }
  return delivered_;
}

CameraStatistics RenderedCamera::statistics() const noexcept {
  CameraStatistics s;
  s.images = processed_.load();
  s.detected = detected_.load();
  s.skipped = skipped_.load();
  const double n = s.images > 0 ? static_cast<double>(s.images) : 1.0;
  s.mean_render_time = render_seconds_.load() / n;
  s.mean_detection_time = detect_seconds_.load() / n;
  s.worst_detection_time = worst_detect_.load();
  return s;
}

}  // namespace tether::remote::detail

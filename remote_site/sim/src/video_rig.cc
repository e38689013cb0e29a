#include "video_rig.h"

#include <mujoco/mujoco.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <future>
#include <stdexcept>
#include <string>

#include "offscreen_renderer.h"

namespace tether::remote::detail {

namespace {

constexpr int kRenderNice = 5;  // the control loop and the services come first

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

struct VideoRig::Worker {
  Worker(const mjModel* model, int width, int height)
      : renderer(model, width, height),
        data(mj_makeData(model)),
        rgb(static_cast<std::size_t>(width) * height * 3) {
    if (data == nullptr) throw std::runtime_error("video rig: MuJoCo could not allocate");
  }
  ~Worker() { mj_deleteData(data); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  OffscreenRenderer renderer;
  mjData* data;
  std::vector<std::uint8_t> rgb;
};

VideoRig::VideoRig(const mjModel* model, std::vector<SceneCamera> cameras,
                   std::vector<int> camera_ids)
    : model_(model), cameras_(std::move(cameras)), camera_ids_(std::move(camera_ids)) {
  if (cameras_.size() > kMaxCameras || cameras_.size() != camera_ids_.size()) {
    throw std::invalid_argument("video rig: at most " + std::to_string(kMaxCameras) +
                                " cameras, each with its model camera");
  }
  if (static_cast<std::size_t>(model->nq) > kMaxPositions ||
      static_cast<std::size_t>(model->nmocap) > kMaxMocap) {
    throw std::runtime_error(
        "video rig: the model has more positions or mocap bodies than a "
        "snapshot carries");
  }
  sinks_.resize(cameras_.size());
}

VideoRig::~VideoRig() {
  if (thread_.joinable()) {
    stop_.store(true);
    wake_.fetch_add(1);
    wake_.notify_one();
    thread_.join();
  }
}

void VideoRig::start() {
  std::lock_guard lock(start_mutex_);
  if (thread_.joinable()) return;
  int width = 16;
  int height = 16;
  for (const SceneCamera& c : cameras_) {
    width = std::max(width, c.width);
    height = std::max(height, c.height);
  }
  std::promise<void> ready;
  std::future<void> started = ready.get_future();
  thread_ = std::thread([this, &ready, width, height] {
    try {
      worker_ = std::make_unique<Worker>(model_, width, height);
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

std::unique_ptr<camera::CameraWatch> VideoRig::watch(const std::string& name,
                                                     camera::ImageSink sink) {
  const auto it = std::find_if(cameras_.begin(), cameras_.end(),
                               [&](const SceneCamera& c) { return c.name == name; });
  if (it == cameras_.end()) {
    std::string names;
    for (const SceneCamera& c : cameras_) names += (names.empty() ? "" : ", ") + c.name;
    throw std::invalid_argument("camera '" + name + "': no such camera here (there are: " + names +
                                ")");
  }
  const auto index = static_cast<std::size_t>(it - cameras_.begin());
  start();
  std::uint64_t id = 0;
  {
    std::lock_guard lock(sinks_mutex_);
    id = next_id_++;
    sinks_[index].push_back(Sink{id, std::move(sink)});
  }
  watchers_[index].fetch_add(1);
  return std::make_unique<camera::CameraWatch>([this, index, id] { unwatch(index, id); });
}

void VideoRig::unwatch(std::size_t camera, std::uint64_t id) {
  watchers_[camera].fetch_sub(1);
  // Under the lock the render thread holds while it calls sinks: none runs after this.
  std::lock_guard lock(sinks_mutex_);
  auto& list = sinks_[camera];
  list.erase(std::remove_if(list.begin(), list.end(), [id](const Sink& s) { return s.id == id; }),
             list.end());
}

void VideoRig::step(double t, const mjData* data) noexcept {
  bool posted = false;
  for (std::size_t i = 0; i < cameras_.size(); ++i) {
    if (watchers_[i].load(std::memory_order_relaxed) == 0) {
      next_capture_[i] = t;  // first image as soon as someone watches
      continue;
    }
    if (t + 1e-9 < next_capture_[i]) continue;
    next_capture_[i] = std::max(next_capture_[i] + 1.0 / cameras_[i].frame_rate, t);
    Snapshot shot;
    shot.camera = i;
    shot.time = t;
    shot.capture_ns = monotonic_ns();
    for (int k = 0; k < model_->nq; ++k) shot.qpos[static_cast<std::size_t>(k)] = data->qpos[k];
    for (int k = 0; k < 3 * model_->nmocap; ++k) {
      shot.mocap_pos[static_cast<std::size_t>(k)] = data->mocap_pos[k];
    }
    for (int k = 0; k < 4 * model_->nmocap; ++k) {
      shot.mocap_quat[static_cast<std::size_t>(k)] = data->mocap_quat[k];
    }
    if (captures_.push(shot)) {
      posted = true;
    } else {
      skipped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (posted) {
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
  }
}

void VideoRig::run() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kRenderNice);
  // Named, so its share of the CPU can be read per thread (deploy/video-cost.sh, top -H).
  pthread_setname_np(pthread_self(), "tether-video");
  // Each camera's newest capture not rendered yet. A thread that falls behind (it is niced, and
  // a watcher's sink encodes on it) renders the newest state, as a real camera's driver hands
  // out its latest frame: rendering every queued capture in turn would show the operator a
  // backlog, up to the ring's 8 captures old, that grows with the machine's load.
  std::array<Snapshot, kMaxCameras> newest{};
  std::array<bool, kMaxCameras> due{};
  std::uint64_t seen = 0;
  while (!stop_.load()) {
    wake_.wait(seen);
    seen = wake_.load();
    while (!stop_.load()) {
      Snapshot shot;
      while (captures_.pop(shot)) {
        if (due[shot.camera]) skipped_.fetch_add(1, std::memory_order_relaxed);
        newest[shot.camera] = shot;
        due[shot.camera] = true;
      }
      // The camera waiting longest goes first; the ring is read again after each render.
      std::size_t next = kMaxCameras;
      for (std::size_t i = 0; i < cameras_.size(); ++i) {
        if (due[i] && (next == kMaxCameras || newest[i].capture_ns < newest[next].capture_ns)) {
          next = i;
        }
      }
      if (next == kMaxCameras) break;
      due[next] = false;
      render(newest[next]);
    }
  }
  worker_->renderer.release();
}

void VideoRig::render(const Snapshot& shot) {
  mjData* d = worker_->data;
  set_render_state(model_, d, shot.qpos.data(), shot.mocap_pos.data(), shot.mocap_quat.data(),
                   shot.time);
  const SceneCamera& c = cameras_[shot.camera];
  if (!worker_->renderer.render(d, camera_ids_[shot.camera], c.width, c.height,
                                worker_->rgb.data())) {
    skipped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  rendered_.fetch_add(1, std::memory_order_relaxed);
  camera::CameraImage image;
  image.camera = &c;
  image.number = numbers_[shot.camera]++;
  image.arm_time = shot.time;
  image.capture_ns = shot.capture_ns;
  image.width = c.width;
  image.height = c.height;
  image.rgb = std::span<const std::uint8_t>(worker_->rgb.data(),
                                            static_cast<std::size_t>(c.width) * c.height * 3);
  // MuJoCo's camera looks along its −z with y up; C looks along z with y down. The
  // model's world is BASE.
  const int id = camera_ids_[shot.camera];
  image.pose_known = true;
  for (int r = 0; r < 3; ++r) {
    image.base_T_camera.p(r) = d->cam_xpos[3 * id + r];
    for (int k = 0; k < 3; ++k) {
      image.base_T_camera.R(r, k) = (k == 0 ? 1.0 : -1.0) * d->cam_xmat[9 * id + 3 * r + k];
    }
  }
  std::lock_guard lock(sinks_mutex_);
  for (const Sink& s : sinks_[shot.camera]) {
    try {
      s.sink(image);
    } catch (...) {
      // A sink's failure is its own (its stream ends); the others go on.
    }
  }
}

}  // namespace tether::remote::detail

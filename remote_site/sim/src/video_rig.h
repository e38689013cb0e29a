#pragma once

// The simulated site's cameras as an operator watches them (tether/remote/camera/
// camera_device.h): the physics step copies the state of each watched camera's capture time
// into a ring (no allocation, no lock), and a render thread of its own (niced, started by the
// first watch) renders that camera's image from it and hands it to the camera's sinks. An
// unwatched camera costs nothing; a thread that is behind renders each camera's newest
// capture and skips (counts) the older ones.
// Internal to SimulatedArm.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/remote/camera/camera_device.h"
#include "tether/remote/loop/spsc_ring.h"

struct mjModel_;
struct mjData_;

namespace tether::remote::detail {

class VideoRig {
 public:
  // `cameras` and the model's camera ids, in the same order.
  VideoRig(const mjModel_* model, std::vector<SceneCamera> cameras, std::vector<int> camera_ids);
  ~VideoRig();
  VideoRig(const VideoRig&) = delete;
  VideoRig& operator=(const VideoRig&) = delete;

  const std::vector<SceneCamera>& cameras() const { return cameras_; }

  // camera_device.h's watch().
  std::unique_ptr<camera::CameraWatch> watch(const std::string& name, camera::ImageSink sink);

  // Physics thread, every step, with the state of arm time t: captures what is due.
  void step(double t, const mjData_* data) noexcept;

  std::uint64_t skipped() const { return skipped_.load(); }
  std::uint64_t rendered() const { return rendered_.load(); }

 private:
  static constexpr std::size_t kMaxPositions = 32;
  static constexpr std::size_t kMaxMocap = 4;
  static constexpr std::size_t kMaxCameras = 8;
  struct Snapshot {
    std::size_t camera = 0;
    double time = 0.0;
    std::int64_t capture_ns = 0;
    std::array<double, kMaxPositions> qpos{};
    std::array<double, 3 * kMaxMocap> mocap_pos{};
    std::array<double, 4 * kMaxMocap> mocap_quat{};
  };
  struct Sink {
    std::uint64_t id = 0;
    camera::ImageSink sink;
  };
  struct Worker;

  void start();  // the render thread, once
  void run();
  void render(const Snapshot& shot);  // render thread: the image, then the camera's sinks
  void unwatch(std::size_t camera, std::uint64_t id);

  const mjModel_* model_;
  std::vector<SceneCamera> cameras_;
  std::vector<int> camera_ids_;

  std::array<std::atomic<int>, kMaxCameras> watchers_{};  // read by the physics thread
  std::array<double, kMaxCameras> next_capture_{};        // physics thread only
  std::array<std::uint64_t, kMaxCameras> numbers_{};      // render thread only

  std::mutex sinks_mutex_;  // never taken by the physics thread
  std::vector<std::vector<Sink>> sinks_;
  std::uint64_t next_id_ = 1;

  std::mutex start_mutex_;
  std::unique_ptr<Worker> worker_;
  SpscRing<Snapshot, 8> captures_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> wake_{0};
  std::thread thread_;
  std::atomic<std::uint64_t> skipped_{0};
  std::atomic<std::uint64_t> rendered_{0};
};

}  // namespace tether::remote::detail

#pragma once

// The visual-target scene's wrist camera as a real one works: MuJoCo renders the image the
// camera sees (offscreen_renderer.h), libapriltag finds the target's tag in it and gives its
// pose from the camera's intrinsics and the tag's size (tether/remote/vision/tag_detector.h),
// and the reading reaches the arm's measurements `latency` after the image was taken
// (scene.h CameraParameters), or when the detection is done if that is later. Internal to
// SimulatedArm.
//
// Two timings (scene.h RenderTiming):
//   kThread       the simulation copies the state of each capture time (joint positions and
//                 the target's pose: no allocation, no lock) into a ring that a render thread
//                 of its own (niced) takes from; it renders, detects and hands the reading
//                 back through a second ring. The physics step never waits for it. A capture
//                 the renderer is still behind on replaces the older one waiting (counted).
//   kSynchronous  the physics step renders and detects at each capture time, so a batch run
//                 is deterministic whatever the machine's speed.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/loop/spsc_ring.h"
#include "tether/remote/sim/scene.h"

struct mjModel_;
struct mjData_;

namespace tether::remote::detail {

class RenderedCamera {
 public:
  // `camera_id`: the MJCF camera (scene.h's C frame, MuJoCo's convention turned); the tag is
  // tag36h11 `tag_id` whose black square's side is `tag_size` [m]. Throws std::runtime_error
  // if the off-screen context, the render thread or the detector cannot be set up.
  RenderedCamera(const mjModel_* model, int camera_id, const CameraParameters& camera,
                 double tag_size, int tag_id, RenderTiming timing);
  ~RenderedCamera();
  RenderedCamera(const RenderedCamera&) = delete;
  RenderedCamera& operator=(const RenderedCamera&) = delete;

  // Call at every physics step with the state of arm time t (its kinematics computed): takes
  // an image if one is due (every 1/frame_rate from 0).
  void step(double t, const mjData_* data) noexcept;

  // The newest reading delivered by arm time t.
  const VisualReading& reading(double t) noexcept;

  CameraStatistics statistics() const noexcept;

 private:
  static constexpr std::size_t kMaxPositions = 32;  // qpos entries a snapshot carries
  static constexpr std::size_t kMaxMocap = 4;
  struct Snapshot {
    std::uint64_t frame = 0;
    double time = 0.0;
    std::array<double, kMaxPositions> qpos{};
    std::array<double, 3 * kMaxMocap> mocap_pos{};
    std::array<double, 4 * kMaxMocap> mocap_quat{};
  };
  struct Pending {
    double available = 0.0;
    VisualReading reading;
  };
  struct Worker;  // renderer, detector, images: used by one thread at a time

  VisualReading process(const Snapshot& shot) noexcept;  // on the render thread
  // Renders and detects from `d` (kinematics and camera poses of `time` computed).
  VisualReading analyse(const mjData_* d, std::uint64_t frame, double time) noexcept;
  void run();                                           // the render thread
  void deliver(const VisualReading& reading) noexcept;  // into the latency queue

  const mjModel_* model_;
  int camera_id_;
  CameraParameters camera_;
  double tag_size_;
  int tag_id_;
  RenderTiming timing_;
  double next_capture_ = 0.0;
  std::uint64_t frames_ = 0;
  std::unique_ptr<Worker> worker_;

  SpscRing<Snapshot, 4> captures_;
  SpscRing<VisualReading, 16> results_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> wake_{0};  // futex word: captures posted
  std::thread thread_;

  std::array<Pending, 16> pending_{};
  int pending_head_ = 0;
  int pending_count_ = 0;
  VisualReading delivered_;

  std::atomic<std::uint64_t> skipped_{0};
  std::atomic<std::uint64_t> processed_{0};
  std::atomic<std::uint64_t> detected_{0};
  std::atomic<double> render_seconds_{0.0};  // sums
  std::atomic<double> detect_seconds_{0.0};
  std::atomic<double> worst_detect_{0.0};
};

}  // namespace tether::remote::detail

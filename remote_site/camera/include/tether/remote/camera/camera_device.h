#pragma once

// What a site's cameras offer the operator's views: the cameras there are (scene_description.h
// SceneCamera) and a way to watch one. The embedded simulation renders them (SimulatedArm); a
// real site's camera drivers implement the same.
//
// Threads: images reach a sink on the cameras' own thread, never the control cycle's; a sink
// must return quickly (copy, or encode and send) and never call back into the device.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tether/common/scene_description.h"

namespace tether::remote::camera {

struct CameraImage {
  const SceneCamera* camera = nullptr;  // which camera took it
  std::uint64_t number = 0;             // images this camera took since it was first watched
  double arm_time = 0.0;                // [s] the arm's clock when it was taken
  std::int64_t capture_ns = 0;          // [ns] CLOCK_MONOTONIC when it was taken
  int width = 0;                        // [px]
  int height = 0;                       // [px]
  std::span<const std::uint8_t> rgb;    // width × height × 3 bytes, top row first
  // Where the camera was when it took the image: its frame C (SceneCamera's convention) in
  // BASE, when the device knows it (a camera on the gripper or the pan-tilt mount moves).
  bool pose_known = false;
  Frame base_T_camera;
};

using ImageSink = std::function<void(const CameraImage& image)>;

// Watching lasts as long as this lives; destroying it stops the images (waiting for a sink
// call in progress to return).
class CameraWatch {
 public:
  explicit CameraWatch(std::function<void()> stop) : stop_(std::move(stop)) {}
  ~CameraWatch() {
    if (stop_) stop_();
  }
  CameraWatch(const CameraWatch&) = delete;
  CameraWatch& operator=(const CameraWatch&) = delete;

 private:
  std::function<void()> stop_;
};

class CameraDevices {
 public:
  virtual ~CameraDevices() = default;
  virtual const std::vector<SceneCamera>& cameras() const = 0;
  // Images of camera `name` at its frame rate go to `sink` until the watch is destroyed.
  // Throws std::invalid_argument naming the camera if there is no such one, std::runtime_error
  // if it cannot deliver (its renderer or driver failed to start).
  virtual std::unique_ptr<CameraWatch> watch(const std::string& name, ImageSink sink) = 0;
  // Aims the pan-tilt head that carries camera `name` (mount "camera_mount"): `pan` about
  // BASE z from the head's initial aim (+ turns the view left), `tilt` about the cameras' x
  // axis (+ looks up) [rad], within ±kMaxPan and ±kMaxTilt (the caller checks). The head
  // turns there at its own rate. Returns what is wrong (no such camera, not on a head), or
  // an empty string.
  virtual std::string aim(const std::string& name, double pan, double tilt) {
    (void)pan;
    (void)tilt;
    return "camera '" + name + "' cannot be aimed at this site";
  }
};

inline constexpr double kMaxPan = 1.5707963267948966;    // [rad] 90°
inline constexpr double kMaxTilt = 0.78539816339744831;  // [rad] 45°
inline constexpr double kAimRate = 1.0471975511965976;   // [rad/s] 60°/s, the head's speed

}  // namespace tether::remote::camera

#include "tether/remote/camera_link/camera_vision_arm.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "tether/remote/vision/tag_detector.h"

namespace tether::remote::camera_link {

// Used by the camera's thread only (the sink), apart from the statistics.
struct CameraVisionArm::Detector {
  CameraVisionOptions options;
  vision::TagDetector detector;
  vision::CameraIntrinsics intrinsics;
  std::vector<std::uint8_t> gray;
  std::uint64_t frames = 0;
  mutable std::mutex statistics_mutex;  // the camera's thread and statistics(), never the cycle
  CameraVisionStatistics statistics;
};

std::optional<CameraVisionOptions> vision_options_for(const SceneDescription& scene) {
  const auto target = std::find_if(
      scene.bodies.begin(), scene.bodies.end(),
      [](const SceneBody& b) { return b.name == "visual_target" && b.tag.has_value(); });
  if (target == scene.bodies.end()) return std::nullopt;
  CameraVisionOptions options;
  options.tag_id = target->tag->id;
  options.tag_size = target->tag->size;
  return options;
}

CameraVisionArm::CameraVisionArm(ArmInterface& arm, camera::CameraDevices& cameras,
                                 const CameraVisionOptions& options)
    : arm_(arm), detector_(std::make_unique<Detector>()) {
  if (!(options.tag_size > 0.0 && options.tag_size < 10.0)) {
    throw std::invalid_argument("camera vision: tag_size = " + std::to_string(options.tag_size) +
                                " m: must be in (0, 10)");
  }
  if (options.tag_id < 0 || options.tag_id >= vision::kTag36h11Count) {
    throw std::invalid_argument("camera vision: tag_id = " + std::to_string(options.tag_id) +
                                ": must be in [0, " + std::to_string(vision::kTag36h11Count - 1) +
                                "] (tag36h11)");
  }
  const auto& list = cameras.cameras();
  const auto it = std::find_if(list.begin(), list.end(),
                               [&](const SceneCamera& c) { return c.name == options.camera; });
  if (it == list.end()) {
    throw std::invalid_argument("camera vision: camera = '" + options.camera +
                                "': the site has no such camera");
  }
  Detector& d = *detector_;
  d.options = options;
  d.intrinsics =
      vision::CameraIntrinsics::from_field_of_view(it->width, it->height, it->field_of_view);
  d.gray.resize(static_cast<std::size_t>(it->width) * it->height);
  watch_ = cameras.watch(options.camera, [this](const camera::CameraImage& image) {
    Detector& det = *detector_;
    if (image.width != det.intrinsics.width || image.height != det.intrinsics.height) return;
    // ITU-R BT.601 luma, in integers.
    const std::size_t n = static_cast<std::size_t>(image.width) * image.height;
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned r = image.rgb[3 * i], g = image.rgb[3 * i + 1], b = image.rgb[3 * i + 2];
      det.gray[i] = static_cast<std::uint8_t>((77 * r + 150 * g + 29 * b) >> 8);
    }
    VisualReading reading;
    reading.frame = ++det.frames;
    reading.capture_time = image.arm_time;
    double took = 0.0;
    try {
      const vision::GrayImage gray{det.gray.data(), image.width, image.height, image.width};
      const auto tag =
          det.detector.find(gray, det.intrinsics, det.options.tag_size, det.options.tag_id);
      took = det.detector.last_detection_time();
      if (tag) {
        reading.valid = true;
        reading.target_in_camera = tag->camera_T_tag.p;
      }
    } catch (...) {
      // A failed detection is an image without the target: the behaviour's lost-target
      // timeout stops the arm if it lasts.
    }
    reading_.store(reading);
    const std::lock_guard<std::mutex> lock(det.statistics_mutex);
    det.statistics.images++;
    if (reading.valid) det.statistics.detected++;
    det.statistics.detect_seconds += took;
    det.statistics.worst_detect = std::max(det.statistics.worst_detect, took);
  });
}

CameraVisionArm::~CameraVisionArm() { watch_.reset(); }

CameraVisionStatistics CameraVisionArm::statistics() const {
  const std::lock_guard<std::mutex> lock(detector_->statistics_mutex);
  return detector_->statistics;
}

}  // namespace tether::remote::camera_link

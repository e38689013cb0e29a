#pragma once

// AprilTag detection (tag36h11, Debian's libapriltag) and the tag's pose in the camera frame
// from one image, as the visual-tracking behaviour's camera needs it.
//
// Frames and units. Image coordinates [px]: u right, v down, the centre of pixel (i, j) at
// (i + 0.5, j + 0.5), so a centred principal point is (width/2, height/2). The camera frame
// C (the behaviour's): z along the optical axis out of the lens, x right and y down in the
// image. The tag frame: origin at the tag's centre, z out of the printed face's back (into
// the tag, away from a camera that sees it), x and y along its sides. `tag_size` is the side
// of the tag's black square [m] (tag36h11: 8 of its 10 cells; the white margin is outside).
//
// Not real-time: detect() allocates (libapriltag's work lists) and takes milliseconds; it runs
// on a camera's own thread (or, in a deterministic batch run, in the simulation step).

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/common/types.h"

namespace tether::remote::vision {

struct CameraIntrinsics {
  int width = 640;          // [px]
  int height = 480;         // [px]
  double fx = 554.2562584;  // [px] focal length along u
  double fy = 554.2562584;  // [px] along v
  double cx = 320.0;        // [px] principal point
  double cy = 240.0;        // [px]

  // A pinhole camera with square pixels whose horizontal field of view is `fov_x` [rad] and
  // whose principal point is the image centre.
  static CameraIntrinsics from_field_of_view(int width, int height, double fov_x);
};

// A borrowed 8-bit grey image, rows `stride` bytes apart, top row first.
struct GrayImage {
  const std::uint8_t* pixels = nullptr;
  int width = 0;
  int height = 0;
  int stride = 0;
};

struct TagDetection {
  int id = -1;
  Frame camera_T_tag;                                // the tag's pose in C [m]
  std::array<Eigen::Vector2d, 4> corners{};          // [px] image coordinates, counter-clockwise
  Eigen::Vector2d center = Eigen::Vector2d::Zero();  // [px]
  double decision_margin = 0.0;     // libapriltag's decoding confidence (> 30: sure)
  double reprojection_error = 0.0;  // [m²] of the pose fit (object-space)
  int hamming = 0;                  // bits corrected
};

struct TagDetectorOptions {
  // Image decimation before quad detection (libapriltag quad_decimate): 2 halves the time,
  // the corners are refined on the full image.
  double decimate = 1.0;
  double blur = 0.0;                  // [px] Gaussian σ before detection (quad_sigma); 0: none
  int threads = 1;                    // libapriltag's worker threads
  int max_hamming = 1;                // bit errors a detection may correct
  double min_decision_margin = 20.0;  // weaker detections are discarded
};

class TagDetector {
 public:
  // Throws std::invalid_argument naming a field outside its range.
  explicit TagDetector(const TagDetectorOptions& options = {});
  ~TagDetector();
  TagDetector(const TagDetector&) = delete;
  TagDetector& operator=(const TagDetector&) = delete;

  // Every tag36h11 tag in the image. The image must be at least 16 × 16 px with
  // stride ≥ width (std::invalid_argument otherwise).
  std::vector<TagDetection> detect(const GrayImage& image, const CameraIntrinsics& camera,
                                   double tag_size);

  // The tag `id` if it is in the image (the one with the largest decision margin if several).
  std::optional<TagDetection> find(const GrayImage& image, const CameraIntrinsics& camera,
                                   double tag_size, int id);

  // [s] wall-clock time the last detect() or find() took.
  double last_detection_time() const { return last_time_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double last_time_ = 0.0;
};

// The printed tag36h11 tag `id` (0 … 586) as a grey image of its 10 × 10 cells (white margin,
// black square, 6 × 6 data cells), each cell `cell_pixels` square; row 0 is the tag's top,
// as the detector reads it. Throws std::invalid_argument for an id or size out of range.
std::vector<std::uint8_t> tag36h11_image(int id, int cell_pixels);
inline constexpr int kTag36h11Cells = 10;      // cells along a side, margin included
inline constexpr int kTag36h11BlackCells = 8;  // cells along the black square's side
using ::tether::kTag36h11Count;                // ids 0 … 586 (scene_description.h)

}  // namespace tether::remote::vision

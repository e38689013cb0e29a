#include "tether/remote/vision/tag_detector.h"

#include <apriltag/apriltag.h>
#include <apriltag/apriltag_pose.h>
#include <apriltag/tag36h11.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tether::remote::vision {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void require(bool ok, const char* field, double value, const char* rule) {
  if (!ok) {
    throw std::invalid_argument(std::string("tag detector: ") + field + " = " + number(value) +
                                ": must be " + rule);
  }
}

// Debian's libapriltag does not export matd_destroy or image_u8_destroy (its common/ helpers
// are hidden), so what they do is done here: a matd_t is one allocation ending in its data,
// an image_u8_t a struct and its buffer, both from calloc.
struct MatdDeleter {
  void operator()(matd_t* m) const { std::free(m); }  // NOLINT(cppcoreguidelines-no-malloc)
};
void destroy_image(image_u8_t* im) {
  if (im == nullptr) return;
  std::free(im->buf);  // NOLINT(cppcoreguidelines-no-malloc)
  std::free(im);       // NOLINT(cppcoreguidelines-no-malloc)
}

}  // namespace

CameraIntrinsics CameraIntrinsics::from_field_of_view(int width, int height, double fov_x) {
  require(width >= 16, "width", width, "≥ 16 px");
  require(height >= 16, "height", height, "≥ 16 px");
  require(fov_x > 0.0 && fov_x < 3.0, "field_of_view", fov_x, "in (0, 3) rad");
  CameraIntrinsics c;
  c.width = width;
  c.height = height;
  c.fx = 0.5 * width / std::tan(0.5 * fov_x);
  c.fy = c.fx;
  c.cx = 0.5 * width;
  c.cy = 0.5 * height;
  return c;
}

struct TagDetector::Impl {
  apriltag_family_t* family = nullptr;
  apriltag_detector_t* detector = nullptr;
  double min_margin = 0.0;
  ~Impl() {
    if (detector != nullptr) apriltag_detector_destroy(detector);
    if (family != nullptr) tag36h11_destroy(family);
  }
};

TagDetector::TagDetector(const TagDetectorOptions& options) : impl_(std::make_unique<Impl>()) {
  require(options.decimate >= 1.0 && options.decimate <= 8.0, "decimate", options.decimate,
          "in [1, 8]");
  require(options.blur >= 0.0 && options.blur <= 5.0, "blur", options.blur, "in [0, 5] px");
  require(options.threads >= 1 && options.threads <= 16, "threads", options.threads, "in [1, 16]");
  require(options.max_hamming >= 0 && options.max_hamming <= 2, "max_hamming", options.max_hamming,
          "in [0, 2]");
  require(options.min_decision_margin >= 0.0, "min_decision_margin", options.min_decision_margin,
          "≥ 0");
  impl_->family = tag36h11_create();
  impl_->detector = apriltag_detector_create();
  if (impl_->family == nullptr || impl_->detector == nullptr) {
    throw std::runtime_error("tag detector: libapriltag could not allocate its detector");
  }
  apriltag_detector_add_family_bits(impl_->detector, impl_->family, options.max_hamming);
  impl_->detector->quad_decimate = static_cast<float>(options.decimate);
  impl_->detector->quad_sigma = static_cast<float>(options.blur);
  impl_->detector->nthreads = options.threads;
  impl_->detector->refine_edges = true;
  impl_->min_margin = options.min_decision_margin;
}

TagDetector::~TagDetector() = default;

std::vector<TagDetection> TagDetector::detect(const GrayImage& image,
                                              const CameraIntrinsics& camera, double tag_size) {
  require(image.pixels != nullptr, "image.pixels", 0.0, "an image");
  require(image.width >= 16, "image.width", image.width, "≥ 16 px");
  require(image.height >= 16, "image.height", image.height, "≥ 16 px");
  require(image.stride >= image.width, "image.stride", image.stride, "≥ the width");
  require(tag_size > 0.0 && std::isfinite(tag_size), "tag_size", tag_size, "finite and > 0 m");
  require(camera.fx > 0.0 && camera.fy > 0.0, "camera.fx", camera.fx, "> 0 px (and fy)");
  const auto start = std::chrono::steady_clock::now();
  // libapriltag reads the image and never writes it; its struct is not const-qualified.
  image_u8_t view{
      image.width, image.height, image.stride,
      const_cast<std::uint8_t*>(image.pixels)};  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  zarray_t* found = apriltag_detector_detect(impl_->detector, &view);
  std::vector<TagDetection> out;
  for (int i = 0; i < zarray_size(found); ++i) {
    apriltag_detection_t* d = nullptr;
    zarray_get(found, i, &d);
    if (d->decision_margin < impl_->min_margin) continue;
    TagDetection t;
    t.id = d->id;
    t.hamming = d->hamming;
    t.decision_margin = d->decision_margin;
    // libapriltag's image coordinates put pixel centres at +0.5, as ours do (it undoes its
    // decimation with that offset).
    t.center = Eigen::Vector2d(d->c[0], d->c[1]);
    for (std::size_t k = 0; k < 4; ++k) t.corners[k] = Eigen::Vector2d(d->p[k][0], d->p[k][1]);
    apriltag_detection_info_t info{d, tag_size, camera.fx, camera.fy, camera.cx, camera.cy};
    apriltag_pose_t pose{nullptr, nullptr};
    t.reprojection_error = estimate_tag_pose(&info, &pose);
    const std::unique_ptr<matd_t, MatdDeleter> R(pose.R);
    const std::unique_ptr<matd_t, MatdDeleter> p(pose.t);
    if (!R || !p) continue;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) t.camera_T_tag.R(r, c) = R->data[r * 3 + c];
      t.camera_T_tag.p[r] = p->data[r];
    }
    out.push_back(t);
  }
  apriltag_detections_destroy(found);
  last_time_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::optional<TagDetection> TagDetector::find(const GrayImage& image,
                                              const CameraIntrinsics& camera, double tag_size,
                                              int id) {
  std::optional<TagDetection> best;
  for (const TagDetection& t : detect(image, camera, tag_size)) {
    if (t.id == id && (!best || t.decision_margin > best->decision_margin)) best = t;
  }
  return best;
}

std::vector<std::uint8_t> tag36h11_image(int id, int cell_pixels) {
  static const std::string kIdRange =
      "in [0, " + std::to_string(kTag36h11Count - 1) + "] (tag36h11)";
  require(id >= 0 && id < kTag36h11Count, "id", id, kIdRange.c_str());
  require(cell_pixels >= 1 && cell_pixels <= 256, "cell_pixels", cell_pixels, "in [1, 256]");
  apriltag_family_t* family = tag36h11_create();
  image_u8_t* cells = apriltag_to_image(family, static_cast<std::uint32_t>(id));
  const int side = kTag36h11Cells * cell_pixels;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(side) * side);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      out[static_cast<std::size_t>(y) * side + x] =
          cells->buf[(y / cell_pixels) * cells->stride + x / cell_pixels];
    }
  }
  destroy_image(cells);
  tag36h11_destroy(family);
  return out;
}

}  // namespace tether::remote::vision

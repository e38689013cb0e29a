#include "simulated_camera.h"

#include <cmath>

namespace tether::remote::detail {

SimulatedCamera::SimulatedCamera(const CameraParameters& camera,
                                 const VisualTargetParameters& target, const Frame& base_T_camera0)
    : camera_(camera),
      target_(target),
      focal_(0.5 * camera.width / std::tan(0.5 * camera.field_of_view)),
      rng_(camera.seed) {
  // Facing the camera: its normal (z) back along the optical axis, its x along the image's x.
  base_T_target0_.R.col(0) = base_T_camera0.R.col(0);
  base_T_target0_.R.col(1) = -base_T_camera0.R.col(1);
  base_T_target0_.R.col(2) = -base_T_camera0.R.col(2);
  base_T_target0_.p = base_T_camera0 * Vector3(0.0, 0.0, target.distance);
}

Frame SimulatedCamera::target_pose(double t) const noexcept {
  Frame pose = base_T_target0_;
  const double speed = target_.velocity.norm();
  if (t > target_.start && speed > 0.0) {
    const double s = speed * (t - target_.start);  // distance travelled [m]
    double along = s;
    if (std::isfinite(target_.travel)) {
      // A triangle wave of amplitude A = travel/2 through 0 at s = 0, rising first.
      const double a = 0.5 * target_.travel;
      const double phase = std::fmod(s + a, 4.0 * a);
      along = phase < 2.0 * a ? phase - a : 3.0 * a - phase;
    }
    pose.p += (along / speed) * target_.velocity;
  }
  if (t >= target_.leave_at) pose.p += 1.0 * base_T_target0_.R.col(0);
  return pose;
}

void SimulatedCamera::step(double t, const Frame& base_T_camera) noexcept {
  if (t + 1e-9 < next_capture_) return;
  next_capture_ += 1.0 / camera_.frame_rate;
  if (pending_count_ == static_cast<int>(pending_.size())) return;  // never at these rates

  VisualReading reading;
  reading.frame = ++frames_;
  reading.capture_time = t;
  const Frame camera_T_target = base_T_camera.inverse() * target_pose(t);
  const double half = 0.5 * target_.size;
  const std::array<Vector3, 4> corners = {Vector3(-half, -half, 0.0), Vector3(half, -half, 0.0),
                                          Vector3(half, half, 0.0), Vector3(-half, half, 0.0)};
  const double cu = 0.5 * camera_.width;
  const double cv = 0.5 * camera_.height;
  std::array<Eigen::Vector2d, 4> pixels;
  bool in_view = true;
  for (std::size_t k = 0; k < corners.size(); ++k) {
    const Vector3 q = camera_T_target * corners[k];
    // Noise is drawn for every corner whether seen or not, so one image's outcome does not
    // change the noise of the next.
    const double nu = camera_.pixel_noise * noise_(rng_);
    const double nv = camera_.pixel_noise * noise_(rng_);
    if (!(q.z() > 1e-3)) {
      in_view = false;
      continue;
    }
    pixels[k] = Eigen::Vector2d(focal_ * q.x() / q.z() + cu + nu, focal_ * q.y() / q.z() + cv + nv);
    if (pixels[k].x() < 0.0 || pixels[k].x() > camera_.width || pixels[k].y() < 0.0 ||
        pixels[k].y() > camera_.height) {
      in_view = false;
    }
  }
  if (in_view) {
    Eigen::Vector2d centroid = Eigen::Vector2d::Zero();
    double side = 0.0;
    for (std::size_t k = 0; k < pixels.size(); ++k) {
      centroid += 0.25 * pixels[k];
      side += 0.25 * (pixels[(k + 1) % pixels.size()] - pixels[k]).norm();
    }
    const double z = focal_ * target_.size / side;
    reading.target_in_camera =
        Vector3((centroid.x() - cu) * z / focal_, (centroid.y() - cv) * z / focal_, z);
    reading.valid = true;
  }
  Pending& slot =
      pending_[static_cast<std::size_t>((pending_head_ + pending_count_) % pending_.size())];
  slot.available = t + camera_.latency;
  slot.reading = reading;
  ++pending_count_;
}

const VisualReading& SimulatedCamera::reading(double t) noexcept {
  while (pending_count_ > 0) {
    const Pending& oldest = pending_[static_cast<std::size_t>(pending_head_)];
    if (oldest.available > t + 1e-9) break;
    delivered_ = oldest.reading;
    pending_head_ = (pending_head_ + 1) % static_cast<int>(pending_.size());
    --pending_count_;
  }
  return delivered_;
}

}  // namespace tether::remote::detail

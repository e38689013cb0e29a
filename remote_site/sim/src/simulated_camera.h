#pragma once

// The simulated wrist camera of the visual-target scene (scene.h CameraParameters,
// VisualTargetParameters): a pinhole camera that images the four corners of a square target,
// adds Gaussian pixel noise, checks that all of them are in the image, estimates the
// target's position in the camera frame C from the image alone, and delivers that a
// latency later. Internal to SimulatedArm; nothing here allocates after construction.
//
// The estimate is the one a marker detector makes from one image of a square of known
// side L seen nearly face-on: depth Z = f L / ℓ from the mean side ℓ of the imaged square
// [px], and X, Y from the centroid (u, v) of its corners, X = (u − c_u) Z / f,
// Y = (v − c_v) Z / f, with f = (width/2) / tan(fov/2) and (c_u, c_v) the image centre.

#include <array>
#include <cstdint>
#include <random>

#include "tether/common/types.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/sim/scene.h"

namespace tether::remote::detail {

class SimulatedCamera {
 public:
  // `base_T_camera0` is C at the initial posture: the target starts `distance` ahead of it,
  // facing it, with its sides along the initial image axes.
  SimulatedCamera(const CameraParameters& camera, const VisualTargetParameters& target,
                  const Frame& base_T_camera0);

  // The target at arm time t: its centre and axes (x, y in its plane, z its normal towards
  // the initial camera) in BASE.
  Frame target_pose(double t) const noexcept;

  // Takes an image if one is due at arm time t (every 1/frame_rate from 0), the camera at
  // `base_T_camera`. Call at every physics step, with the kinematics of time t.
  void step(double t, const Frame& base_T_camera) noexcept;

  // The newest image delivered by arm time t (taken at least a latency earlier).
  const VisualReading& reading(double t) noexcept;

  double focal_length() const { return focal_; }  // [px]

 private:
  struct Pending {
    double available = 0.0;  // [s] arm clock
    VisualReading reading;
  };
  CameraParameters camera_;
  VisualTargetParameters target_;
  Frame base_T_target0_;
  double focal_ = 0.0;
  double next_capture_ = 0.0;
  std::uint64_t frames_ = 0;
  std::array<Pending, 16> pending_{};
  int pending_head_ = 0;  // oldest not yet delivered
  int pending_count_ = 0;
  VisualReading delivered_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_{0.0, 1.0};
};

}  // namespace tether::remote::detail

#pragma once

// Which camera view sets camera-mode teleoperation's EYE frame (WatchCameraRequest.eye). The
// newest view that asks is the one; a view superseded by a newer one, or ended, sets nothing.
// When the one view's camera is not the camera the EYE was last taken from, the switch waits
// until the hand's enabling switch is released: a jump of the frame under a moving hand would
// move the arm where the operator did not mean. Thread-safe (the cameras' threads and the
// gRPC threads).

#include <cstdint>
#include <mutex>
#include <string>

namespace tether::remote::server {

class EyeSource {
 public:
  // A view of `camera` that sets the EYE opened: it is the one from now on. Its id.
  std::uint64_t open(const std::string& camera) {
    std::lock_guard lock(mutex_);
    owner_ = ++next_;
    owner_camera_ = camera;
    return owner_;
  }

  // The view ended; if it was the one, none is until another opens.
  void close(std::uint64_t view) {
    std::lock_guard lock(mutex_);
    if (owner_ == view) owner_ = 0;
  }

  struct Take {
    bool apply = false;     // set the EYE from this image now
    bool switched = false;  // the EYE's camera changes with it (audit it)
    std::string previous;   // the camera it was taken from before; empty: none
  };

  // An image of `view`'s camera; `driving`: the hand's enabling switch is pressed.
  Take take(std::uint64_t view, bool driving) {
    std::lock_guard lock(mutex_);
    Take t;
    if (view == 0 || view != owner_) return t;
    if (owner_camera_ != applied_camera_) {
      if (driving) return t;  // held until the switch is released
      t.switched = true;
      t.previous = applied_camera_;
      applied_camera_ = owner_camera_;
    }
    t.apply = true;
    return t;
  }

  // The camera the EYE was last taken from; empty: none yet.
  std::string camera() const {
    std::lock_guard lock(mutex_);
    return applied_camera_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t next_ = 0;
  std::uint64_t owner_ = 0;
  std::string owner_camera_;
  std::string applied_camera_;
};

}  // namespace tether::remote::server

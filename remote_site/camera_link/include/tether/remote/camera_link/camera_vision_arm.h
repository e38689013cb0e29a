#pragma once

// Visual tracking fed by a camera device, as a real site's wrist camera feeds it: an arm
// driver (UdpArm, or any ArmInterface) whose readings carry what the site itself saw in the
// camera's images. The camera (the catalogue's "wrist" of tether-simarm, over the camera
// link) is watched for as long as this lives; each image is searched for the tag (tag36h11,
// Debian's libapriltag), its pose taken from the camera's intrinsics (SceneCamera's field of
// view and size) and the tag's size, and the reading, stamped with the image's capture time
// on the arm's clock, replaces state.visual in every later read(). So the visual-tracking
// behaviour meets images exactly as with the embedded simulation's own wrist camera, but
// with the latency of a real camera path (render, transfer, detection) instead of a
// modelled one.
//
// Threads: detection runs on the camera's thread (the device's sink); read() is the control
// cycle's and takes the newest reading through a SeqLock: no allocation, no lock, no wait.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tether/common/scene_description.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/camera/camera_device.h"
#include "tether/remote/loop/mailbox.h"

namespace tether::remote::camera_link {

struct CameraVisionOptions {
  std::string camera = "wrist";  // the camera on the gripper whose images are searched
  double tag_size = 0.1;         // [m] the side of the tag's black square
  int tag_id = 0;                // tag36h11, 0 … 586
};

// How to track `scene`'s visual target ("visual_target", a body carrying a tag) with the
// wrist camera: its tag's id and size as the scene gives them. nullopt: the scene has no
// such body, or it carries no tag.
std::optional<CameraVisionOptions> vision_options_for(const SceneDescription& scene);

struct CameraVisionStatistics {
  std::uint64_t images = 0;     // searched
  std::uint64_t detected = 0;   // with the tag found
  double detect_seconds = 0.0;  // [s] summed over the images
  double worst_detect = 0.0;    // [s]
};

class CameraVisionArm final : public ArmInterface {
 public:
  // Starts watching `options.camera` of `cameras`. Throws std::invalid_argument naming the
  // camera (no such camera, or a bad tag id or size) and std::runtime_error if the device
  // cannot deliver. `arm` and `cameras` must outlive this.
  CameraVisionArm(ArmInterface& arm, camera::CameraDevices& cameras,
                  const CameraVisionOptions& options);
  ~CameraVisionArm() override;

  const ArmModel& model() const override { return arm_.model(); }
  ArmStatus read(ArmState& state) noexcept override {
    const ArmStatus status = arm_.read(state);
    state.visual = reading_.load();
    return status;
  }
  ArmStatus write(const JointCommand& command) noexcept override { return arm_.write(command); }
  void advance_to(double time) noexcept override { arm_.advance_to(time); }

  CameraVisionStatistics statistics() const;

 private:
  struct Detector;
  ArmInterface& arm_;
  SeqLock<VisualReading> reading_;
  std::unique_ptr<Detector> detector_;
  std::unique_ptr<camera::CameraWatch> watch_;  // last: stops the images before the rest goes
};

}  // namespace tether::remote::camera_link

#pragma once

// A site's cameras served by another process over the camera link (protocol.h): what
// tether-remote --arm-cameras uses when tether-simarm (or an integrator's camera server)
// owns the cameras, so WatchCamera, AimCamera and the scene the site reports work as they do
// with the embedded simulation.
//
// The catalogue (the scene and its cameras) is taken once, by the constructor. Each watch
// has a connection and a thread of its own that receives the images and hands them to the
// sink; capture_ns is this host's CLOCK_MONOTONIC at arrival less the age the server stamped
// (the time on the wire, on the site's LAN, is not counted).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tether/common/scene_description.h"
#include "tether/remote/camera/camera_device.h"

namespace tether::remote::camera_link {

struct NetworkCamerasOptions {
  std::string host;
  std::uint16_t port = 0;
  std::string key_file;           // the arm link's shared secret
  std::uint64_t arm_model = 0;    // arm_link::arm_model_id() of this site's arm
  double connect_timeout = 10.0;  // [s] for the catalogue (the server may still be starting)
};

struct NetworkCameraStatistics {
  std::uint64_t images = 0;        // received and handed to sinks
  std::uint64_t streams_lost = 0;  // watches whose connection ended before they did
};

class NetworkCameras final : public camera::CameraDevices {
 public:
  // Reads the key and takes the catalogue, retrying until `connect_timeout`. Throws
  // std::runtime_error naming host:port and why (unreachable, another key, another arm, a
  // malformed catalogue).
  explicit NetworkCameras(const NetworkCamerasOptions& options);
  ~NetworkCameras() override;

  const SceneDescription& scene() const;
  const std::vector<SceneCamera>& cameras() const override;
  std::unique_ptr<camera::CameraWatch> watch(const std::string& name,
                                             camera::ImageSink sink) override;
  std::string aim(const std::string& name, double pan, double tilt) override;
  NetworkCameraStatistics statistics() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tether::remote::camera_link

#pragma once

// Serves a process's cameras over the camera link (protocol.h): the engine behind
// tether-simarm's --camera-port, which puts the simulated cell's rendered cameras where a
// remote site takes them as it would take an IP camera's (network_cameras.h).
//
// Threads: one accepts; each connection has its own, which answers one request (catalogue,
// aim) or streams one camera. A watched camera's images reach the connection through a
// one-image mailbox: the device's thread copies the newest image in and returns at once, the
// connection's thread sends it, and an image the site is still behind on is replaced by a
// newer one (counted as dropped), so a slow site never holds the renderer up.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tether/common/scene_description.h"
#include "tether/remote/camera/camera_device.h"

namespace tether::remote::camera_link {

struct CameraLinkServerOptions {
  std::string bind_address = "127.0.0.1";  // address (or name) to listen on
  std::uint16_t port = 0;                  // TCP; 0: any free port (see port())
  std::string key_file;                    // the arm link's shared secret (required)
  std::uint64_t arm_model = 0;             // arm_link::arm_model_id() of the arm served
  int max_connections = 8;                 // more are refused with ERROR
};

struct CameraLinkServerStatistics {
  std::uint64_t connections = 0;
  std::uint64_t refused = 0;  // failed handshakes, bad or unauthenticated frames
  std::uint64_t images_sent = 0;
  std::uint64_t images_dropped = 0;  // replaced in a mailbox before they were sent
  std::uint64_t aims = 0;
};

class CameraLinkServer {
 public:
  // Reads the key and binds the listening socket. Throws std::invalid_argument for bad options
  // and std::runtime_error naming the key file or address:port. `devices` and `scene` must
  // outlive the server.
  CameraLinkServer(camera::CameraDevices& devices, const SceneDescription& scene,
                   const CameraLinkServerOptions& options);
  ~CameraLinkServer();  // stop()
  CameraLinkServer(const CameraLinkServer&) = delete;
  CameraLinkServer& operator=(const CameraLinkServer&) = delete;

  std::uint16_t port() const;
  void start();
  // Closes the listening socket and every connection, and joins their threads.
  void stop();
  CameraLinkServerStatistics statistics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::remote::camera_link

#include "tether/remote/camera_link/network_cameras.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "connection.h"
#include "tether/remote/arm_link/protocol.h"
#include "tether/remote/loop/realtime.h"

namespace tether::remote::camera_link {

namespace {

// Seconds the server has to answer a request; an image stream waits as long as it must.
constexpr double kAnswerTimeout = 5.0;

// What is wrong with a frame that should be an IMAGE of `camera` (from `where`), or an
// empty string; `header` is its header when there is nothing wrong.
std::string image_problem(const std::string& where, Kind kind, std::span<const std::uint8_t> bytes,
                          const SceneCamera& camera, ImageHeader& header) {
  if (kind != Kind::kImage) return where + ": expected IMAGE, got " + to_string(kind);
  if (const std::string why = decode_image(bytes, header); !why.empty()) {
    return where + ": camera '" + camera.name + "': " + why;
  }
  if (static_cast<int>(header.width) != camera.width ||
      static_cast<int>(header.height) != camera.height) {
    return where + ": camera '" + camera.name + "' sent " + std::to_string(header.width) + "×" +
           std::to_string(header.height) + ", its catalogue says " + std::to_string(camera.width) +
           "×" + std::to_string(camera.height);
  }
  return {};
}

}  // namespace

struct NetworkCameras::Impl {
  NetworkCamerasOptions options;
  arm_link::LinkSecret secret;
  SceneDescription scene;
  std::atomic<std::uint64_t> images{0};
  std::atomic<std::uint64_t> streams_lost{0};

  std::string where() const {
    return "camera server " + options.host + ":" + std::to_string(options.port);
  }

  // A connection whose handshake is done, within `timeout`.
  std::unique_ptr<detail::Connection> open(double timeout) const {
    const int fd =
        detail::Connection::connect_to(options.host, options.port, timeout, "camera server");
    auto connection =
        std::make_unique<detail::Connection>(fd, options.host + ":" + std::to_string(options.port));
    connection->set_timeouts(kAnswerTimeout, kAnswerTimeout);
    connection->handshake_as_site(secret, options.arm_model);
    return connection;
  }
};

NetworkCameras::NetworkCameras(const NetworkCamerasOptions& options)
    : impl_(std::make_shared<Impl>()) {
  impl_->options = options;
  impl_->secret = arm_link::load_link_secret(options.key_file);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(std::max(options.connect_timeout, 0.1));
  std::unique_ptr<detail::Connection> connection;
  // The server may still be building its scene: refused connections are retried until the
  // deadline; anything else (another key, another arm) is final.
  for (;;) {
    try {
      connection = impl_->open(1.0);
      break;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      const bool unreachable = what.rfind("cannot connect", 0) == 0;
      if (!unreachable || std::chrono::steady_clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  connection->send(Kind::kCatalogueRequest, {});
  std::span<const std::uint8_t> payload;
  const Kind kind = connection->receive(payload);
  if (kind != Kind::kCatalogue) {
    throw std::runtime_error(impl_->where() + ": expected CATALOGUE, got " + to_string(kind));
  }
  if (const std::string why = decode_catalogue(payload, impl_->scene); !why.empty()) {
    throw std::runtime_error(impl_->where() + ": " + why);
  }
}

NetworkCameras::~NetworkCameras() = default;

const SceneDescription& NetworkCameras::scene() const { return impl_->scene; }

const std::vector<SceneCamera>& NetworkCameras::cameras() const { return impl_->scene.cameras; }

NetworkCameraStatistics NetworkCameras::statistics() const {
  return {impl_->images.load(), impl_->streams_lost.load()};
}

std::unique_ptr<camera::CameraWatch> NetworkCameras::watch(const std::string& name,
                                                           camera::ImageSink sink) {
  const auto& cams = impl_->scene.cameras;
  const auto it =
      std::find_if(cams.begin(), cams.end(), [&](const SceneCamera& c) { return c.name == name; });
  if (it == cams.end()) {
    throw std::invalid_argument("camera '" + name + "': no such camera at " + impl_->where());
  }
  const SceneCamera* camera = &*it;
  std::shared_ptr<detail::Connection> connection = impl_->open(kAnswerTimeout);
  connection->send(Kind::kWatch,
                   std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(name.data()),
                                                 name.size()));
  std::span<const std::uint8_t> payload;
  const Kind kind = connection->receive(payload);
  if (kind == Kind::kError) {
    std::string text;
    if (!decode_text(payload, text).empty()) text = "(an unreadable reason)";
    throw std::runtime_error(impl_->where() + " cannot deliver camera '" + name + "': " + text);
  }
  if (kind != Kind::kWatching) {
    throw std::runtime_error(impl_->where() + ": expected WATCHING, got " + to_string(kind));
  }
  // Images come at the camera's rate for as long as the watch lasts.
  connection->set_timeouts(0.0, kAnswerTimeout);
  auto stopping = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<Impl> impl = impl_;
  auto thread = std::make_shared<std::thread>(
      [impl, connection, stopping, camera, sink = std::move(sink), name] {
        try {
          for (;;) {
            std::span<const std::uint8_t> bytes;
            const Kind k = connection->receive(bytes);
            ImageHeader header;
            if (const std::string why = image_problem(impl->where(), k, bytes, *camera, header);
                !why.empty()) {
              throw std::runtime_error(why);
            }
            camera::CameraImage image;
            image.camera = camera;
            image.number = header.number;
            image.arm_time = header.arm_time;
            image.capture_ns = realtime::now_ns() - header.age_ns;
            image.width = camera->width;
            image.height = camera->height;
            image.rgb = bytes.subspan(kImageHeaderSize);
            image.pose_known = header.pose_known;
            image.base_T_camera = header.base_T_camera;
            impl->images.fetch_add(1, std::memory_order_relaxed);
            sink(image);
          }
        } catch (const std::exception& e) {
          if (!stopping->load()) {
            impl->streams_lost.fetch_add(1);
            spdlog::warn("camera '{}': the stream ended: {}", name, e.what());
          }
        }
      });
  return std::make_unique<camera::CameraWatch>([connection, stopping, thread] {
    stopping->store(true);
    connection->shutdown();
    thread->join();
  });
}

std::string NetworkCameras::aim(const std::string& name, double pan, double tilt) {
  try {
    const std::unique_ptr<detail::Connection> connection = impl_->open(kAnswerTimeout);
    connection->send(Kind::kAim, encode_aim(Aim{pan, tilt, name}));
    std::span<const std::uint8_t> payload;
    const Kind kind = connection->receive(payload);
    std::string text;
    if ((kind != Kind::kResult && kind != Kind::kError) || !decode_text(payload, text).empty()) {
      return impl_->where() + ": no readable answer to AIM";
    }
    return text;
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace tether::remote::camera_link

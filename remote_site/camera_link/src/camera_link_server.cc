#include "tether/remote/camera_link/camera_link_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "connection.h"
#include "tether/remote/loop/realtime.h"

namespace tether::remote::camera_link {

namespace {

// Seconds a site has to finish its handshake and request, and a watching site to take a frame.
constexpr double kRequestTimeout = 5.0;
constexpr double kWriteTimeout = 5.0;

std::string describe(const sockaddr_storage& address) {
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof address, host, sizeof host,
                    service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "a site";
  }
  return std::string(host) + ":" + service;
}

std::span<const std::uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), std::min(text.size(), kMaxTextSize)};
}

// The newest image of a watched camera, handed from the device's thread to the connection's.
struct Mailbox {
  std::mutex mutex;
  std::condition_variable ready;
  std::vector<std::uint8_t> payload;  // IMAGE payload, complete
  bool full = false;
  std::uint64_t dropped = 0;
};

}  // namespace

struct CameraLinkServer::Impl {
  camera::CameraDevices& devices;
  const SceneDescription& scene;
  CameraLinkServerOptions options;
  arm_link::LinkSecret secret;
  int listen_fd = -1;
  std::uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::thread acceptor;

  struct Client {
    std::unique_ptr<detail::Connection> connection;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::mutex clients_mutex;
  std::list<Client> clients;

  std::atomic<std::uint64_t> connections{0}, refused{0}, images_sent{0}, images_dropped{0}, aims{0};

  Impl(camera::CameraDevices& d, const SceneDescription& s, const CameraLinkServerOptions& o)
      : devices(d), scene(s), options(o) {}

  void accept_loop();
  void serve(detail::Connection& connection);
  void stream(detail::Connection& connection, const std::string& name);
  void reap(bool all);
};

CameraLinkServer::CameraLinkServer(camera::CameraDevices& devices, const SceneDescription& scene,
                                   const CameraLinkServerOptions& options)
    : impl_(std::make_unique<Impl>(devices, scene, options)) {
  if (options.key_file.empty()) {
    throw std::invalid_argument("camera link server: key_file is empty (the arm link's secret)");
  }
  if (options.max_connections < 1 || options.max_connections > 64) {
    throw std::invalid_argument("camera link server: max_connections = " +
                                std::to_string(options.max_connections) + ": expected 1…64");
  }
  impl_->secret = arm_link::load_link_secret(options.key_file);
  const std::string where = options.bind_address + ":" + std::to_string(options.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(options.bind_address.c_str(),
                                   std::to_string(options.port).c_str(), &hints, &found);
      rc != 0) {
    throw std::runtime_error("camera link: " + where + " does not resolve: " + gai_strerror(rc));
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr && impl_->listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      last = std::strerror(errno);
      ::close(fd);
      continue;
    }
    impl_->listen_fd = fd;
  }
  ::freeaddrinfo(found);
  if (impl_->listen_fd < 0) {
    throw std::runtime_error("camera link: cannot listen on TCP " + where + ": " + last);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  impl_->port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

CameraLinkServer::~CameraLinkServer() {
  stop();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
}

std::uint16_t CameraLinkServer::port() const { return impl_->port; }

void CameraLinkServer::start() {
  if (impl_->acceptor.joinable()) return;
  impl_->acceptor = std::thread([this] { impl_->accept_loop(); });
}

void CameraLinkServer::stop() {
  impl_->stopping.store(true);
  if (impl_->acceptor.joinable()) impl_->acceptor.join();
  impl_->reap(true);
}

CameraLinkServerStatistics CameraLinkServer::statistics() const {
  CameraLinkServerStatistics s;
  s.connections = impl_->connections.load();
  s.refused = impl_->refused.load();
  s.images_sent = impl_->images_sent.load();
  s.images_dropped = impl_->images_dropped.load();
  s.aims = impl_->aims.load();
  return s;
}

void CameraLinkServer::Impl::reap(bool all) {
  std::list<Client> finished;
  {
    const std::lock_guard<std::mutex> lock(clients_mutex);
    for (auto it = clients.begin(); it != clients.end();) {
      if (all) it->connection->shutdown();
      if (all || it->done.load()) {
        auto next = std::next(it);
        finished.splice(finished.end(), clients, it);
        it = next;
      } else {
        ++it;
      }
    }
  }
  for (Client& c : finished) c.thread.join();
}

void CameraLinkServer::Impl::accept_loop() {
  while (!stopping.load()) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      reap(false);
      continue;
    }
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &length, SOCK_CLOEXEC);
    if (fd < 0) continue;
    reap(false);
    connections.fetch_add(1);
    auto connection = std::make_unique<detail::Connection>(fd, describe(from));
    connection->set_timeouts(kRequestTimeout, kWriteTimeout);
    const std::lock_guard<std::mutex> lock(clients_mutex);
    if (clients.size() >= static_cast<std::size_t>(options.max_connections)) {
      refused.fetch_add(1);
      spdlog::warn("camera link: refused {}: {} connections already", connection->peer(),
                   clients.size());
      continue;  // closed by the connection's destructor
    }
    Client& client = clients.emplace_back();
    client.connection = std::move(connection);
    client.thread = std::thread([this, &client] {
      try {
        serve(*client.connection);
      } catch (const std::exception& e) {
        if (!stopping.load()) spdlog::info("{}", e.what());
      }
      client.done.store(true);
    });
  }
}

void CameraLinkServer::Impl::serve(detail::Connection& connection) {
  try {
    connection.handshake_as_server(secret, options.arm_model);
  } catch (...) {
    refused.fetch_add(1);
    throw;
  }
  std::span<const std::uint8_t> payload;
  Kind kind;
  try {
    kind = connection.receive(payload);  // verifies under the session key: the site's proof
  } catch (...) {
    refused.fetch_add(1);
    throw;
  }
  switch (kind) {
    case Kind::kCatalogueRequest:
      connection.send(Kind::kCatalogue, encode_catalogue(scene));
      return;
    case Kind::kAim: {
      Aim aim;
      std::string why = decode_aim(payload, aim);
      if (why.empty()) why = devices.aim(aim.camera, aim.pan, aim.tilt);
      aims.fetch_add(1);
      connection.send(Kind::kResult, text_bytes(why));
      return;
    }
    case Kind::kWatch: {
      std::string name;
      if (const std::string why = decode_name(payload, name); !why.empty()) {
        connection.send(Kind::kError, text_bytes(why));
        return;
      }
      stream(connection, name);
      return;
    }
    default:
      connection.send(
          Kind::kError,
          text_bytes(std::string("expected CATALOGUE?, WATCH or AIM, got ") + to_string(kind)));
  }
}

void CameraLinkServer::Impl::stream(detail::Connection& connection, const std::string& name) {
  Mailbox mailbox;
  std::unique_ptr<camera::CameraWatch> watch;
  try {
    watch = devices.watch(name, [&mailbox](const camera::CameraImage& image) {
      ImageHeader header;
      header.number = image.number;
      header.arm_time = image.arm_time;
      header.age_ns = std::clamp<std::int64_t>(realtime::now_ns() - image.capture_ns, 0, kMaxAgeNs);
      header.width = static_cast<std::uint32_t>(image.width);
      header.height = static_cast<std::uint32_t>(image.height);
      header.pose_known = image.pose_known;
      header.base_T_camera = image.base_T_camera;
      const std::lock_guard<std::mutex> lock(mailbox.mutex);
      if (mailbox.full) ++mailbox.dropped;
      mailbox.payload.clear();
      append_image_header(header, mailbox.payload);
      mailbox.payload.insert(mailbox.payload.end(), image.rgb.begin(), image.rgb.end());
      mailbox.full = true;
      mailbox.ready.notify_one();
    });
  } catch (const std::exception& e) {
    connection.send(Kind::kError, text_bytes(e.what()));
    return;
  }
  connection.send(Kind::kWatching, {});
  spdlog::info("camera link: {} watches {}", connection.peer(), name);
  std::vector<std::uint8_t> sending;
  std::uint64_t dropped_seen = 0;
  while (!stopping.load()) {
    {
      std::unique_lock<std::mutex> lock(mailbox.mutex);
      if (!mailbox.ready.wait_for(lock, std::chrono::milliseconds(200),
                                  [&] { return mailbox.full; })) {
        continue;
      }
      sending.swap(mailbox.payload);
      mailbox.full = false;
      images_dropped.fetch_add(mailbox.dropped - dropped_seen);
      dropped_seen = mailbox.dropped;
    }
    // Ends (throws) when the site closes the connection: it stopped watching.
    connection.send(Kind::kImage, sending);
    images_sent.fetch_add(1);
  }
}

}  // namespace tether::remote::camera_link

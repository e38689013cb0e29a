#include "datagram_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tether::remote::server {

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string describe(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* a = reinterpret_cast<const sockaddr_in6*>(&address);
  inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
  port = ntohs(a->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

bool same(const sockaddr_storage& a, socklen_t a_length, const sockaddr_storage& b,
          socklen_t b_length) {
  return a_length == b_length && std::memcmp(&a, &b, a_length) == 0;
}

}  // namespace

struct DatagramEndpoint::Session {
  Session(const datagram::SessionKeys& keys, OnIncrement callback)
      : opener(datagram::Kind::kIncrement, keys.session, keys.ground_to_remote),
        on_increment(std::move(callback)),
        sealer(datagram::Kind::kReflection, keys.session, keys.remote_to_ground) {}
  // A camera view's: feedback in, video out.
  Session(const datagram::SessionKeys& keys, OnFeedback callback)
      : opener(datagram::Kind::kVideoFeedback, keys.session, keys.ground_to_remote),
        on_feedback(std::move(callback)),
        video(true),
        sealer(datagram::Kind::kVideo, keys.session, keys.remote_to_ground) {}
  datagram::Opener opener;  // the receiving thread only
  OnIncrement on_increment;
  OnFeedback on_feedback;
  bool video = false;
  std::mutex send_mutex;  // guards what follows
  datagram::Sealer sealer;
  sockaddr_storage peer{};
  socklen_t peer_length = 0;
  DatagramSessionStats stats;
};

DatagramEndpoint::DatagramEndpoint(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const std::string name = host == "[::]" || host == "::" ? "::" : host;
  if (const int e =
          getaddrinfo(name.empty() ? nullptr : name.c_str(), service.c_str(), &hints, &found);
      e != 0) {
    throw std::runtime_error("datagram plane: cannot resolve '" + host + "': " + gai_strerror(e));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (a->ai_family == AF_INET6) {
      const int off = 0;
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
      fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (fd_ < 0) {
    throw std::runtime_error("datagram plane: cannot bind UDP " + host + ":" + service + ": " +
                             why);
  }
  // Room for a second of 1 kHz datagrams either way: a held-up receiving thread loses none.
  const int buffer = 1 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  // Expedited forwarding: routers that honour DSCP queue control ahead of bulk traffic.
  const int tos = 0xB8;
  setsockopt(fd_, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                     : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(fd_);
    throw std::runtime_error(std::string("datagram plane: pipe: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { receive_loop(); });
}

DatagramEndpoint::~DatagramEndpoint() {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

datagram::SessionKeys DatagramEndpoint::open(OnIncrement on_increment) {
  std::lock_guard lock(mutex_);
  datagram::SessionKeys keys;
  do {
    keys = datagram::make_session_keys();
  } while (sessions_.count(keys.session) != 0);
  sessions_.emplace(keys.session, std::make_shared<Session>(keys, std::move(on_increment)));
  return keys;
}

datagram::SessionKeys DatagramEndpoint::open_video(OnFeedback on_feedback) {
  std::lock_guard lock(mutex_);
  datagram::SessionKeys keys;
  do {
    keys = datagram::make_session_keys();
  } while (sessions_.count(keys.session) != 0);
  sessions_.emplace(keys.session, std::make_shared<Session>(keys, std::move(on_feedback)));
  return keys;
}

bool DatagramEndpoint::send_video(std::uint32_t session, std::span<const std::uint8_t> payload) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end() || !it->second->video) return false;
    s = it->second;
  }
  std::array<std::uint8_t, datagram::kMaxVideoDatagram> sealed{};
  std::lock_guard lock(s->send_mutex);
  if (s->peer_length == 0) return false;
  const std::size_t total = s->sealer.seal(payload, sealed);
  if (total == 0) return false;
  if (sendto(fd_, sealed.data(), total, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&s->peer),
             s->peer_length) != static_cast<ssize_t>(total)) {
    ++s->stats.send_errors;
    return false;
  }
  ++s->stats.sent;
  return true;
}

void DatagramEndpoint::close(std::uint32_t session) {
  std::lock_guard lock(mutex_);
  sessions_.erase(session);
}

bool DatagramEndpoint::send(std::uint32_t session, const datagram::ReflectionMessage& message) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second->video) return false;
    s = it->second;
  }
  std::array<std::uint8_t, datagram::kMaxDatagram> payload{};
  std::array<std::uint8_t, datagram::kMaxDatagram> sealed{};
  const std::size_t size = datagram::encode(message, payload);
  std::lock_guard lock(s->send_mutex);
  if (s->peer_length == 0 || size == 0) return false;
  const std::size_t total = s->sealer.seal(std::span(payload.data(), size), sealed);
  if (total == 0) return false;
  if (sendto(fd_, sealed.data(), total, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&s->peer),
             s->peer_length) != static_cast<ssize_t>(total)) {
    ++s->stats.send_errors;
    return false;
  }
  ++s->stats.sent;
  return true;
}

DatagramSessionStats DatagramEndpoint::stats(std::uint32_t session) const {
  std::shared_ptr<Session> s;
  {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return {};
    s = it->second;
  }
  std::lock_guard lock(s->send_mutex);
  DatagramSessionStats out = s->stats;
  return out;
}

void DatagramEndpoint::receive_loop() {
  // Room for the largest datagram of any kind, so a long one is refused whole, not truncated.
  std::array<std::uint8_t, datagram::kMaxVideoDatagram + 1> buffer{};
  std::array<std::uint8_t, datagram::kMaxVideoDatagram> plain{};
  std::array<pollfd, 2> fds{pollfd{fd_, POLLIN, 0}, pollfd{wake_[0], POLLIN, 0}};
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("datagram plane: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    for (;;) {
      sockaddr_storage from{};
      socklen_t from_length = sizeof from;
      const ssize_t n = recvfrom(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &from_length);
      if (n < 0) break;  // EAGAIN: drained
      const std::int64_t arrival = monotonic_ns();
      const std::span<const std::uint8_t> bytes(buffer.data(), static_cast<std::size_t>(n));
      const auto id = datagram::session_of(bytes);
      std::lock_guard lock(mutex_);
      const auto it = id ? sessions_.find(*id) : sessions_.end();
      if (it == sessions_.end()) {
        strays_.fetch_add(1);
        continue;
      }
      Session& s = *it->second;
      const auto size = s.opener.open(bytes, plain);
      datagram::IncrementMessage message;
      datagram::VideoFeedback feedback;
      std::string problem;
      {
        std::lock_guard send_lock(s.send_mutex);
        s.stats.drops = s.opener.drops();
        if (!size) continue;
        problem = s.video ? datagram::decode(std::span(plain.data(), *size), feedback)
                          : datagram::decode(std::span(plain.data(), *size), message);
        if (!problem.empty()) {
          ++s.opener.drops().invalid;
          s.stats.drops = s.opener.drops();
        } else {
          ++s.stats.received;
          s.stats.last_arrival_ns = arrival;
          // Only the newest authentic datagram moves where reflections go: a forged one, or
          // an authentic one held back and relayed from elsewhere (the replay window still
          // lets an older one in), cannot redirect them; the ground's new address after a
          // NAT rebinding is followed.
          if (s.opener.newest() && !same(s.peer, s.peer_length, from, from_length)) {
            if (s.peer_length != 0) {
              ++s.stats.rebinds;
              spdlog::warn("datagram plane: session {:08x} moved from {} to {}", *id, s.stats.peer,
                           describe(from));
            }
            s.peer = from;
            s.peer_length = from_length;
            s.stats.peer = describe(from);
          }
        }
      }
      if (s.video) {
        if (problem.empty()) s.on_feedback(feedback, arrival);
      } else {
        s.on_increment(message, arrival, problem);
      }
    }
  }
}

}  // namespace tether::remote::server

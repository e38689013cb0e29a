#include "datagram_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tether::local {

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

std::string host_of(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return {};
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

GroundDatagramLink::GroundDatagramLink(const std::string& host, int port,
                                       const datagram::SessionKeys& keys)
    : peer_(host + ":" + std::to_string(port)),
      sealer_(datagram::Kind::kIncrement, keys.session, keys.ground_to_remote),
      opener_(datagram::Kind::kReflection, keys.session, keys.remote_to_ground) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int e = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); e != 0) {
    throw std::runtime_error("datagram plane: cannot resolve '" + host + "': " + gai_strerror(e));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (fd_ < 0) throw std::runtime_error("datagram plane: cannot reach " + peer_ + ": " + why);
  const int buffer = 1 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  const int tos = 0xB8;  // DSCP expedited forwarding
  setsockopt(fd_, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(fd_);
    throw std::runtime_error(std::string("datagram plane: pipe: ") + std::strerror(errno));
  }
}

GroundDatagramLink::~GroundDatagramLink() {
  ::close(fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void GroundDatagramLink::close() {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &byte, 1);
}

bool GroundDatagramLink::send(const datagram::IncrementMessage& message) {
  std::array<std::uint8_t, datagram::kMaxDatagram> payload{};
  std::array<std::uint8_t, datagram::kMaxDatagram> sealed{};
  const std::size_t size = datagram::encode(message, payload);
  const std::size_t total = size == 0 ? 0 : sealer_.seal(std::span(payload.data(), size), sealed);
  if (total == 0) return false;
  // A refused send (ICMP port unreachable reported on the connected socket, a full
  // buffer) is a lost datagram like any other: the next one carries its motion.
  if (::send(fd_, sealed.data(), total, MSG_DONTWAIT) != static_cast<ssize_t>(total)) {
    send_errors_.fetch_add(1);
    return false;
  }
  sent_.fetch_add(1);
  bytes_sent_.fetch_add(total);
  return true;
}

std::optional<datagram::ReflectionMessage> GroundDatagramLink::receive(int timeout_ms,
                                                                       std::int64_t& arrival_ns) {
  std::array<std::uint8_t, datagram::kMaxDatagram + 1> buffer{};
  std::array<std::uint8_t, datagram::kMaxDatagram> plain{};
  const std::int64_t deadline = monotonic_ns() + std::int64_t{timeout_ms} * 1000000;
  for (;;) {
    const std::int64_t left = (deadline - monotonic_ns()) / 1000000;
    if (left < 0) return {};
    std::array<pollfd, 2> fds{pollfd{fd_, POLLIN, 0}, pollfd{wake_[0], POLLIN, 0}};
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) return {};
    if (fds[1].revents != 0) return {};
    if (fds[0].revents == 0) continue;
    const ssize_t n = recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) continue;  // an ICMP error reported on the socket, or nothing after all
    arrival_ns = monotonic_ns();
    bytes_received_.fetch_add(static_cast<std::uint64_t>(n));
    const auto size = opener_.open(std::span(buffer.data(), static_cast<std::size_t>(n)), plain);
    const datagram::DropCounters& d = opener_.drops();
    forged_.store(d.forged);
    replayed_.store(d.replayed);
    malformed_.store(d.malformed);
    if (!size) continue;
    datagram::ReflectionMessage message;
    if (!datagram::decode(std::span(plain.data(), *size), message).empty()) {
      invalid_.fetch_add(1);
      continue;
    }
    received_.fetch_add(1);
    return message;
  }
}

GroundDatagramStats GroundDatagramLink::stats() const {
  GroundDatagramStats s;
  s.sent = sent_.load();
  s.send_errors = send_errors_.load();
  s.bytes_sent = bytes_sent_.load();
  s.received = received_.load();
  s.bytes_received = bytes_received_.load();
  s.drops.forged = forged_.load();
  s.drops.replayed = replayed_.load();
  s.drops.malformed = malformed_.load();
  s.drops.invalid = invalid_.load();
  return s;
}

}  // namespace tether::local

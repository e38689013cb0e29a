#pragma once

// The ground's end of the teleoperation data plane (tether/datagram/teleop_datagram.h): a
// UDP socket connected to the remote site's datagram port, sealing increments under the
// session's ground → remote key and opening reflections under the other. The remote
// learns where to send reflections from the first authentic increment, so the ground needs
// no port of its own open: replies come back through any NAT the increments went through.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "tether/datagram/teleop_datagram.h"

namespace tether::local {

struct GroundDatagramStats {
  std::uint64_t sent = 0;  // increment datagrams
  std::uint64_t send_errors = 0;
  std::uint64_t bytes_sent = 0;  // UDP payload bytes
  std::uint64_t received = 0;    // authentic reflection datagrams
  std::uint64_t bytes_received = 0;
  datagram::DropCounters drops;
};

class GroundDatagramLink {
 public:
  // Connects to host:port (a name or an address). Throws std::runtime_error naming them.
  GroundDatagramLink(const std::string& host, int port, const datagram::SessionKeys& keys);
  ~GroundDatagramLink();
  GroundDatagramLink(const GroundDatagramLink&) = delete;
  GroundDatagramLink& operator=(const GroundDatagramLink&) = delete;

  // The sampling thread only.
  bool send(const datagram::IncrementMessage& message);
  // The reading thread only: the next authentic reflection within `timeout_ms`, with its
  // arrival (CLOCK_MONOTONIC [ns]); nothing on a timeout or once close() was called.
  std::optional<datagram::ReflectionMessage> receive(int timeout_ms, std::int64_t& arrival_ns);
  void close();  // wakes receive()
  GroundDatagramStats stats() const;
  std::string peer() const { return peer_; }

 private:
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  std::string peer_;
  datagram::Sealer sealer_;
  datagram::Opener opener_;
  std::atomic<std::uint64_t> sent_{0}, send_errors_{0}, bytes_sent_{0};
  std::atomic<std::uint64_t> received_{0}, bytes_received_{0};
  std::atomic<std::uint64_t> forged_{0}, replayed_{0}, malformed_{0}, invalid_{0};
};

// host of "host:port", "[v6]:port" → "v6"; empty for anything else.
std::string host_of(const std::string& address);

}  // namespace tether::local

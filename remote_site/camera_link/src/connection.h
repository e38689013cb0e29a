#pragma once

// One camera-link connection (protocol.h) over a blocking TCP socket, shared by both ends:
// the handshake, then authenticated, sequence-numbered frames. Errors throw
// std::runtime_error naming the peer and what was wrong; the connection is then unusable.
// Not for the control cycle (it allocates and blocks).

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tether/remote/camera_link/protocol.h"

namespace tether::remote::camera_link::detail {

class Connection {
 public:
  // Takes ownership of a connected socket; `peer` names the other end in messages.
  Connection(int fd, std::string peer);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // A connection to host:port, within `timeout` [s]. Throws naming `role`, host and port.
  static int connect_to(const std::string& host, std::uint16_t port, double timeout,
                        const std::string& role);

  // Blocking reads and writes give up after `seconds` (0: never).
  void set_timeouts(double read_seconds, double write_seconds);

  // The site's side of the handshake: HELLO, then WELCOME must carry this arm's id and a
  // MAC under the session key.
  void handshake_as_site(const arm_link::LinkSecret& secret, std::uint64_t arm_model);
  // The server's side: HELLO, WELCOME. Throws when HELLO is malformed or names another arm
  // (after answering, so the site can say which arm this server drives).
  void handshake_as_server(const arm_link::LinkSecret& secret, std::uint64_t arm_model);

  void send(Kind kind, std::span<const std::uint8_t> payload);
  // One frame whose MAC and sequence verify; its payload stays valid until the next call.
  Kind receive(std::span<const std::uint8_t>& payload);

  // From any thread: a blocked send or receive returns (and throws).
  void shutdown() noexcept;
  const std::string& peer() const { return peer_; }

 private:
  void read_exact(std::uint8_t* data, std::size_t size);
  void write_all(std::span<const std::uint8_t> bytes);
  [[noreturn]] void fail(const std::string& what) const;

  int fd_;
  std::string peer_;
  arm_link::LinkKey key_;
  std::uint64_t sent_ = 0;
  std::uint64_t received_ = 0;
  std::vector<std::uint8_t> buffer_;
  std::atomic<bool> shut_{false};
};

}  // namespace tether::remote::camera_link::detail

#pragma once

// The far end of an arm link in a test: a plain UDP socket on loopback that sends and
// receives arm-link packets (or raw bytes), so the drivers meet a peer they do not control.

#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "tether/remote/arm_link/protocol.h"

namespace tether::remote::testing {

class UdpPeer {
 public:
  UdpPeer() : socket_(io_, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0)) {}

  std::uint16_t port() const { return socket_.local_endpoint().port(); }
  void set_remote(std::uint16_t port) {
    remote_ = asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), port);
  }

  void send_raw(const std::uint8_t* data, std::size_t size) {
    socket_.send_to(asio::buffer(data, size), remote_);
  }
  void send(const arm_link::StatePacket& packet) {
    arm_link::PacketBuffer b{};
    send_raw(b.data(), arm_link::encode(packet, b));
  }
  void send(const arm_link::CommandPacket& packet) {
    arm_link::PacketBuffer b{};
    send_raw(b.data(), arm_link::encode(packet, b));
  }

  // The next COMMAND within `timeout`, or none.
  std::optional<arm_link::CommandPacket> receive_command(double timeout = 1.0) {
    arm_link::PacketBuffer b{};
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    socket_.non_blocking(true);
    while (std::chrono::steady_clock::now() < end) {
      asio::error_code ec;
      asio::ip::udp::endpoint from;
      const std::size_t n = socket_.receive_from(asio::buffer(b), from, 0, ec);
      if (!ec) {
        arm_link::CommandPacket packet;
        if (arm_link::decode({b.data(), n}, packet) == arm_link::DecodeError::kNone) {
          return packet;
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return std::nullopt;
  }

 private:
  asio::io_context io_;
  asio::ip::udp::socket socket_;
  asio::ip::udp::endpoint remote_;
};

// Polls `done` every 0.2 ms for up to `timeout` seconds (loopback delivery is quick, but
// not synchronous with send()).
inline bool eventually(const std::function<bool()>& done, double timeout = 2.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return done();
}

// A port nobody listens on right now (bound, read and released).
inline std::uint16_t free_udp_port() {
  asio::io_context io;
  asio::ip::udp::socket s(io, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0));
  return s.local_endpoint().port();
}

}  // namespace tether::remote::testing

#pragma once

// The far end of an arm link in a test: a plain UDP socket on loopback that sends and
// receives arm-link packets (or raw bytes), so the drivers meet a peer they do not control;
// and the key files both ends of a link read.

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "tether/remote/arm_link/protocol.h"

namespace tether::remote::testing {

// Writes `contents` to a file in the test's temporary directory and returns its path.
inline std::string write_key_file(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) /
                                     ("tether_arm_link_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  return path.string();
}

// The site's secret most tests use, and another site's.
inline constexpr const char* kTestSecret = "tether arm link test secret, 32B";
inline constexpr const char* kOtherSecret = "another site's arm link secret!!";
inline std::string test_key_file() { return write_key_file("site.key", kTestSecret); }
inline std::string other_key_file() { return write_key_file("other.key", kOtherSecret); }
inline arm_link::LinkSecret test_secret() { return arm_link::load_link_secret(test_key_file()); }
inline arm_link::LinkSecret other_secret() { return arm_link::load_link_secret(other_key_file()); }

class UdpPeer {
 public:
  UdpPeer() : socket_(io_, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0)) {}

  // The ids and key of what send() encodes and receive_command() accepts: `session` of the
  // arm model `arm_model` under `secret`.
  void use_session(const arm_link::LinkSecret& secret, std::uint64_t session,
                   std::uint64_t arm_model) {
    ids.session = session;
    ids.arm_model = arm_model;
    key = arm_link::derive_session_key(secret, session, arm_model);
  }
  arm_link::LinkIds ids;
  arm_link::LinkKey key;

  std::uint16_t port() const { return socket_.local_endpoint().port(); }
  void set_remote(std::uint16_t port) {
    remote_ = asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), port);
  }

  void send_raw(const std::uint8_t* data, std::size_t size) {
    socket_.send_to(asio::buffer(data, size), remote_);
  }
  void send(const arm_link::StatePacket& packet) {
    arm_link::PacketBuffer b{};
    send_raw(b.data(), arm_link::encode(packet, ids, key, b));
  }
  void send(const arm_link::CommandPacket& packet) {
    arm_link::PacketBuffer b{};
    send_raw(b.data(), arm_link::encode(packet, ids, key, b));
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
        if (arm_link::decode({b.data(), n}, ids, key, packet) == arm_link::DecodeError::kNone) {
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

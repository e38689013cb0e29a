#pragma once

// Set-up helpers of the arm link shared by its two ends (not for the control cycle).

#include <asio.hpp>
#include <cstdint>
#include <string>

namespace tether::remote::arm_link {

struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
};

// "HOST:PORT" or "[IPv6]:PORT"; port 1…65535. Throws std::invalid_argument starting with
// `what` and quoting the text.
Endpoint parse_endpoint(const std::string& text, const std::string& what);

// The first UDP endpoint `host` resolves to. Throws std::runtime_error naming `role`,
// host:port and the resolver's message.
asio::ip::udp::endpoint resolve_udp(asio::io_context& io, const std::string& host,
                                    std::uint16_t port, const std::string& role);

}  // namespace tether::remote::arm_link

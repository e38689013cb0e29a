#include "endpoint.h"

#include <charconv>
#include <stdexcept>

namespace tether::remote::arm_link {

Endpoint parse_endpoint(const std::string& text, const std::string& what) {
  auto fail = [&](const std::string& problem) {
    throw std::invalid_argument(what + " '" + text + "': " + problem +
                                " (expected HOST:PORT, e.g. 127.0.0.1:50600)");
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) fail("no ':' before the port");
  Endpoint endpoint;
  endpoint.host = text.substr(0, colon);
  if (endpoint.host.size() >= 2 && endpoint.host.front() == '[' && endpoint.host.back() == ']') {
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  }
  if (endpoint.host.empty()) fail("empty host");
  const std::string port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size()) {
    fail("port '" + port + "' is not a number");
  }
  if (value < 1 || value > 65535) fail("port " + port + " is outside 1…65535");
  endpoint.port = static_cast<std::uint16_t>(value);
  return endpoint;
}

asio::ip::udp::endpoint resolve_udp(asio::io_context& io, const std::string& host,
                                    std::uint16_t port, const std::string& role) {
  asio::ip::udp::resolver resolver(io);
  asio::error_code ec;
  const auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    throw std::runtime_error(role + " address " + host + ":" + std::to_string(port) +
                             " does not resolve: " + (ec ? ec.message() : "no address"));
  }
  return results.begin()->endpoint();
}

}  // namespace tether::remote::arm_link

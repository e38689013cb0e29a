#pragma once

// A blocking HTTP and WebSocket client for the web console tests (Boost.Beast, like the
// server): every read gives up after a generous deadline, so a server that never answers
// fails the test instead of hanging it.

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace tether::local::web::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using json = nlohmann::json;

inline constexpr int kReadTimeoutSeconds = 20;

inline void set_read_timeout(tcp::socket& socket, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

struct HttpReply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

// GET `target` (sent as given, not normalised) from 127.0.0.1:port.
inline HttpReply http_get(int port, const std::string& target) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  set_read_timeout(socket, kReadTimeoutSeconds);
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  http::write(socket, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return {response.result_int(), std::string(response[http::field::content_type]), response.body()};
}

class WsClient {
 public:
  // Opens /ws on 127.0.0.1:port; `origin` is sent as the Origin header when not empty.
  // `receive_buffer` > 0 shrinks the socket's receive buffer first (a slow client).
  explicit WsClient(int port, const std::string& origin = "", int receive_buffer = 0) : ws_(io_) {
    tcp::socket& socket = ws_.next_layer();
    socket.open(tcp::v4());
    if (receive_buffer > 0) {
      socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
    }
    socket.connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    set_read_timeout(socket, kReadTimeoutSeconds);
    ws_.set_option(websocket::stream_base::decorator([origin](websocket::request_type& r) {
      if (!origin.empty()) r.set(http::field::origin, origin);
    }));
    ws_.handshake("127.0.0.1:" + std::to_string(port), "/ws");
  }

  void send(const json& message) {
    ws_.text(true);
    ws_.write(net::buffer(message.dump()));
  }

  // The next message; throws after kReadTimeoutSeconds without one, or on a closed socket.
  json next() {
    beast::flat_buffer buffer;
    beast::error_code error;
    bool done = false;
    ws_.async_read(buffer, [&](beast::error_code e, std::size_t) {
      error = e;
      done = true;
    });
    io_.restart();
    io_.run_for(std::chrono::seconds(kReadTimeoutSeconds));
    if (!done) {
      close();
      io_.restart();
      io_.run();
      throw std::runtime_error("no message within " + std::to_string(kReadTimeoutSeconds) + " s");
    }
    if (error) throw beast::system_error(error);
    return json::parse(beast::buffers_to_string(buffer.data()));
  }

  // The next message of `type` (others skipped); for "reply", the one with `id`.
  json next(const std::string& type, int id = -1) {
    for (;;) {
      json m = next();
      if (m.value("type", "") != type) continue;
      if (id >= 0 && m.value("id", -1) != id) continue;
      return m;
    }
  }

  // Sends `request` with `id` and returns its reply.
  json request(json request, int id) {
    request["id"] = id;
    send(request);
    return next("reply", id);
  }

  void close() {
    beast::error_code ignored;
    ws_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    ws_.next_layer().close(ignored);
  }

 private:
  net::io_context io_;
  websocket::stream<tcp::socket> ws_;
};

}  // namespace tether::local::web::testing

#include "web_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <variant>

namespace tether::local::web::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

namespace {

void set_read_timeout(tcp::socket& socket, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

std::unique_ptr<ssl::context> client_context(const Endpoint& to) {
  if (to.ca.empty()) return nullptr;
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  context->load_verify_file(to.ca);
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

// Connects the lowest layer, then (TLS) checks the server's certificate for "localhost".
template <class Stream>
void connect(Stream& stream, const Endpoint& to, int receive_buffer = 0) {
  tcp::socket& socket = beast::get_lowest_layer(stream);
  socket.open(tcp::v4());
  if (receive_buffer > 0) socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
  socket.connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(to.port)});
  set_read_timeout(socket, kReadTimeoutSeconds);
  if constexpr (!std::is_same_v<Stream, tcp::socket>) {
    SSL_set_tlsext_host_name(stream.native_handle(), "localhost");
    stream.set_verify_callback(ssl::host_name_verification("localhost"));
    stream.handshake(ssl::stream_base::client);
  }
}

template <class Stream>
HttpReply exchange(Stream& stream, const Endpoint& to, const std::string& method,
                   const std::string& target, const std::string& body,
                   const std::vector<std::pair<std::string, std::string>>& headers) {
  connect(stream, to);
  http::request<http::string_body> request{http::string_to_verb(method), target, 11};
  request.set(http::field::host, "127.0.0.1:" + std::to_string(to.port));
  for (const auto& [name, value] : headers) request.set(name, value);
  if (!body.empty() || method == "POST") {
    request.body() = body;
    request.prepare_payload();
  }
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  HttpReply reply{response.result_int(),
                  std::string(response[http::field::content_type]),
                  response.body(),
                  std::string(response[http::field::set_cookie]),
                  {}};
  for (const auto& field : response) {
    reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return reply;
}

}  // namespace

std::string HttpReply::header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (beast::iequals(n, name)) return v;
  }
  return {};
}

HttpReply http_request(const Endpoint& to, const std::string& method, const std::string& target,
                       const std::string& body,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
  net::io_context io;
  if (to.ca.empty()) {
    tcp::socket socket(io);
    return exchange(socket, to, method, target, body, headers);
  }
  const auto context = client_context(to);
  beast::ssl_stream<tcp::socket> stream(io, *context);
  return exchange(stream, to, method, target, body, headers);
}

std::string cookie_pair(const std::string& set_cookie) {
  return set_cookie.substr(0, set_cookie.find(';'));
}

struct WsClient::Impl {
  net::io_context io;
  std::unique_ptr<ssl::context> context;
  std::variant<websocket::stream<tcp::socket>, websocket::stream<beast::ssl_stream<tcp::socket>>>
      ws;

  Impl(const Endpoint& to)
      : context(client_context(to)),
        ws(context ? decltype(ws)(std::in_place_index<1>, io, *context)
                   : decltype(ws)(std::in_place_index<0>, io)) {}
};

WsClient::WsClient(const Endpoint& to, const WsOptions& options)
    : impl_(std::make_unique<Impl>(to)) {
  std::visit(
      [&](auto& ws) {
        connect(ws.next_layer(), to, options.receive_buffer);
        ws.set_option(websocket::stream_base::decorator([options](websocket::request_type& r) {
          if (!options.origin.empty()) r.set(http::field::origin, options.origin);
          if (!options.cookie.empty()) r.set(http::field::cookie, options.cookie);
        }));
        ws.handshake(options.host.empty() ? "127.0.0.1:" + std::to_string(to.port) : options.host,
                     options.target);
      },
      impl_->ws);
}

WsClient::~WsClient() = default;

void WsClient::send(const json& message) {
  std::visit(
      [&](auto& ws) {
        ws.text(true);
        ws.write(net::buffer(message.dump()));
      },
      impl_->ws);
}

json WsClient::next() {
  beast::flat_buffer buffer;
  beast::error_code error;
  bool done = false;
  std::visit(
      [&](auto& ws) {
        ws.async_read(buffer, [&](beast::error_code e, std::size_t) {
          error = e;
          done = true;
        });
      },
      impl_->ws);
  impl_->io.restart();
  impl_->io.run_for(std::chrono::seconds(kReadTimeoutSeconds));
  if (!done) {
    close();
    impl_->io.restart();
    impl_->io.run();
    throw std::runtime_error("no message within " + std::to_string(kReadTimeoutSeconds) + " s");
  }
  if (error) throw beast::system_error(error);
  return json::parse(beast::buffers_to_string(buffer.data()));
}

json WsClient::next(const std::string& type, int id) {
  for (;;) {
    json m = next();
    if (m.value("type", "") != type) continue;
    if (id >= 0 && m.value("id", -1) != id) continue;
    return m;
  }
}

json WsClient::request(json request, int id) {
  request["id"] = id;
  send(request);
  return next("reply", id);
}

void WsClient::close() {
  std::visit(
      [](auto& ws) {
        beast::error_code ignored;
        tcp::socket& socket = beast::get_lowest_layer(ws);
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
      },
      impl_->ws);
}

}  // namespace tether::local::web::testing

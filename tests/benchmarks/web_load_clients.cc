// N browsers' worth of load on tether-ground's operator console, for deploy/web-load.sh:
// each opens the console's WebSocket, subscribes at the highest rate the protocol allows
// (60 Hz) after the hello, then reads and discards everything until SECONDS have passed.
//
//   web_load_clients PORT N SECONDS
//
// Prints one line per client, "client K: T telemetry in S s since subscribing = R Hz (M
// messages in all)", and exits 1 if any client could not connect, was refused, or went 5 s
// without a message (the server sends telemetry at 60 Hz and a site line every second).
//
// All clients share one thread and one io_context: the tool should cost the machine as
// little as possible, so that what the benchmark sees is the server's work, not the
// clients'. Telemetry is counted by its type's text, without parsing the JSON.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kConnectTimeout = std::chrono::seconds(5);
// Longer than any gap the server leaves between messages on a healthy link.
constexpr auto kIdleTimeout = std::chrono::seconds(5);
constexpr std::string_view kSubscribe = R"({"type":"subscribe","id":1,"rate_hz":60})";

class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(net::io_context& io, int index, unsigned short port)
      : ws_(io), index_(index), port_(port) {}

  void start() {
    beast::get_lowest_layer(ws_).expires_after(kConnectTimeout);
    beast::get_lowest_layer(ws_).async_connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), port_),
        [self = shared_from_this()](beast::error_code e) { self->on_connect(e); });
  }

  // Stops reading (the pending read completes as aborted); what was counted so far stands.
  void finish(Clock::time_point end) {
    if (!done_) end_ = end;
    done_ = true;
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

  bool ok() const { return error_.empty() && subscribed_; }

  void report() const {
    if (!error_.empty()) {
      std::printf("client %d: failed: %s\n", index_, error_.c_str());
      return;
    }
    if (!subscribed_) {
      std::printf("client %d: failed: no reply to the subscription\n", index_);
      return;
    }
    const double seconds = std::chrono::duration<double>(end_ - subscribed_at_).count();
    std::printf(
        "client %d: %llu telemetry in %.2f s since subscribing = %.1f Hz (%llu messages in "
        "all)\n",
        index_, static_cast<unsigned long long>(telemetry_), seconds,
        seconds > 0.0 ? static_cast<double>(telemetry_) / seconds : 0.0,
        static_cast<unsigned long long>(messages_));
  }

 private:
  void on_connect(beast::error_code e) {
    if (e) return fail("connect", e);
    // The stream's own deadline is for the connection only; the WebSocket's idle timeout
    // takes over for the handshake and every read.
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout{kConnectTimeout, kIdleTimeout, false});
    ws_.async_handshake("127.0.0.1:" + std::to_string(port_), "/ws",
                        [self = shared_from_this()](beast::error_code e) {
                          if (e) return self->fail("WebSocket upgrade", e);
                          self->read();
                        });
  }

  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code e, std::size_t) {
      self->on_read(e);
    });
  }

  void on_read(beast::error_code e) {
    if (done_) return;
    if (e) return fail("read", e);
    const auto data = buffer_.cdata();
    const std::string_view text(static_cast<const char*>(data.data()), data.size());
    ++messages_;
    if (messages_ == 1) {
      // The first message is the hello; subscribe only once the server has greeted us.
      if (text.find(R"("type":"hello")") == std::string_view::npos) {
        return fail("expected a hello first, got " + std::string(text.substr(0, 80)));
      }
      ws_.text(true);
      ws_.async_write(net::buffer(kSubscribe),
                      [self = shared_from_this()](beast::error_code e, std::size_t) {
                        if (e && !self->done_) self->fail("subscribe", e);
                      });
    } else if (text.find(R"("type":"telemetry")") != std::string_view::npos) {
      if (subscribed_) ++telemetry_;
    } else if (!subscribed_ && text.find(R"("type":"reply")") != std::string_view::npos) {
      if (text.find(R"("ok":true)") == std::string_view::npos) {
        return fail("subscription refused: " + std::string(text));
      }
      subscribed_ = true;
      subscribed_at_ = Clock::now();
    }
    buffer_.consume(buffer_.size());
    read();
  }

  void fail(const std::string& what, beast::error_code e) { fail(what + ": " + e.message()); }
  void fail(const std::string& what) {
    if (done_) return;
    error_ = what;
    done_ = true;
  }

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buffer_;
  int index_;
  unsigned short port_;
  bool done_ = false;
  bool subscribed_ = false;
  Clock::time_point subscribed_at_{};
  Clock::time_point end_{};
  std::uint64_t telemetry_ = 0;
  std::uint64_t messages_ = 0;
  std::string error_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: web_load_clients PORT N SECONDS\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int count = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  if (port <= 0 || port > 65535 || count <= 0 || !(seconds > 0.0)) {
    std::fprintf(stderr, "web_load_clients: PORT 1-65535, N >= 1 and SECONDS > 0\n");
    return 2;
  }
  // The run's length counts from here, not from each connection, so the clients are done
  // by a fixed time whatever their connections took.
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));

  // One thread runs every client's handlers: a single-threaded io_context needs no locks.
  net::io_context io(1);
  std::vector<std::shared_ptr<Client>> clients;
  for (int k = 1; k <= count; ++k) {
    clients.push_back(std::make_shared<Client>(io, k, static_cast<unsigned short>(port)));
    clients.back()->start();
  }
  net::steady_timer timer(io, end);
  timer.async_wait([&](beast::error_code) {
    for (auto& c : clients) c->finish(end);
    // Beast's aborted WebSocket reads may wait out the idle timeout before completing; the
    // counts are final, so nothing left to run matters.
    io.stop();
  });
  io.run();

  int status = 0;
  for (const auto& c : clients) {
    c->report();
    if (!c->ok()) status = 1;
  }
  return status;
}

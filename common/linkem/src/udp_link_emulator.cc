#include "tether/linkem/udp_link_emulator.h"

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "jitter.h"

namespace tether::linkem {

namespace {

using asio::ip::udp;
using Clock = std::chrono::steady_clock;

void check(const DatagramProfile& d, const std::string& name) {
  const auto fail = [&](const std::string& field, double value, const std::string& allowed) {
    throw std::invalid_argument(name + "." + field + " = " + std::to_string(value) + ": " +
                                allowed);
  };
  if (!std::isfinite(d.delay) || d.delay < 0.0 || d.delay > 100.0) {
    fail("delay", d.delay, "allowed 0 … 100 s");
  }
  if (!std::isfinite(d.jitter) || d.jitter < 0.0 || d.jitter > d.delay) {
    fail("jitter", d.jitter, "allowed 0 … the delay");
  }
  for (const auto& [field, p] : {std::pair{"loss", d.loss}, std::pair{"duplicate", d.duplicate},
                                 std::pair{"reorder", d.reorder}}) {
    if (!std::isfinite(p) || p < 0.0 || p > 1.0) fail(field, p, "allowed 0 … 1");
  }
  if (!std::isfinite(d.reorder_delay) || d.reorder_delay < 0.0 || d.reorder_delay > 10.0) {
    fail("reorder_delay", d.reorder_delay, "allowed 0 … 10 s");
  }
  for (const Window& w : d.outages) {
    if (!std::isfinite(w.start) || !std::isfinite(w.end) || w.start < 0.0 || w.end <= w.start) {
      fail("outages", w.start, "a window needs 0 ≤ start < end");
    }
  }
}

udp::endpoint resolve(asio::io_context& io, const std::string& text, const char* what) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw std::invalid_argument(std::string(what) + " '" + text + "': expected HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  udp::resolver resolver(io);
  std::error_code error;
  const auto results = resolver.resolve(host, text.substr(colon + 1), error);
  if (error || results.empty()) {
    throw std::invalid_argument(std::string(what) + " '" + text + "': " + error.message());
  }
  return *results.begin();
}

}  // namespace

void validate(const UdpLinkProfile& profile) {
  check(profile.up, "up");
  check(profile.down, "down");
}

struct UdpLinkEmulator::Impl : std::enable_shared_from_this<UdpLinkEmulator::Impl> {
  asio::io_context io;
  udp::socket front{io};  // the controller's side
  udp::socket back{io};   // the arm's side
  udp::endpoint target;
  udp::endpoint controller;  // the last controller address heard from
  bool have_controller = false;
  int port = 0;
  Clock::time_point started = Clock::now();
  std::thread thread;
  std::array<std::uint8_t, 65536> front_buffer{};
  std::array<std::uint8_t, 65536> back_buffer{};
  udp::endpoint sender;
  std::mt19937_64 random;
  bool stopping = false;
  std::vector<std::weak_ptr<asio::steady_timer>> held;  // datagrams waiting to leave

  mutable std::mutex mutex;
  UdpLinkProfile profile;
  UdpEmulatorStatistics stats;

  double seconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - started).count();
  }
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(random); }

  void receive_front() {
    auto self = shared_from_this();
    front.async_receive_from(asio::buffer(front_buffer), sender,
                             [self](std::error_code error, std::size_t n) {
                               if (error || self->stopping) return;
                               self->controller = self->sender;
                               self->have_controller = true;
                               self->relay(true, self->front_buffer.data(), n);
                               self->receive_front();
                             });
  }

  void receive_back() {
    auto self = shared_from_this();
    back.async_receive(asio::buffer(back_buffer), [self](std::error_code error, std::size_t n) {
      if (self->stopping) return;
      // ICMP port unreachable surfaces as an error on the connected socket: keep listening.
      if (!error && self->have_controller) self->relay(false, self->back_buffer.data(), n);
      self->receive_back();
    });
  }

  void relay(bool up, const std::uint8_t* data, std::size_t n) {
    const Clock::time_point now = Clock::now();
    DatagramProfile d;
    {
      std::lock_guard lock(mutex);
      d = up ? profile.up : profile.down;
      ++(up ? stats.up : stats.down).received;
    }
    const double t = seconds(now);
    bool lost = uniform() < d.loss;
    for (const Window& w : d.outages) lost = lost || (t >= w.start && t < w.end);
    if (lost) {
      std::lock_guard lock(mutex);
      ++(up ? stats.up : stats.down).lost;
      return;
    }
    double delay = d.delay;
    delay += sample_jitter(d.delay, d.jitter, d.distribution, random);
    const bool reordered = uniform() < d.reorder;
    if (reordered) delay += d.reorder_delay;
    const bool duplicated = uniform() < d.duplicate;
    {
      std::lock_guard lock(mutex);
      DatagramStatistics& s = up ? stats.up : stats.down;
      s.reordered += reordered ? 1 : 0;
      s.duplicated += duplicated ? 1 : 0;
    }
    auto payload = std::make_shared<std::vector<std::uint8_t>>(data, data + n);
    send_at(
        up, payload,
        now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay)));
    if (duplicated) {
      send_at(up, payload,
              now + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(delay + 1e-4)));
    }
  }

  void send_at(bool up, std::shared_ptr<std::vector<std::uint8_t>> payload,
               Clock::time_point when) {
    auto timer = std::make_shared<asio::steady_timer>(io, when);
    std::erase_if(held, [](const auto& w) { return w.expired(); });
    held.push_back(timer);
    auto self = shared_from_this();
    timer->async_wait([self, timer, payload, up](std::error_code error) {
      if (error || self->stopping) return;
      std::error_code ignored;
      if (up) {
        self->back.send(asio::buffer(*payload), 0, ignored);
      } else {
        self->front.send_to(asio::buffer(*payload), self->controller, 0, ignored);
      }
      std::lock_guard lock(self->mutex);
      ++(up ? self->stats.up : self->stats.down).forwarded;
    });
  }
};

UdpLinkEmulator::UdpLinkEmulator(const std::string& listen, const std::string& target,
                                 const UdpLinkProfile& profile, std::uint64_t seed)
    : impl_(std::make_shared<Impl>()) {
  validate(profile);
  impl_->profile = profile;
  impl_->random.seed(seed);
  impl_->target = resolve(impl_->io, target, "target");
  const udp::endpoint endpoint = resolve(impl_->io, listen, "listen");
  std::error_code error;
  impl_->front.open(endpoint.protocol());
  impl_->front.bind(endpoint, error);
  if (error) throw std::runtime_error("cannot listen on '" + listen + "': " + error.message());
  impl_->port = impl_->front.local_endpoint().port();
  impl_->back.open(impl_->target.protocol());
  impl_->back.connect(impl_->target, error);
  if (error) throw std::runtime_error("cannot reach '" + target + "': " + error.message());
  impl_->receive_front();
  impl_->receive_back();
  impl_->thread = std::thread([impl = impl_] { impl->io.run(); });
}

UdpLinkEmulator::~UdpLinkEmulator() {
  // Closed and cancelled on the io thread (datagrams still held are dropped); run() then
  // returns for lack of work, and no handler is left holding the relay.
  asio::post(impl_->io, [impl = impl_] {
    impl->stopping = true;
    std::error_code ignored;
    impl->front.close(ignored);
    impl->back.close(ignored);
    for (const auto& weak : impl->held) {
      if (auto timer = weak.lock()) timer->cancel();
    }
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

int UdpLinkEmulator::port() const { return impl_->port; }

double UdpLinkEmulator::now() const { return impl_->seconds(Clock::now()); }

void UdpLinkEmulator::set_profile(const UdpLinkProfile& profile) {
  validate(profile);
  std::lock_guard lock(impl_->mutex);
  impl_->profile = profile;
}

UdpLinkProfile UdpLinkEmulator::profile() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->profile;
}

UdpEmulatorStatistics UdpLinkEmulator::statistics() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

}  // namespace tether::linkem

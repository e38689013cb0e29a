#include "tether/linkem/link_emulator.h"

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "jitter.h"

namespace tether::linkem {

namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Bytes read per chunk, and bytes a direction may hold before it stops reading (TCP's
// own flow control then slows the sender, as a full link would).
constexpr std::size_t kChunkSize = 16 * 1024;
constexpr std::size_t kMaxQueued = std::size_t{64} * 1024 * 1024;

void check_direction(const DirectionProfile& d, const std::string& name) {
  const auto fail = [&](const std::string& field, double value, const std::string& allowed) {
    throw std::invalid_argument(name + "." + field + " = " + std::to_string(value) + ": " +
                                allowed);
  };
  if (!std::isfinite(d.delay) || d.delay < 0.0 || d.delay > 100.0) {
    fail("delay", d.delay, "allowed 0 … 100 s");
  }
  if (!std::isfinite(d.jitter) || d.jitter < 0.0 || d.jitter > d.delay) {
    fail("jitter", d.jitter, "allowed 0 … the delay (" + std::to_string(d.delay) + " s)");
  }
  if (!std::isfinite(d.bandwidth) || d.bandwidth < 0.0) {
    fail("bandwidth", d.bandwidth, "allowed ≥ 0 bytes/s (0: unlimited)");
  }
  for (const Window& w : d.stalls) {
    if (!std::isfinite(w.start) || !std::isfinite(w.end) || w.start < 0.0 || w.end <= w.start) {
      fail("stalls", w.start, "a window needs 0 ≤ start < end");
    }
  }
}

std::pair<std::string, std::string> split_address(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument("'" + text + "': expected HOST:PORT");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, text.substr(colon + 1)};
}

}  // namespace

void validate(const LinkProfile& profile) {
  check_direction(profile.up, "up");
  check_direction(profile.down, "down");
  for (const double t : profile.cuts) {
    if (!std::isfinite(t) || t < 0.0) {
      throw std::invalid_argument("cuts: " + std::to_string(t) + ": allowed ≥ 0 s");
    }
  }
}

class Connection;

struct LinkEmulator::Impl : std::enable_shared_from_this<LinkEmulator::Impl> {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  int port = 0;  // set before the io thread starts
  tcp::endpoint target;
  Clock::time_point started = Clock::now();
  std::thread thread;

  mutable std::mutex mutex;  // profile and statistics, shared with callers' threads
  LinkProfile profile;
  EmulatorStatistics stats;

  std::mt19937_64 random;  // the io thread only
  std::vector<std::weak_ptr<Connection>> connections;
  std::vector<std::unique_ptr<asio::steady_timer>> cut_timers;

  double seconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - started).count();
  }
  Clock::time_point at(double s) const {
    return started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  double jitter_sample(const DirectionProfile& d) {
    return sample_jitter(d.delay, d.jitter, d.distribution, random);
  }

  void accept();
  void arm_cuts();
  void cut_all();
};

namespace {

// One direction of one connection: reads chunks from `from`, holds each until its release
// time, writes them to `to` in order.
class Pipe : public std::enable_shared_from_this<Pipe> {
 public:
  // `owner` keeps the connection, and so both sockets, alive while this pipe works;
  // `on_error` and `on_done` (the sender's end has been passed on) tell the connection.
  Pipe(LinkEmulator::Impl& site, std::shared_ptr<void> owner, tcp::socket& from, tcp::socket& to,
       bool up, std::function<void()> on_error, std::function<void()> on_done)
      : site_(site),
        owner_(std::move(owner)),
        from_(from),
        to_(to),
        up_(up),
        timer_(site.io),
        on_error_(std::move(on_error)),
        on_done_(std::move(on_done)) {}

  void start() { read(); }
  // Drops what is held: the connection is gone.
  void stop() {
    stopped_ = true;
    owner_.reset();
    timer_.cancel();
    // A write in flight still reads the front chunk until its handler runs.
    if (writing_ && !queue_.empty()) {
      queue_.erase(queue_.begin() + 1, queue_.end());
    } else {
      queue_.clear();
    }
  }

 private:
  struct Chunk {
    std::vector<std::uint8_t> data;
    Clock::time_point arrived;
    Clock::time_point release;
  };

  DirectionProfile direction() {
    std::lock_guard lock(site_.mutex);
    return up_ ? site_.profile.up : site_.profile.down;
  }

  void read() {
    auto self = shared_from_this();
    from_.async_read_some(asio::buffer(buffer_), [self](std::error_code error, std::size_t n) {
      self->on_read(error, n);
    });
  }

  void on_read(std::error_code error, std::size_t n) {
    if (stopped_) return;
    if (error) {
      // The sender closed (or reset): pass the end on once everything queued has left.
      eof_ = true;
      if (queue_.empty() && !writing_) finish();
      return;
    }
    const Clock::time_point arrived = Clock::now();
    const DirectionProfile d = direction();
    Clock::time_point release =
        arrived + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(d.delay + site_.jitter_sample(d)));
    // TCP keeps order: nothing overtakes the chunk before it.
    release = std::max(release, last_release_);
    if (d.bandwidth > 0.0) {
      const Clock::time_point begin = std::max(release, link_free_);
      link_free_ = begin + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(static_cast<double>(n) / d.bandwidth));
      release = link_free_;
    }
    for (bool moved = true; moved;) {
      moved = false;
      for (const Window& w : d.stalls) {
        // Compared as time points: a time point converted to seconds and back may land a
        // tick short of the window's end and be moved for ever.
        const Clock::time_point end = site_.at(w.end);
        if (release >= site_.at(w.start) && release < end) {
          release = end;
          moved = true;
        }
      }
    }
    last_release_ = release;
    queue_.push_back(
        Chunk{{buffer_.begin(), buffer_.begin() + static_cast<long>(n)}, arrived, release});
    queued_ += n;
    if (!writing_ && queue_.size() == 1) schedule();
    if (queued_ < kMaxQueued) {
      read();
    } else {
      paused_ = true;
    }
  }

  void schedule() {
    if (queue_.empty()) return;
    auto self = shared_from_this();
    timer_.expires_at(queue_.front().release);
    timer_.async_wait([self](std::error_code error) {
      if (!error && !self->stopped_ && !self->queue_.empty()) self->write();
    });
  }

  void write() {
    writing_ = true;
    auto self = shared_from_this();
    asio::async_write(to_, asio::buffer(queue_.front().data),
                      [self](std::error_code error, std::size_t n) { self->on_written(error, n); });
  }

  void on_written(std::error_code error, std::size_t n) {
    writing_ = false;
    if (stopped_) return;
    if (error) {
      on_error_();
      return;
    }
    const Chunk& chunk = queue_.front();
    const double held = std::chrono::duration<double>(Clock::now() - chunk.arrived).count();
    {
      std::lock_guard lock(site_.mutex);
      DirectionStatistics& s = up_ ? site_.stats.up : site_.stats.down;
      s.bytes += n;
      ++s.chunks;
      s.delay_max = std::max(s.delay_max, held);
    }
    queued_ -= chunk.data.size();
    queue_.pop_front();
    if (paused_ && queued_ < kMaxQueued / 2) {
      paused_ = false;
      read();
    }
    if (!queue_.empty()) {
      schedule();
    } else if (eof_) {
      finish();
    }
  }

  void finish() {
    std::error_code ignored;
    to_.shutdown(tcp::socket::shutdown_send, ignored);
    on_done_();
  }

  LinkEmulator::Impl& site_;
  std::shared_ptr<void> owner_;
  tcp::socket& from_;
  tcp::socket& to_;
  bool up_;
  asio::steady_timer timer_;
  std::function<void()> on_error_;
  std::function<void()> on_done_;
  std::array<std::uint8_t, kChunkSize> buffer_{};
  std::deque<Chunk> queue_;
  std::size_t queued_ = 0;
  Clock::time_point last_release_{};
  Clock::time_point link_free_{};
  bool writing_ = false;
  bool paused_ = false;
  bool eof_ = false;
  bool stopped_ = false;
};

}  // namespace

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(LinkEmulator::Impl& site, tcp::socket client)
      : site_(site), client_(std::move(client)), server_(site.io) {}

  void start() {
    auto self = shared_from_this();
    server_.async_connect(site_.target, [self](std::error_code error) {
      if (error) {
        self->close(false);
        return;
      }
      std::error_code ignored;
      self->client_.set_option(tcp::no_delay(true), ignored);
      self->server_.set_option(tcp::no_delay(true), ignored);
      std::weak_ptr<Connection> weak = self;
      const auto on_error = [weak] {
        if (auto c = weak.lock()) c->close(false);
      };
      // Both directions ended cleanly: the connection is over.
      const auto on_done = [weak] {
        if (auto c = weak.lock(); c && ++c->done_ == 2) c->close(false);
      };
      self->up_ = std::make_shared<Pipe>(self->site_, self, self->client_, self->server_, true,
                                         on_error, on_done);
      self->down_ = std::make_shared<Pipe>(self->site_, self, self->server_, self->client_, false,
                                           on_error, on_done);
      self->up_->start();
      self->down_->start();
    });
  }

  // Closes both sides; `reset` sends a TCP reset instead of a clean end.
  void close(bool reset) {
    const auto keep = shared_from_this();  // the pipes may hold the last references
    if (up_) up_->stop();
    if (down_) down_->stop();
    std::error_code ignored;
    for (tcp::socket* s : {&client_, &server_}) {
      if (!s->is_open()) continue;
      if (reset) s->set_option(asio::socket_base::linger(true, 0), ignored);
      s->close(ignored);
    }
    up_.reset();
    down_.reset();
  }

 private:
  LinkEmulator::Impl& site_;
  tcp::socket client_;
  tcp::socket server_;
  std::shared_ptr<Pipe> up_;
  std::shared_ptr<Pipe> down_;
  int done_ = 0;  // directions whose end has been passed on
};

void LinkEmulator::Impl::accept() {
  auto self = shared_from_this();
  acceptor.async_accept([self](std::error_code error, tcp::socket socket) {
    if (error) return;  // the acceptor was closed
    auto connection = std::make_shared<Connection>(*self, std::move(socket));
    std::erase_if(self->connections, [](const auto& w) { return w.expired(); });
    self->connections.push_back(connection);
    {
      std::lock_guard lock(self->mutex);
      ++self->stats.connections;
    }
    connection->start();
    self->accept();
  });
}

void LinkEmulator::Impl::cut_all() {
  std::vector<std::shared_ptr<Connection>> open;
  for (const auto& weak : connections) {
    if (auto c = weak.lock()) open.push_back(std::move(c));
  }
  connections.clear();
  {
    // Counted before the resets, so whoever sees a reset also sees it counted.
    std::lock_guard lock(mutex);
    stats.cuts += open.size();
  }
  for (const auto& c : open) c->close(true);
}

void LinkEmulator::Impl::arm_cuts() {
  for (auto& timer : cut_timers) timer->cancel();
  cut_timers.clear();
  std::vector<double> cuts;
  {
    std::lock_guard lock(mutex);
    cuts = profile.cuts;
  }
  for (const double t : cuts) {
    if (at(t) < Clock::now()) continue;
    cut_timers.push_back(std::make_unique<asio::steady_timer>(io, at(t)));
    std::weak_ptr<Impl> weak = shared_from_this();
    cut_timers.back()->async_wait([weak](std::error_code error) {
      if (auto self = weak.lock(); self && !error) self->cut_all();
    });
  }
}

LinkEmulator::LinkEmulator(const std::string& listen, const std::string& target,
                           const LinkProfile& profile, std::uint64_t seed)
    : impl_(std::make_shared<Impl>()) {
  validate(profile);
  impl_->profile = profile;
  impl_->random.seed(seed);
  tcp::resolver resolver(impl_->io);
  const auto [target_host, target_port] = split_address(target);
  std::error_code error;
  const auto targets = resolver.resolve(target_host, target_port, error);
  if (error || targets.empty()) {
    throw std::invalid_argument("target '" + target + "': " + error.message());
  }
  impl_->target = *targets.begin();
  const auto [listen_host, listen_port] = split_address(listen);
  const auto listens = resolver.resolve(listen_host, listen_port, error);
  if (error || listens.empty()) {
    throw std::invalid_argument("listen '" + listen + "': " + error.message());
  }
  const tcp::endpoint endpoint = *listens.begin();
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(endpoint, error);
  if (error) throw std::runtime_error("cannot listen on '" + listen + "': " + error.message());
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->accept();
  impl_->arm_cuts();
  impl_->thread = std::thread([impl = impl_] { impl->io.run(); });
}

LinkEmulator::~LinkEmulator() {
  // Everything is closed and cancelled on the io thread; its run() then returns for lack of
  // work, and no handler is left holding the emulator.
  asio::post(impl_->io, [impl = impl_] {
    std::error_code ignored;
    impl->acceptor.close(ignored);
    for (auto& timer : impl->cut_timers) timer->cancel();
    for (const auto& weak : impl->connections) {
      if (auto c = weak.lock()) c->close(false);
    }
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

int LinkEmulator::port() const { return impl_->port; }

double LinkEmulator::now() const { return impl_->seconds(Clock::now()); }

void LinkEmulator::set_profile(const LinkProfile& profile) {
  validate(profile);
  {
    std::lock_guard lock(impl_->mutex);
    impl_->profile = profile;
  }
  asio::post(impl_->io, [impl = impl_] { impl->arm_cuts(); });
}

LinkProfile LinkEmulator::profile() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->profile;
}

EmulatorStatistics LinkEmulator::statistics() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

void LinkEmulator::cut() {
  asio::post(impl_->io, [impl = impl_] { impl->cut_all(); });
}

}  // namespace tether::linkem

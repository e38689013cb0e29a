#include "tether/linkem/packet_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "jitter.h"
#include "script_events.h"
#include "tether/linkem/link_script.h"

namespace tether::linkem {

namespace {

using Clock = std::chrono::steady_clock;

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] void fail(const std::string& name, const std::string& field, const std::string& value,
                       const std::string& allowed) {
  throw std::invalid_argument(name + "." + field + ": " + value + ": allowed " + allowed);
}

bool within(double value, double low, double high) {
  return std::isfinite(value) && value >= low && value <= high;
}

}  // namespace

void validate(const PacketProfile& d, const std::string& name) {
  if (!within(d.delay, 0.0, 100.0)) fail(name, "delay", number(d.delay), "0 … 100 s");
  if (!within(d.jitter, 0.0, d.delay)) {
    fail(name, "jitter", number(d.jitter), "0 … the delay (" + number(d.delay) + " s)");
  }
  if (!within(d.loss, 0.0, 1.0)) fail(name, "loss", number(d.loss), "0 … 1");
  if (!within(d.burst, 1.0, 1e6)) fail(name, "burst", number(d.burst), "1 … 1000000 packets");
  // Beyond burst/(burst + 1) the good state would have to turn bad more often than always.
  if (d.burst > 1.0 && d.loss > d.burst / (d.burst + 1.0)) {
    fail(name, "loss", number(d.loss),
         "0 … " + number(d.burst / (d.burst + 1.0)) + " with burst " + number(d.burst) +
             " (burst/(burst + 1))");
  }
  if (!within(d.rate, 0.0, 1e12)) fail(name, "rate", number(d.rate), "0 … 1e12 bytes/s (0: none)");
  if (!within(d.queue, 0.0, 1e9)) fail(name, "queue", number(d.queue), "0 … 1e9 bytes");
  for (const Window& w : d.outages) {
    if (!std::isfinite(w.start) || !std::isfinite(w.end) || w.start < 0.0 || w.end <= w.start) {
      fail(name, "outages", "[" + number(w.start) + ", " + number(w.end) + ")",
           "windows with 0 ≤ start < end [s]");
    }
  }
}

void validate(const PacketLinkProfile& profile) {
  validate(profile.up, "up");
  validate(profile.down, "down");
}

// ---- the model ----

PacketImpairment::PacketImpairment(const PacketProfile& profile, std::uint64_t seed)
    : random_(seed) {
  set_profile(profile);
}

void PacketImpairment::set_profile(const PacketProfile& profile) {
  validate(profile, "packet");
  profile_ = profile;
  if (profile_.burst <= 1.0) {
    bad_ = false;
    in_burst_ = false;
  }
}

PacketVerdict PacketImpairment::arrive(double arrival, std::size_t bytes) {
  arrival = std::max(arrival, last_arrival_);
  last_arrival_ = arrival;
  ++counters_.packets_in;
  counters_.bytes_in += bytes;
  const PacketProfile& p = profile_;

  for (const Window& w : p.outages) {
    if (arrival >= w.start && arrival < w.end) {
      ++counters_.lost_outage;
      return {PacketFate::kLostOutage, 0.0};
    }
  }

  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (p.burst > 1.0) {
    // This packet meets the current state; the chain then steps once per packet. Its
    // stationary share of the bad state is g/(g + r) = loss, its bad runs last 1/r = burst.
    const bool lost = bad_;
    const double r = 1.0 / p.burst;
    const double g = p.loss * r / (1.0 - p.loss);  // loss < 1: validate() bounds it
    const double u = uniform(random_);
    bad_ = bad_ ? u >= r : u < g;
    if (lost) {
      ++counters_.lost_burst;
      if (!in_burst_) ++counters_.bursts;
      in_burst_ = true;
      return {PacketFate::kLostBurst, 0.0};
    }
    in_burst_ = false;
  } else if (p.loss > 0.0 && uniform(random_) < p.loss) {
    ++counters_.lost_random;
    return {PacketFate::kLostRandom, 0.0};
  }

  // The rate limiter: one packet on the link at a time, the others waiting behind it in a
  // queue of at most p.queue bytes. A packet that finds the link idle goes straight on.
  double sent = arrival;  // [s] its last byte has left the limiter
  if (p.rate > 0.0) {
    while (waiting_head_ < waiting_.size() && waiting_[waiting_head_].start <= arrival) {
      waiting_bytes_ -= waiting_[waiting_head_].bytes;
      ++waiting_head_;
    }
    if (waiting_head_ > 1024 && 2 * waiting_head_ > waiting_.size()) {
      waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<long>(waiting_head_));
      waiting_head_ = 0;
    }
    const double start = std::max(arrival, link_free_);
    if (start > arrival) {
      if (static_cast<double>(waiting_bytes_ + bytes) > p.queue) {
        ++counters_.dropped_queue;
        return {PacketFate::kDroppedQueue, 0.0};
      }
      waiting_.push_back({start, bytes});
      waiting_bytes_ += bytes;
    }
    link_free_ = start + static_cast<double>(bytes) / p.rate;
    sent = link_free_;
  }

  double departure = sent + p.delay + sample_jitter(p.delay, p.jitter, p.distribution, random_);
  if (!p.reorder) departure = std::max(departure, last_departure_);
  last_departure_ = std::max(last_departure_, departure);
  ++counters_.forwarded;
  counters_.bytes_forwarded += bytes;
  return {PacketFate::kForwarded, departure};
}

// ---- the forwarder ----

namespace {

std::string error_text(int error) { return std::strerror(error); }

in_addr ipv4(const std::string& text, const char* what) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) != 1) {
    throw std::invalid_argument(std::string(what) + ": '" + text + "': expected an IPv4 address");
  }
  return address;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

void set_address(int socket, const std::string& device, unsigned long request, in_addr address,
                 const std::string& where, const char* what) {
  ifreq request_data{};
  std::strncpy(request_data.ifr_name, device.c_str(), IFNAMSIZ - 1);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr = address;
  static_assert(sizeof(in) <= sizeof(request_data.ifr_addr));
  std::memcpy(&request_data.ifr_addr, &in, sizeof(in));
  if (::ioctl(socket, request, &request_data) != 0) {
    throw std::runtime_error(where + "cannot set the " + what + " of " + device + ": " +
                             error_text(errno));
  }
}

void bring_up(int socket, const std::string& device, const std::string& where) {
  ifreq request{};
  std::strncpy(request.ifr_name, device.c_str(), IFNAMSIZ - 1);
  if (::ioctl(socket, SIOCGIFFLAGS, &request) != 0) {
    throw std::runtime_error(where + "no device " + device + ": " + error_text(errno));
  }
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
  if (::ioctl(socket, SIOCSIFFLAGS, &request) != 0) {
    throw std::runtime_error(where + "cannot bring " + device + " up: " + error_text(errno));
  }
}

// Runs on a thread of its own that enters `ns` and ends with the call: the caller's thread
// never changes namespace. The TUN device and its fd stay in `ns`; the fd is usable from any
// thread afterwards.
Fd create_device(const PacketLinkConfig& config, const std::string& ns, in_addr local,
                 in_addr peer) {
  const std::string where = "network namespace '" + ns + "': ";
  const std::string path = "/var/run/netns/" + ns;
  Fd nsfd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (nsfd.get() < 0) {
    const int error = errno;
    throw std::runtime_error(
        where + "cannot open " + path + ": " + error_text(error) +
        (error == ENOENT ? " (create it with `ip netns add " + ns + "`)" : ""));
  }
  if (::setns(nsfd.get(), CLONE_NEWNET) != 0) {
    const int error = errno;
    throw std::runtime_error(where + "cannot enter it: " + error_text(error) +
                             (error == EPERM ? " (needs root)" : ""));
  }
  Fd tun(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (tun.get() < 0) {
    throw std::runtime_error(where + "cannot open /dev/net/tun: " + error_text(errno));
  }
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, config.device.c_str(), IFNAMSIZ - 1);
  if (::ioctl(tun.get(), TUNSETIFF, &request) != 0) {
    const int error = errno;
    throw std::runtime_error(where + "cannot create the TUN device " + config.device + ": " +
                             error_text(error) +
                             (error == EBUSY   ? " (the name is in use)"
                              : error == EPERM ? " (needs root)"
                                               : ""));
  }
  // Only IPv4 is configured: without this the kernel's own IPv6 chatter (router
  // solicitations, MLD reports) would cross the link and count as its traffic. Best effort:
  // a kernel without IPv6 has no such file and no such chatter.
  if (Fd sysctl(::open(("/proc/sys/net/ipv6/conf/" + config.device + "/disable_ipv6").c_str(),
                       O_WRONLY | O_CLOEXEC));
      sysctl.get() >= 0) {
    [[maybe_unused]] const ssize_t ignored = ::write(sysctl.get(), "1", 1);
  }
  // The socket belongs to `ns` (created after setns), so its ioctls configure ns's devices.
  Fd socket(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (socket.get() < 0) throw std::runtime_error(where + "socket: " + error_text(errno));
  set_address(socket.get(), config.device, SIOCSIFADDR, local, where, "address");
  set_address(socket.get(), config.device, SIOCSIFDSTADDR, peer, where, "peer address");
  in_addr mask{};
  mask.s_addr = htonl(config.prefix >= 32 ? 0xffffffffU : ~(0xffffffffU >> config.prefix));
  set_address(socket.get(), config.device, SIOCSIFNETMASK, mask, where, "netmask");
  ifreq mtu{};
  std::strncpy(mtu.ifr_name, config.device.c_str(), IFNAMSIZ - 1);
  mtu.ifr_mtu = config.mtu;
  if (::ioctl(socket.get(), SIOCSIFMTU, &mtu) != 0) {
    throw std::runtime_error(where + "cannot set the MTU of " + config.device + ": " +
                             error_text(errno));
  }
  bring_up(socket.get(), config.device, where);
  // A fresh namespace has lo down, and with it every local socket address of its own.
  bring_up(socket.get(), "lo", where);
  return tun;
}

Fd create_device_in_thread(const PacketLinkConfig& config, const std::string& ns, in_addr local,
                           in_addr peer) {
  Fd result;
  std::exception_ptr error;
  std::thread([&] {
    try {
      result = create_device(config, ns, local, peer);
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) std::rethrow_exception(error);
  return result;
}

// A uniform sample of at most kCapacity values out of all offered (Vitter's algorithm R):
// percentiles of a long run in bounded memory.
class Reservoir {
 public:
  static constexpr std::size_t kCapacity = std::size_t{1} << 17;
  void add(double value) {
    ++seen_;
    if (values_.size() < kCapacity) {
      values_.push_back(value);
      return;
    }
    const std::uint64_t j = std::uniform_int_distribution<std::uint64_t>(0, seen_ - 1)(random_);
    if (j < kCapacity) values_[j] = value;
  }
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<double> values_;
  std::uint64_t seen_ = 0;
  std::mt19937_64 random_{12345};
};

// Nearest-rank percentile of `values`, q in (0, 1]; 0 when empty.
double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  const std::size_t index = std::clamp<std::size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(index), values.end());
  return values[index];
}

}  // namespace

struct PacketLink::Impl {
  PacketLinkConfig config;
  Fd tun[2];  // [0] in A, [1] in B; side i's packets go up (i = 0) or down (i = 1)
  Fd wake;    // eventfd: the destructor's stop signal
  Clock::time_point started;
  std::thread thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;  // guards what follows
  PacketLinkProfile profile;
  PacketImpairment model[2];
  std::uint64_t written[2] = {0, 0};
  Reservoir delays[2];

  // A packet decided to leave, on the forwarding thread only.
  struct Held {
    Clock::time_point when;
    std::uint64_t sequence;  // keeps equal departures in arrival order
    int from;
    Clock::time_point read;
    std::vector<std::uint8_t> data;
  };
  std::vector<Held> heap;  // min-heap on (when, sequence)
  std::uint64_t sequence = 0;

  static bool later(const Held& a, const Held& b) {
    return a.when != b.when ? a.when > b.when : a.sequence > b.sequence;
  }

  double seconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - started).count();
  }

  void read_side(int side, std::vector<std::uint8_t>& buffer) {
    // A bounded batch, so a flood on one side cannot starve the other or the departures.
    for (int i = 0; i < 256; ++i) {
      const ssize_t n = ::read(tun[side].get(), buffer.data(), buffer.size());
      if (n <= 0) return;  // EAGAIN: drained
      const Clock::time_point now = Clock::now();
      PacketVerdict verdict;
      {
        std::lock_guard lock(mutex);
        verdict = model[side].arrive(seconds(now), static_cast<std::size_t>(n));
      }
      if (verdict.fate != PacketFate::kForwarded) continue;
      heap.push_back({started + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(verdict.departure)),
                      sequence++, side, now,
                      std::vector<std::uint8_t>(buffer.begin(), buffer.begin() + n)});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }

  void send_due() {
    while (!heap.empty() && heap.front().when <= Clock::now()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Held held = std::move(heap.back());
      heap.pop_back();
      // A TUN write hands the packet to the far namespace's stack; a failure (its queue
      // full) is a loss as a real link's would be.
      if (::write(tun[1 - held.from].get(), held.data.data(), held.data.size()) < 0) continue;
      const double delay = std::chrono::duration<double>(Clock::now() - held.read).count();
      std::lock_guard lock(mutex);
      ++written[held.from];
      delays[held.from].add(delay);
    }
  }

  void run() {
    // The kernel may otherwise round a wakeup up by its default timer slack (50 us).
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    std::vector<std::uint8_t> buffer(65536);
    pollfd fds[3] = {{tun[0].get(), POLLIN, 0}, {tun[1].get(), POLLIN, 0}, {wake.get(), POLLIN, 0}};
    while (!stopping.load()) {
      timespec timeout{};
      timespec* wait = nullptr;  // no departures pending: sleep until a packet or stop
      if (!heap.empty()) {
        const auto left = std::max(Clock::duration::zero(), heap.front().when - Clock::now());
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timeout.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
        timeout.tv_nsec = static_cast<long>(ns % 1'000'000'000);
        wait = &timeout;
      }
      if (::ppoll(fds, 3, wait, nullptr) < 0 && errno != EINTR) return;
      for (int side = 0; side < 2; ++side) {
        if ((fds[side].revents & POLLIN) != 0) read_side(side, buffer);
      }
      send_due();
    }
  }
};

PacketLink::PacketLink(const PacketLinkConfig& config, const PacketLinkProfile& profile)
    : impl_(std::make_shared<Impl>()) {
  validate(profile);
  if (config.ns_a.empty() || config.ns_b.empty() || config.ns_a == config.ns_b) {
    throw std::invalid_argument("namespaces '" + config.ns_a + "' and '" + config.ns_b +
                                "': allowed two different names");
  }
  if (config.device.empty() || config.device.size() >= IFNAMSIZ ||
      config.device.find('/') != std::string::npos) {
    throw std::invalid_argument("device: '" + config.device + "': allowed 1 … " +
                                std::to_string(IFNAMSIZ - 1) + " characters, no '/'");
  }
  if (config.prefix < 1 || config.prefix > 32) {
    throw std::invalid_argument("prefix: " + std::to_string(config.prefix) + ": allowed 1 … 32");
  }
  if (config.mtu < 576 || config.mtu > 65535) {
    throw std::invalid_argument("mtu: " + std::to_string(config.mtu) + ": allowed 576 … 65535");
  }
  const in_addr a = ipv4(config.addr_a, "addr_a");
  const in_addr b = ipv4(config.addr_b, "addr_b");
  if (a.s_addr == b.s_addr) {
    throw std::invalid_argument("addr_b: " + config.addr_b + ": allowed any but addr_a");
  }
  Impl& impl = *impl_;
  impl.config = config;
  impl.profile = profile;
  // Two streams of one seed: changing one direction's settings leaves the other's draws.
  impl.model[0] = PacketImpairment(profile.up, config.seed);
  impl.model[1] = PacketImpairment(profile.down, config.seed ^ 0x9e3779b97f4a7c15ULL);
  impl.tun[0] = create_device_in_thread(config, config.ns_a, a, b);
  impl.tun[1] = create_device_in_thread(config, config.ns_b, b, a);
  impl.wake = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (impl.wake.get() < 0) throw std::runtime_error("eventfd: " + error_text(errno));
  impl.started = Clock::now();
  impl.thread = std::thread([impl = impl_] { impl->run(); });
}

PacketLink::~PacketLink() {
  impl_->stopping.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(impl_->wake.get(), &one, sizeof(one));
  if (impl_->thread.joinable()) impl_->thread.join();
  // The devices go with their fds (they are not persistent).
  impl_->tun[0].reset();
  impl_->tun[1].reset();
}

double PacketLink::now() const { return impl_->seconds(Clock::now()); }

void PacketLink::set_profile(const PacketLinkProfile& profile) {
  validate(profile);
  std::lock_guard lock(impl_->mutex);
  impl_->profile = profile;
  impl_->model[0].set_profile(profile.up);
  impl_->model[1].set_profile(profile.down);
}

PacketLinkProfile PacketLink::profile() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->profile;
}

PacketLinkStatistics PacketLink::statistics() const {
  PacketLinkStatistics s;
  PacketDirectionStatistics* out[2] = {&s.up, &s.down};
  std::vector<double> delays[2];
  {
    // Copied under the lock, sorted outside it: the forwarder waits for a copy only.
    std::lock_guard lock(impl_->mutex);
    for (int i = 0; i < 2; ++i) {
      out[i]->counters = impl_->model[i].counters();
      out[i]->written = impl_->written[i];
      delays[i] = impl_->delays[i].values();
    }
  }
  for (int i = 0; i < 2; ++i) {
    out[i]->delay_p50 = percentile(delays[i], 0.50);
    out[i]->delay_p99 = percentile(std::move(delays[i]), 0.99);
  }
  return s;
}

// ---- scripts ----

namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

double leading_number(std::string_view text, std::string_view& unit) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || !std::isfinite(value)) {
    throw std::invalid_argument("'" + std::string(text) + "': not a number");
  }
  unit = text.substr(static_cast<std::size_t>(end - text.data()));
  return value;
}

}  // namespace

double parse_probability(std::string_view text) {
  std::string_view unit;
  double value = leading_number(text, unit);
  if (unit == "%") {
    value /= 100.0;
  } else if (!unit.empty()) {
    throw std::invalid_argument("'" + std::string(text) +
                                "': expected a probability, e.g. 0.01 or 1%");
  }
  if (value < 0.0 || value > 1.0) {
    throw std::invalid_argument("'" + std::string(text) + "': allowed 0 … 1 (0 % … 100 %)");
  }
  return value;
}

double parse_bytes(std::string_view text) {
  std::string_view unit;
  const double value = leading_number(text, unit);
  double scale = 0.0;
  if (unit.empty() || unit == "B") scale = 1.0;
  if (unit == "kB") scale = 1e3;
  if (unit == "MB") scale = 1e6;
  if (scale == 0.0) {
    throw std::invalid_argument("'" + std::string(text) + "': expected a size in B, kB or MB");
  }
  if (value < 0.0) throw std::invalid_argument("'" + std::string(text) + "': must be ≥ 0");
  return value * scale;
}

std::vector<PacketScriptEvent> parse_packet_script(std::string_view text, const std::string& name,
                                                   const PacketLinkProfile& start) {
  std::vector<PacketScriptEvent> events;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    try {
      if (w.size() < 4 || w[0] != "at") {
        throw std::invalid_argument(
            "expected 'at TIME DIRECTION SETTINGS' or 'at TIME DIRECTION outage T'");
      }
      PacketScriptEvent event;
      event.time = parse_time(w[1]);
      event.text = std::string(line);
      if (w[2] != "up" && w[2] != "down" && w[2] != "both") {
        throw std::invalid_argument("direction '" + w[2] + "': expected up, down or both");
      }
      const bool up = w[2] != "down";
      const bool down = w[2] != "up";
      std::vector<std::function<void(PacketProfile&)>> settings;
      if (w[3] == "outage") {
        if (w.size() != 5) throw std::invalid_argument("expected 'outage T' and nothing after");
        const Window window{event.time, event.time + parse_time(w[4])};
        if (window.end <= window.start) throw std::invalid_argument("an outage lasts > 0 s");
        settings.emplace_back([window](PacketProfile& d) { d.outages.push_back(window); });
      }
      for (std::size_t i = w[3] == "outage" ? w.size() : 3; i < w.size(); ++i) {
        const std::size_t eq = w[i].find('=');
        if (eq == std::string::npos) {
          throw std::invalid_argument("'" + w[i] + "': expected KEY=VALUE or 'outage T'");
        }
        const std::string key = w[i].substr(0, eq);
        const std::string value = w[i].substr(eq + 1);
        if (key == "delay") {
          const double v = parse_time(value);
          settings.emplace_back([v](PacketProfile& d) { d.delay = v; });
        } else if (key == "jitter") {
          const double v = parse_time(value);
          settings.emplace_back([v](PacketProfile& d) { d.jitter = v; });
        } else if (key == "distribution") {
          if (value != "uniform" && value != "normal") {
            throw std::invalid_argument("distribution '" + value + "': expected uniform or normal");
          }
          const Jitter j = value == "uniform" ? Jitter::kUniform : Jitter::kNormal;
          settings.emplace_back([j](PacketProfile& d) { d.distribution = j; });
        } else if (key == "reorder") {
          if (value != "on" && value != "off") {
            throw std::invalid_argument("reorder '" + value + "': expected on or off");
          }
          const bool v = value == "on";
          settings.emplace_back([v](PacketProfile& d) { d.reorder = v; });
        } else if (key == "loss") {
          const double v = parse_probability(value);
          settings.emplace_back([v](PacketProfile& d) { d.loss = v; });
        } else if (key == "burst") {
          std::string_view unit;
          const double v = leading_number(value, unit);
          if (!unit.empty() || v < 1.0) {
            throw std::invalid_argument("burst '" + value + "': expected a number ≥ 1");
          }
          settings.emplace_back([v](PacketProfile& d) { d.burst = v; });
        } else if (key == "rate") {
          const double v = parse_bandwidth(value);
          settings.emplace_back([v](PacketProfile& d) { d.rate = v; });
        } else if (key == "queue") {
          const double v = parse_bytes(value);
          settings.emplace_back([v](PacketProfile& d) { d.queue = v; });
        } else {
          throw std::invalid_argument(
              "setting '" + key +
              "': expected delay, jitter, distribution, reorder, loss, burst, rate or queue");
        }
      }
      event.apply = [settings, up, down](PacketLinkProfile& p) {
        for (const auto& set : settings) {
          if (up) set(p.up);
          if (down) set(p.down);
        }
      };
      events.push_back(std::move(event));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(name + ":" + std::to_string(line_number) + ": " + e.what());
    }
  }
  // The whole script must give valid profiles, checked before anything is played.
  detail::order_and_check(events, start, name, [](const auto& profile) { validate(profile); });
  return events;
}

void play_packet_script(PacketLink& link, const std::vector<PacketScriptEvent>& events,
                        const std::function<bool()>& stop) {
  detail::play(link, events, stop);
}

}  // namespace tether::linkem

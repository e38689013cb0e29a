#include "tether/remote/arm_link/udp_arm.h"

#include <array>
#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <thread>

#include "endpoint.h"
#include "tether/remote/arm_link/protocol.h"
#include "tether/remote/loop/mailbox.h"

namespace tether::remote {
namespace {

using Clock = std::chrono::steady_clock;
using arm_link::CommandPacket;
using arm_link::StatePacket;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Bounds the work of one read() when a burst is queued; the rest waits for the next cycle.
constexpr int kMaxDatagramsPerRead = 256;
// Send times of the last COMMANDs, for the round trip of the one a STATE echoes.
constexpr std::size_t kSendHistory = 64;

// A random non-zero session id.
std::uint64_t random_session() {
  std::random_device device;
  std::uint64_t session = 0;
  while (session == 0) {
    session = (static_cast<std::uint64_t>(device()) << 32) ^ static_cast<std::uint64_t>(device());
  }
  return session;
}

}  // namespace

UdpArmOptions parse_udp_endpoint(const std::string& text) {
  const arm_link::Endpoint endpoint = arm_link::parse_endpoint(text, "arm link endpoint");
  UdpArmOptions options;
  options.remote_host = endpoint.host;
  options.remote_port = endpoint.port;
  return options;
}

struct UdpArm::Impl {
  Impl(const ArmModel& arm, const UdpArmOptions& opts) : model(arm), options(opts), socket(io) {}

  ArmModel model;
  UdpArmOptions options;
  asio::io_context io;
  asio::ip::udp::socket socket;
  Clock::time_point start = Clock::now();

  arm_link::LinkIds ids;  // this session's id and the arm model's
  arm_link::LinkKey key;  // the session key
  arm_link::PacketBuffer rx{};
  arm_link::PacketBuffer tx{};
  StatePacket incoming;
  StatePacket newest;
  bool have_state = false;
  bool lost = false;
  Clock::time_point last_fresh{};
  CommandPacket command;
  std::array<Clock::time_point, kSendHistory> sent_at{};
  std::uint64_t last_echo = 0;
  UdpArmCounters counters;
  SeqLock<UdpArmCounters> published;

  void drain(Clock::time_point now) noexcept {
    for (int i = 0; i < kMaxDatagramsPerRead; ++i) {
      asio::error_code ec;
      const std::size_t n = socket.receive(asio::buffer(rx), 0, ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) return;
      if (ec) {
        // A connected UDP socket reports the peer's ICMP "port unreachable" here.
        ++counters.receive_errors;
        continue;
      }
      const arm_link::DecodeError error =
          arm_link::decode(std::span<const std::uint8_t>(rx.data(), n), ids, key, incoming);
      if (error == arm_link::DecodeError::kForeignArm ||
          error == arm_link::DecodeError::kWrongSession) {
        ++counters.dropped_foreign;
        continue;
      }
      if (error == arm_link::DecodeError::kBadMac) {
        ++counters.dropped_unauthenticated;
        continue;
      }
      if (error != arm_link::DecodeError::kNone) {
        ++counters.dropped_corrupt;
        continue;
      }
      // After a loss any sequence is taken, so a restarted arm process is picked up.
      const bool resync = seconds_between(last_fresh, now) > options.link_timeout;
      if (have_state && !resync && incoming.sequence <= newest.sequence) {
        ++counters.dropped_stale;
        continue;
      }
      if (have_state) {
        counters.state_gap_max = std::max(counters.state_gap_max, seconds_between(last_fresh, now));
      }
      newest = incoming;
      have_state = true;
      last_fresh = now;
      ++counters.received;
      if (newest.command_echo > last_echo) {
        last_echo = newest.command_echo;
        if (newest.command_echo + kSendHistory > command.sequence) {
          const double rt = seconds_between(sent_at[newest.command_echo % kSendHistory], now);
          counters.round_trip_last = rt;
          counters.round_trip_max = std::max(counters.round_trip_max, rt);
          counters.round_trip_sum += rt;
          ++counters.round_trip_count;
        }
      }
    }
  }

  ArmStatus status(Clock::time_point now) noexcept {
    if (!have_state) return ArmStatus::kNotReady;
    const bool now_lost = seconds_between(last_fresh, now) > options.link_timeout ||
                          (newest.flags & arm_link::kCommandTimeout) != 0;
    if (now_lost && !lost) {
      ++counters.link_losses;
      counters.lost_at = std::chrono::duration<double>(now.time_since_epoch()).count();
    }
    lost = now_lost;
    if (lost) return ArmStatus::kCommunicationLost;
    if ((newest.flags & arm_link::kArmFault) != 0) return ArmStatus::kFault;
    return ArmStatus::kOk;
  }

  void send(const JointCommand* setpoint) noexcept {
    const Clock::time_point now = Clock::now();
    ++command.sequence;
    command.controller_time = seconds_between(start, now);
    if (setpoint != nullptr) {
      command.command = *setpoint;
      command.flags = arm_link::kSetpointValid;
    } else {
      command.flags = 0;
    }
    const std::size_t n = arm_link::encode(command, ids, key, tx);
    sent_at[command.sequence % kSendHistory] = now;
    asio::error_code ec;
    socket.send(asio::buffer(tx.data(), n), 0, ec);
    if (ec) {
      ++counters.send_errors;
    } else {
      ++counters.sent;
    }
  }

  std::string address() const {
    return options.remote_host + ":" + std::to_string(options.remote_port);
  }
};

UdpArm::UdpArm(const ArmModel& model, const UdpArmOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {
  if (!(options.link_timeout > 0.0) || !std::isfinite(options.link_timeout)) {
    throw std::invalid_argument("UdpArmOptions::link_timeout = " +
                                std::to_string(options.link_timeout) + " s: must be > 0");
  }
  if (!(options.connect_timeout >= 0.0) || !std::isfinite(options.connect_timeout)) {
    throw std::invalid_argument("UdpArmOptions::connect_timeout = " +
                                std::to_string(options.connect_timeout) + " s: must be >= 0");
  }
  if (options.remote_port == 0) {
    throw std::invalid_argument("UdpArmOptions::remote_port = 0: must be in 1…65535");
  }
  if (options.key_file.empty()) {
    throw std::invalid_argument(
        "UdpArmOptions::key_file is empty: the arm link needs the site's shared secret "
        "(tether-remote --arm-link-key FILE)");
  }
  Impl& d = *impl_;
  {
    const arm_link::LinkSecret secret = arm_link::load_link_secret(options.key_file);
    d.ids.session = random_session();
    d.ids.arm_model = arm_link::arm_model_id(model);
    d.key = arm_link::derive_session_key(secret, d.ids.session, d.ids.arm_model);
  }
  const asio::ip::udp::endpoint remote =
      arm_link::resolve_udp(d.io, options.remote_host, options.remote_port, "arm");
  asio::error_code ec;
  d.socket.open(remote.protocol(), ec);
  if (!ec) d.socket.bind(asio::ip::udp::endpoint(remote.protocol(), options.local_port), ec);
  if (ec) {
    throw std::runtime_error("arm link to " + d.address() + ": cannot bind local UDP port " +
                             std::to_string(options.local_port) + ": " + ec.message());
  }
  // Connected: the kernel drops datagrams from anyone but the arm.
  d.socket.connect(remote, ec);
  if (!ec) d.socket.non_blocking(true, ec);
  if (ec) throw std::runtime_error("arm link to " + d.address() + ": " + ec.message());

  if (options.connect_timeout > 0.0) {
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options.connect_timeout));
    while (!d.have_state) {
      if (Clock::now() > deadline) {
        throw std::runtime_error("arm link: no state from " + d.address() + " within " +
                                 std::to_string(options.connect_timeout) +
                                 " s (is tether-simarm running there?)");
      }
      d.send(nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      d.drain(Clock::now());
    }
    d.published.store(d.counters);
  }
}

UdpArm::~UdpArm() = default;

const ArmModel& UdpArm::model() const { return impl_->model; }
const UdpArmOptions& UdpArm::options() const { return impl_->options; }
std::uint16_t UdpArm::local_port() const {
  asio::error_code ec;
  return impl_->socket.local_endpoint(ec).port();
}
std::uint64_t UdpArm::session() const { return impl_->ids.session; }
UdpArmCounters UdpArm::counters() const noexcept { return impl_->published.load(); }

ArmStatus UdpArm::read(ArmState& state) noexcept {
  Impl& d = *impl_;
  const Clock::time_point now = Clock::now();
  d.drain(now);
  const ArmStatus status = d.status(now);
  if (d.have_state) state = d.newest.state;
  d.published.store(d.counters);
  return status;
}

ArmStatus UdpArm::write(const JointCommand& command) noexcept {
  Impl& d = *impl_;
  d.send(d.have_state ? &command : nullptr);
  d.published.store(d.counters);
  return ArmStatus::kOk;
}

}  // namespace tether::remote

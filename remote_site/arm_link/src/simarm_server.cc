#include "tether/remote/arm_link/simarm_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "endpoint.h"
#include "tether/remote/arm_link/protocol.h"
#include "tether/remote/loop/mailbox.h"
#include "tether/remote/loop/realtime.h"

namespace tether::remote {
namespace {

using arm_link::CommandPacket;
using arm_link::StatePacket;

constexpr int kMaxDatagramsPerPeriod = 256;

}  // namespace

struct SimArmServer::Impl {
  Impl(ArmInterface& a, const SimArmServerOptions& opts) : arm(a), options(opts), socket(io) {}

  ArmInterface& arm;
  SimArmServerOptions options;
  asio::io_context io;
  asio::ip::udp::socket socket;
  std::thread thread;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> running{false};

  // Set-up.
  arm_link::LinkSecret secret;
  std::uint64_t model_id = 0;

  // Servo-thread state.
  std::uint64_t session = 0;  // valid while have_controller
  // Sessions this arm has left since it started: a recorded session replayed once its
  // controller has gone quiet is refused (a fresh controller always picks a new id).
  std::array<std::uint64_t, 256> retired{};
  std::size_t retired_next = 0;
  arm_link::LinkKey session_key;    // its key
  arm_link::LinkKey candidate_key;  // of a new session, until its COMMAND verified
  arm_link::PacketBuffer rx{};
  arm_link::PacketBuffer tx{};
  asio::ip::udp::endpoint sender;
  asio::ip::udp::endpoint controller;
  bool have_controller = false;
  std::int64_t last_heard_ns = 0;
  std::uint64_t last_sequence = 0;
  CommandPacket incoming;
  CommandPacket pending;
  bool have_pending = false;
  JointCommand commanded;
  bool ever_applied = false;
  std::uint64_t applied_sequence = 0;
  StatePacket state;
  SimArmServerStatistics stats;
  SeqLock<SimArmServerStatistics> published;

  bool timed_out(std::int64_t now) const {
    return have_controller &&
           static_cast<double>(now - last_heard_ns) * 1e-9 > options.command_timeout;
  }

  void drain(std::int64_t now) noexcept {
    for (int i = 0; i < kMaxDatagramsPerPeriod; ++i) {
      asio::error_code ec;
      const std::size_t n = socket.receive_from(asio::buffer(rx), sender, 0, ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) return;
      if (ec) continue;  // e.g. ICMP from a controller that went away
      const std::span<const std::uint8_t> datagram(rx.data(), n);
      // The session and model ids first, unverified: the key depends on them.
      arm_link::LinkIds ids;
      if (arm_link::peek_session(datagram, arm_link::PacketKind::kCommand, ids) !=
          arm_link::DecodeError::kNone) {
        ++stats.corrupt_dropped;
        continue;
      }
      if (ids.arm_model != model_id || ids.session == 0) {
        ++stats.foreign_dropped;
        continue;
      }
      const bool new_stream = !have_controller || timed_out(now);
      const bool same_session = have_controller && ids.session == session;
      // Another session takes over only from a silent one: a replayed hello of an old
      // session (its MAC is valid) cannot hijack a live one.
      if (!same_session && !new_stream) {
        ++stats.foreign_dropped;
        continue;
      }
      if (!same_session &&
          std::find(retired.begin(), retired.end(), ids.session) != retired.end()) {
        ++stats.foreign_dropped;
        continue;
      }
      if (!same_session) {
        candidate_key = arm_link::derive_session_key(secret, ids.session, model_id);
      }
      const arm_link::DecodeError error =
          arm_link::decode(datagram, ids, same_session ? session_key : candidate_key, incoming);
      if (error == arm_link::DecodeError::kBadMac) {
        ++stats.unauthenticated_dropped;
        continue;
      }
      if (error != arm_link::DecodeError::kNone) {
        ++stats.corrupt_dropped;
        continue;
      }
      if (!new_stream && sender != controller) {
        ++stats.foreign_dropped;
        continue;
      }
      // Within a session the sequence only grows, also when it resumes after a timeout (from
      // any address): a replayed COMMAND of this session is stale, never a new stream.
      if (same_session && incoming.sequence <= last_sequence) {
        ++stats.stale_dropped;
        continue;
      }
      if (!same_session) {
        if (have_controller) {
          retired[retired_next] = session;
          retired_next = (retired_next + 1) % retired.size();
        }
        session = ids.session;
        session_key = candidate_key;
      }
      controller = sender;
      have_controller = true;
      last_heard_ns = now;
      last_sequence = incoming.sequence;
      if ((incoming.flags & arm_link::kSetpointValid) != 0) {
        pending = incoming;
        have_pending = true;
      } else {
        ++stats.hellos;
      }
    }
  }

  void period(std::int64_t now, double arm_time) noexcept {
    drain(now);
    if (have_pending) {
      commanded = pending.command;
      arm.write(commanded);
      applied_sequence = pending.sequence;
      ever_applied = true;
      have_pending = false;
      ++stats.commands_applied;
    }
    const bool timeout = timed_out(now);
    if (timeout && !stats.holding) {
      ++stats.command_timeouts;
      if (ever_applied) {
        commanded.velocity.setZero();
        arm.write(commanded);
      }
    }
    stats.holding = timeout;
    arm.advance_to(arm_time);
    const ArmStatus status = arm.read(state.state);
    stats.arm_fault = status == ArmStatus::kFault;
    stats.arm_time = arm_time;
    std::uint32_t flags = 0;
    if (status != ArmStatus::kOk) flags |= arm_link::kArmFault;
    if (timeout) flags |= arm_link::kCommandTimeout;
    if (!ever_applied) flags |= arm_link::kAwaitingCommand;
    state.flags = flags;
    state.command_echo = applied_sequence;
    ++state.sequence;
    if (have_controller) {
      const std::size_t n =
          arm_link::encode(state, arm_link::LinkIds{session, model_id}, session_key, tx);
      asio::error_code ec;
      socket.send_to(asio::buffer(tx.data(), n), controller, 0, ec);
      if (ec) {
        ++stats.send_errors;
      } else {
        ++stats.states_sent;
      }
    }
  }

  void run() {
    if (options.realtime_priority) {
      const std::string refused = realtime::describe_refusals(realtime::enter_realtime(80));
      if (!refused.empty()) spdlog::warn("simarm servo loop: {}", refused);
    }
    const auto period_ns = static_cast<std::int64_t>(std::llround(options.period * 1e9));
    ArmState initial;
    arm.read(initial);
    std::int64_t deadline = realtime::now_ns();
    const std::int64_t start_ns = deadline;
    while (!stop_requested.load(std::memory_order_acquire)) {
      realtime::sleep_until_ns(deadline);
      const std::int64_t t0 = realtime::now_ns();
      // The simulated world follows the wall clock, as a real arm's does: after a late
      // period it integrates the time it missed with the last command, rather than
      // freezing while the controller's clock runs on (which would turn every pause of
      // this process into a position step against the environment).
      const std::int64_t periods = (t0 - start_ns) / period_ns + 1;
      const double arm_time = initial.time + static_cast<double>(periods) * options.period;
      period(t0, arm_time);
      ++stats.periods;
      const std::int64_t t1 = realtime::now_ns();
      stats.max_cycle_time = std::max(stats.max_cycle_time, static_cast<double>(t1 - t0) * 1e-9);
      deadline += period_ns;
      if (t1 > deadline) {
        ++stats.overruns;
        deadline += ((t1 - deadline) / period_ns + 1) * period_ns;
      }
      published.store(stats);
    }
  }
};

SimArmServer::SimArmServer(ArmInterface& arm, const SimArmServerOptions& options)
    : impl_(std::make_unique<Impl>(arm, options)) {
  if (!(options.period >= 1e-4 && options.period <= 0.1)) {
    throw std::invalid_argument("SimArmServerOptions::period = " + std::to_string(options.period) +
                                " s: must be in 0.0001…0.1 s");
  }
  if (!(options.command_timeout > options.period) || !std::isfinite(options.command_timeout)) {
    throw std::invalid_argument(
        "SimArmServerOptions::command_timeout = " + std::to_string(options.command_timeout) +
        " s: must be finite and longer than the period (" + std::to_string(options.period) + " s)");
  }
  if (options.key_file.empty()) {
    throw std::invalid_argument(
        "SimArmServerOptions::key_file is empty: the arm link needs the site's shared secret "
        "(tether-simarm --key FILE)");
  }
  Impl& d = *impl_;
  d.secret = arm_link::load_link_secret(options.key_file);
  d.model_id = arm_link::arm_model_id(arm.model());
  const asio::ip::udp::endpoint local =
      arm_link::resolve_udp(d.io, options.bind_address, options.port, "simarm bind");
  asio::error_code ec;
  d.socket.open(local.protocol(), ec);
  if (!ec) d.socket.bind(local, ec);
  if (!ec) d.socket.non_blocking(true, ec);
  if (ec) {
    throw std::runtime_error("simarm: cannot listen on UDP " + options.bind_address + ":" +
                             std::to_string(options.port) + ": " + ec.message());
  }
}

SimArmServer::~SimArmServer() { stop(); }

std::uint16_t SimArmServer::port() const {
  asio::error_code ec;
  return impl_->socket.local_endpoint(ec).port();
}

const SimArmServerOptions& SimArmServer::options() const { return impl_->options; }

std::uint64_t SimArmServer::arm_model_id() const { return impl_->model_id; }

void SimArmServer::start() {
  Impl& d = *impl_;
  if (d.running.exchange(true)) return;
  d.stop_requested.store(false);
  d.thread = std::thread([&d] { d.run(); });
}

void SimArmServer::stop() {
  Impl& d = *impl_;
  d.stop_requested.store(true, std::memory_order_release);
  if (d.thread.joinable()) d.thread.join();
  d.running.store(false);
}

bool SimArmServer::running() const { return impl_->running.load(); }

SimArmServerStatistics SimArmServer::statistics() const noexcept { return impl_->published.load(); }

}  // namespace tether::remote

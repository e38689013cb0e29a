#pragma once

// The remote site's driver for an arm in another process (or on another machine) that
// speaks the arm-link protocol (protocol.h): normally `tether-simarm`, the MuJoCo arm of
// simulated_arm.h behind its own servo loop, so the executor runs against it exactly as it
// would against hardware.
//
// The arm runs on its own clock and sends a STATE every servo period; UdpArm keeps the
// newest one. Each read() drains the socket without blocking: a STATE older than or equal
// to the newest (by sequence) is stale (reordered or duplicated) and dropped; a STATE of
// another arm model or another session is foreign, one whose MAC does not verify under this
// session's key is unauthenticated, and any other undecodable datagram is corrupt: each is
// counted and dropped (protocol.h, "Authentication"). read() returns
//   kNotReady           before the first STATE,
//   kCommunicationLost  when no fresh STATE arrived within `link_timeout` of the local
//                       monotonic clock, or the arm reports that our commands time out,
//   kFault              when the arm reports its own protection tripped,
//   kOk                 otherwise (with the newest state, which may be up to one servo
//                       period old).
// After a loss the next valid STATE re-synchronises the link whatever its sequence, so a
// restarted arm process can be picked up after the executor's reset (it joins this
// controller's session from the next COMMAND).
//
// Loss handling: nothing is retransmitted. With the arm's 1 ms servo period the default
// link_timeout of 10 ms means about 10 consecutive STATEs lost (or refused as foreign,
// unauthenticated or corrupt: forged packets never keep a link alive) before read()
// reports kCommunicationLost; the executor turns that into a kArmFault breach and starts
// its controlled stop in the same cycle. The arm, for its part, holds after its command
// timeout (20 ms, 20 COMMANDs) and flags it, which read() reports as kCommunicationLost too.
// Against the reference figure of 5 consecutive lost packets for KUKA's RSI/FRI,
// link_timeout = 5 ms matches at 1 kHz, on a machine quiet enough for it (see protocol.h).
//
// Each UdpArm is one session: the constructor picks a random non-zero session id
// (std::random_device) and derives the session key from the shared secret in
// `key_file`, the session id and arm_model_id(model); every COMMAND, hellos included,
// carries both ids and the MAC.
//
// write() sends one COMMAND with the next sequence number. Until the first STATE arrived
// it sends a hello (no set-point): the controller never commands a position before it knows
// where the arm is. advance_to() does nothing.
//
// read(), write() and advance_to() are called from the control-loop thread; they neither
// allocate, block nor throw. counters() may be called from any thread.

#include <cstdint>
#include <memory>
#include <string>

#include "tether/common/arm_model.h"
#include "tether/remote/arm/arm_interface.h"

namespace tether::remote {

struct UdpArmOptions {
  std::string remote_host = "127.0.0.1";  // the arm process (name or address)
  std::uint16_t remote_port = 50600;
  std::uint16_t local_port = 0;  // 0: any free port
  double link_timeout = 0.01;    // [s] no fresh STATE for longer: kCommunicationLost
  // [s] the constructor sends hellos and waits this long for the first STATE, throwing if
  // none comes; 0: do not wait (read() returns kNotReady until one arrives).
  double connect_timeout = 2.0;
  // The site's shared secret for the arm link (protocol.h: at least 16 bytes; tether-remote
  // --arm-link-key). Required.
  std::string key_file;
};

// "HOST:PORT" (e.g. "127.0.0.1:50600", "simarm.local:50600", "[::1]:50600") to options with
// the defaults otherwise (key_file stays empty: the caller sets it). Throws
// std::invalid_argument naming the text and what is wrong.
UdpArmOptions parse_udp_endpoint(const std::string& text);

// Link counters, for logs and tests. Trivially copyable.
struct UdpArmCounters {
  std::uint64_t received = 0;         // valid, fresh STATEs taken
  std::uint64_t dropped_stale = 0;    // valid STATEs not newer than the newest
  std::uint64_t dropped_corrupt = 0;  // datagrams that did not decode (size, magic, flags, ...)
  std::uint64_t dropped_foreign = 0;  // STATEs of another arm model or another session
  std::uint64_t dropped_unauthenticated = 0;  // STATEs whose MAC did not verify
  std::uint64_t receive_errors = 0;           // socket errors (e.g. ICMP port unreachable)
  std::uint64_t sent = 0;                     // COMMANDs sent (hellos included)
  std::uint64_t send_errors = 0;
  std::uint64_t link_losses = 0;  // transitions into kCommunicationLost
  // Longest interval between two fresh STATEs as read() saw them [s] (the margin left to
  // link_timeout).
  double state_gap_max = 0.0;
  // When read() last reported the link lost: std::chrono::steady_clock time since its epoch
  // [s] (0: never), so a test or log can relate it to other events on this machine.
  double lost_at = 0.0;
  // Round trip: a COMMAND sent → the first STATE that echoes it read by read() [s]. It
  // includes the wait for the arm's next servo period and for our next read().
  double round_trip_last = 0.0;
  double round_trip_max = 0.0;
  double round_trip_sum = 0.0;
  std::uint64_t round_trip_count = 0;
  double round_trip_mean() const {
    return round_trip_count > 0 ? round_trip_sum / static_cast<double>(round_trip_count) : 0.0;
  }
};

class UdpArm final : public ArmInterface {
 public:
  // Reads the key file, resolves the remote host, binds the local port and
  // (connect_timeout > 0) waits for the first STATE. Throws std::invalid_argument for bad
  // options (an empty key_file among them), std::runtime_error naming the key file when it
  // cannot be read or is too short, and naming host:port when resolving, binding or
  // connecting fails.
  UdpArm(const ArmModel& model, const UdpArmOptions& options);
  ~UdpArm() override;
  UdpArm(const UdpArm&) = delete;
  UdpArm& operator=(const UdpArm&) = delete;

  const ArmModel& model() const override;
  ArmStatus read(ArmState& state) noexcept override;
  ArmStatus write(const JointCommand& command) noexcept override;

  const UdpArmOptions& options() const;
  std::uint16_t local_port() const;
  std::uint64_t session() const;  // this controller's session id (non-zero)
  UdpArmCounters counters() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::remote

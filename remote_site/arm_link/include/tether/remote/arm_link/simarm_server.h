#pragma once

// Serves an arm (normally the embedded MuJoCo SimulatedArm) over the arm-link protocol
// (protocol.h), so a controller in another process drives it through UdpArm exactly as it
// would drive hardware: the engine of `tether-simarm`.
//
// Its own servo loop, on one thread with absolute CLOCK_MONOTONIC deadlines every `period`
// (overruns are counted and skipped, never caught up), runs
//   1. drain the socket: the newest valid COMMAND by sequence wins; older or repeated ones
//      are stale and dropped, undecodable datagrams are corrupt and dropped, COMMANDs whose
//      MAC does not verify are unauthenticated and dropped. The source of the latest valid
//      COMMAND is the controller and its session the arm's session (protocol.h,
//      "Authentication"); while it is live, COMMANDs of another session or from any other
//      address are foreign and dropped, so two controllers never fight over the arm, and
//      so are COMMANDs for another arm model.
//   2. apply the newest set-point: arm.write() (position and velocity feed-forward).
//   3. if no COMMAND (set-point or hello) arrived for longer than `command_timeout`, hold the
//      last commanded position with zero velocity and flag kCommandTimeout in every STATE
//      until COMMANDs resume (the arm's own protection, as a hardware controller has).
//   4. arm.advance_to(arm time + period), arm.read(), and send the STATE to the controller
//      with the sequence of the last set-point applied.
// Before the first set-point the arm holds its initial position (kAwaitingCommand). A new
// controller (another session, only after a timeout) starts a new command stream whose
// sequence may start anywhere; the same session resuming after a timeout (from any address)
// continues its sequence, so a replayed COMMAND of it is stale. STATEs carry the current
// session and its MAC.
//
// The shared secret is read from `key_file` by the constructor; the arm model id is that
// of arm.model(). A COMMAND of a new session costs one session-key derivation (a few
// SHA-256 blocks, no allocation) in the servo loop.
//
// The arm's clock advances by exactly `period` per servo period, in real time.

#include <cstdint>
#include <memory>
#include <string>

#include "tether/remote/arm/arm_interface.h"

namespace tether::remote {

struct SimArmServerOptions {
  std::string bind_address = "127.0.0.1";  // address (or name) to listen on
  std::uint16_t port = 50600;              // 0: any free port (see SimArmServer::port())
  double period = 0.001;                   // [s] servo period, 0.0001…0.1
  double command_timeout = 0.02;           // [s] > period
  bool realtime_priority = true;           // try SCHED_FIFO and mlockall for the loop
  // The site's shared secret for the arm link (protocol.h: at least 16 bytes; tether-simarm
  // --key). Required.
  std::string key_file;
};

// Trivially copyable.
struct SimArmServerStatistics {
  std::uint64_t periods = 0;
  std::uint64_t overruns = 0;          // periods that ended after their deadline
  std::uint64_t commands_applied = 0;  // set-points written to the arm
  std::uint64_t hellos = 0;            // valid COMMANDs without a set-point
  std::uint64_t stale_dropped = 0;
  std::uint64_t corrupt_dropped = 0;  // did not decode (size, magic, flags, ...)
  // Another arm model, another session while the current one is live, another address.
  std::uint64_t foreign_dropped = 0;
  std::uint64_t unauthenticated_dropped = 0;  // the MAC did not verify
  std::uint64_t states_sent = 0;
  std::uint64_t send_errors = 0;
  std::uint64_t command_timeouts = 0;  // times the arm started holding
  bool holding = false;                // in a command timeout now
  bool arm_fault = false;              // the arm's read() reported kFault
  double arm_time = 0.0;               // [s]
  double max_cycle_time = 0.0;         // [s] one period's work, drain to send
};

class SimArmServer {
 public:
  // Reads the key file and binds the UDP socket. Throws std::invalid_argument for bad
  // options (an empty key_file among them), std::runtime_error naming the key file when it
  // cannot be read or is too short, and naming address:port if it cannot be resolved or
  // bound. `arm` must outlive the server and is only touched by the server's thread while
  // it runs.
  SimArmServer(ArmInterface& arm, const SimArmServerOptions& options);
  ~SimArmServer();  // stops
  SimArmServer(const SimArmServer&) = delete;
  SimArmServer& operator=(const SimArmServer&) = delete;

  std::uint16_t port() const;          // the bound port
  std::uint64_t arm_model_id() const;  // arm_link::arm_model_id(arm.model())
  const SimArmServerOptions& options() const;

  // Starts the servo thread; stop() ends it after the current period.
  void start();
  void stop();
  bool running() const;

  // Any thread; updated every period.
  SimArmServerStatistics statistics() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tether::remote

#pragma once

// A link emulator for tests and demos: a TCP proxy between a ground station and a remote
// site that makes loopback behave like a building network, a WAN or a satellite hop. Per
// direction it adds
//   - delay: a constant plus jitter drawn from a stated distribution (uniform in
//     [−jitter, +jitter], or normal with σ = jitter, clipped at ±3σ), applied to each chunk
//     as it arrives. Order is kept as TCP keeps it: a chunk never overtakes the one before,
//     so arrival gaps can exceed the jitter (a late chunk holds back those behind it);
//   - a bandwidth limit: chunks leave no faster than `bandwidth` bytes per second;
//   - scheduled stalls (nothing leaves during the window: what would have left in it leaves
//     at its end, in order) and cuts (every open connection is reset; new ones are
//     accepted).
// The profile can change while connections are open (set_profile, or a LinkScript played
// on the emulator's clock). Bytes pass through untouched, so TLS passes through: clients
// reach the site at the emulator's address and check the site's certificate name
// (--server-name when the proxy's address is not among the certificate's names).
//
// Times in seconds [s] on the emulator's steady clock from its start; sizes in bytes.
// Thread-safety: the emulator runs its own Asio thread; its public functions may be called
// from any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tether::linkem {

enum class Jitter { kUniform, kNormal };

struct Window {
  double start = 0.0;  // [s] since the emulator started
  double end = 0.0;    // [s], > start
};

// One direction of the link.
struct DirectionProfile {
  double delay = 0.0;   // [s] constant one-way delay, in [0, 100]
  double jitter = 0.0;  // [s] uniform half-width or normal σ, ≤ delay
  Jitter distribution = Jitter::kUniform;
  double bandwidth = 0.0;      // [bytes/s]; 0: unlimited
  std::vector<Window> stalls;  // nothing leaves during these windows
};

// The directions as seen from the client: `up` carries client → server bytes (the
// ground's increments), `down` server → client (force reflection, telemetry).
struct LinkProfile {
  DirectionProfile up;
  DirectionProfile down;
  std::vector<double> cuts;  // [s] every open connection is reset at these times
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const LinkProfile& profile);

struct DirectionStatistics {
  std::uint64_t bytes = 0;
  std::uint64_t chunks = 0;
  double delay_max = 0.0;  // [s] longest time a chunk spent inside the emulator
};

struct EmulatorStatistics {
  std::uint64_t connections = 0;  // accepted so far
  std::uint64_t cuts = 0;         // connections reset by a scheduled cut
  DirectionStatistics up;
  DirectionStatistics down;
};

class LinkEmulator {
 public:
  // Listens on `listen` (HOST:PORT, port 0 picks a free one) and forwards every connection
  // to `target` (HOST:PORT). `seed` makes the jitter reproducible. Throws
  // std::runtime_error when the address cannot be bound, std::invalid_argument for a bad
  // profile or address.
  LinkEmulator(const std::string& listen, const std::string& target, const LinkProfile& profile,
               std::uint64_t seed = 1);
  ~LinkEmulator();
  LinkEmulator(const LinkEmulator&) = delete;
  LinkEmulator& operator=(const LinkEmulator&) = delete;

  int port() const;
  // [s] since the emulator started: the clock of windows, cuts and scripts.
  double now() const;
  // Replaces the profile from now on; chunks already inside keep their release times.
  void set_profile(const LinkProfile& profile);
  LinkProfile profile() const;
  EmulatorStatistics statistics() const;
  // Resets every open connection now.
  void cut();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace tether::linkem

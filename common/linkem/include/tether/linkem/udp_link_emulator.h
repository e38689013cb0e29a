#pragma once

// The link emulator for datagrams: a UDP relay between a controller (the remote site's
// UdpArm) and an arm process (tether-simarm, a hardware bridge) that gives each direction
// a delay with jitter (no order kept: datagrams overtake each other as they do on a real
// network), random loss, duplication and reordering, and outage windows in which every
// datagram is lost. The controller sends to the relay's port; the relay forwards from a
// socket of its own to the target and sends the target's replies back to the last
// controller address it heard from.
//
// Times in seconds [s] on the relay's steady clock from its start; probabilities in [0, 1].
// The relay runs its own thread; its public functions may be called from any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tether/linkem/link_emulator.h"

namespace tether::linkem {

struct DatagramProfile {
  double delay = 0.0;   // [s] in [0, 100]
  double jitter = 0.0;  // [s] uniform half-width or normal σ, ≤ delay
  Jitter distribution = Jitter::kUniform;
  double loss = 0.0;             // probability a datagram is dropped
  double duplicate = 0.0;        // probability a datagram is sent twice (the copy 0.1 ms later)
  double reorder = 0.0;          // probability a datagram is held back by reorder_delay
  double reorder_delay = 0.002;  // [s]
  std::vector<Window> outages;   // every datagram arriving in a window is lost
};

struct UdpLinkProfile {
  DatagramProfile up;    // controller → arm
  DatagramProfile down;  // arm → controller
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const UdpLinkProfile& profile);

struct DatagramStatistics {
  std::uint64_t received = 0;
  std::uint64_t forwarded = 0;  // sent on, duplicates included
  std::uint64_t lost = 0;       // dropped at random or in an outage
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;  // held back by reorder_delay
};

struct UdpEmulatorStatistics {
  DatagramStatistics up;
  DatagramStatistics down;
};

class UdpLinkEmulator {
 public:
  // Listens on `listen` (HOST:PORT, port 0 picks one) and relays to `target`. Throws
  // std::runtime_error when the address cannot be bound, std::invalid_argument for a bad
  // profile or address.
  UdpLinkEmulator(const std::string& listen, const std::string& target,
                  const UdpLinkProfile& profile, std::uint64_t seed = 1);
  ~UdpLinkEmulator();
  UdpLinkEmulator(const UdpLinkEmulator&) = delete;
  UdpLinkEmulator& operator=(const UdpLinkEmulator&) = delete;

  int port() const;
  double now() const;
  void set_profile(const UdpLinkProfile& profile);
  UdpLinkProfile profile() const;
  UdpEmulatorStatistics statistics() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace tether::linkem

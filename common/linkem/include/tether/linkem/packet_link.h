#pragma once

// The link emulator for IP packets: two network namespaces joined by a pair of TUN devices
// and a forwarder between them that gives each direction what a real path does to packets —
//   - delay with jitter (uniform in ±jitter or normal with σ = jitter, clipped at 3σ and
//     never below zero), either keeping order (a packet never leaves before the one ahead of
//     it, as on a single path) or letting packets overtake (each keeps its own delay);
//   - random loss, independent (Bernoulli) or in bursts (Gilbert–Elliott: a good state that
//     loses nothing and a bad state that loses everything, with mean burst length `burst`
//     and long-run loss rate `loss`);
//   - a rate limit with a bounded drop-tail queue in front of it (packets leave no faster
//     than `rate`; one that would overfill the queue is dropped);
//   - outage windows, in which every packet that arrives is lost.
// The decisions are made by PacketImpairment, a pure model on a caller's clock (tested in
// virtual time); PacketLink runs two of them (up: A → B, down: B → A) on real packets.
//
// Units: times in seconds [s] (windows and scripts on the link's clock, from its start);
// sizes in bytes; rates in bytes per second; probabilities in [0, 1].

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tether/linkem/link_emulator.h"

namespace tether::linkem {

// One direction of the link.
struct PacketProfile {
  double delay = 0.0;   // [s] one-way propagation delay, in [0, 100]
  double jitter = 0.0;  // [s] uniform half-width or normal σ, in [0, delay]
  Jitter distribution = Jitter::kUniform;
  bool reorder = false;  // false: order kept; true: packets may overtake each other
  double loss = 0.0;     // long-run probability a packet is lost at random
  // Mean length of a loss burst [packets], ≥ 1. 1: independent losses; > 1: Gilbert–Elliott
  // with P(bad → good) = 1/burst and P(good → bad) = loss·P(bad → good)/(1 − loss), which
  // needs loss ≤ burst/(burst + 1).
  double burst = 1.0;
  double rate = 0.0;            // [bytes/s] 0: no limit (and no queue)
  double queue = 64000.0;       // [bytes] packets waiting for the link (rate > 0 only)
  std::vector<Window> outages;  // every packet arriving in a window is lost
};

struct PacketLinkProfile {
  PacketProfile up;    // A → B
  PacketProfile down;  // B → A
};

// Throw std::invalid_argument "NAME.FIELD: VALUE: allowed RANGE" (NAME e.g. "up").
void validate(const PacketProfile& profile, const std::string& name);
void validate(const PacketLinkProfile& profile);

// What became of the packets of one direction, as the model decided.
struct PacketCounters {
  std::uint64_t packets_in = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t forwarded = 0;
  std::uint64_t bytes_forwarded = 0;
  std::uint64_t lost_random = 0;    // independent loss (burst = 1)
  std::uint64_t lost_burst = 0;     // lost in the Gilbert–Elliott bad state (burst > 1)
  std::uint64_t bursts = 0;         // runs of consecutive bad-state losses
  std::uint64_t dropped_queue = 0;  // the rate limit's queue was full
  std::uint64_t lost_outage = 0;
};

enum class PacketFate { kForwarded, kLostRandom, kLostBurst, kDroppedQueue, kLostOutage };

struct PacketVerdict {
  PacketFate fate = PacketFate::kForwarded;
  double departure = 0.0;  // [s] when it leaves the link (kForwarded only)
};

// The impairments of one direction on the caller's clock: no threads, no I/O, deterministic
// for a seed and a sequence of arrivals. Not thread-safe (PacketLink locks around it).
class PacketImpairment {
 public:
  // Throws std::invalid_argument for a bad profile (named "packet").
  explicit PacketImpairment(const PacketProfile& profile = {}, std::uint64_t seed = 1);

  // From the next arrival on; packets decided before keep their departures. The burst state
  // and the queue carry over (a burst in progress ends only by its own chance).
  void set_profile(const PacketProfile& profile);
  const PacketProfile& profile() const { return profile_; }

  // A packet of `bytes` arriving at `arrival` [s]; arrivals must not go back in time (an
  // earlier one is taken as the latest seen). Order of checks: outage, random loss, queue.
  PacketVerdict arrive(double arrival, std::size_t bytes);

  const PacketCounters& counters() const { return counters_; }

 private:
  PacketProfile profile_;
  std::mt19937_64 random_;
  PacketCounters counters_;
  double last_arrival_ = 0.0;
  double last_departure_ = 0.0;  // [s] of the latest forwarded packet (order kept)
  double link_free_ = 0.0;       // [s] when the rate limiter finishes what it holds
  bool bad_ = false;             // Gilbert–Elliott state
  bool in_burst_ = false;        // the previous packet was a burst loss
  struct Waiting {
    double start;  // [s] when it starts onto the link
    std::size_t bytes;
  };
  std::vector<Waiting> waiting_;  // accepted, not yet on the link, in start order
  std::size_t waiting_head_ = 0;
  std::uint64_t waiting_bytes_ = 0;
};

// ---- the forwarder ----

struct PacketLinkConfig {
  std::string ns_a;  // network namespaces as `ip netns add` makes them (/var/run/netns/NAME)
  std::string ns_b;
  std::string addr_a = "10.201.0.1";  // IPv4 of the device in A; B's is its peer
  std::string addr_b = "10.201.0.2";
  int prefix = 32;              // netmask length of both addresses, in [1, 32] (e.g. 30 for a /30)
  std::string device = "tlk0";  // the TUN device's name in both namespaces
  int mtu = 1500;               // [bytes], in [576, 65535]
  std::uint64_t seed = 1;
};

struct PacketDirectionStatistics {
  PacketCounters counters;
  std::uint64_t written = 0;  // packets actually written to the far device
  double delay_p50 = 0.0;     // [s] measured added delay (written − read), forwarded packets
  double delay_p99 = 0.0;     // [s]; both 0 before any packet was written
};

struct PacketLinkStatistics {
  PacketDirectionStatistics up;
  PacketDirectionStatistics down;
};

// Needs CAP_SYS_ADMIN and CAP_NET_ADMIN (root). Creates the device `config.device` in each
// namespace (a TUN device, IFF_NO_PI), gives it its address with the other side's as its
// point-to-point peer, brings it and `lo` up, and forwards IP packets between the two on a
// thread of its own (poll and a timer heap on the steady clock). The devices vanish with the
// link. Public functions may be called from any thread.
class PacketLink {
 public:
  // Throws std::runtime_error naming the namespace and the step that failed (a missing
  // namespace, not root, a device name in use), std::invalid_argument for a bad config or
  // profile.
  PacketLink(const PacketLinkConfig& config, const PacketLinkProfile& profile);
  ~PacketLink();
  PacketLink(const PacketLink&) = delete;
  PacketLink& operator=(const PacketLink&) = delete;

  // [s] since the link started: the clock of outage windows and scripts.
  double now() const;
  void set_profile(const PacketLinkProfile& profile);
  PacketLinkProfile profile() const;
  PacketLinkStatistics statistics() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// ---- scripts ----
//
// The packet link's profile over time, in link_script.h's style:
//
//   # at TIME  DIRECTION  SETTINGS        (DIRECTION: up, down or both)
//   at 0      both  delay=50ms jitter=5ms distribution=normal reorder=off
//   at 5s     up    loss=2% burst=4
//   at 8s     down  rate=2Mbit/s queue=64kB
//   at 12s    both  outage 2s             (every packet arriving in [12 s, 14 s) is lost)
//
// loss takes "1%" or "0.01"; burst a number ≥ 1; rate as parse_bandwidth; queue as
// parse_bytes; reorder on or off. A setting not named keeps its value.

struct PacketScriptEvent {
  double time = 0.0;  // [s] on the link's clock
  std::function<void(PacketLinkProfile&)> apply;
  std::string text;  // the line, for logs
};

// Parses a script; throws std::invalid_argument "NAME:LINE: ..." naming the token and what is
// allowed, or "NAME: after 'LINE': ..." when the profile it leads to (from `start`) is bad.
std::vector<PacketScriptEvent> parse_packet_script(std::string_view text, const std::string& name,
                                                   const PacketLinkProfile& start = {});

// Plays `events` on `link` (blocking the caller) until done or `stop` returns true.
void play_packet_script(PacketLink& link, const std::vector<PacketScriptEvent>& events,
                        const std::function<bool()>& stop);

// "1%", "0.01", "1e-3": a probability in [0, 1]; throws std::invalid_argument.
double parse_probability(std::string_view text);
// "64kB", "1500B", "2MB", "1500" (bytes): a size in bytes ≥ 0 (k = 1000); throws
// std::invalid_argument.
double parse_bytes(std::string_view text);

}  // namespace tether::linkem

#pragma once

// The teleoperation data plane's datagrams: hand-controller increments ground → remote and
// force-reflection samples remote → ground, as UDP datagrams sealed with AES-256-GCM under
// keys the remote site hands out over the mutual-TLS Teleoperate stream that opens the
// session (one key per direction, random per session). The gRPC stream stays the control
// plane; these carry only what must arrive within a control period and may be lost.
//
// Why not TCP: one lost segment holds back everything behind it for a round trip, and a
// cold congestion window ack-clocks 1 kHz samples into bursts. Why not DTLS: OpenSSL 3.0
// offers DTLS 1.2 only, whose handshake costs two more round trips (seconds on the paths
// this serves) on top of the TLS session that already authenticated both sites.
//
// Wire format (all integers little-endian):
//   header  (9 bytes, authenticated, not encrypted)
//     [0]    version << 4 | kind (kind 1 increment, 2 reflection)
//     [1..4] session id (u32, chosen by the remote per session)
//     [5..8] datagram counter (u32, per direction from 1; the AEAD nonce, never reused)
//   payload (encrypted), the layouts of encode_*() below
//   tag     (16 bytes, GCM)
// Nonce (12 bytes): kind, 3 zero bytes, the counter as u64. The two directions have
// different keys and kinds, so no (key, nonce) pair repeats within a session.
//
// Loss without retransmission: each increment datagram carries the motion summed since
// the current *segment* began (a segment: a run of samples with the same enabling switch
// and mode), not only its own. The receiver applies the difference to the last sum it
// took, so a lost datagram's motion arrives with the next one (concealed), however long
// the burst, and is never applied twice. Only a gap that crosses a segment boundary
// loses motion (counted lost). Reflections are state: the newest replaces older ones.
//
// Sizes at 1 kHz, IPv4 + UDP headers included: an increment 113 bytes (904 kbit/s), 137
// with the wave method's forward wave; a reflection 109 bytes, plus 60 every 5th cycle
// for the detail group (measured wrench, tracking error, task time, the port's energies):
// 992 kbit/s on average.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace tether::datagram {

inline constexpr std::uint8_t kVersion = 1;
// Increments and reflections are the teleoperation plane's; video fragments and the
// receiver's feedback the camera views' (video_datagram.h).
enum class Kind : std::uint8_t { kIncrement = 1, kReflection = 2, kVideo = 3, kVideoFeedback = 4 };

inline constexpr std::size_t kKeyBytes = 32;  // AES-256
inline constexpr std::size_t kHeaderBytes = 9;
inline constexpr std::size_t kTagBytes = 16;
inline constexpr std::size_t kMaxDatagram = 512;  // larger datagrams are refused unread
// A video fragment's limit: with IPv4/UDP headers within IPv6's minimum MTU (1280 bytes), so
// no path fragments it.
inline constexpr std::size_t kMaxVideoDatagram = 1232;
// The limit for a kind's datagrams.
constexpr std::size_t max_datagram(Kind kind) {
  return kind == Kind::kVideo ? kMaxVideoDatagram : kMaxDatagram;
}
// Datagrams whose counter is fewer than this behind the newest accepted one are accepted
// once each (a reordering path); older ones are dropped as replays or too late.
inline constexpr std::uint32_t kReplayWindow = 64;

// Values of TeleopMode on the wire: tether.v1.TeleopMode's numbers.
inline constexpr std::uint8_t kModeUnspecified = 0;
inline constexpr std::uint8_t kModeCamera = 3;

using Key = std::array<std::uint8_t, kKeyBytes>;

// A session's secrets as the remote makes them and the Teleoperate stream carries them.
struct SessionKeys {
  std::uint32_t session = 0;
  Key ground_to_remote{};
  Key remote_to_ground{};
};
// From the system's CSPRNG (OpenSSL RAND_bytes); throws std::runtime_error if it fails.
SessionKeys make_session_keys();
// Hex text for a metadata value ("SSSSSSSS:" + 64 + ":" + 64 hex digits), and back; the
// parse returns nothing for anything else.
std::string to_text(const SessionKeys& keys);
std::optional<SessionKeys> keys_from_text(std::string_view text);

// One sampled hand-controller increment as sent (ground → remote).
struct IncrementMessage {
  std::uint32_t sequence = 0;  // the stream's numbering (TeleopIncrement.sequence), ≥ 1
  // Numbers this sample took (a late sample goes as several pieces of at most
  // kMaxIncrement* each): sequence − pieces + 1 … sequence; 1 … 64.
  std::uint8_t pieces = 1;
  std::uint64_t ground_time_ns = 0;  // the ground's CLOCK_MONOTONIC when sampled
  bool deadman = false;
  std::uint8_t mode = kModeUnspecified;  // tether.v1.TeleopMode's number
  // Numbers since the segment began, this sample's included (≥ pieces; saturates at 65535).
  std::uint16_t segment_length = 1;
  // Motion summed over the segment, this sample's included: translation [m] (3), rotation
  // vectors [rad] (3), arm angle [rad] (1), in the hand-controller axes of `mode`.
  std::array<float, 7> motion{};
  // The ground's port of the reflection channel (teleop_channel.h), cumulative [J].
  double master_in = 0.0;
  float master_observed = 0.0F;
  float master_dissipated = 0.0F;
  bool has_wave = false;
  std::array<float, 6> wave{};  // forward wave u_m, the mode's axes [√W]
  // The session ends here (the ground's side closed): no motion, no stall after it. Sent
  // several times over, since the stream's own end can come seconds later on a lossy path.
  bool end = false;
};

// One control cycle's force reflection as sent (remote → ground).
struct ReflectionMessage {
  std::uint32_t cycle = 0;             // low 32 bits of the control cycle
  std::uint32_t applied_sequence = 0;  // newest of the stream's increments played out
  // Increments the executor passed over (lost + stale, modulo 2^16): when it changes, the
  // advance of applied_sequence says nothing of a round trip.
  std::uint16_t skipped = 0;
  std::uint8_t state = 0;  // ExecutorState's value
  std::uint8_t mode = kModeUnspecified;
  std::uint8_t method = 0;  // ReflectionMethod's value
  // F_a along the reflected directions, the mode's hand-controller axes [N, N·m].
  std::array<float, 6> reflected{};
  double slave_in = 0.0;            // [J] cumulative energy into the channel at the remote
  std::int64_t remote_time_ns = 0;  // this cycle, the remote's CLOCK_MONOTONIC
  // remote_time_ns − the arrival of applied_sequence's increment [ns]; kNoHold: unknown.
  std::uint32_t hold_ns = 0;
  static constexpr std::uint32_t kNoHold = 0xFFFFFFFFU;
  // Every few cycles: what the plots and the report need, not the hand.
  bool has_detail = false;
  std::array<float, 6> measured{};        // F_a [N, N·m], same axes
  std::array<float, 6> tracking_error{};  // F_r − F_a
  float task_time = 0.0F;                 // [s]
  float slave_observed = 0.0F;            // [J]
  float slave_dissipated = 0.0F;          // [J]
  // Wave method, every cycle: the returning wave and the impedance.
  bool has_wave = false;
  std::array<float, 6> return_wave{};
  std::array<float, 3> wave_impedance{};  // translation [N·s/m], rotation [N·m·s/rad], filter [Hz]
  // Camera mode: the EYE frame used (quaternion w, x, y, z, EYE in WORLD) and its stamp.
  bool has_eye = false;
  std::array<float, 4> eye{1.0F, 0.0F, 0.0F, 0.0F};
  std::uint64_t eye_time_ns = 0;
};

// Plain payloads (before sealing); decode_* return an empty string or what is wrong, and
// never read past `bytes`.
std::size_t encode(const IncrementMessage& m, std::span<std::uint8_t> out);
std::size_t encode(const ReflectionMessage& m, std::span<std::uint8_t> out);
std::string decode(std::span<const std::uint8_t> bytes, IncrementMessage& m);
std::string decode(std::span<const std::uint8_t> bytes, ReflectionMessage& m);

// Why a datagram was dropped, counted per cause.
struct DropCounters {
  std::uint64_t malformed = 0;  // too short, too long, wrong version, kind or session
  std::uint64_t forged = 0;     // failed authentication (wrong key, tampered, truncated)
  std::uint64_t replayed = 0;   // a counter seen before, or older than the window
  std::uint64_t invalid = 0;    // authentic, but a value out of range (decode_* refused it)
};

// Seals datagrams of one kind under one key; not thread-safe (one sender per direction).
class Sealer {
 public:
  Sealer(Kind kind, std::uint32_t session, const Key& key);
  ~Sealer();
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;
  // Seals `payload` into `out` (kHeaderBytes + payload + kTagBytes); 0 if it does not fit
  // or the counter is exhausted (2^32 − 1 datagrams: 49 days at 1 kHz; a new session then).
  std::size_t seal(std::span<const std::uint8_t> payload, std::span<std::uint8_t> out);
  std::uint32_t counter() const { return counter_; }

 private:
  struct Cipher;
  std::unique_ptr<Cipher> cipher_;
  Kind kind_;
  std::uint32_t session_;
  std::uint32_t counter_ = 0;
};

// Opens datagrams of one kind under one key, with the replay window; not thread-safe.
class Opener {
 public:
  Opener(Kind kind, std::uint32_t session, const Key& key);
  ~Opener();
  Opener(const Opener&) = delete;
  Opener& operator=(const Opener&) = delete;
  // The plain payload in `out`, or nothing (and the cause counted) when the datagram is not
  // authentic, not this session's and kind, or a replay.
  std::optional<std::size_t> open(std::span<const std::uint8_t> datagram,
                                  std::span<std::uint8_t> out);
  const DropCounters& drops() const { return drops_; }
  DropCounters& drops() { return drops_; }
  std::uint64_t accepted() const { return accepted_; }
  // Whether the datagram open() last accepted was the newest so far (not an older one the
  // window still let in): only such a datagram may move where replies go, so an authentic
  // datagram held back and relayed from elsewhere cannot redirect them.
  bool newest() const { return newest_; }

 private:
  struct Cipher;
  std::unique_ptr<Cipher> cipher_;
  Kind kind_;
  std::uint32_t session_;
  bool newest_ = false;
  std::uint32_t highest_ = 0;  // newest counter accepted
  std::uint64_t window_ = 0;   // bit k: highest_ − k accepted
  DropCounters drops_;
  std::uint64_t accepted_ = 0;
};

// The session id of a datagram (to find its session), or nothing if it is not one of ours.
std::optional<std::uint32_t> session_of(std::span<const std::uint8_t> datagram);

// The receiving side of the increment plane's concealment: turns each authentic increment
// datagram, in any order, into the samples the executor takes in turn.
struct ConcealedSample {
  std::uint64_t sequence = 0;  // the stream's numbering
  std::array<double, 7> motion{};
  bool concealed = false;  // motion of a lost datagram, recovered from this one
};
class IncrementAssembler {
 public:
  // Fills `out` (in order) with the samples `m` completes after the last one taken: the
  // sample's own pieces, and the lost numbers it covers (concealed). A gap crossing a
  // segment boundary is left out (the executor counts it lost). Returns the count; 0 for
  // a datagram older than what was taken (late or duplicated). At most out.size() are
  // written; a longer gap (beyond any stall bound) is left out as well.
  std::size_t take(const IncrementMessage& m, std::span<ConcealedSample> out);
  // Numbers up to `sequence` were taken another way (the gRPC stream, before or after a
  // switch of planes): the next sum must begin a segment of its own to be comparable.
  void taken_elsewhere(std::uint64_t sequence) {
    if (sequence > last_) {
      last_ = sequence;
      segment_start_ = 0;
      sum_.fill(0.0);
    }
  }
  std::uint64_t last_taken() const { return last_; }
  std::uint64_t concealed() const { return concealed_; }

 private:
  std::uint64_t last_ = 0;           // newest number taken
  std::uint64_t segment_start_ = 0;  // first number of the segment the sums below belong to
  std::array<double, 7> sum_{};      // the segment's sum as of last_
  std::uint64_t concealed_ = 0;
};

}  // namespace tether::datagram

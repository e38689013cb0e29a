#pragma once

// The arm link: a small fixed-layout UDP protocol between the remote site's controller
// (UdpArm, udp_arm.h) and an arm's joint servo process (tether-simarm, SimArmServer), one
// datagram per packet, one packet each way per servo/control period.
//
//   STATE    arm → controller, every servo period: the measured ArmState, the arm's status
//            flags and the sequence number of the last COMMAND it applied.
//   COMMAND  controller → arm, every control period: the joint position set-point with its
//            velocity feed-forward (JointCommand). A COMMAND without a set-point (a "hello")
//            only tells the arm where to send its states, before the controller knows where
//            the arm is.
//
// Every field is little-endian; doubles are IEEE 754 binary64. Offsets in bytes.
//
//   header (32 bytes)
//     0   u32  magic          0x4D524154 ("TARM" on the wire)
//     4   u16  version        kProtocolVersion (2)
//     6   u16  kind           1 = STATE, 2 = COMMAND
//     8   u32  payload size   256 (STATE) or 136 (COMMAND)
//     12  u32  reserved       0
//     16  u64  session id     chosen by the controller, non-zero (see "Authentication")
//     24  u64  arm model id   arm_model_id() of the arm both ends drive
//   STATE payload (256 bytes, at offset 32)
//     0   u64  sequence       strictly increasing per arm process, from 1
//     8   f64  arm time       [s] the arm's own clock
//     16  f64  q[7]           measured joint positions [rad]
//     72  f64  q̇[7]           measured joint velocities [rad/s]
//     128 f64  wrench[6]      f [N], τ [N·m] the robot applies, TOOL origin and axes
//     176 f64  proximity distance [m] along the beam (0 when not valid)
//     184 f64  proximity normal[3] (unit, sensor frame L)
//     208 f64  aux[4]         interface-specific (door scene: hinge angle [rad], rate)
//     240 u64  command echo   sequence of the last COMMAND set-point applied (0: none)
//     248 u32  flags          StateFlags
//     252 u32  reserved       0
//   COMMAND payload (136 bytes, at offset 32)
//     0   u64  sequence       strictly increasing per controller, from 1
//     8   f64  controller time [s] the controller's clock when sent
//     16  f64  q[7]           joint position set-point [rad]
//     72  f64  q̇[7]           velocity feed-forward [rad/s]
//     128 u32  flags          CommandFlags
//     132 u32  reserved       0
//   trailer (16 bytes, after the payload)
//     MAC: HMAC-SHA256 of the header and payload under the session key, truncated to its
//     first 128 bits (RFC 2104 / RFC 4231 §4.6 truncation)
//
// A STATE datagram is 304 bytes, a COMMAND 184. decode() rejects a datagram of the wrong
// size, magic, version or kind, another arm model or session, a bad MAC, unknown flag bits,
// a non-zero reserved word and any non-finite number, naming the reason. encode() and
// decode() neither allocate nor throw; encode() does not validate, so a test can build every
// rejected packet.
//
// Authentication. Both ends read the same shared secret (a file of at least
// kMinSecretSize bytes, e.g. `head -c 32 /dev/urandom > arm-link.key`, given to
// tether-simarm --key and tether-remote --arm-link-key). The controller picks a random
// non-zero session id when it starts; the key of a session is
//     session key = HMAC-SHA256(secret, "tether arm link v2" ‖ session id ‖ arm model id)
// (both ids as 8 little-endian bytes), and every packet of the session, both ways, carries
// the MAC under that key. So a packet from a stray sender (no secret), from another arm
// model (another model id, hence another key) or of another session is refused. The arm
// takes the session of the first COMMAND whose MAC verifies under that session's key, and
// takes a new session only after the current one has been silent for its command timeout
// (so a replayed hello of an old session cannot take over a live one). Within a session
// the arm refuses replayed COMMANDs by their sequence numbers (simarm_server.h).
//
// Loss handling (behaviour of UdpArm and SimArmServer, documented here as the link's
// contract; one packet each way per 1 ms period by default):
//   - controller side: UdpArm::read() reports kCommunicationLost when no fresh, valid STATE
//     arrived within UdpArmOptions::link_timeout (10 ms): about 10 consecutive STATEs lost
//     (or refused) at 1 kHz. The executor treats it as a kArmFault breach and starts its
//     controlled stop in that same cycle (tether-remote --link-timeout sets it).
//   - arm side: after SimArmServerOptions::command_timeout (20 ms) without a valid COMMAND,
//     20 consecutive COMMANDs lost at 1 kHz, the arm holds the last commanded position
//     with zero velocity and flags kCommandTimeout in every STATE, which UdpArm also
//     reports as kCommunicationLost.
//   For comparison: KUKA's external-control interfaces (RSI, FRI) stop the robot after a
//   configurable number of consecutive late or lost packets, 5 being the reference figure
//   taken for them here. tether tolerates about 10 on the controller side by default
//   (link_timeout = 5 ms matches 5 at 1 kHz) because its controller and simulated arm run
//   on general-purpose machines where a 5-10 ms scheduling pause is common.
//   Nothing is retransmitted: a lost packet is superseded by the next period's.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tether/common/arm_model.h"
#include "tether/remote/arm/arm_interface.h"

namespace tether::remote::arm_link {

inline constexpr std::uint32_t kMagic = 0x4D524154;
inline constexpr std::uint16_t kProtocolVersion = 2;
inline constexpr std::size_t kHeaderSize = 32;
inline constexpr std::size_t kSessionOffset = 16;   // in the header
inline constexpr std::size_t kArmModelOffset = 24;  // in the header
inline constexpr std::size_t kMacSize = 16;
inline constexpr std::size_t kStatePayloadSize = 256;
inline constexpr std::size_t kCommandPayloadSize = 136;
inline constexpr std::size_t kStatePacketSize = kHeaderSize + kStatePayloadSize + kMacSize;
inline constexpr std::size_t kCommandPacketSize = kHeaderSize + kCommandPayloadSize + kMacSize;
inline constexpr std::size_t kMaxPacketSize = kStatePacketSize;
static_assert(kStatePacketSize == 304 && kCommandPacketSize == 184);

// The shared secret's minimum length [bytes] and the label of the session-key derivation.
inline constexpr std::size_t kMinSecretSize = 16;
inline constexpr std::string_view kSessionKeyLabel = "tether arm link v2";

enum class PacketKind : std::uint16_t { kState = 1, kCommand = 2 };

// StatePacket::flags.
enum StateFlags : std::uint32_t {
  kWrenchValid = 1U << 0,
  kProximityValid = 1U << 1,
  // The arm's own protection tripped (e.g. the simulation diverged): it no longer follows.
  kArmFault = 1U << 2,
  // No COMMAND arrived within the arm's command timeout: it holds the last set-point with
  // zero velocity until commands resume (the arm's own protection, as hardware does).
  kCommandTimeout = 1U << 3,
  // No set-point applied yet since the arm started: it holds its initial position.
  kAwaitingCommand = 1U << 4,
};
inline constexpr std::uint32_t kKnownStateFlags =
    kWrenchValid | kProximityValid | kArmFault | kCommandTimeout | kAwaitingCommand;

// CommandPacket::flags.
enum CommandFlags : std::uint32_t {
  kSetpointValid = 1U << 0,  // clear: a hello / keep-alive, q and q̇ are ignored
};
inline constexpr std::uint32_t kKnownCommandFlags = kSetpointValid;

struct StatePacket {
  std::uint64_t sequence = 0;
  // state.wrench_valid and state.proximity.valid travel as the kWrenchValid and
  // kProximityValid bits: encode() takes them from `state`, decode() sets both.
  ArmState state;
  std::uint64_t command_echo = 0;
  std::uint32_t flags = 0;  // StateFlags
};

struct CommandPacket {
  std::uint64_t sequence = 0;
  double controller_time = 0.0;  // [s]
  JointCommand command;
  std::uint32_t flags = kSetpointValid;  // CommandFlags
};

// The identities every header carries.
struct LinkIds {
  std::uint64_t session = 0;    // the controller's session (0: none)
  std::uint64_t arm_model = 0;  // arm_model_id()
};

enum class DecodeError : std::uint8_t {
  kNone,
  kWrongSize,  // datagram length does not match the kind's fixed size
  kBadMagic,
  kBadVersion,
  kWrongKind,       // not the kind asked for (or an unknown kind)
  kBadPayloadSize,  // header payload size does not match the kind
  kForeignArm,      // the header's arm model id is not the receiver's
  kWrongSession,    // the header's session id is not the receiver's
  kBadMac,          // the MAC does not verify: no or another secret, or altered bytes
  kBadFlags,        // unknown flag bits or a non-zero reserved word
  kNonFinite,       // NaN or infinity in a value
};

const char* to_string(DecodeError error);

using PacketBuffer = std::array<std::uint8_t, kMaxPacketSize>;
using Mac = std::array<std::uint8_t, kMacSize>;

// A 64-bit fingerprint of an arm model: FNV-1a (64-bit) over its name, its number of joints
// and, per joint, the origin (rotation row by row, then translation), the axis and the
// limits (lower, upper, velocity, acceleration, effort), then the tool frame. Each number
// is rounded to 1e-9 (rad, m, ...) and hashed as 8 little-endian bytes of that integer, so
// the last-bit differences another platform's libm may give the URDF's rotations do not
// make the same arm foreign. Not the file name (`source`) nor the inertias.
std::uint64_t arm_model_id(const ArmModel& model) noexcept;

// An HMAC-SHA256 key made ready for the control cycle: the SHA-256 states after the inner
// (key ⊕ ipad) and the outer (key ⊕ opad) block, so a MAC costs the message's own
// compressions plus two, with neither allocation nor failure. The states are OpenSSL's
// SHA256_CTX as opaque bytes (kept out of this header). A default-constructed key is not
// `ready`: encode() then writes a zero MAC and decode() refuses everything (kBadMac).
struct LinkKey {
  static constexpr std::size_t kStateBytes = 128;
  std::array<std::uint8_t, kStateBytes> inner{};
  std::array<std::uint8_t, kStateBytes> outer{};
  bool ready = false;
};

// The site's shared secret, as a key ready to derive session keys from (the secret's own
// bytes are not kept).
struct LinkSecret {
  std::string source;    // where it came from, for messages
  std::size_t size = 0;  // [bytes]
  LinkKey key;           // HMAC-SHA256 keyed with the secret
};

// Reads the secret from a file: its bytes, less one trailing newline, at least
// kMinSecretSize of them. Throws std::runtime_error naming the file (and, when it is too
// short, its size and the minimum).
LinkSecret load_link_secret(const std::string& path);
// The secret from bytes in memory; throws std::invalid_argument naming `source` when there
// are fewer than kMinSecretSize.
LinkSecret make_link_secret(std::span<const std::uint8_t> bytes, const std::string& source);

// An HMAC-SHA256 key from raw key bytes (RFC 2104: a key longer than 64 bytes is hashed
// first).
LinkKey make_link_key(std::span<const std::uint8_t> key) noexcept;
// The key of one session (see the top of this file). Two HMAC computations of a few blocks:
// cheap enough for the arm to run when a new session begins, no allocation. Not ready if the
// secret is not.
LinkKey derive_session_key(const LinkSecret& secret, std::uint64_t session,
                           std::uint64_t arm_model) noexcept;

// HMAC-SHA256 of `bytes` under `key`, truncated to kMacSize bytes (zeros if the key is not
// ready).
Mac compute_mac(std::span<const std::uint8_t> bytes, const LinkKey& key) noexcept;

// Write the packet with `ids` in its header and its MAC under `key` into `buffer`; return
// its length in bytes.
std::size_t encode(const StatePacket& packet, const LinkIds& ids, const LinkKey& key,
                   PacketBuffer& buffer) noexcept;
std::size_t encode(const CommandPacket& packet, const LinkIds& ids, const LinkKey& key,
                   PacketBuffer& buffer) noexcept;

// The identities in a datagram's header, unverified: for the arm, which must know a new
// session's id before it can derive the key to verify its packets. Checks the size, magic,
// version, kind and payload size as decode() does; `ids` is set only on kNone.
DecodeError peek_session(std::span<const std::uint8_t> datagram, PacketKind kind,
                         LinkIds& ids) noexcept;

// Decode one datagram that must carry `expected` ids (kForeignArm, kWrongSession) and a
// MAC under `key` (kBadMac), checked in that order after the frame and before the payload.
// On any error `packet` is left unspecified.
DecodeError decode(std::span<const std::uint8_t> datagram, const LinkIds& expected,
                   const LinkKey& key, StatePacket& packet) noexcept;
DecodeError decode(std::span<const std::uint8_t> datagram, const LinkIds& expected,
                   const LinkKey& key, CommandPacket& packet) noexcept;

}  // namespace tether::remote::arm_link

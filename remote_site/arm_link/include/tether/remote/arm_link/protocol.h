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
//   header (12 bytes)
//     0   u32  magic          0x4D524154 ("TARM" on the wire)
//     4   u16  version        kProtocolVersion
//     6   u16  kind           1 = STATE, 2 = COMMAND
//     8   u32  payload size   256 (STATE) or 136 (COMMAND)
//   STATE payload (256 bytes, at offset 12)
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
//   COMMAND payload (136 bytes, at offset 12)
//     0   u64  sequence       strictly increasing per controller, from 1
//     8   f64  controller time [s] the controller's clock when sent
//     16  f64  q[7]           joint position set-point [rad]
//     72  f64  q̇[7]           velocity feed-forward [rad/s]
//     128 u32  flags          CommandFlags
//     132 u32  reserved       0
//   trailer (4 bytes, after the payload)
//     u32  CRC-32 (IEEE 802.3, as zlib's crc32) of the header and payload
//
// A STATE datagram is 272 bytes, a COMMAND 152. decode() rejects a datagram of the wrong
// size, magic, version or kind, a bad CRC, unknown flag bits, a non-zero reserved word and
// any non-finite number, naming the reason. encode() and decode() neither allocate nor
// throw; encode() does not validate, so a test can build every rejected packet.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "tether/remote/arm/arm_interface.h"

namespace tether::remote::arm_link {

inline constexpr std::uint32_t kMagic = 0x4D524154;
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kCrcSize = 4;
inline constexpr std::size_t kStatePayloadSize = 256;
inline constexpr std::size_t kCommandPayloadSize = 136;
inline constexpr std::size_t kStatePacketSize = kHeaderSize + kStatePayloadSize + kCrcSize;
inline constexpr std::size_t kCommandPacketSize = kHeaderSize + kCommandPayloadSize + kCrcSize;
inline constexpr std::size_t kMaxPacketSize = kStatePacketSize;

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

enum class DecodeError : std::uint8_t {
  kNone,
  kWrongSize,  // datagram length does not match the kind's fixed size
  kBadMagic,
  kBadVersion,
  kWrongKind,       // not the kind asked for (or an unknown kind)
  kBadPayloadSize,  // header payload size does not match the kind
  kBadCrc,
  kBadFlags,   // unknown flag bits or a non-zero reserved word
  kNonFinite,  // NaN or infinity in a value
};

const char* to_string(DecodeError error);

using PacketBuffer = std::array<std::uint8_t, kMaxPacketSize>;

// CRC-32 (reflected polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF).
std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept;

// Write the packet into `buffer`; return its length in bytes.
std::size_t encode(const StatePacket& packet, PacketBuffer& buffer) noexcept;
std::size_t encode(const CommandPacket& packet, PacketBuffer& buffer) noexcept;

// Decode one datagram. On any error `packet` is left unspecified.
DecodeError decode(std::span<const std::uint8_t> datagram, StatePacket& packet) noexcept;
DecodeError decode(std::span<const std::uint8_t> datagram, CommandPacket& packet) noexcept;

}  // namespace tether::remote::arm_link

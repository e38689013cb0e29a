// The arm-link wire format: round trips, the documented layout, and every rejection.

#include "tether/remote/arm_link/protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace tether::remote::arm_link {
namespace {

StatePacket random_state(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  StatePacket p;
  p.sequence = 0x0102030405060708ULL;
  p.state.time = 12.345;
  for (int i = 0; i < 7; ++i) {
    p.state.position[i] = u(rng);
    p.state.velocity[i] = u(rng);
  }
  for (int i = 0; i < 6; ++i) p.state.wrench[i] = 10.0 * u(rng);
  p.state.wrench_valid = true;
  p.state.proximity.valid = true;
  p.state.proximity.distance = 0.15;
  p.state.proximity.surface_normal = Vector3(u(rng), u(rng), u(rng)).normalized();
  for (double& a : p.state.aux) a = u(rng);
  p.command_echo = 41;
  p.flags = kCommandTimeout;
  return p;
}

CommandPacket random_command(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  CommandPacket p;
  p.sequence = 7;
  p.controller_time = 1.5;
  for (int i = 0; i < 7; ++i) {
    p.command.position[i] = u(rng);
    p.command.velocity[i] = u(rng);
  }
  return p;
}

std::span<const std::uint8_t> bytes(const PacketBuffer& b, std::size_t n) { return {b.data(), n}; }

// Rewrites the CRC trailer after a deliberate change, so a later check is what fires.
void reseal(PacketBuffer& b, std::size_t n) {
  const std::uint32_t crc = crc32(bytes(b, n - kCrcSize));
  for (int i = 0; i < 4; ++i) b[n - kCrcSize + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

TEST(ArmLinkProtocol, Crc32MatchesTheStandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}),
            0xCBF43926U);
}

TEST(ArmLinkProtocol, StateRoundTripsBitExactly) {
  std::mt19937 rng(4);
  const StatePacket in = random_state(rng);
  PacketBuffer buffer{};
  const std::size_t n = encode(in, buffer);
  ASSERT_EQ(n, kStatePacketSize);
  StatePacket out;
  ASSERT_EQ(decode(bytes(buffer, n), out), DecodeError::kNone);
  EXPECT_EQ(out.sequence, in.sequence);
  EXPECT_EQ(out.state.time, in.state.time);
  EXPECT_EQ(out.state.position, in.state.position);
  EXPECT_EQ(out.state.velocity, in.state.velocity);
  EXPECT_EQ(out.state.wrench, in.state.wrench);
  EXPECT_TRUE(out.state.wrench_valid);
  EXPECT_TRUE(out.state.proximity.valid);
  EXPECT_EQ(out.state.proximity.distance, in.state.proximity.distance);
  EXPECT_EQ(out.state.proximity.surface_normal, in.state.proximity.surface_normal);
  EXPECT_EQ(out.state.aux, in.state.aux);
  EXPECT_EQ(out.command_echo, 41u);
  EXPECT_EQ(out.flags, kCommandTimeout | kWrenchValid | kProximityValid);
}

TEST(ArmLinkProtocol, ValidityBitsFollowTheState) {
  std::mt19937 rng(5);
  StatePacket in = random_state(rng);
  in.state.wrench_valid = false;
  in.state.proximity.valid = false;
  in.flags = kWrenchValid | kProximityValid;  // overridden by the state
  PacketBuffer buffer{};
  StatePacket out;
  ASSERT_EQ(decode(bytes(buffer, encode(in, buffer)), out), DecodeError::kNone);
  EXPECT_FALSE(out.state.wrench_valid);
  EXPECT_FALSE(out.state.proximity.valid);
  EXPECT_EQ(out.flags, 0u);
}

TEST(ArmLinkProtocol, CommandRoundTripsBitExactly) {
  std::mt19937 rng(6);
  const CommandPacket in = random_command(rng);
  PacketBuffer buffer{};
  const std::size_t n = encode(in, buffer);
  ASSERT_EQ(n, kCommandPacketSize);
  CommandPacket out;
  out.flags = 0;
  ASSERT_EQ(decode(bytes(buffer, n), out), DecodeError::kNone);
  EXPECT_EQ(out.sequence, 7u);
  EXPECT_EQ(out.controller_time, 1.5);
  EXPECT_EQ(out.command.position, in.command.position);
  EXPECT_EQ(out.command.velocity, in.command.velocity);
  EXPECT_EQ(out.flags, kSetpointValid);
}

TEST(ArmLinkProtocol, WireLayoutIsTheDocumentedLittleEndianOne) {
  std::mt19937 rng(7);
  StatePacket p = random_state(rng);
  p.state.position[0] = 1.0;  // 0x3FF0000000000000
  PacketBuffer b{};
  encode(p, b);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), "TARM");
  EXPECT_EQ(b[4], kProtocolVersion);
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[6], 1);  // STATE
  EXPECT_EQ(b[8] | (b[9] << 8), 256);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[12 + i], 8 - i) << "sequence byte " << i;
  EXPECT_EQ(b[12 + 16 + 7], 0x3F);  // q[0], most significant byte last
  EXPECT_EQ(b[12 + 16 + 6], 0xF0);
  EXPECT_EQ(b[12 + 240], 41);  // command echo
}

TEST(ArmLinkProtocol, RejectsATruncatedOrPaddedDatagram) {
  std::mt19937 rng(8);
  PacketBuffer b{};
  const std::size_t n = encode(random_state(rng), b);
  StatePacket out;
  EXPECT_EQ(decode(bytes(b, n - 1), out), DecodeError::kWrongSize);
  EXPECT_EQ(decode(bytes(b, 5), out), DecodeError::kWrongSize);
  EXPECT_EQ(decode(bytes(b, 0), out), DecodeError::kWrongSize);
  CommandPacket command;
  const std::size_t m = encode(random_command(rng), b);
  EXPECT_EQ(decode(bytes(b, m + 1), command), DecodeError::kWrongSize);
}

TEST(ArmLinkProtocol, RejectsABadMagicVersionKindOrPayloadSize) {
  std::mt19937 rng(9);
  PacketBuffer b{};
  StatePacket out;
  std::size_t n = encode(random_state(rng), b);
  b[0] ^= 0x01;
  reseal(b, n);
  EXPECT_EQ(decode(bytes(b, n), out), DecodeError::kBadMagic);

  n = encode(random_state(rng), b);
  b[4] = kProtocolVersion + 1;
  reseal(b, n);
  EXPECT_EQ(decode(bytes(b, n), out), DecodeError::kBadVersion);

  n = encode(random_command(rng), b);
  EXPECT_EQ(decode(bytes(b, n), out), DecodeError::kWrongKind);
  n = encode(random_state(rng), b);
  CommandPacket command;
  EXPECT_EQ(decode(bytes(b, n), command), DecodeError::kWrongKind);

  n = encode(random_state(rng), b);
  b[8] = 255;
  reseal(b, n);
  EXPECT_EQ(decode(bytes(b, n), out), DecodeError::kBadPayloadSize);
}

TEST(ArmLinkProtocol, RejectsAnyFlippedBitByItsCrc) {
  std::mt19937 rng(10);
  PacketBuffer b{};
  const std::size_t n = encode(random_state(rng), b);
  StatePacket out;
  // Every payload byte and the CRC itself (the header's checks fire earlier).
  for (std::size_t i = kHeaderSize; i < n; ++i) {
    PacketBuffer c = b;
    c[i] ^= static_cast<std::uint8_t>(1U << (i % 8));
    EXPECT_EQ(decode(bytes(c, n), out), DecodeError::kBadCrc) << "byte " << i;
  }
}

TEST(ArmLinkProtocol, RejectsUnknownFlagsAndReservedBits) {
  std::mt19937 rng(11);
  PacketBuffer b{};
  StatePacket state = random_state(rng);
  state.flags |= 1U << 7;
  StatePacket out;
  EXPECT_EQ(decode(bytes(b, encode(state, b)), out), DecodeError::kBadFlags);

  std::size_t n = encode(random_state(rng), b);
  b[kHeaderSize + 252] = 1;  // reserved
  reseal(b, n);
  EXPECT_EQ(decode(bytes(b, n), out), DecodeError::kBadFlags);

  CommandPacket command = random_command(rng);
  command.flags = 2;
  CommandPacket decoded;
  EXPECT_EQ(decode(bytes(b, encode(command, b)), decoded), DecodeError::kBadFlags);
}

TEST(ArmLinkProtocol, RejectsNonFiniteValuesAnywhere) {
  std::mt19937 rng(12);
  PacketBuffer b{};
  StatePacket out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int field = 0; field < 5; ++field) {
    StatePacket p = random_state(rng);
    if (field == 0) p.state.time = inf;
    if (field == 1) p.state.position[6] = nan;
    if (field == 2) p.state.wrench[3] = -inf;
    if (field == 3) p.state.proximity.surface_normal[2] = nan;
    if (field == 4) p.state.aux[3] = nan;
    EXPECT_EQ(decode(bytes(b, encode(p, b)), out), DecodeError::kNonFinite) << "field " << field;
  }
  CommandPacket command = random_command(rng);
  command.command.velocity[2] = nan;
  CommandPacket decoded;
  EXPECT_EQ(decode(bytes(b, encode(command, b)), decoded), DecodeError::kNonFinite);
}

TEST(ArmLinkProtocol, NamesEveryRejectionReason) {
  EXPECT_STREQ(to_string(DecodeError::kBadCrc), "CRC mismatch");
  EXPECT_STREQ(to_string(DecodeError::kNonFinite), "non-finite value");
  EXPECT_STREQ(to_string(DecodeError::kWrongKind), "wrong packet kind");
}

}  // namespace
}  // namespace tether::remote::arm_link

// The arm-link wire format: round trips, the documented layout, authentication (HMAC-SHA256
// known answers, session keys, the arm model id, the key file) and every rejection.

#include "tether/remote/arm_link/protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "tether/common/urdf_loader.h"

namespace tether::remote::arm_link {
namespace {

std::span<const std::uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

std::string hex(std::span<const std::uint8_t> bytes) {
  constexpr const char* kDigits = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0x0F];
  }
  return out;
}

LinkSecret secret(const std::string& text = "tether arm link test secret 0001") {
  return make_link_secret(text_bytes(text), "test secret");
}

// The ids and session key most tests use.
struct Keyed {
  Keyed() : ids{0x1122334455667788ULL, 0x0A0B0C0D0E0F1011ULL} {
    key = derive_session_key(secret(), ids.session, ids.arm_model);
  }
  LinkIds ids;
  LinkKey key;
};

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

// Rewrites the MAC trailer after a deliberate change, so a later check is what fires.
void reseal(PacketBuffer& b, std::size_t n, const LinkKey& key) {
  const Mac mac = compute_mac(bytes(b, n - kMacSize), key);
  std::copy(mac.begin(), mac.end(), b.begin() + static_cast<std::ptrdiff_t>(n - kMacSize));
}

// A file in the test's temporary directory holding `contents`; returns its path.
std::string write_file(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) /
                                     ("tether_protocol_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return path.string();
}

TEST(ArmLinkProtocol, HmacSha256MatchesRfc4231) {
  // RFC 4231 test cases 1, 2 and 6 (a key longer than a block is hashed first), truncated to
  // the 128 bits the link carries.
  EXPECT_EQ(
      hex(compute_mac(text_bytes("Hi There"), make_link_key(text_bytes(std::string(20, '\x0b'))))),
      "b0344c61d8db38535ca8afceaf0bf12b");
  EXPECT_EQ(hex(compute_mac(text_bytes("what do ya want for nothing?"),
                            make_link_key(text_bytes("Jefe")))),
            "5bdcc146bf60754e6a042426089575c7");
  EXPECT_EQ(hex(compute_mac(text_bytes("Test Using Larger Than Block-Size Key - Hash Key First"),
                            make_link_key(text_bytes(std::string(131, '\xaa'))))),
            "60e431591ee0b67f0d8a26aacbf5b77f");
  // A key that is not ready MACs nothing.
  EXPECT_EQ(hex(compute_mac(text_bytes("Hi There"), LinkKey{})), std::string(32, '0'));
}

TEST(ArmLinkProtocol, SessionKeyIsTheDocumentedDerivation) {
  // HMAC-SHA256(secret, "tether arm link v2" || session LE || model LE), then the MAC of
  // "tether" under it, as Python's hmac module computes them.
  std::string raw;
  for (int i = 0; i < 32; ++i) raw += static_cast<char>(i);
  const LinkSecret s = make_link_secret(text_bytes(raw), "bytes 0..31");
  const LinkKey key = derive_session_key(s, 0x0123456789ABCDEFULL, 0xFEDCBA9876543210ULL);
  ASSERT_TRUE(key.ready);
  EXPECT_EQ(hex(compute_mac(text_bytes("tether"), key)), "842fdc24ef7fc0a8cb0396b73a2d1b00");
  // Another session, model or secret: another key.
  const Mac mac = compute_mac(text_bytes("tether"), key);
  EXPECT_NE(compute_mac(text_bytes("tether"), derive_session_key(s, 1, 0xFEDCBA9876543210ULL)),
            mac);
  EXPECT_NE(compute_mac(text_bytes("tether"), derive_session_key(s, 0x0123456789ABCDEFULL, 1)),
            mac);
  EXPECT_NE(compute_mac(text_bytes("tether"),
                        derive_session_key(secret(), 0x0123456789ABCDEFULL, 0xFEDCBA9876543210ULL)),
            mac);
  EXPECT_FALSE(derive_session_key(LinkSecret{}, 1, 2).ready);
}

TEST(ArmLinkProtocol, ArmModelIdIsStableAndTellsArmsApart) {
  const ArmModel iiwa = load_default_arm();
  const std::uint64_t id = arm_model_id(iiwa);
  EXPECT_EQ(arm_model_id(load_default_arm()), id);
  EXPECT_EQ(arm_model_id(load_arm_by_name("iiwa7", {})), id);
  EXPECT_NE(arm_model_id(load_panda_arm()), id);
  ArmModel moved = iiwa;
  moved.source = "/elsewhere/iiwa7.urdf";  // where it was loaded from does not matter
  EXPECT_EQ(arm_model_id(moved), id);
  moved.joints[3].limits.upper -= 0.01;
  EXPECT_NE(arm_model_id(moved), id);
  ArmModel renamed = iiwa;
  renamed.name += "x";
  EXPECT_NE(arm_model_id(renamed), id);
  ArmModel tooled = iiwa;
  tooled.tool.p.z() += 0.1;
  EXPECT_NE(arm_model_id(tooled), id);
  ArmModel nudged = iiwa;  // a last-bit difference (another libm) is the same arm
  nudged.joints[1].origin.R(0, 1) = std::nextafter(nudged.joints[1].origin.R(0, 1), 2.0);
  EXPECT_EQ(arm_model_id(nudged), id);
}

TEST(ArmLinkProtocol, StateRoundTripsBitExactly) {
  std::mt19937 rng(4);
  const Keyed k;
  const StatePacket in = random_state(rng);
  PacketBuffer buffer{};
  const std::size_t n = encode(in, k.ids, k.key, buffer);
  ASSERT_EQ(n, kStatePacketSize);
  ASSERT_EQ(n, 304u);
  StatePacket out;
  ASSERT_EQ(decode(bytes(buffer, n), k.ids, k.key, out), DecodeError::kNone);
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
  const Keyed k;
  StatePacket in = random_state(rng);
  in.state.wrench_valid = false;
  in.state.proximity.valid = false;
  in.flags = kWrenchValid | kProximityValid;  // overridden by the state
  PacketBuffer buffer{};
  StatePacket out;
  ASSERT_EQ(decode(bytes(buffer, encode(in, k.ids, k.key, buffer)), k.ids, k.key, out),
            DecodeError::kNone);
  EXPECT_FALSE(out.state.wrench_valid);
  EXPECT_FALSE(out.state.proximity.valid);
  EXPECT_EQ(out.flags, 0u);
}

TEST(ArmLinkProtocol, CommandRoundTripsBitExactly) {
  std::mt19937 rng(6);
  const Keyed k;
  const CommandPacket in = random_command(rng);
  PacketBuffer buffer{};
  const std::size_t n = encode(in, k.ids, k.key, buffer);
  ASSERT_EQ(n, kCommandPacketSize);
  ASSERT_EQ(n, 184u);
  CommandPacket out;
  out.flags = 0;
  ASSERT_EQ(decode(bytes(buffer, n), k.ids, k.key, out), DecodeError::kNone);
  EXPECT_EQ(out.sequence, 7u);
  EXPECT_EQ(out.controller_time, 1.5);
  EXPECT_EQ(out.command.position, in.command.position);
  EXPECT_EQ(out.command.velocity, in.command.velocity);
  EXPECT_EQ(out.flags, kSetpointValid);
}

TEST(ArmLinkProtocol, WireLayoutIsTheDocumentedLittleEndianOne) {
  std::mt19937 rng(7);
  const Keyed k;
  StatePacket p = random_state(rng);
  p.state.position[0] = 1.0;  // 0x3FF0000000000000
  PacketBuffer b{};
  const std::size_t n = encode(p, k.ids, k.key, b);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), "TARM");
  EXPECT_EQ(b[4], 2);  // version
  EXPECT_EQ(b[4], kProtocolVersion);
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[6], 1);  // STATE
  EXPECT_EQ(b[8] | (b[9] << 8), 256);
  for (int i = 12; i < 16; ++i) EXPECT_EQ(b[i], 0) << "reserved byte " << i;
  EXPECT_EQ(b[16], 0x88);  // session, least significant byte first
  EXPECT_EQ(b[23], 0x11);
  EXPECT_EQ(b[24], 0x11);  // arm model id
  EXPECT_EQ(b[31], 0x0A);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[32 + i], 8 - i) << "sequence byte " << i;
  EXPECT_EQ(b[32 + 16 + 7], 0x3F);  // q[0], most significant byte last
  EXPECT_EQ(b[32 + 16 + 6], 0xF0);
  EXPECT_EQ(b[32 + 240], 41);  // command echo
  // The trailer is the truncated HMAC of everything before it.
  const Mac mac = compute_mac(bytes(b, 32 + 256), k.key);
  EXPECT_TRUE(std::equal(mac.begin(), mac.end(), b.begin() + 32 + 256));
  EXPECT_EQ(n, 32u + 256u + 16u);
  LinkIds peeked;
  ASSERT_EQ(peek_session(bytes(b, n), PacketKind::kState, peeked), DecodeError::kNone);
  EXPECT_EQ(peeked.session, k.ids.session);
  EXPECT_EQ(peeked.arm_model, k.ids.arm_model);
}

TEST(ArmLinkProtocol, RejectsATruncatedOrPaddedDatagram) {
  std::mt19937 rng(8);
  const Keyed k;
  PacketBuffer b{};
  const std::size_t n = encode(random_state(rng), k.ids, k.key, b);
  StatePacket out;
  EXPECT_EQ(decode(bytes(b, n - 1), k.ids, k.key, out), DecodeError::kWrongSize);
  EXPECT_EQ(decode(bytes(b, 5), k.ids, k.key, out), DecodeError::kWrongSize);
  EXPECT_EQ(decode(bytes(b, 0), k.ids, k.key, out), DecodeError::kWrongSize);
  LinkIds ids;
  EXPECT_EQ(peek_session(bytes(b, 31), PacketKind::kState, ids), DecodeError::kWrongSize);
  EXPECT_EQ(peek_session(bytes(b, n - 1), PacketKind::kState, ids), DecodeError::kWrongSize);
  CommandPacket command;
  const std::size_t m = encode(random_command(rng), k.ids, k.key, b);
  EXPECT_EQ(decode(bytes(b, m + 1), k.ids, k.key, command), DecodeError::kWrongSize);
}

TEST(ArmLinkProtocol, RejectsABadMagicVersionKindOrPayloadSize) {
  std::mt19937 rng(9);
  const Keyed k;
  PacketBuffer b{};
  StatePacket out;
  std::size_t n = encode(random_state(rng), k.ids, k.key, b);
  b[0] ^= 0x01;
  reseal(b, n, k.key);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadMagic);

  n = encode(random_state(rng), k.ids, k.key, b);
  b[4] = kProtocolVersion - 1;  // a version 1 peer
  reseal(b, n, k.key);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadVersion);
  LinkIds ids;
  EXPECT_EQ(peek_session(bytes(b, n), PacketKind::kState, ids), DecodeError::kBadVersion);

  n = encode(random_command(rng), k.ids, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kWrongKind);
  EXPECT_EQ(peek_session(bytes(b, n), PacketKind::kState, ids), DecodeError::kWrongKind);
  n = encode(random_state(rng), k.ids, k.key, b);
  CommandPacket command;
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, command), DecodeError::kWrongKind);

  n = encode(random_state(rng), k.ids, k.key, b);
  b[8] = 255;
  reseal(b, n, k.key);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadPayloadSize);
}

TEST(ArmLinkProtocol, RejectsAnyFlippedBitByItsMac) {
  std::mt19937 rng(10);
  const Keyed k;
  PacketBuffer b{};
  StatePacket out;
  const std::size_t n = encode(random_state(rng), k.ids, k.key, b);
  // Every byte after the framing fields and the ids (which fire earlier): the reserved
  // word, the payload and the MAC itself.
  for (std::size_t i = 12; i < n; ++i) {
    if (i >= kSessionOffset && i < kHeaderSize) continue;
    PacketBuffer c = b;
    c[i] ^= static_cast<std::uint8_t>(1U << (i % 8));
    EXPECT_EQ(decode(bytes(c, n), k.ids, k.key, out), DecodeError::kBadMac) << "byte " << i;
  }
  CommandPacket command;
  const std::size_t m = encode(random_command(rng), k.ids, k.key, b);
  for (std::size_t i = kHeaderSize; i < m; ++i) {
    PacketBuffer c = b;
    c[i] ^= 0x80;
    EXPECT_EQ(decode(bytes(c, m), k.ids, k.key, command), DecodeError::kBadMac) << "byte " << i;
  }
}

TEST(ArmLinkProtocol, RejectsAPacketOfAnotherSecretOrWithoutAKey) {
  std::mt19937 rng(13);
  const Keyed k;
  const LinkKey other =
      derive_session_key(secret("another site's secret, 32 bytes"), k.ids.session, k.ids.arm_model);
  PacketBuffer b{};
  StatePacket out;
  std::size_t n = encode(random_state(rng), k.ids, other, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadMac);
  n = encode(random_state(rng), k.ids, LinkKey{}, b);  // a zero MAC
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadMac);
  n = encode(random_state(rng), k.ids, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, LinkKey{}, out), DecodeError::kBadMac);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kNone);
}

TEST(ArmLinkProtocol, RejectsAnotherArmModelOrSession) {
  std::mt19937 rng(14);
  const Keyed k;
  PacketBuffer b{};
  StatePacket out;
  LinkIds foreign = k.ids;
  foreign.arm_model ^= 1;
  // Even when MAC'd correctly under the receiver's key: the ids come first.
  std::size_t n = encode(random_state(rng), foreign, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kForeignArm);
  LinkIds other_session = k.ids;
  other_session.session += 1;
  n = encode(random_state(rng), other_session, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kWrongSession);
  CommandPacket command;
  n = encode(random_command(rng), other_session, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, command), DecodeError::kWrongSession);
  n = encode(random_command(rng), foreign, k.key, b);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, command), DecodeError::kForeignArm);
}

TEST(ArmLinkProtocol, RejectsUnknownFlagsAndReservedBits) {
  std::mt19937 rng(11);
  const Keyed k;
  PacketBuffer b{};
  StatePacket state = random_state(rng);
  state.flags |= 1U << 7;
  StatePacket out;
  EXPECT_EQ(decode(bytes(b, encode(state, k.ids, k.key, b)), k.ids, k.key, out),
            DecodeError::kBadFlags);

  std::size_t n = encode(random_state(rng), k.ids, k.key, b);
  b[kHeaderSize + 252] = 1;  // the payload's reserved word
  reseal(b, n, k.key);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadFlags);

  n = encode(random_state(rng), k.ids, k.key, b);
  b[12] = 1;  // the header's reserved word
  reseal(b, n, k.key);
  EXPECT_EQ(decode(bytes(b, n), k.ids, k.key, out), DecodeError::kBadFlags);

  CommandPacket command = random_command(rng);
  command.flags = 2;
  CommandPacket decoded;
  EXPECT_EQ(decode(bytes(b, encode(command, k.ids, k.key, b)), k.ids, k.key, decoded),
            DecodeError::kBadFlags);
}

TEST(ArmLinkProtocol, RejectsNonFiniteValuesAnywhere) {
  std::mt19937 rng(12);
  const Keyed k;
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
    EXPECT_EQ(decode(bytes(b, encode(p, k.ids, k.key, b)), k.ids, k.key, out),
              DecodeError::kNonFinite)
        << "field " << field;
  }
  CommandPacket command = random_command(rng);
  command.command.velocity[2] = nan;
  CommandPacket decoded;
  EXPECT_EQ(decode(bytes(b, encode(command, k.ids, k.key, b)), k.ids, k.key, decoded),
            DecodeError::kNonFinite);
}

TEST(ArmLinkProtocol, NamesEveryRejectionReason) {
  EXPECT_STREQ(to_string(DecodeError::kBadMac), "MAC mismatch (another key or altered bytes)");
  EXPECT_STREQ(to_string(DecodeError::kForeignArm), "another arm model");
  EXPECT_STREQ(to_string(DecodeError::kWrongSession), "another session");
  EXPECT_STREQ(to_string(DecodeError::kNonFinite), "non-finite value");
  EXPECT_STREQ(to_string(DecodeError::kWrongKind), "wrong packet kind");
}

TEST(ArmLinkKeyFile, IsReadLessATrailingNewline) {
  const std::string text = "0123456789abcdef";  // exactly the minimum
  const LinkSecret from_file = load_link_secret(write_file("newline.key", text + "\n"));
  EXPECT_EQ(from_file.size, 16u);
  EXPECT_TRUE(from_file.key.ready);
  const LinkSecret from_memory = make_link_secret(text_bytes(text), "memory");
  EXPECT_EQ(compute_mac(text_bytes("x"), derive_session_key(from_file, 5, 6)),
            compute_mac(text_bytes("x"), derive_session_key(from_memory, 5, 6)));
  // Binary secrets are taken as they are.
  std::string binary(32, '\0');
  binary[7] = '\n';
  EXPECT_EQ(load_link_secret(write_file("binary.key", binary)).size, 32u);
}

TEST(ArmLinkKeyFile, RefusesAShortOrMissingFileNamingIt) {
  const std::string path = write_file("short.key", "fifteen bytes!!\n");
  try {
    load_link_secret(path);
    FAIL() << "took a 15-byte secret";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("15 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("minimum is 16"), std::string::npos) << message;
  }
  const std::string missing = path + ".missing";
  try {
    load_link_secret(missing);
    FAIL() << "read a file that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_link_secret(text_bytes("short"), "memory"), std::invalid_argument);
}

}  // namespace
}  // namespace tether::remote::arm_link

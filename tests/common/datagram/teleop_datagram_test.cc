// The teleoperation data plane's datagrams (tether/datagram/teleop_datagram.h): the compact
// codec and its range checks, AES-256-GCM sealing with its replay window, the session keys'
// text, and the receiver's loss concealment under seeded random loss.
#include "tether/datagram/teleop_datagram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tether::datagram {
namespace {

using Bytes = std::vector<std::uint8_t>;

float uniform(std::mt19937& rng, float low, float high) {
  return std::uniform_real_distribution<float>(low, high)(rng);
}

IncrementMessage random_increment(std::mt19937& rng, bool wave) {
  IncrementMessage m;
  m.sequence = std::uniform_int_distribution<std::uint32_t>(100, 0xFFFFFFFFU)(rng);
  m.pieces = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(1, 64)(rng));
  m.ground_time_ns = std::uniform_int_distribution<std::uint64_t>()(rng);
  m.deadman = (rng() & 1U) != 0;
  m.end = (rng() % 8) == 0;  // the session's end, as the ground sends it last
  m.mode = static_cast<std::uint8_t>(rng() % 4);
  m.segment_length =
      static_cast<std::uint16_t>(std::uniform_int_distribution<int>(m.pieces, 0xFFFF)(rng));
  for (float& v : m.motion) v = uniform(rng, -50.0F, 50.0F);
  m.master_in = std::uniform_real_distribution<double>(0.0, 1e5)(rng);
  m.master_observed = uniform(rng, -1e5F, 1e5F);
  m.master_dissipated = uniform(rng, 0.0F, 1e5F);
  m.has_wave = wave;
  if (wave) {
    for (float& v : m.wave) v = uniform(rng, -900.0F, 900.0F);
  }
  return m;
}

ReflectionMessage random_reflection(std::mt19937& rng, bool detail, bool wave, bool eye) {
  ReflectionMessage m;
  m.cycle = static_cast<std::uint32_t>(rng());
  m.applied_sequence = static_cast<std::uint32_t>(rng());
  m.skipped = static_cast<std::uint16_t>(rng());
  m.state = static_cast<std::uint8_t>(rng() % 6);
  m.mode = static_cast<std::uint8_t>(rng() % 4);
  m.method = static_cast<std::uint8_t>(rng() % 3);
  for (float& v : m.reflected) v = uniform(rng, -500.0F, 500.0F);
  m.slave_in = std::uniform_real_distribution<double>(0.0, 1e5)(rng);
  m.remote_time_ns = static_cast<std::int64_t>(rng()) << 20;
  m.hold_ns = (rng() & 1U) != 0 ? ReflectionMessage::kNoHold : static_cast<std::uint32_t>(rng());
  m.has_detail = detail;
  if (detail) {
    for (float& v : m.measured) v = uniform(rng, -500.0F, 500.0F);
    for (float& v : m.tracking_error) v = uniform(rng, -500.0F, 500.0F);
    m.task_time = uniform(rng, 0.0F, 1e4F);
    m.slave_observed = uniform(rng, -1e3F, 1e3F);
    m.slave_dissipated = uniform(rng, 0.0F, 1e3F);
  }
  m.has_wave = wave;
  if (wave) {
    for (float& v : m.return_wave) v = uniform(rng, -900.0F, 900.0F);
    for (float& v : m.wave_impedance) v = uniform(rng, 0.0F, 1e4F);
  }
  m.has_eye = eye;
  if (eye) {
    std::array<double, 4> q{};
    double norm = 0.0;
    for (double& v : q) {
      v = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
      norm += v * v;
    }
    for (std::size_t i = 0; i < 4; ++i) m.eye[i] = static_cast<float>(q[i] / std::sqrt(norm));
    m.eye_time_ns = std::uniform_int_distribution<std::uint64_t>()(rng);
  }
  return m;
}

void expect_same(const IncrementMessage& a, const IncrementMessage& b) {
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.pieces, b.pieces);
  EXPECT_EQ(a.ground_time_ns, b.ground_time_ns);
  EXPECT_EQ(a.deadman, b.deadman);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.segment_length, b.segment_length);
  EXPECT_EQ(a.motion, b.motion);
  EXPECT_EQ(a.master_in, b.master_in);
  EXPECT_EQ(a.master_observed, b.master_observed);
  EXPECT_EQ(a.master_dissipated, b.master_dissipated);
  EXPECT_EQ(a.has_wave, b.has_wave);
  if (a.has_wave) {
    EXPECT_EQ(a.wave, b.wave);
  }
}

void expect_same(const ReflectionMessage& a, const ReflectionMessage& b) {
  EXPECT_EQ(a.cycle, b.cycle);
  EXPECT_EQ(a.applied_sequence, b.applied_sequence);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.reflected, b.reflected);
  EXPECT_EQ(a.slave_in, b.slave_in);
  EXPECT_EQ(a.remote_time_ns, b.remote_time_ns);
  EXPECT_EQ(a.hold_ns, b.hold_ns);
  EXPECT_EQ(a.has_detail, b.has_detail);
  if (a.has_detail) {
    EXPECT_EQ(a.measured, b.measured);
    EXPECT_EQ(a.tracking_error, b.tracking_error);
    EXPECT_EQ(a.task_time, b.task_time);
    EXPECT_EQ(a.slave_observed, b.slave_observed);
    EXPECT_EQ(a.slave_dissipated, b.slave_dissipated);
  }
  EXPECT_EQ(a.has_wave, b.has_wave);
  if (a.has_wave) {
    EXPECT_EQ(a.return_wave, b.return_wave);
    EXPECT_EQ(a.wave_impedance, b.wave_impedance);
  }
  EXPECT_EQ(a.has_eye, b.has_eye);
  if (a.has_eye) {
    EXPECT_EQ(a.eye, b.eye);
    EXPECT_EQ(a.eye_time_ns, b.eye_time_ns);
  }
}

template <typename M>
Bytes encoded(const M& m) {
  Bytes out(kMaxDatagram);
  out.resize(encode(m, out));
  return out;
}

// ---- codec ----

TEST(TeleopDatagramCodec, IncrementsRoundTripWithAndWithoutTheForwardWave) {
  std::mt19937 rng(20240601);
  for (int k = 0; k < 500; ++k) {
    const bool wave = k % 2 == 1;
    const IncrementMessage sent = random_increment(rng, wave);
    const Bytes bytes = encoded(sent);
    // The sizes the header's link budget is computed from (113 / 137 bytes on the wire).
    ASSERT_EQ(bytes.size(), wave ? 84U : 60U);
    IncrementMessage got;
    ASSERT_EQ(decode(bytes, got), "") << k;
    expect_same(sent, got);
  }
}

TEST(TeleopDatagramCodec, ReflectionsRoundTripWithEveryCombinationOfDetailWaveAndEyeGroups) {
  std::mt19937 rng(7);
  for (int k = 0; k < 400; ++k) {
    const bool detail = (k & 1) != 0;
    const bool wave = (k & 2) != 0;
    const bool eye = (k & 4) != 0;
    const ReflectionMessage sent = random_reflection(rng, detail, wave, eye);
    const Bytes bytes = encoded(sent);
    ASSERT_EQ(bytes.size(), 56U + (detail ? 60U : 0U) + (wave ? 36U : 0U) + (eye ? 24U : 0U));
    ReflectionMessage got;
    ASSERT_EQ(decode(bytes, got), "") << k;
    expect_same(sent, got);
  }
}

TEST(TeleopDatagramCodec, EncodingIntoTooSmallABufferReportsNothingWritten) {
  std::mt19937 rng(3);
  const IncrementMessage increment = random_increment(rng, true);
  std::array<std::uint8_t, 83> short_increment{};
  EXPECT_EQ(encode(increment, short_increment), 0U);
  const ReflectionMessage reflection = random_reflection(rng, true, true, true);
  std::array<std::uint8_t, 175> short_reflection{};
  EXPECT_EQ(encode(reflection, short_reflection), 0U);
}

TEST(TeleopDatagramCodec, IncrementDecodeRefusesOutOfRangeValuesNamingFieldAndRange) {
  IncrementMessage valid;
  valid.sequence = 10;
  valid.pieces = 2;
  valid.segment_length = 5;
  valid.has_wave = true;
  struct Case {
    std::string expected;
    void (*spoil)(IncrementMessage&);
  };
  const std::vector<Case> cases = {
      {"sequence = 0",
       [](IncrementMessage& m) {
         m.sequence = 0;
         m.pieces = 1;
         m.segment_length = 1;
       }},
      {"pieces = 0: allowed 1 … 64", [](IncrementMessage& m) { m.pieces = 0; }},
      {"pieces = 65: allowed 1 … 64",
       [](IncrementMessage& m) {
         m.sequence = 100;
         m.pieces = 65;
         m.segment_length = 70;
       }},
      {"pieces = 11: more than the sequence 10",
       [](IncrementMessage& m) {
         m.pieces = 11;
         m.segment_length = 11;
       }},
      {"segment_length = 1: allowed 2 … 10", [](IncrementMessage& m) { m.segment_length = 1; }},
      {"segment_length = 11: allowed 2 … 10", [](IncrementMessage& m) { m.segment_length = 11; }},
      {"motion[3]", [](IncrementMessage& m) { m.motion[3] = std::nanf(""); }},
      {"motion[6] = 20000", [](IncrementMessage& m) { m.motion[6] = 2e4F; }},
      {"motion[0]",
       [](IncrementMessage& m) { m.motion[0] = -std::numeric_limits<float>::infinity(); }},
      {"master_in_j = -1", [](IncrementMessage& m) { m.master_in = -1.0; }},
      {"master_in_j = nan", [](IncrementMessage& m) { m.master_in = std::nan(""); }},
      {"master_observed_j",
       [](IncrementMessage& m) { m.master_observed = std::numeric_limits<float>::infinity(); }},
      {"master_dissipated_j = -0.5", [](IncrementMessage& m) { m.master_dissipated = -0.5F; }},
      {"wave[5] = 2000", [](IncrementMessage& m) { m.wave[5] = 2e3F; }},
  };
  for (const Case& c : cases) {
    IncrementMessage m = valid;
    c.spoil(m);
    IncrementMessage got;
    const std::string problem = decode(encoded(m), got);
    EXPECT_NE(problem.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in '" << problem << "'";
  }
  // Every message with a range names it: "allowed" follows the field.
  for (const Case& c : cases) {
    if (c.expected.rfind("sequence", 0) == 0 || c.expected.find("more than") != std::string::npos) {
      continue;
    }
    IncrementMessage m = valid;
    c.spoil(m);
    IncrementMessage got;
    EXPECT_NE(decode(encoded(m), got).find("allowed"), std::string::npos) << c.expected;
  }
}

TEST(TeleopDatagramCodec, IncrementDecodeRefusesCutShortOverlongAndUnknownFlagBits) {
  IncrementMessage valid;
  valid.sequence = 3;
  valid.has_wave = true;
  const Bytes bytes = encoded(valid);
  IncrementMessage got;
  // Never reads past the bytes it is given: every prefix is refused, none crashes.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string problem = decode(std::span(bytes.data(), n), got);
    EXPECT_FALSE(problem.empty()) << n;
    EXPECT_TRUE(problem.find("too short") != std::string::npos ||
                problem.find("cut short") != std::string::npos)
        << problem;
  }
  Bytes longer = bytes;
  longer.push_back(0);
  EXPECT_NE(decode(longer, got).find("85 bytes is too long"), std::string::npos);
  // The flags byte follows sequence (4), pieces (1) and ground time (8); bits 0-2 (deadman,
  // wave, end) and 4-5 (mode) are known.
  for (const std::uint8_t bit : {0x08, 0x40, 0x80}) {
    Bytes spoilt = bytes;
    spoilt[13] |= bit;
    EXPECT_NE(decode(spoilt, got).find("unknown bits"), std::string::npos) << int{bit};
  }
  // The wave flag without its 24 bytes.
  Bytes no_wave = encoded(IncrementMessage{.sequence = 3});
  no_wave[13] |= 0x02;
  EXPECT_NE(decode(no_wave, got).find("forward wave is cut short"), std::string::npos);
}

TEST(TeleopDatagramCodec, ReflectionDecodeRefusesOutOfRangeValuesNamingFieldAndRange) {
  ReflectionMessage valid;
  valid.has_detail = true;
  valid.has_wave = true;
  valid.has_eye = true;
  struct Case {
    std::string expected;
    void (*spoil)(ReflectionMessage&);
  };
  const std::vector<Case> cases = {
      {"state = 6: allowed 0 … 5", [](ReflectionMessage& m) { m.state = 6; }},
      {"state = 7: allowed 0 … 5", [](ReflectionMessage& m) { m.state = 7; }},
      {"method = 3: allowed 0 … 2", [](ReflectionMessage& m) { m.method = 3; }},
      {"reflected[2]", [](ReflectionMessage& m) { m.reflected[2] = std::nanf(""); }},
      {"reflected[0] = 2000000", [](ReflectionMessage& m) { m.reflected[0] = 2e6F; }},
      {"slave_in_j = -1", [](ReflectionMessage& m) { m.slave_in = -1.0; }},
      {"measured[5]", [](ReflectionMessage& m) { m.measured[5] = -2e6F; }},
      {"tracking_error[1]",
       [](ReflectionMessage& m) { m.tracking_error[1] = std::numeric_limits<float>::infinity(); }},
      {"task_time = -1", [](ReflectionMessage& m) { m.task_time = -1.0F; }},
      {"slave_observed_j", [](ReflectionMessage& m) { m.slave_observed = 2e6F; }},
      {"slave_dissipated_j = -1", [](ReflectionMessage& m) { m.slave_dissipated = -1.0F; }},
      {"return_wave[4] = 1001", [](ReflectionMessage& m) { m.return_wave[4] = 1001.0F; }},
      {"wave_impedance[2]", [](ReflectionMessage& m) { m.wave_impedance[2] = 2e6F; }},
      {"eye[0] = 2", [](ReflectionMessage& m) { m.eye[0] = 2.0F; }},
      {"eye: |q| = 0.5",
       [](ReflectionMessage& m) {
         m.eye = {0.5F, 0.0F, 0.0F, 0.0F};
       }},
  };
  for (const Case& c : cases) {
    ReflectionMessage m = valid;
    c.spoil(m);
    ReflectionMessage got;
    const std::string problem = decode(encoded(m), got);
    EXPECT_NE(problem.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in '" << problem << "'";
    EXPECT_TRUE(problem.find("allowed") != std::string::npos ||
                problem.find("unit quaternion") != std::string::npos)
        << problem;
  }
}

TEST(TeleopDatagramCodec, ReflectionDecodeRefusesCutShortOverlongAndUnknownFlagBits) {
  ReflectionMessage valid;
  valid.has_detail = true;
  valid.has_wave = true;
  valid.has_eye = true;
  const Bytes bytes = encoded(valid);
  ReflectionMessage got;
  ASSERT_EQ(decode(bytes, got), "");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode(std::span(bytes.data(), n), got).empty()) << n;
  }
  Bytes longer = bytes;
  longer.push_back(0);
  EXPECT_NE(decode(longer, got).find("too long"), std::string::npos);
  // The u16 flags follow cycle (4), applied sequence (4) and skipped (2); bits 3 and 12-15
  // mean nothing.
  for (const unsigned bit : {3U, 12U, 13U, 14U, 15U}) {
    Bytes spoilt = bytes;
    std::uint16_t flags = 0;
    std::memcpy(&flags, spoilt.data() + 10, 2);
    flags = static_cast<std::uint16_t>(flags | (1U << bit));
    std::memcpy(spoilt.data() + 10, &flags, 2);
    EXPECT_NE(decode(spoilt, got).find("unknown bits"), std::string::npos) << bit;
  }
  // Each group's flag without its bytes.
  const Bytes plain = encoded(ReflectionMessage{});
  for (const unsigned bit : {0U, 1U, 2U}) {
    Bytes spoilt = plain;
    spoilt[10] = static_cast<std::uint8_t>(spoilt[10] | (1U << bit));
    EXPECT_NE(decode(spoilt, got).find("cut short"), std::string::npos) << bit;
  }
}

// ---- sealing ----

Key key_of(std::uint8_t first) {
  Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(first + i);
  return key;
}

constexpr std::uint32_t kSession = 0xA1B2C3D4U;

// A sender and receiver of increments under one key, and the plain payload sent.
class TeleopDatagramSealing : public ::testing::Test {
 protected:
  Bytes seal(std::uint32_t sequence) {
    IncrementMessage m;
    m.sequence = sequence;
    m.motion[0] = 1e-3F * static_cast<float>(sequence);
    Bytes payload = encoded(m);
    Bytes out(kMaxDatagram);
    out.resize(sealer_.seal(payload, out));
    return out;
  }
  // Opens `datagram`; the payload if it opened.
  std::optional<Bytes> open(const Bytes& datagram) { return open_with(opener_, datagram); }
  static std::optional<Bytes> open_with(Opener& opener, const Bytes& datagram) {
    Bytes plain(kMaxDatagram);
    const auto size = opener.open(datagram, plain);
    if (!size) return {};
    plain.resize(*size);
    return plain;
  }
  static std::uint64_t dropped(const Opener& o) {
    const DropCounters& d = o.drops();
    return d.malformed + d.forged + d.replayed + d.invalid;
  }

  Key key_ = key_of(1);
  Sealer sealer_{Kind::kIncrement, kSession, key_};
  Opener opener_{Kind::kIncrement, kSession, key_};
};

TEST_F(TeleopDatagramSealing, AnAuthenticDatagramOpensToItsPayloadWithItsHeaderInTheClear) {
  const Bytes datagram = seal(42);
  ASSERT_EQ(datagram.size(), kHeaderBytes + 60 + kTagBytes);
  EXPECT_EQ(datagram[0], kVersion << 4 | 1);
  EXPECT_EQ(session_of(datagram), kSession);
  std::uint32_t counter = 0;
  std::memcpy(&counter, datagram.data() + 5, 4);
  EXPECT_EQ(counter, 1U);
  EXPECT_EQ(sealer_.counter(), 1U);
  const auto plain = open(datagram);
  ASSERT_TRUE(plain);
  IncrementMessage got;
  ASSERT_EQ(decode(*plain, got), "");
  EXPECT_EQ(got.sequence, 42U);
  EXPECT_EQ(opener_.accepted(), 1U);
  EXPECT_EQ(dropped(opener_), 0U);
  // The payload is encrypted: the plain bytes do not appear after the header.
  EXPECT_FALSE(std::equal(plain->begin(), plain->end(), datagram.begin() + kHeaderBytes));
}

TEST_F(TeleopDatagramSealing, EverySingleBitFlipIsDroppedAndCountedAsMalformedOrForged) {
  seal(1);
  seal(2);
  // Counter 3: no flip of it gives 0 (refused before authentication as a replay).
  const Bytes datagram = seal(3);
  std::uint64_t malformed = 0;
  std::uint64_t forged = 0;
  for (std::size_t bit = 0; bit < datagram.size() * 8; ++bit) {
    Bytes flipped = datagram;
    flipped[bit / 8] = static_cast<std::uint8_t>(flipped[bit / 8] ^ (1U << (bit % 8)));
    ASSERT_FALSE(open(flipped)) << "bit " << bit;
    // Version, kind and session (bytes 0-4) are checked before authentication; the counter
    // (authenticated as associated data), the ciphertext and the tag fail authentication.
    if (bit < 5 * 8) {
      ++malformed;
    } else {
      ++forged;
    }
    ASSERT_EQ(opener_.drops().malformed, malformed) << "bit " << bit;
    ASSERT_EQ(opener_.drops().forged, forged) << "bit " << bit;
  }
  EXPECT_EQ(opener_.drops().replayed, 0U);
  EXPECT_EQ(opener_.accepted(), 0U);
  // None of them moved the window: the authentic one opens after all of them.
  EXPECT_TRUE(open(datagram));
}

TEST_F(TeleopDatagramSealing, TruncatedExtendedAndOversizedDatagramsAreDropped) {
  const Bytes datagram = seal(1);
  for (std::size_t n = 0; n < datagram.size(); ++n) {
    const Bytes cut(datagram.begin(), datagram.begin() + static_cast<std::ptrdiff_t>(n));
    const std::uint64_t before = dropped(opener_);
    ASSERT_FALSE(open(cut)) << n;
    EXPECT_EQ(dropped(opener_), before + 1);
  }
  // Shorter than header and tag: not even a datagram; longer: the tag is not where it was.
  EXPECT_EQ(opener_.drops().malformed, kHeaderBytes + kTagBytes);
  EXPECT_EQ(opener_.drops().forged, datagram.size() - kHeaderBytes - kTagBytes);
  Bytes longer = datagram;
  longer.push_back(0);
  EXPECT_FALSE(open(longer));
  // Beyond an increment's limit: refused by the increment opener, though a video datagram
  // (up to kMaxVideoDatagram) may be that long; beyond any kind's: not a datagram of ours.
  Bytes huge = datagram;
  huge.resize(kMaxDatagram + 1);
  EXPECT_FALSE(open(huge));
  EXPECT_TRUE(session_of(huge));
  huge.resize(kMaxVideoDatagram + 1);
  EXPECT_FALSE(session_of(huge));
  EXPECT_EQ(opener_.accepted(), 0U);
  EXPECT_TRUE(open(datagram));
}

TEST_F(TeleopDatagramSealing, ADatagramSealedUnderAnotherKeyIsForged) {
  Sealer other(Kind::kIncrement, kSession, key_of(2));
  IncrementMessage m;
  m.sequence = 1;
  const Bytes payload = encoded(m);
  for (int k = 0; k < 10; ++k) {
    Bytes out(kMaxDatagram);
    out.resize(other.seal(payload, out));
    EXPECT_FALSE(open(out));
  }
  EXPECT_EQ(opener_.drops().forged, 10U);
  EXPECT_EQ(opener_.accepted(), 0U);
}

TEST_F(TeleopDatagramSealing, AnotherSessionsOrTheOtherKindsDatagramIsMalformed) {
  IncrementMessage m;
  m.sequence = 1;
  const Bytes payload = encoded(m);
  Sealer other_session(Kind::kIncrement, kSession + 1, key_);
  Sealer reflection(Kind::kReflection, kSession, key_);
  for (Sealer* s : {&other_session, &reflection}) {
    Bytes out(kMaxDatagram);
    out.resize(s->seal(payload, out));
    EXPECT_FALSE(open(out));
  }
  EXPECT_EQ(opener_.drops().malformed, 2U);
  // A wrong version is not ours at all.
  Bytes wrong_version = seal(1);
  wrong_version[0] = static_cast<std::uint8_t>(2 << 4 | 1);
  EXPECT_FALSE(session_of(wrong_version));
  EXPECT_FALSE(open(wrong_version));
  EXPECT_EQ(opener_.drops().malformed, 3U);
}

TEST_F(TeleopDatagramSealing, AReplayIsDroppedAndCountedEachTime) {
  const Bytes first = seal(1);
  const Bytes second = seal(2);
  ASSERT_TRUE(open(first));
  ASSERT_TRUE(open(second));
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(open(first));
    EXPECT_FALSE(open(second));
  }
  EXPECT_EQ(opener_.drops().replayed, 6U);
  EXPECT_EQ(opener_.accepted(), 2U);
}

TEST_F(TeleopDatagramSealing, ReorderingWithinTheWindowIsAcceptedExactlyOnce) {
  std::mt19937 rng(99);
  std::vector<Bytes> sent;
  for (std::uint32_t n = 1; n <= 2000; ++n) sent.push_back(seal(n));
  // A path that reorders: each datagram displaced by less than the window, some duplicated.
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const double jitter = std::uniform_real_distribution<double>(0.0, kReplayWindow - 2)(rng);
    order.emplace_back(static_cast<double>(i) + jitter, i);
    if (rng() % 10 == 0) order.emplace_back(static_cast<double>(i) + 3 * jitter, i);
  }
  std::sort(order.begin(), order.end());
  std::set<std::size_t> opened;
  std::size_t duplicates = 0;
  for (const auto& [when, i] : order) {
    const auto plain = open(sent[i]);
    if (opened.count(i) != 0) {
      ++duplicates;
      EXPECT_FALSE(plain) << i;
    } else if (plain) {
      opened.insert(i);
    }
  }
  EXPECT_EQ(opened.size(), sent.size());
  EXPECT_EQ(opener_.accepted(), sent.size());
  // A duplicate displaced beyond the window is counted as a replay all the same.
  EXPECT_EQ(opener_.drops().replayed, order.size() - sent.size());
  EXPECT_GT(duplicates, 100U);
  EXPECT_EQ(opener_.drops().forged + opener_.drops().malformed, 0U);
}

TEST_F(TeleopDatagramSealing, OnlyTheNewestAcceptedDatagramSaysItIsTheNewest) {
  const Bytes first = seal(1), second = seal(2), third = seal(3);
  ASSERT_TRUE(open(first));
  EXPECT_TRUE(opener_.newest());
  ASSERT_TRUE(open(third));
  EXPECT_TRUE(opener_.newest());
  // Older, but inside the window: accepted (a reordering path), and not the newest.
  ASSERT_TRUE(open(second));
  EXPECT_FALSE(opener_.newest());
}

TEST_F(TeleopDatagramSealing, DatagramsOlderThanTheWindowAreDropped) {
  std::vector<Bytes> sent;
  for (std::uint32_t n = 1; n <= kReplayWindow + 1; ++n) sent.push_back(seal(n));
  ASSERT_TRUE(open(sent.back()));  // counter 65
  // Counter 1 is 64 behind the newest: outside the window of 64 (0 … 63 behind).
  EXPECT_FALSE(open(sent[0]));
  EXPECT_EQ(opener_.drops().replayed, 1U);
  // Counter 2, 63 behind: still inside, once.
  EXPECT_TRUE(open(sent[1]));
  EXPECT_FALSE(open(sent[1]));
  // Far ahead: everything of the old window is now too late.
  for (std::uint32_t n = kReplayWindow + 2; n <= 400; ++n) sent.push_back(seal(n));
  ASSERT_TRUE(open(sent.back()));
  for (std::size_t i = 2; i < sent.size() - kReplayWindow; ++i) EXPECT_FALSE(open(sent[i])) << i;
  EXPECT_TRUE(open(sent[sent.size() - 2]));
}

TEST_F(TeleopDatagramSealing, AForgedDatagramWithAHugeCounterDoesNotMoveTheWindow) {
  const Bytes first = seal(1);
  ASSERT_TRUE(open(first));
  const Bytes second = seal(2);
  for (const std::uint32_t counter : {0xFFFFFFFFU, 0x80000000U, 1000U, 66U}) {
    Bytes forged = second;
    std::memcpy(forged.data() + 5, &counter, 4);
    EXPECT_FALSE(open(forged)) << counter;
  }
  EXPECT_EQ(opener_.drops().forged, 4U);
  // Had the window followed the forged counters, this one would be "too old".
  EXPECT_TRUE(open(second));
  EXPECT_TRUE(open(seal(3)));
}

TEST_F(TeleopDatagramSealing, OpeningIntoTooSmallABufferAndSealingWhatDoesNotFitAreRefused) {
  const Bytes datagram = seal(1);
  std::array<std::uint8_t, 10> small{};
  EXPECT_FALSE(opener_.open(datagram, small));
  EXPECT_EQ(opener_.drops().malformed, 1U);
  EXPECT_TRUE(open(datagram));  // the refusal did not count it as seen
  const Bytes too_big(kMaxDatagram - kHeaderBytes - kTagBytes + 1, 0);
  Bytes out(2 * kMaxDatagram);
  EXPECT_EQ(sealer_.seal(too_big, out), 0U);
  Bytes tight(kHeaderBytes + 10 + kTagBytes - 1);
  EXPECT_EQ(sealer_.seal(Bytes(10, 0), tight), 0U);
  EXPECT_EQ(sealer_.counter(), 1U);  // no counter spent on a refusal
  const Bytes largest(kMaxDatagram - kHeaderBytes - kTagBytes, 7);
  out.resize(sealer_.seal(largest, out));
  ASSERT_EQ(out.size(), kMaxDatagram);
  const auto plain = open(out);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, largest);
}

// ---- session keys ----

TEST(TeleopDatagramKeys, FreshKeysRoundTripThroughTheirText) {
  const SessionKeys a = make_session_keys();
  const SessionKeys b = make_session_keys();
  EXPECT_NE(a.session, 0U);
  EXPECT_NE(a.ground_to_remote, a.remote_to_ground);
  EXPECT_NE(a.ground_to_remote, b.ground_to_remote);
  const std::string text = to_text(a);
  ASSERT_EQ(text.size(), 8U + 1 + 64 + 1 + 64);
  const auto back = keys_from_text(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->session, a.session);
  EXPECT_EQ(back->ground_to_remote, a.ground_to_remote);
  EXPECT_EQ(back->remote_to_ground, a.remote_to_ground);
  // Known bytes: the session id is its little-endian bytes in order.
  SessionKeys known;
  known.session = 0x04030201U;
  known.ground_to_remote = key_of(0);
  known.remote_to_ground = key_of(0xE0);
  EXPECT_EQ(to_text(known).substr(0, 12), "01020304:000");
  EXPECT_EQ(to_text(known).substr(to_text(known).size() - 4), "feff");
}

TEST(TeleopDatagramKeys, KeysFromTextRefusesAnythingElse) {
  const std::string good = to_text(make_session_keys());
  ASSERT_TRUE(keys_from_text(good));
  std::vector<std::string> bad = {"",         good.substr(1), good + "0",
                                  good + " ", " " + good,     good.substr(0, 73)};
  std::string upper = good;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper != good) bad.push_back(upper);
  for (const std::size_t at :
       {std::size_t{0}, std::size_t{8}, std::size_t{40}, std::size_t{73}, std::size_t{137}}) {
    for (const char c : {'g', 'G', ':', '-', ' ', '\0'}) {
      std::string spoilt = good;
      if (spoilt[at] == c) continue;
      spoilt[at] = c;
      bad.push_back(spoilt);
    }
  }
  std::string zero_session = good;
  zero_session.replace(0, 8, "00000000");
  bad.push_back(zero_session);
  for (const std::string& text : bad) {
    EXPECT_FALSE(keys_from_text(text)) << "'" << text << "'";
  }
}

// ---- concealment ----

// A ground that numbers samples from 1 and sends each with its segment's running sum; the
// segment restarts when the enabling switch or the mode changes.
struct Ground {
  struct Sample {
    IncrementMessage message;
    std::array<double, 7> own{};
    int segment = 0;
  };
  std::vector<Sample> run(std::mt19937& rng, std::uint32_t count, double switch_probability) {
    std::vector<Sample> out;
    std::array<double, 7> sum{};
    std::uint32_t length = 0;
    bool deadman = true;
    std::uint8_t mode = 1;
    int segment = 0;
    std::bernoulli_distribution change(switch_probability);
    std::uniform_real_distribution<double> motion(-1e-3, 1e-3);
    for (std::uint32_t n = 1; n <= count; ++n) {
      if (n > 1 && change(rng)) {
        if (rng() % 2 == 0) {
          deadman = !deadman;
        } else {
          mode = static_cast<std::uint8_t>(1 + (mode % 3));
        }
        ++segment;
        sum.fill(0.0);
        length = 0;
      }
      Sample s;
      for (double& v : s.own) v = motion(rng);
      for (std::size_t i = 0; i < 7; ++i) sum[i] += s.own[i];
      ++length;
      s.segment = segment;
      IncrementMessage& m = s.message;
      m.sequence = n;
      m.deadman = deadman;
      m.mode = mode;
      m.segment_length = static_cast<std::uint16_t>(std::min<std::uint32_t>(length, 0xFFFF));
      for (std::size_t i = 0; i < 7; ++i) m.motion[i] = static_cast<float>(sum[i]);
      out.push_back(s);
    }
    return out;
  }
};

// What the receiver made of a run: each number's motion as emitted, once.
struct Received {
  std::vector<std::array<double, 7>> motion;  // by number (index 0 unused)
  std::vector<int> times;                     // how often each number was emitted
  std::uint64_t concealed_flags = 0;
};

Received receive(const std::vector<Ground::Sample>& sent, const std::vector<bool>& arrives,
                 IncrementAssembler& assembler) {
  Received r;
  r.motion.resize(sent.size() + 1);
  r.times.resize(sent.size() + 1);
  std::array<ConcealedSample, 512> out{};
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    if (!arrives[i]) continue;
    // Through the wire, as the receiver sees it.
    IncrementMessage m;
    EXPECT_EQ(decode(encoded(sent[i].message), m), "");
    const std::size_t count = assembler.take(m, out);
    EXPECT_LE(count, m.sequence - previous);
    for (std::size_t j = 0; j < count; ++j) {
      const ConcealedSample& c = out[j];
      EXPECT_GT(c.sequence, previous);  // in order, each once
      previous = c.sequence;
      ++r.times[c.sequence];
      r.motion[c.sequence] = c.motion;
      if (c.concealed) ++r.concealed_flags;
    }
    if (count > 0) {
      EXPECT_EQ(previous, m.sequence);
    }
  }
  return r;
}

TEST(IncrementAssembler, WithoutLossEachDatagramYieldsItsOwnNumberAndItsOwnMotion) {
  std::mt19937 rng(1);
  const auto sent = Ground{}.run(rng, 3000, 0.01);
  IncrementAssembler assembler;
  const Received r = receive(sent, std::vector<bool>(sent.size(), true), assembler);
  for (std::size_t n = 1; n <= sent.size(); ++n) {
    ASSERT_EQ(r.times[n], 1) << n;
    for (std::size_t i = 0; i < 7; ++i) {
      // The difference of two float32 sums: float32's resolution at the sum's magnitude.
      EXPECT_NEAR(r.motion[n][i], sent[n - 1].own[i], 1e-7) << n << " " << i;
    }
  }
  EXPECT_EQ(r.concealed_flags, 0U);
  EXPECT_EQ(assembler.concealed(), 0U);
  EXPECT_EQ(assembler.last_taken(), sent.size());
}

// Each segment's emitted numbers run from its start to its last datagram received and carry
// its motion summed to there; a segment none of whose datagrams arrived is lost whole.
// Returns the numbers left out.
std::size_t expect_segments_recovered(const std::vector<Ground::Sample>& sent,
                                      const std::vector<bool>& arrives, const Received& r,
                                      const IncrementAssembler& assembler) {
  std::uint64_t expected_concealed = 0;
  std::size_t begin = 0;
  std::size_t lost_numbers = 0;
  while (begin < sent.size()) {
    std::size_t end = begin;
    while (end < sent.size() && sent[end].segment == sent[begin].segment) ++end;
    std::size_t last = end;  // index of the last received in [begin, end)
    std::size_t received = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (arrives[i]) {
        last = i;
        ++received;
      }
    }
    std::array<double, 7> applied{};
    std::array<double, 7> moved{};  // by the hand, up to the last received
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t n = i + 1;
      const bool covered = last != end && i <= last;
      EXPECT_EQ(r.times[n], covered ? 1 : 0) << "number " << n;
      if (!covered) {
        ++lost_numbers;
        continue;
      }
      for (std::size_t k = 0; k < 7; ++k) {
        applied[k] += r.motion[n][k];
        moved[k] += sent[i].own[k];
      }
    }
    if (last != end) {
      expected_concealed += (last - begin + 1) - received;
      for (std::size_t k = 0; k < 7; ++k) {
        // The segment's sum as the last datagram carried it, in float32.
        EXPECT_NEAR(applied[k], sent[last].message.motion[k], 1e-9);
        EXPECT_NEAR(applied[k], moved[k], 1e-6 + 1e-6 * std::abs(moved[k]));
      }
    }
    begin = end;
  }
  EXPECT_EQ(r.concealed_flags, expected_concealed);
  EXPECT_EQ(assembler.concealed(), expected_concealed);
  EXPECT_GT(expected_concealed, 0U);
  return lost_numbers;
}

TEST(IncrementAssembler,
     UnderBernoulliLossEachSegmentsMotionArrivesOnceAndLostNumbersAreConcealed) {
  for (const double loss : {0.01, 0.1, 0.5, 0.9}) {
    SCOPED_TRACE(loss);
    std::mt19937 rng(static_cast<unsigned>(loss * 1000));
    const auto sent = Ground{}.run(rng, 20000, 0.005);
    std::bernoulli_distribution lost(loss);
    std::vector<bool> arrives(sent.size());
    for (std::size_t i = 0; i < sent.size(); ++i) arrives[i] = !lost(rng);
    IncrementAssembler assembler;
    const Received r = receive(sent, arrives, assembler);
    const std::size_t left_out = expect_segments_recovered(sent, arrives, r, assembler);
    // At 1 % a segment's tail may well arrive every time; beyond, gaps cross boundaries.
    if (loss >= 0.1) {
      EXPECT_GT(left_out, 0U);
    }
  }
}

TEST(IncrementAssembler, UnderBurstyLossEachSegmentsMotionArrivesOnceAndLostNumbersAreConcealed) {
  // Gilbert–Elliott: a good state that loses 1 %, a bad one that loses 95 %, mean bursts of
  // 20 (the longest far below the 512 samples a datagram may complete).
  std::mt19937 rng(4242);
  const auto sent = Ground{}.run(rng, 30000, 0.003);
  std::bernoulli_distribution enter_bad(0.01);
  std::bernoulli_distribution leave_bad(0.05);
  std::bernoulli_distribution lose_good(0.01);
  std::bernoulli_distribution lose_bad(0.95);
  std::vector<bool> arrives(sent.size());
  bool bad = false;
  std::size_t longest = 0;
  std::size_t run = 0;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    bad = bad ? !leave_bad(rng) : enter_bad(rng);
    arrives[i] = !(bad ? lose_bad(rng) : lose_good(rng));
    run = arrives[i] ? 0 : run + 1;
    longest = std::max(longest, run);
  }
  ASSERT_GT(longest, 40U);
  ASSERT_LT(longest, 512U);
  IncrementAssembler assembler;
  const Received r = receive(sent, arrives, assembler);
  EXPECT_GT(expect_segments_recovered(sent, arrives, r, assembler), 0U);
}

IncrementMessage increment(std::uint32_t sequence, std::uint16_t segment_length, float sum,
                           std::uint8_t pieces = 1) {
  IncrementMessage m;
  m.sequence = sequence;
  m.pieces = pieces;
  m.segment_length = segment_length;
  m.deadman = true;
  m.mode = 1;
  m.motion.fill(sum);
  return m;
}

TEST(IncrementAssembler, AGapCrossingADeadmanOrModeChangeLeavesTheOlderSegmentsNumbersOut) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  // Segment 1 … 10 (sums of 1 per number); 1 … 5 arrive.
  for (std::uint32_t n = 1; n <= 5; ++n) {
    ASSERT_EQ(a.take(increment(n, static_cast<std::uint16_t>(n), static_cast<float>(n)), out), 1U);
  }
  // 6 … 12 are lost; the switch was released at 11, so 13 is the third of a new segment.
  IncrementMessage m = increment(13, 3, 6.0F);
  m.deadman = false;
  ASSERT_EQ(a.take(m, out), 3U);
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(out[j].sequence, 11 + j);  // 6 … 10 left out: lost, not concealed
    EXPECT_EQ(out[j].concealed, j < 2);
    EXPECT_DOUBLE_EQ(out[j].motion[0], 2.0);  // the new segment's 6 over its 3 numbers
  }
  EXPECT_EQ(a.concealed(), 2U);
  // A mode change at 20 (14 … 21 lost): 22 recovers 20 and 21 only.
  m = increment(22, 3, 3.0F);
  m.mode = 2;
  ASSERT_EQ(a.take(m, out), 3U);
  EXPECT_EQ(out[0].sequence, 20U);
  EXPECT_DOUBLE_EQ(out[0].motion[3], 1.0);
  EXPECT_EQ(a.concealed(), 4U);
  EXPECT_EQ(a.last_taken(), 22U);
}

TEST(IncrementAssembler, LateAndDuplicatedDatagramsYieldNothing) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  ASSERT_EQ(a.take(increment(1, 1, 1.0F), out), 1U);
  ASSERT_EQ(a.take(increment(4, 4, 4.0F), out), 3U);  // 2 and 3 concealed
  for (const std::uint32_t late : {1U, 2U, 3U, 4U}) {
    EXPECT_EQ(a.take(increment(late, static_cast<std::uint16_t>(late), 1.0F), out), 0U) << late;
  }
  EXPECT_EQ(a.last_taken(), 4U);
  EXPECT_EQ(a.concealed(), 2U);
  // The next one still takes only its own difference: the late ones moved no sum.
  ASSERT_EQ(a.take(increment(5, 5, 5.0F), out), 1U);
  EXPECT_DOUBLE_EQ(out[0].motion[0], 1.0);
  // Nothing for an empty output either.
  EXPECT_EQ(a.take(increment(6, 6, 6.0F), std::span<ConcealedSample>()), 0U);
}

TEST(IncrementAssembler, PiecesOfALateSampleAreItsOwnAndNotCountedConcealed) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  ASSERT_EQ(a.take(increment(1, 1, 1.0F), out), 1U);
  // A sample late by two periods goes as 3 pieces: 2, 3 and 4 are its own.
  ASSERT_EQ(a.take(increment(4, 4, 4.0F, 3), out), 3U);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_FALSE(out[j].concealed);
  EXPECT_EQ(a.concealed(), 0U);
  // 5 is lost; 8 in 3 pieces (6 … 8): 5 concealed, 6 … 8 its own.
  ASSERT_EQ(a.take(increment(8, 8, 8.0F, 3), out), 4U);
  EXPECT_EQ(out[0].sequence, 5U);
  EXPECT_TRUE(out[0].concealed);
  for (std::size_t j = 1; j < 4; ++j) EXPECT_FALSE(out[j].concealed);
  EXPECT_EQ(a.concealed(), 1U);
}

TEST(IncrementAssembler, NumbersTakenElsewhereAreNotTakenAgainAndTheNextSegmentStartsAfresh) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  ASSERT_EQ(a.take(increment(3, 3, 3.0F), out), 3U);
  // 4 … 10 came on the stream.
  a.taken_elsewhere(10);
  EXPECT_EQ(a.last_taken(), 10U);
  a.taken_elsewhere(7);  // older: changes nothing
  EXPECT_EQ(a.last_taken(), 10U);
  EXPECT_EQ(a.take(increment(9, 9, 9.0F), out), 0U);
  // The ground's next datagram begins a segment at 11; 11 and 12 are lost.
  ASSERT_EQ(a.take(increment(13, 3, 0.3F), out), 3U);
  EXPECT_EQ(out[0].sequence, 11U);
  EXPECT_NEAR(out[0].motion[0], 0.1, 1e-7);
  EXPECT_EQ(a.concealed(), 2U + 2U);  // 1 and 2, recovered by the first datagram
  ASSERT_EQ(a.take(increment(14, 4, 0.5F), out), 1U);
  EXPECT_NEAR(out[0].motion[0], 0.2, 1e-7);
}

TEST(IncrementAssembler, SumsItCannotCompareMoveNothingAndNeverRepeatANumber) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  ASSERT_EQ(a.take(increment(5, 5, 5.0F), out), 5U);
  a.taken_elsewhere(10);
  // A peer that breaks the rule: after the stream took 10, a datagram whose segment began at
  // 3 and whose 4 pieces (9 … 12) overlap what was taken. Its sum is not comparable with any
  // taken, so it moves nothing, and 9 and 10 are not handed over a second time.
  const std::size_t count = a.take(increment(12, 10, 12.0F, 4), out);
  ASSERT_EQ(count, 2U);
  EXPECT_EQ(out[0].sequence, 11U);
  EXPECT_EQ(out[1].sequence, 12U);
  for (std::size_t j = 0; j < count; ++j) {
    EXPECT_FALSE(out[j].concealed);
    EXPECT_EQ(out[j].motion[0], 0.0);
  }
  EXPECT_EQ(a.last_taken(), 12U);
}

TEST(IncrementAssembler, AGapLongerThanTheOutputKeepsOnlyTheNewestNumbers) {
  std::array<ConcealedSample, 8> out{};
  IncrementAssembler a;
  ASSERT_EQ(a.take(increment(1, 1, 1.0F), out), 1U);
  ASSERT_EQ(a.take(increment(21, 21, 21.0F), out), 8U);
  EXPECT_EQ(out[0].sequence, 14U);
  EXPECT_EQ(out[7].sequence, 21U);
  EXPECT_DOUBLE_EQ(out[0].motion[0], 1.0);  // an even share of all 20, not more
  EXPECT_EQ(a.last_taken(), 21U);
}

TEST(IncrementAssembler, ASaturatedSegmentLengthStillComparesItsSums) {
  std::array<ConcealedSample, 64> out{};
  IncrementAssembler a;
  // A segment longer than 65535 numbers: from there on its length saturates.
  ASSERT_EQ(a.take(increment(70000, 65535, 100.0F), out), 64U);
  ASSERT_EQ(a.take(increment(70003, 65535, 103.0F), out), 3U);  // 70001, 70002 lost
  EXPECT_DOUBLE_EQ(out[0].motion[0], 1.0);
  EXPECT_TRUE(out[0].concealed);
  EXPECT_FALSE(out[2].concealed);
}

}  // namespace
}  // namespace tether::datagram

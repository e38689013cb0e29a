// The teleoperation data plane as a remote or ground site receives it from anyone on the
// path (tether/datagram/teleop_datagram.h):
//  - raw bytes decoded as either payload: refused with a message or, if accepted, encoded
//    back to the very same bytes;
//  - raw bytes opened under fixed keys (the seed corpus holds datagrams sealed under them
//    to the wire format with Python's AESGCM): what opens is the bytes less header and tag, opens
//    once (a second time it is a replay), and every datagram is counted once, accepted or dropped;
//  - a datagram sealed from part of the input, then mutated by the input: it opens to its
//    payload exactly when no byte changed;
//  - the increment assembler fed decoded increments the input numbers: never a number twice
//    or out of order, never more than the datagram's span, concealment counted as flagged.
// A violated invariant aborts.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tether/datagram/teleop_datagram.h"

namespace {

using namespace tether::datagram;

// The corpus's keys: session 01020304 (little-endian bytes 04 03 02 01), ground → remote
// 00 01 … 1f, remote → ground 80 81 … 9f.
constexpr std::uint32_t kSession = 0x01020304U;

Key key_from(std::uint8_t first) {
  Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(first + i);
  return key;
}

void require(bool condition) {
  if (!condition) std::abort();
}

std::uint64_t dropped(const Opener& o) {
  const DropCounters& d = o.drops();
  return d.malformed + d.forged + d.replayed + d.invalid;
}

template <typename M>
void decode_raw(std::span<const std::uint8_t> bytes) {
  M m;
  if (!decode(bytes, m).empty()) return;
  std::array<std::uint8_t, kMaxDatagram> again{};
  const std::size_t size = encode(m, again);
  require(size == bytes.size() && std::equal(bytes.begin(), bytes.end(), again.begin()));
}

template <typename M>
void open_raw(Kind kind, const Key& key, std::span<const std::uint8_t> bytes) {
  Opener opener(kind, kSession, key);
  std::array<std::uint8_t, kMaxDatagram> plain{};
  const auto size = opener.open(bytes, plain);
  require(opener.accepted() + dropped(opener) == 1);
  if (!size) return;
  require(*size + kHeaderBytes + kTagBytes == bytes.size());
  require(session_of(bytes) == kSession);
  M m;
  (void)decode(std::span(plain.data(), *size), m);
  require(!opener.open(bytes, plain));
  require(opener.drops().replayed == 1);
}

void seal_and_mutate(FuzzedDataProvider& in) {
  static const Key key = key_from(0x00);
  const std::vector<std::uint8_t> payload = in.ConsumeBytes<std::uint8_t>(
      in.ConsumeIntegralInRange<std::size_t>(0, kMaxDatagram - kHeaderBytes - kTagBytes));
  Sealer sealer(Kind::kIncrement, kSession, key);
  // A few datagrams sealed first: the mutated one is not always counter 1.
  const int before = in.ConsumeIntegralInRange<int>(0, 3);
  std::vector<std::uint8_t> datagram(kMaxDatagram);
  for (int k = 0; k <= before; ++k) {
    datagram.resize(kMaxDatagram);
    datagram.resize(sealer.seal(payload, datagram));
    require(datagram.size() == payload.size() + kHeaderBytes + kTagBytes);
  }
  const std::vector<std::uint8_t> original = datagram;
  const int mutations = in.ConsumeIntegralInRange<int>(0, 4);
  for (int k = 0; k < mutations && !datagram.empty(); ++k) {
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0: {
        const std::size_t at = in.ConsumeIntegralInRange<std::size_t>(0, datagram.size() - 1);
        datagram[at] = static_cast<std::uint8_t>(datagram[at] ^ in.ConsumeIntegral<std::uint8_t>());
        break;
      }
      case 1:
        datagram.resize(in.ConsumeIntegralInRange<std::size_t>(0, datagram.size()));
        break;
      default:
        datagram.push_back(in.ConsumeIntegral<std::uint8_t>());
        break;
    }
  }
  Opener opener(Kind::kIncrement, kSession, key);
  std::array<std::uint8_t, kMaxDatagram> plain{};
  const auto size = opener.open(datagram, plain);
  require(opener.accepted() + dropped(opener) == 1);
  if (datagram == original) {
    require(size && *size == payload.size() &&
            std::equal(payload.begin(), payload.end(), plain.begin()));
  } else {
    require(!size);
  }
}

void assemble(FuzzedDataProvider& in) {
  IncrementAssembler assembler;
  std::array<ConcealedSample, 512> out{};
  std::uint64_t newest = 0;    // the newest number emitted (or taken elsewhere)
  std::uint32_t sequence = 0;  // the ground's numbering, wandering back and forth
  while (in.remaining_bytes() > 0) {
    if (in.ConsumeProbability<float>() < 0.05F) {
      const std::uint64_t elsewhere = sequence + in.ConsumeIntegralInRange<std::uint32_t>(0, 8);
      assembler.taken_elsewhere(elsewhere);
      newest = std::max(newest, elsewhere);
      require(assembler.last_taken() == newest);
      continue;
    }
    const std::int64_t step = in.ConsumeIntegralInRange<std::int64_t>(-70, 700);
    sequence = static_cast<std::uint32_t>(
        std::clamp<std::int64_t>(std::int64_t{sequence} + step, 1, 0xFFFFFFF0LL));
    IncrementMessage m;
    m.sequence = sequence;
    m.pieces = static_cast<std::uint8_t>(
        in.ConsumeIntegralInRange<std::uint32_t>(1, std::min<std::uint32_t>(64, sequence)));
    m.segment_length = static_cast<std::uint16_t>(in.ConsumeIntegralInRange<std::uint32_t>(
        m.pieces, std::min<std::uint32_t>(0xFFFF, sequence)));
    m.deadman = in.ConsumeBool();
    m.mode = in.ConsumeIntegralInRange<std::uint8_t>(0, 3);
    for (float& v : m.motion) v = in.ConsumeFloatingPointInRange<float>(-100.0F, 100.0F);
    // Through the wire, as a receiver sees it: in range, it must decode.
    std::array<std::uint8_t, kMaxDatagram> bytes{};
    const std::size_t size = encode(m, bytes);
    IncrementMessage got;
    require(size != 0 && decode(std::span(bytes.data(), size), got).empty());

    const std::uint64_t last = assembler.last_taken();
    const std::uint64_t concealed = assembler.concealed();
    const std::size_t count = assembler.take(got, out);
    const std::uint64_t own_first = std::uint64_t{got.sequence} - got.pieces + 1;
    require(count <= out.size());
    if (got.sequence <= last) {
      require(count == 0 && assembler.last_taken() == last);
      continue;
    }
    require(count >= 1 && count <= got.sequence - last);
    std::uint64_t flagged = 0;
    for (std::size_t j = 0; j < count; ++j) {
      const ConcealedSample& c = out[j];
      require(c.sequence > newest);  // never twice, always in order
      newest = c.sequence;
      require(!c.concealed || c.sequence < own_first);
      if (c.concealed) ++flagged;
      for (const double v : c.motion) require(std::isfinite(v));
    }
    require(newest == got.sequence && assembler.last_taken() == got.sequence);
    require(assembler.concealed() == concealed + flagged);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Key ground_to_remote = key_from(0x00);
  static const Key remote_to_ground = key_from(0x80);
  const std::span<const std::uint8_t> bytes(data, size);
  decode_raw<IncrementMessage>(bytes);
  decode_raw<ReflectionMessage>(bytes);
  open_raw<IncrementMessage>(Kind::kIncrement, ground_to_remote, bytes);
  open_raw<ReflectionMessage>(Kind::kReflection, remote_to_ground, bytes);
  FuzzedDataProvider in(data, size);
  seal_and_mutate(in);
  assemble(in);
  return 0;
}

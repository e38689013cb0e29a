// The MAC runs in the 1 kHz control cycle, which must neither allocate nor throw. OpenSSL 3's
// EVP digest and MAC contexts (EVP_MD_CTX, EVP_MAC_CTX, and HMAC(), which makes one per
// call) live on the heap, so the HMAC here is built on the low-level SHA256_CTX, a plain
// struct that is copied by value. Those functions are deprecated in OpenSSL 3; this
// suppresses the warnings for this file only (it must precede every OpenSSL header).
#define OPENSSL_SUPPRESS_DEPRECATED

#include "tether/remote/arm_link/protocol.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace tether::remote::arm_link {
namespace {

static_assert(sizeof(SHA256_CTX) <= LinkKey::kStateBytes,
              "LinkKey::kStateBytes must hold OpenSSL's SHA256_CTX");
static_assert(std::is_trivially_copyable_v<SHA256_CTX>);

constexpr std::size_t kBlockSize = 64;  // SHA-256 block [bytes]
constexpr std::size_t kDigestSize = SHA256_DIGEST_LENGTH;
using Digest = std::array<std::uint8_t, kDigestSize>;

// Explicit little-endian byte order, whatever the host's.
class Writer {
 public:
  explicit Writer(PacketBuffer& buffer) : buffer_(buffer) {}
  void u16(std::uint16_t v) { bytes(v, 2); }
  void u32(std::uint32_t v) { bytes(v, 4); }
  void u64(std::uint64_t v) { bytes(v, 8); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  template <typename Vector>
  void f64s(const Vector& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) f64(v[i]);
  }
  std::size_t size() const { return offset_; }

 private:
  void bytes(std::uint64_t v, int count) {
    for (int i = 0; i < count; ++i) buffer_[offset_++] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  PacketBuffer& buffer_;
  std::size_t offset_ = 0;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint16_t u16() { return static_cast<std::uint16_t>(bytes(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(bytes(4)); }
  std::uint64_t u64() { return bytes(8); }
  double f64() {
    const double v = std::bit_cast<double>(u64());
    finite_ = finite_ && std::isfinite(v);
    return v;
  }
  template <typename Vector>
  void f64s(Vector& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = f64();
  }
  bool all_finite() const { return finite_; }

 private:
  std::uint64_t bytes(int count) {
    std::uint64_t v = 0;
    for (int i = 0; i < count; ++i) v |= static_cast<std::uint64_t>(bytes_[offset_++]) << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
  bool finite_ = true;
};

// ---- HMAC-SHA256 on SHA256_CTX states (RFC 2104) ----

SHA256_CTX load_state(const std::array<std::uint8_t, LinkKey::kStateBytes>& bytes) noexcept {
  SHA256_CTX ctx{};
  std::memcpy(&ctx, bytes.data(), sizeof ctx);
  return ctx;
}

void store_state(const SHA256_CTX& ctx, std::array<std::uint8_t, LinkKey::kStateBytes>& bytes) {
  std::memcpy(bytes.data(), &ctx, sizeof ctx);
}

// The full HMAC of `message` under a ready key.
Digest hmac(const LinkKey& key, std::span<const std::uint8_t> message) noexcept {
  Digest inner{};
  SHA256_CTX ctx = load_state(key.inner);
  SHA256_Update(&ctx, message.data(), message.size());
  SHA256_Final(inner.data(), &ctx);
  Digest digest{};
  ctx = load_state(key.outer);
  SHA256_Update(&ctx, inner.data(), inner.size());
  SHA256_Final(digest.data(), &ctx);
  return digest;
}

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ---- arm model fingerprint ----

class Fnv1a {
 public:
  void byte(std::uint8_t b) {
    hash_ ^= b;
    hash_ *= 0x100000001B3ULL;
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  // Rounded to 1e-9 (see arm_model_id()); a value too large for that (or not finite) as
  // its IEEE bits.
  void number(double v) {
    if (std::isfinite(v) && std::abs(v) < 1e9) {
      u64(static_cast<std::uint64_t>(std::llround(v * 1e9)));
    } else {
      u64(std::bit_cast<std::uint64_t>(v));
    }
  }
  void text(std::string_view s) {
    u64(s.size());
    for (const char c : s) byte(static_cast<std::uint8_t>(c));
  }
  void frame(const Frame& f) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) number(f.R(r, c));
    }
    for (int i = 0; i < 3; ++i) number(f.p[i]);
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xCBF29CE484222325ULL;
};

// ---- packets ----

void write_header(Writer& w, PacketKind kind, std::size_t payload, const LinkIds& ids) {
  w.u32(kMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<std::uint16_t>(kind));
  w.u32(static_cast<std::uint32_t>(payload));
  w.u32(0);
  w.u64(ids.session);
  w.u64(ids.arm_model);
}

std::size_t finish(const Writer& w, const LinkKey& key, PacketBuffer& buffer) noexcept {
  const std::size_t n = w.size();
  const Mac mac = compute_mac(std::span<const std::uint8_t>(buffer.data(), n), key);
  std::copy(mac.begin(), mac.end(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
  return n + kMacSize;
}

std::size_t payload_size(PacketKind kind) {
  return kind == PacketKind::kState ? kStatePayloadSize : kCommandPayloadSize;
}

// Reads and checks the header's framing fields; on success `reader` is positioned at the
// payload and `ids` and `reserved` hold the header's other fields.
DecodeError read_header(std::span<const std::uint8_t> datagram, PacketKind kind, Reader& reader,
                        LinkIds& ids, std::uint32_t& reserved) {
  const std::size_t payload = payload_size(kind);
  if (datagram.size() < kHeaderSize) return DecodeError::kWrongSize;
  if (reader.u32() != kMagic) return DecodeError::kBadMagic;
  if (reader.u16() != kProtocolVersion) return DecodeError::kBadVersion;
  if (reader.u16() != static_cast<std::uint16_t>(kind)) return DecodeError::kWrongKind;
  if (reader.u32() != payload) return DecodeError::kBadPayloadSize;
  reserved = reader.u32();
  ids.session = reader.u64();
  ids.arm_model = reader.u64();
  if (datagram.size() != kHeaderSize + payload + kMacSize) return DecodeError::kWrongSize;
  return DecodeError::kNone;
}

// Checks everything but the payload; on success `reader` is positioned at the payload.
DecodeError check_frame(std::span<const std::uint8_t> datagram, PacketKind kind,
                        const LinkIds& expected, const LinkKey& key, Reader& reader) {
  LinkIds ids;
  std::uint32_t reserved = 0;
  if (const DecodeError e = read_header(datagram, kind, reader, ids, reserved);
      e != DecodeError::kNone) {
    return e;
  }
  if (ids.arm_model != expected.arm_model) return DecodeError::kForeignArm;
  if (ids.session != expected.session) return DecodeError::kWrongSession;
  const std::size_t body = kHeaderSize + payload_size(kind);
  if (!key.ready) return DecodeError::kBadMac;
  const Mac mac = compute_mac(datagram.first(body), key);
  if (CRYPTO_memcmp(mac.data(), datagram.data() + body, kMacSize) != 0) {
    return DecodeError::kBadMac;
  }
  if (reserved != 0) return DecodeError::kBadFlags;
  return DecodeError::kNone;
}

}  // namespace

const char* to_string(DecodeError error) {
  switch (error) {
    case DecodeError::kNone:
      return "ok";
    case DecodeError::kWrongSize:
      return "wrong datagram size";
    case DecodeError::kBadMagic:
      return "bad magic";
    case DecodeError::kBadVersion:
      return "unsupported protocol version";
    case DecodeError::kWrongKind:
      return "wrong packet kind";
    case DecodeError::kBadPayloadSize:
      return "payload size does not match the kind";
    case DecodeError::kForeignArm:
      return "another arm model";
    case DecodeError::kWrongSession:
      return "another session";
    case DecodeError::kBadMac:
      return "MAC mismatch (another key or altered bytes)";
    case DecodeError::kBadFlags:
      return "unknown flags or non-zero reserved bits";
    case DecodeError::kNonFinite:
      return "non-finite value";
  }
  return "unknown";
}

std::uint64_t arm_model_id(const ArmModel& model) noexcept {
  Fnv1a h;
  h.text(model.name);
  h.u64(model.joints.size());
  for (const ArmJoint& joint : model.joints) {
    h.frame(joint.origin);
    for (int i = 0; i < 3; ++i) h.number(joint.axis[i]);
    h.number(joint.limits.lower);
    h.number(joint.limits.upper);
    h.number(joint.limits.velocity);
    h.number(joint.limits.acceleration);
    h.number(joint.limits.effort);
  }
  h.frame(model.tool);
  return h.value();
}

LinkKey make_link_key(std::span<const std::uint8_t> key) noexcept {
  std::array<std::uint8_t, kBlockSize> block{};
  if (key.size() > kBlockSize) {
    SHA256_CTX ctx{};
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, key.data(), key.size());
    SHA256_Final(block.data(), &ctx);
  } else if (!key.empty()) {
    std::memcpy(block.data(), key.data(), key.size());
  }
  LinkKey out;
  std::array<std::uint8_t, kBlockSize> pad{};
  SHA256_CTX ctx{};
  for (std::size_t i = 0; i < kBlockSize; ++i) pad[i] = block[i] ^ 0x36;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad.data(), pad.size());
  store_state(ctx, out.inner);
  for (std::size_t i = 0; i < kBlockSize; ++i) pad[i] = block[i] ^ 0x5C;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad.data(), pad.size());
  store_state(ctx, out.outer);
  OPENSSL_cleanse(block.data(), block.size());
  OPENSSL_cleanse(pad.data(), pad.size());
  out.ready = true;
  return out;
}

LinkSecret make_link_secret(std::span<const std::uint8_t> bytes, const std::string& source) {
  if (bytes.size() < kMinSecretSize) {
    throw std::invalid_argument("arm link key " + source + ": " + std::to_string(bytes.size()) +
                                " bytes, fewer than the minimum of " +
                                std::to_string(kMinSecretSize));
  }
  LinkSecret secret;
  secret.source = source;
  secret.size = bytes.size();
  secret.key = make_link_key(bytes);
  return secret;
}

LinkSecret load_link_secret(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("arm link key file " + path +
                             ": cannot open: " + std::strerror(errno));
  }
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("arm link key file " + path + ": read error");
  if (!bytes.empty() && bytes.back() == '\n') bytes.pop_back();
  if (bytes.size() < kMinSecretSize) {
    const std::size_t size = bytes.size();
    OPENSSL_cleanse(bytes.data(), bytes.size());
    throw std::runtime_error("arm link key file " + path + " holds " + std::to_string(size) +
                             " bytes (less a trailing newline): the minimum is " +
                             std::to_string(kMinSecretSize) +
                             " (make one with: head -c 32 /dev/urandom > " + path + ")");
  }
  LinkSecret secret = make_link_secret(bytes, path);
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return secret;
}

LinkKey derive_session_key(const LinkSecret& secret, std::uint64_t session,
                           std::uint64_t arm_model) noexcept {
  if (!secret.key.ready) return LinkKey{};
  std::array<std::uint8_t, kSessionKeyLabel.size() + 16> message{};
  std::copy(kSessionKeyLabel.begin(), kSessionKeyLabel.end(), message.begin());
  put_u64(message.data() + kSessionKeyLabel.size(), session);
  put_u64(message.data() + kSessionKeyLabel.size() + 8, arm_model);
  Digest session_key = hmac(secret.key, message);
  const LinkKey key = make_link_key(session_key);
  OPENSSL_cleanse(session_key.data(), session_key.size());
  return key;
}

Mac compute_mac(std::span<const std::uint8_t> bytes, const LinkKey& key) noexcept {
  Mac mac{};
  if (!key.ready) return mac;
  const Digest digest = hmac(key, bytes);
  std::copy(digest.begin(), digest.begin() + kMacSize, mac.begin());
  return mac;
}

std::size_t encode(const StatePacket& packet, const LinkIds& ids, const LinkKey& key,
                   PacketBuffer& buffer) noexcept {
  const ArmState& s = packet.state;
  std::uint32_t flags = packet.flags & ~(kWrenchValid | kProximityValid);
  if (s.wrench_valid) flags |= kWrenchValid;
  if (s.proximity.valid) flags |= kProximityValid;
  Writer w(buffer);
  write_header(w, PacketKind::kState, kStatePayloadSize, ids);
  w.u64(packet.sequence);
  w.f64(s.time);
  w.f64s(s.position);
  w.f64s(s.velocity);
  w.f64s(s.wrench);
  w.f64(s.proximity.distance);
  w.f64s(s.proximity.surface_normal);
  for (const double a : s.aux) w.f64(a);
  w.u64(packet.command_echo);
  w.u32(flags);
  w.u32(0);
  return finish(w, key, buffer);
}

std::size_t encode(const CommandPacket& packet, const LinkIds& ids, const LinkKey& key,
                   PacketBuffer& buffer) noexcept {
  Writer w(buffer);
  write_header(w, PacketKind::kCommand, kCommandPayloadSize, ids);
  w.u64(packet.sequence);
  w.f64(packet.controller_time);
  w.f64s(packet.command.position);
  w.f64s(packet.command.velocity);
  w.u32(packet.flags);
  w.u32(0);
  return finish(w, key, buffer);
}

DecodeError peek_session(std::span<const std::uint8_t> datagram, PacketKind kind,
                         LinkIds& ids) noexcept {
  if (kind != PacketKind::kState && kind != PacketKind::kCommand) return DecodeError::kWrongKind;
  Reader r(datagram);
  LinkIds read;
  std::uint32_t reserved = 0;
  const DecodeError e = read_header(datagram, kind, r, read, reserved);
  if (e == DecodeError::kNone) ids = read;
  return e;
}

DecodeError decode(std::span<const std::uint8_t> datagram, const LinkIds& expected,
                   const LinkKey& key, StatePacket& packet) noexcept {
  Reader r(datagram);
  if (const DecodeError e = check_frame(datagram, PacketKind::kState, expected, key, r);
      e != DecodeError::kNone) {
    return e;
  }
  ArmState& s = packet.state;
  packet.sequence = r.u64();
  s.time = r.f64();
  r.f64s(s.position);
  r.f64s(s.velocity);
  r.f64s(s.wrench);
  s.proximity.distance = r.f64();
  r.f64s(s.proximity.surface_normal);
  for (double& a : s.aux) a = r.f64();
  packet.command_echo = r.u64();
  packet.flags = r.u32();
  const std::uint32_t reserved = r.u32();
  if ((packet.flags & ~kKnownStateFlags) != 0 || reserved != 0) return DecodeError::kBadFlags;
  if (!r.all_finite()) return DecodeError::kNonFinite;
  s.wrench_valid = (packet.flags & kWrenchValid) != 0;
  s.proximity.valid = (packet.flags & kProximityValid) != 0;
  return DecodeError::kNone;
}

DecodeError decode(std::span<const std::uint8_t> datagram, const LinkIds& expected,
                   const LinkKey& key, CommandPacket& packet) noexcept {
  Reader r(datagram);
  if (const DecodeError e = check_frame(datagram, PacketKind::kCommand, expected, key, r);
      e != DecodeError::kNone) {
    return e;
  }
  packet.sequence = r.u64();
  packet.controller_time = r.f64();
  r.f64s(packet.command.position);
  r.f64s(packet.command.velocity);
  packet.flags = r.u32();
  const std::uint32_t reserved = r.u32();
  if ((packet.flags & ~kKnownCommandFlags) != 0 || reserved != 0) return DecodeError::kBadFlags;
  if (!r.all_finite()) return DecodeError::kNonFinite;
  return DecodeError::kNone;
}

}  // namespace tether::remote::arm_link

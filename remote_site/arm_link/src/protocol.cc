#include "tether/remote/arm_link/protocol.h"

#include <zlib.h>

#include <bit>
#include <cmath>

namespace tether::remote::arm_link {
namespace {

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

void write_header(Writer& w, PacketKind kind, std::size_t payload) {
  w.u32(kMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<std::uint16_t>(kind));
  w.u32(static_cast<std::uint32_t>(payload));
}

std::size_t finish(Writer& w, PacketBuffer& buffer) {
  const std::size_t n = w.size();
  w.u32(crc32(std::span<const std::uint8_t>(buffer.data(), n)));
  return w.size();
}

// Checks everything but the payload; on success `reader` is positioned at the payload.
DecodeError check_frame(std::span<const std::uint8_t> datagram, PacketKind kind,
                        std::size_t payload, Reader& reader) {
  const std::size_t expected = kHeaderSize + payload + kCrcSize;
  if (datagram.size() < kHeaderSize) return DecodeError::kWrongSize;
  if (reader.u32() != kMagic) return DecodeError::kBadMagic;
  if (reader.u16() != kProtocolVersion) return DecodeError::kBadVersion;
  if (reader.u16() != static_cast<std::uint16_t>(kind)) return DecodeError::kWrongKind;
  if (reader.u32() != payload) return DecodeError::kBadPayloadSize;
  if (datagram.size() != expected) return DecodeError::kWrongSize;
  Reader trailer(datagram.subspan(expected - kCrcSize));
  if (trailer.u32() != crc32(datagram.first(expected - kCrcSize))) return DecodeError::kBadCrc;
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
    case DecodeError::kBadCrc:
      return "CRC mismatch";
    case DecodeError::kBadFlags:
      return "unknown flags or non-zero reserved bits";
    case DecodeError::kNonFinite:
      return "non-finite value";
  }
  return "unknown";
}

// zlib's CRC-32 (IEEE 802.3); datagrams are far below zlib's uInt length limit.
std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
  return static_cast<std::uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), bytes.data(), static_cast<uInt>(bytes.size())));
}

std::size_t encode(const StatePacket& packet, PacketBuffer& buffer) noexcept {
  const ArmState& s = packet.state;
  std::uint32_t flags = packet.flags & ~(kWrenchValid | kProximityValid);
  if (s.wrench_valid) flags |= kWrenchValid;
  if (s.proximity.valid) flags |= kProximityValid;
  Writer w(buffer);
  write_header(w, PacketKind::kState, kStatePayloadSize);
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
  return finish(w, buffer);
}

std::size_t encode(const CommandPacket& packet, PacketBuffer& buffer) noexcept {
  Writer w(buffer);
  write_header(w, PacketKind::kCommand, kCommandPayloadSize);
  w.u64(packet.sequence);
  w.f64(packet.controller_time);
  w.f64s(packet.command.position);
  w.f64s(packet.command.velocity);
  w.u32(packet.flags);
  w.u32(0);
  return finish(w, buffer);
}

DecodeError decode(std::span<const std::uint8_t> datagram, StatePacket& packet) noexcept {
  Reader r(datagram);
  if (const DecodeError e = check_frame(datagram, PacketKind::kState, kStatePayloadSize, r);
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

DecodeError decode(std::span<const std::uint8_t> datagram, CommandPacket& packet) noexcept {
  Reader r(datagram);
  if (const DecodeError e = check_frame(datagram, PacketKind::kCommand, kCommandPayloadSize, r);
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

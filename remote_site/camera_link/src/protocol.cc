#include "tether/remote/camera_link/protocol.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "tether/proto/convert.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::remote::camera_link {

namespace {

void put_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_f64(std::vector<std::uint8_t>& out, double v) {
  put_u64(out, std::bit_cast<std::uint64_t>(v));
}

// Reads little-endian fields from a span the caller has checked is long enough.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint64_t le(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<std::uint64_t>(bytes_[at_ + static_cast<std::size_t>(i)]) << (8 * i);
    at_ += static_cast<std::size_t>(n);
    return v;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t u64() { return le(8); }
  double f64() { return std::bit_cast<double>(le(8)); }
  std::size_t at() const { return at_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

std::string size_message(const char* what, std::size_t size, std::size_t expected) {
  return std::string(what) + " = " + std::to_string(size) + " bytes: expected " +
         std::to_string(expected);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::kHello:
      return "HELLO";
    case Kind::kWelcome:
      return "WELCOME";
    case Kind::kCatalogueRequest:
      return "CATALOGUE?";
    case Kind::kCatalogue:
      return "CATALOGUE";
    case Kind::kWatch:
      return "WATCH";
    case Kind::kWatching:
      return "WATCHING";
    case Kind::kImage:
      return "IMAGE";
    case Kind::kAim:
      return "AIM";
    case Kind::kResult:
      return "RESULT";
    case Kind::kError:
      return "ERROR";
  }
  return "unknown";
}

std::size_t max_payload(Kind kind) {
  switch (kind) {
    case Kind::kHello:
    case Kind::kWelcome:
      return kHelloSize;
    case Kind::kCatalogueRequest:
    case Kind::kWatching:
      return 0;
    case Kind::kCatalogue:
      return kMaxCatalogueSize;
    case Kind::kWatch:
      return kMaxNameSize;
    case Kind::kImage:
      return kImageHeaderSize + std::size_t{kMaxSide} * kMaxSide * 3;
    case Kind::kAim:
      return 16 + kMaxNameSize;
    case Kind::kResult:
    case Kind::kError:
      return kMaxTextSize;
  }
  return 0;
}

std::vector<std::uint8_t> encode_frame(Kind kind, std::uint64_t sequence,
                                       std::span<const std::uint8_t> payload,
                                       const arm_link::LinkKey& key) {
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderSize + payload.size() + kMacSize);
  put_u32(out, kMagic);
  put_u16(out, kProtocolVersion);
  put_u16(out, static_cast<std::uint16_t>(kind));
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  put_u32(out, 0);
  put_u64(out, sequence);
  out.insert(out.end(), payload.begin(), payload.end());
  const arm_link::Mac mac = arm_link::compute_mac(out, key);
  out.insert(out.end(), mac.begin(), mac.end());
  return out;
}

void append_image_header(const ImageHeader& image, std::vector<std::uint8_t>& out) {
  put_u64(out, image.number);
  put_f64(out, image.arm_time);
  put_u64(out, static_cast<std::uint64_t>(image.age_ns));
  put_u32(out, image.width);
  put_u32(out, image.height);
  put_u32(out, image.pose_known ? kPoseKnown : 0U);
  put_u32(out, 0);
  for (int i = 0; i < 3; ++i) put_f64(out, image.base_T_camera.p[i]);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) put_f64(out, image.base_T_camera.R(r, c));
  }
}

std::vector<std::uint8_t> encode_hello(const Hello& hello) {
  std::vector<std::uint8_t> out(hello.nonce.begin(), hello.nonce.end());
  put_u64(out, hello.arm_model);
  return out;
}

std::vector<std::uint8_t> encode_aim(const Aim& aim) {
  std::vector<std::uint8_t> out;
  put_f64(out, aim.pan);
  put_f64(out, aim.tilt);
  out.insert(out.end(), aim.camera.begin(), aim.camera.end());
  return out;
}

std::string decode_header(std::span<const std::uint8_t> bytes, Header& out) {
  if (bytes.size() < kHeaderSize) return size_message("header", bytes.size(), kHeaderSize);
  Reader r(bytes);
  const std::uint32_t magic = r.u32();
  if (magic != kMagic) {
    char text[96];
    std::snprintf(text, sizeof text, "magic = 0x%08X: expected 0x%08X (\"TCAM\")", magic, kMagic);
    return text;
  }
  const std::uint16_t version = r.u16();
  if (version != kProtocolVersion) {
    return "version = " + std::to_string(version) + ": this end speaks " +
           std::to_string(kProtocolVersion);
  }
  const std::uint16_t kind = r.u16();
  if (kind < static_cast<std::uint16_t>(Kind::kHello) ||
      kind > static_cast<std::uint16_t>(Kind::kError)) {
    return "kind = " + std::to_string(kind) + ": expected 1…10";
  }
  out.kind = static_cast<Kind>(kind);
  out.payload_size = r.u32();
  const std::uint32_t reserved = r.u32();
  if (reserved != 0) return "reserved = " + std::to_string(reserved) + ": expected 0";
  out.sequence = r.u64();
  if (out.payload_size > max_payload(out.kind)) {
    return std::string("payload size of ") + to_string(out.kind) + " = " +
           std::to_string(out.payload_size) + " bytes: at most " +
           std::to_string(max_payload(out.kind));
  }
  return {};
}

bool mac_verifies(std::span<const std::uint8_t> frame, const arm_link::LinkKey& key) {
  if (!key.ready || frame.size() < kHeaderSize + kMacSize) return false;
  const std::size_t body = frame.size() - kMacSize;
  const arm_link::Mac mac = arm_link::compute_mac(frame.first(body), key);
  return CRYPTO_memcmp(mac.data(), frame.data() + body, kMacSize) == 0;
}

std::string decode_hello(std::span<const std::uint8_t> payload, Hello& out) {
  if (payload.size() != kHelloSize)
    return size_message("HELLO payload", payload.size(), kHelloSize);
  std::copy_n(payload.begin(), kNonceSize, out.nonce.begin());
  Reader r(payload.subspan(kNonceSize));
  out.arm_model = r.u64();
  if (std::all_of(out.nonce.begin(), out.nonce.end(), [](std::uint8_t b) { return b == 0; })) {
    return "nonce = all zero: expected 16 random bytes";
  }
  return {};
}

std::string decode_image(std::span<const std::uint8_t> payload, ImageHeader& out) {
  if (payload.size() < kImageHeaderSize) {
    return "IMAGE payload = " + std::to_string(payload.size()) + " bytes: at least " +
           std::to_string(kImageHeaderSize);
  }
  Reader r(payload);
  out.number = r.u64();
  out.arm_time = r.f64();
  out.age_ns = static_cast<std::int64_t>(r.u64());
  out.width = r.u32();
  out.height = r.u32();
  const std::uint32_t flags = r.u32();
  const std::uint32_t reserved = r.u32();
  for (int i = 0; i < 3; ++i) out.base_T_camera.p[i] = r.f64();
  for (int row = 0; row < 3; ++row) {
    for (int c = 0; c < 3; ++c) out.base_T_camera.R(row, c) = r.f64();
  }
  if (!std::isfinite(out.arm_time) || out.arm_time < 0.0) {
    return "arm time = " + number(out.arm_time) + " s: expected a finite value ≥ 0";
  }
  if (out.age_ns < 0 || out.age_ns > kMaxAgeNs) {
    return "age = " + std::to_string(out.age_ns) + " ns: expected 0…" + std::to_string(kMaxAgeNs);
  }
  if (out.width < 1 || out.width > kMaxSide) {
    return "width = " + std::to_string(out.width) + " px: expected 1…" + std::to_string(kMaxSide);
  }
  if (out.height < 1 || out.height > kMaxSide) {
    return "height = " + std::to_string(out.height) + " px: expected 1…" + std::to_string(kMaxSide);
  }
  if ((flags & ~kPoseKnown) != 0) return "flags = " + std::to_string(flags) + ": known bits 0x1";
  if (reserved != 0) return "reserved = " + std::to_string(reserved) + ": expected 0";
  const std::size_t pixels = std::size_t{out.width} * out.height * 3;
  if (payload.size() != kImageHeaderSize + pixels) {
    return "IMAGE payload = " + std::to_string(payload.size()) +
           " bytes: " + std::to_string(out.width) + "×" + std::to_string(out.height) +
           " RGB needs " + std::to_string(kImageHeaderSize + pixels);
  }
  out.pose_known = (flags & kPoseKnown) != 0;
  if (out.pose_known) {
    if (!out.base_T_camera.p.allFinite() || out.base_T_camera.p.norm() > 1e3) {
      return "pose p = (" + number(out.base_T_camera.p.x()) + ", " +
             number(out.base_T_camera.p.y()) + ", " + number(out.base_T_camera.p.z()) +
             ") m: expected finite, within 1000 m of BASE";
    }
    const Matrix3& R = out.base_T_camera.R;
    const double off = R.allFinite() ? (R.transpose() * R - Matrix3::Identity()).norm() : 1e300;
    if (off > 1e-6 || !(R.determinant() > 0.0)) {
      return "pose R: not a rotation (|RᵀR − I| = " + number(off) +
             ", det = " + number(R.allFinite() ? R.determinant() : 0.0) + "): expected ≤ 1e-6, +1";
    }
  } else {
    out.base_T_camera = Frame{};
  }
  return {};
}

std::string decode_name(std::span<const std::uint8_t> payload, std::string& out) {
  if (payload.empty() || payload.size() > kMaxNameSize) {
    return "camera name = " + std::to_string(payload.size()) + " bytes: expected 1…" +
           std::to_string(kMaxNameSize);
  }
  for (std::size_t i = 0; i < payload.size(); ++i) {
    if (payload[i] < 0x21 || payload[i] > 0x7E) {
      return "camera name byte " + std::to_string(i) + " = " + std::to_string(payload[i]) +
             ": expected printable ASCII (33…126)";
    }
  }
  out.assign(payload.begin(), payload.end());
  return {};
}

std::string decode_aim(std::span<const std::uint8_t> payload, Aim& out) {
  if (payload.size() < 17) {
    return "AIM payload = " + std::to_string(payload.size()) + " bytes: at least 17";
  }
  Reader r(payload);
  out.pan = r.f64();
  out.tilt = r.f64();
  if (!std::isfinite(out.pan) || std::abs(out.pan) > 2 * 3.141592653589793) {
    return "pan = " + number(out.pan) + " rad: expected finite, within ±2π";
  }
  if (!std::isfinite(out.tilt) || std::abs(out.tilt) > 2 * 3.141592653589793) {
    return "tilt = " + number(out.tilt) + " rad: expected finite, within ±2π";
  }
  return decode_name(payload.subspan(16), out.camera);
}

std::string decode_text(std::span<const std::uint8_t> payload, std::string& out) {
  if (payload.size() > kMaxTextSize) {
    return "text = " + std::to_string(payload.size()) + " bytes: at most " +
           std::to_string(kMaxTextSize);
  }
  for (std::size_t i = 0; i < payload.size(); ++i) {
    if ((payload[i] < 0x20 && payload[i] != '\n') || payload[i] == 0x7F) {
      return "text byte " + std::to_string(i) + " = " + std::to_string(payload[i]) +
             ": expected no control character but newline";
    }
  }
  out.assign(payload.begin(), payload.end());
  return {};
}

std::vector<std::uint8_t> encode_catalogue(const SceneDescription& scene) {
  v1::SceneDescription message;
  proto::from_scene(scene, &message);
  std::vector<std::uint8_t> out(message.ByteSizeLong());
  message.SerializeToArray(out.data(), static_cast<int>(out.size()));
  return out;
}

std::string decode_catalogue(std::span<const std::uint8_t> payload, SceneDescription& out) {
  v1::SceneDescription message;
  if (!message.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return "catalogue: " + std::to_string(payload.size()) +
           " bytes that are not a tether.v1.SceneDescription";
  }
  try {
    out = proto::to_scene(message, "catalogue");
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

arm_link::LinkKey derive_session_key(const arm_link::LinkSecret& secret, const Nonce& client,
                                     const Nonce& server, std::uint64_t arm_model) {
  if (!secret.key.ready) return arm_link::LinkKey{};
  std::vector<std::uint8_t> message(kSessionKeyLabel.begin(), kSessionKeyLabel.end());
  message.insert(message.end(), client.begin(), client.end());
  message.insert(message.end(), server.begin(), server.end());
  put_u64(message, arm_model);
  arm_link::Mac session = arm_link::compute_mac(message, secret.key);
  const arm_link::LinkKey key = arm_link::make_link_key(session);
  OPENSSL_cleanse(session.data(), session.size());
  return key;
}

Nonce make_nonce() {
  Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1) {
    throw std::runtime_error("camera link: OpenSSL RAND_bytes failed");
  }
  return nonce;
}

}  // namespace tether::remote::camera_link

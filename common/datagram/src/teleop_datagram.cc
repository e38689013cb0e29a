#include "tether/datagram/teleop_datagram.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace tether::datagram {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the datagram codec copies little-endian integers and IEEE floats as they are");

// Bounded little-endian writer and reader over a byte span.
class Writer {
 public:
  explicit Writer(std::span<std::uint8_t> out) : out_(out) {}
  template <typename T>
  void put(const T& value) {
    if (size_ + sizeof(T) > out_.size()) {
      overflow_ = true;
      return;
    }
    std::memcpy(out_.data() + size_, &value, sizeof(T));
    size_ += sizeof(T);
  }
  template <typename T, std::size_t N>
  void put(const std::array<T, N>& values) {
    for (const T& v : values) put(v);
  }
  std::size_t size() const { return overflow_ ? 0 : size_; }

 private:
  std::span<std::uint8_t> out_;
  std::size_t size_ = 0;
  bool overflow_ = false;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  template <typename T>
  bool get(T& value) {
    if (offset_ + sizeof(T) > in_.size()) return false;
    std::memcpy(&value, in_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return true;
  }
  template <typename T, std::size_t N>
  bool get(std::array<T, N>& values) {
    for (T& v : values) {
      if (!get(v)) return false;
    }
    return true;
  }
  bool done() const { return offset_ == in_.size(); }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t offset_ = 0;
};

// Increment flags.
constexpr std::uint8_t kDeadman = 1U << 0;
constexpr std::uint8_t kIncrementWave = 1U << 1;
constexpr std::uint8_t kEnd = 1U << 2;
constexpr unsigned kModeShift = 4;  // two bits of mode
// Reflection flags (u16).
constexpr std::uint16_t kDetail = 1U << 0;
constexpr std::uint16_t kReflectionWave = 1U << 1;
constexpr std::uint16_t kEye = 1U << 2;
constexpr unsigned kStateShift = 4;    // 3 bits
constexpr unsigned kRModeShift = 8;    // 2 bits
constexpr unsigned kMethodShift = 10;  // 2 bits

// Bounds a trusted peer never exceeds; anything beyond is refused, naming the field.
constexpr double kMaxMotion = 1e4;  // [m, rad] a segment's summed motion
constexpr double kMaxEnergy = 1e6;  // [J]
constexpr double kMaxWrench = 1e6;  // [N, N·m]
constexpr double kMaxWaveValue = 1e3;

template <std::size_t N>
std::string check(const std::array<float, N>& values, const char* field, double bound) {
  for (std::size_t i = 0; i < N; ++i) {
    if (!std::isfinite(values[i]) || std::abs(values[i]) > bound) {
      return std::string(field) + "[" + std::to_string(i) + "] = " + std::to_string(values[i]) +
             ": allowed finite values within ±" + std::to_string(bound);
    }
  }
  return {};
}

std::string check(double value, const char* field, double low, double high) {
  if (!std::isfinite(value) || value < low || value > high) {
    return std::string(field) + " = " + std::to_string(value) + ": allowed " + std::to_string(low) +
           " … " + std::to_string(high);
  }
  return {};
}

std::array<std::uint8_t, 12> nonce(Kind kind, std::uint32_t counter) {
  std::array<std::uint8_t, 12> n{};
  n[0] = static_cast<std::uint8_t>(kind);
  const auto wide = static_cast<std::uint64_t>(counter);
  std::memcpy(n.data() + 4, &wide, sizeof wide);
  return n;
}

void hex(std::string& out, std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (const std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
}

bool unhex(std::string_view text, std::span<std::uint8_t> out) {
  if (text.size() != 2 * out.size()) return false;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(text[2 * i]);
    const int lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

SessionKeys make_session_keys() {
  SessionKeys keys;
  std::array<std::uint8_t, 4> id{};
  do {
    if (RAND_bytes(id.data(), static_cast<int>(id.size())) != 1 ||
        RAND_bytes(keys.ground_to_remote.data(), kKeyBytes) != 1 ||
        RAND_bytes(keys.remote_to_ground.data(), kKeyBytes) != 1) {
      throw std::runtime_error("datagram session keys: OpenSSL RAND_bytes failed");
    }
    std::memcpy(&keys.session, id.data(), sizeof keys.session);
  } while (keys.session == 0);
  return keys;
}

std::string to_text(const SessionKeys& keys) {
  std::string out;
  std::array<std::uint8_t, 4> id{};
  std::memcpy(id.data(), &keys.session, sizeof keys.session);
  hex(out, id);
  out.push_back(':');
  hex(out, keys.ground_to_remote);
  out.push_back(':');
  hex(out, keys.remote_to_ground);
  return out;
}

std::optional<SessionKeys> keys_from_text(std::string_view text) {
  if (text.size() != 8 + 1 + 64 + 1 + 64 || text[8] != ':' || text[73] != ':') return {};
  SessionKeys keys;
  std::array<std::uint8_t, 4> id{};
  if (!unhex(text.substr(0, 8), id) || !unhex(text.substr(9, 64), keys.ground_to_remote) ||
      !unhex(text.substr(74, 64), keys.remote_to_ground)) {
    return {};
  }
  std::memcpy(&keys.session, id.data(), sizeof keys.session);
  if (keys.session == 0) return {};
  return keys;
}

// ---- payloads ----

std::size_t encode(const IncrementMessage& m, std::span<std::uint8_t> out) {
  Writer w(out);
  w.put(m.sequence);
  w.put(m.pieces);
  w.put(m.ground_time_ns);
  const std::uint8_t flags = static_cast<std::uint8_t>(
      (m.deadman ? kDeadman : 0U) | (m.has_wave ? kIncrementWave : 0U) | (m.end ? kEnd : 0U) |
      static_cast<unsigned>((m.mode & 3U) << kModeShift));
  w.put(flags);
  w.put(m.segment_length);
  w.put(m.motion);
  w.put(m.master_in);
  w.put(m.master_observed);
  w.put(m.master_dissipated);
  if (m.has_wave) w.put(m.wave);
  return w.size();
}

std::string decode(std::span<const std::uint8_t> bytes, IncrementMessage& m) {
  Reader r(bytes);
  std::uint8_t flags = 0;
  if (!r.get(m.sequence) || !r.get(m.pieces) || !r.get(m.ground_time_ns) || !r.get(flags) ||
      !r.get(m.segment_length) || !r.get(m.motion) || !r.get(m.master_in) ||
      !r.get(m.master_observed) || !r.get(m.master_dissipated)) {
    return "increment: " + std::to_string(bytes.size()) + " bytes is too short";
  }
  m.deadman = (flags & kDeadman) != 0;
  m.has_wave = (flags & kIncrementWave) != 0;
  m.end = (flags & kEnd) != 0;
  m.mode = static_cast<std::uint8_t>((flags >> kModeShift) & 3U);
  if ((flags & ~(kDeadman | kIncrementWave | kEnd | (3U << kModeShift))) != 0) {
    return "increment flags = " + std::to_string(flags) + ": unknown bits set";
  }
  if (m.has_wave && !r.get(m.wave)) return "increment: the forward wave is cut short";
  if (!r.done()) return "increment: " + std::to_string(bytes.size()) + " bytes is too long";
  if (m.sequence == 0) return "sequence = 0: sequences start at 1";
  if (m.pieces < 1 || m.pieces > 64) {
    return "pieces = " + std::to_string(m.pieces) + ": allowed 1 … 64";
  }
  if (m.pieces > m.sequence) {
    return "pieces = " + std::to_string(m.pieces) + ": more than the sequence " +
           std::to_string(m.sequence);
  }
  if (m.segment_length < m.pieces || m.segment_length > m.sequence) {
    return "segment_length = " + std::to_string(m.segment_length) + ": allowed " +
           std::to_string(m.pieces) + " … " + std::to_string(m.sequence);
  }
  if (std::string e = check(m.motion, "motion", kMaxMotion); !e.empty()) return e;
  if (std::string e = check(m.master_in, "master_in_j", 0.0, kMaxEnergy); !e.empty()) return e;
  if (std::string e = check(m.master_observed, "master_observed_j", -kMaxEnergy, kMaxEnergy);
      !e.empty()) {
    return e;
  }
  if (std::string e = check(m.master_dissipated, "master_dissipated_j", 0.0, kMaxEnergy);
      !e.empty()) {
    return e;
  }
  if (m.has_wave) {
    if (std::string e = check(m.wave, "wave", kMaxWaveValue); !e.empty()) return e;
  }
  return {};
}

std::size_t encode(const ReflectionMessage& m, std::span<std::uint8_t> out) {
  Writer w(out);
  w.put(m.cycle);
  w.put(m.applied_sequence);
  w.put(m.skipped);
  const auto flags = static_cast<std::uint16_t>(
      (m.has_detail ? kDetail : 0U) | (m.has_wave ? kReflectionWave : 0U) |
      (m.has_eye ? kEye : 0U) | static_cast<unsigned>((m.state & 7U) << kStateShift) |
      static_cast<unsigned>((m.mode & 3U) << kRModeShift) |
      static_cast<unsigned>((m.method & 3U) << kMethodShift));
  w.put(flags);
  w.put(m.reflected);
  w.put(m.slave_in);
  w.put(m.remote_time_ns);
  w.put(m.hold_ns);
  if (m.has_detail) {
    w.put(m.measured);
    w.put(m.tracking_error);
    w.put(m.task_time);
    w.put(m.slave_observed);
    w.put(m.slave_dissipated);
  }
  if (m.has_wave) {
    w.put(m.return_wave);
    w.put(m.wave_impedance);
  }
  if (m.has_eye) {
    w.put(m.eye);
    w.put(m.eye_time_ns);
  }
  return w.size();
}

std::string decode(std::span<const std::uint8_t> bytes, ReflectionMessage& m) {
  Reader r(bytes);
  std::uint16_t flags = 0;
  if (!r.get(m.cycle) || !r.get(m.applied_sequence) || !r.get(m.skipped) || !r.get(flags) ||
      !r.get(m.reflected) || !r.get(m.slave_in) || !r.get(m.remote_time_ns) || !r.get(m.hold_ns)) {
    return "reflection: " + std::to_string(bytes.size()) + " bytes is too short";
  }
  constexpr unsigned kKnown = kDetail | kReflectionWave | kEye | (7U << kStateShift) |
                              (3U << kRModeShift) | (3U << kMethodShift);
  if ((flags & ~kKnown) != 0) {
    return "reflection flags = " + std::to_string(flags) + ": unknown bits set";
  }
  m.has_detail = (flags & kDetail) != 0;
  m.has_wave = (flags & kReflectionWave) != 0;
  m.has_eye = (flags & kEye) != 0;
  m.state = static_cast<std::uint8_t>((flags >> kStateShift) & 7U);
  m.mode = static_cast<std::uint8_t>((flags >> kRModeShift) & 3U);
  m.method = static_cast<std::uint8_t>((flags >> kMethodShift) & 3U);
  if (m.has_detail && (!r.get(m.measured) || !r.get(m.tracking_error) || !r.get(m.task_time) ||
                       !r.get(m.slave_observed) || !r.get(m.slave_dissipated))) {
    return "reflection: the detail group is cut short";
  }
  if (m.has_wave && (!r.get(m.return_wave) || !r.get(m.wave_impedance))) {
    return "reflection: the wave group is cut short";
  }
  if (m.has_eye && (!r.get(m.eye) || !r.get(m.eye_time_ns))) {
    return "reflection: the eye group is cut short";
  }
  if (!r.done()) return "reflection: " + std::to_string(bytes.size()) + " bytes is too long";
  if (m.state > 5) return "state = " + std::to_string(m.state) + ": allowed 0 … 5";
  if (m.method > 2) return "method = " + std::to_string(m.method) + ": allowed 0 … 2";
  if (std::string e = check(m.reflected, "reflected", kMaxWrench); !e.empty()) return e;
  if (std::string e = check(m.slave_in, "slave_in_j", 0.0, kMaxEnergy); !e.empty()) return e;
  if (m.has_detail) {
    if (std::string e = check(m.measured, "measured", kMaxWrench); !e.empty()) return e;
    if (std::string e = check(m.tracking_error, "tracking_error", kMaxWrench); !e.empty()) {
      return e;
    }
    if (std::string e = check(m.task_time, "task_time", 0.0, 1e9); !e.empty()) return e;
    if (std::string e = check(m.slave_observed, "slave_observed_j", -kMaxEnergy, kMaxEnergy);
        !e.empty()) {
      return e;
    }
    if (std::string e = check(m.slave_dissipated, "slave_dissipated_j", 0.0, kMaxEnergy);
        !e.empty()) {
      return e;
    }
  }
  if (m.has_wave) {
    if (std::string e = check(m.return_wave, "return_wave", kMaxWaveValue); !e.empty()) return e;
    if (std::string e = check(m.wave_impedance, "wave_impedance", 1e6); !e.empty()) return e;
  }
  if (m.has_eye) {
    if (std::string e = check(m.eye, "eye", 1.01); !e.empty()) return e;
    const double norm = std::sqrt(double{m.eye[0]} * m.eye[0] + double{m.eye[1]} * m.eye[1] +
                                  double{m.eye[2]} * m.eye[2] + double{m.eye[3]} * m.eye[3]);
    if (std::abs(norm - 1.0) > 1e-3) {
      return "eye: |q| = " + std::to_string(norm) + ": a unit quaternion within 1e-3";
    }
  }
  return {};
}

// ---- sealing ----

struct Sealer::Cipher {
  EVP_CIPHER_CTX* ctx = nullptr;
  ~Cipher() { EVP_CIPHER_CTX_free(ctx); }
};
struct Opener::Cipher {
  EVP_CIPHER_CTX* ctx = nullptr;
  ~Cipher() { EVP_CIPHER_CTX_free(ctx); }
};

namespace {

template <typename C>
std::unique_ptr<C> make_cipher(const Key& key, bool encrypt) {
  auto cipher = std::make_unique<C>();
  cipher->ctx = EVP_CIPHER_CTX_new();
  if (cipher->ctx == nullptr ||
      EVP_CipherInit_ex(cipher->ctx, EVP_aes_256_gcm(), nullptr, key.data(), nullptr,
                        encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_ctrl(cipher->ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) != 1) {
    throw std::runtime_error("datagram cipher: OpenSSL could not set up AES-256-GCM");
  }
  return cipher;
}

void write_header(Kind kind, std::uint32_t session, std::uint32_t counter, std::uint8_t* out) {
  out[0] = static_cast<std::uint8_t>(kVersion << 4 | static_cast<std::uint8_t>(kind));
  std::memcpy(out + 1, &session, 4);
  std::memcpy(out + 5, &counter, 4);
}

}  // namespace

Sealer::Sealer(Kind kind, std::uint32_t session, const Key& key)
    : cipher_(make_cipher<Cipher>(key, true)), kind_(kind), session_(session) {}
Sealer::~Sealer() = default;

std::size_t Sealer::seal(std::span<const std::uint8_t> payload, std::span<std::uint8_t> out) {
  const std::size_t total = kHeaderBytes + payload.size() + kTagBytes;
  if (total > out.size() || total > max_datagram(kind_) || counter_ == 0xFFFFFFFFU) return 0;
  const std::uint32_t counter = counter_ + 1;
  write_header(kind_, session_, counter, out.data());
  const auto iv = nonce(kind_, counter);
  EVP_CIPHER_CTX* ctx = cipher_->ctx;
  int length = 0;
  int final_length = 0;
  if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, iv.data()) != 1 ||
      EVP_EncryptUpdate(ctx, nullptr, &length, out.data(), static_cast<int>(kHeaderBytes)) != 1 ||
      EVP_EncryptUpdate(ctx, out.data() + kHeaderBytes, &length, payload.data(),
                        static_cast<int>(payload.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx, out.data() + kHeaderBytes + length, &final_length) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                          out.data() + kHeaderBytes + payload.size()) != 1) {
    return 0;
  }
  counter_ = counter;
  return total;
}

Opener::Opener(Kind kind, std::uint32_t session, const Key& key)
    : cipher_(make_cipher<Cipher>(key, false)), kind_(kind), session_(session) {}
Opener::~Opener() = default;

std::optional<std::uint32_t> session_of(std::span<const std::uint8_t> datagram) {
  if (datagram.size() < kHeaderBytes + kTagBytes || datagram.size() > kMaxVideoDatagram) return {};
  if ((datagram[0] >> 4) != kVersion) return {};
  std::uint32_t session = 0;
  std::memcpy(&session, datagram.data() + 1, 4);
  return session;
}

std::optional<std::size_t> Opener::open(std::span<const std::uint8_t> datagram,
                                        std::span<std::uint8_t> out) {
  const auto session = session_of(datagram);
  if (!session || *session != session_ || (datagram[0] & 15) != static_cast<std::uint8_t>(kind_) ||
      datagram.size() > max_datagram(kind_)) {
    ++drops_.malformed;
    return {};
  }
  const std::size_t payload = datagram.size() - kHeaderBytes - kTagBytes;
  if (payload > out.size()) {
    ++drops_.malformed;
    return {};
  }
  std::uint32_t counter = 0;
  std::memcpy(&counter, datagram.data() + 5, 4);
  // The window first (cheap), authentication next, and the window moves only for an
  // authentic datagram: a forged counter must not shift it.
  const auto seen = [&]() {
    if (counter == 0) return true;
    if (counter > highest_) return false;
    const std::uint32_t behind = highest_ - counter;
    return behind >= kReplayWindow || ((window_ >> behind) & 1U) != 0;
  };
  if (seen()) {
    ++drops_.replayed;
    return {};
  }
  const auto iv = nonce(kind_, counter);
  EVP_CIPHER_CTX* ctx = cipher_->ctx;
  int length = 0;
  int final_length = 0;
  std::array<std::uint8_t, kTagBytes> tag{};
  std::memcpy(tag.data(), datagram.data() + kHeaderBytes + payload, kTagBytes);
  if (EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, iv.data()) != 1 ||
      EVP_DecryptUpdate(ctx, nullptr, &length, datagram.data(), static_cast<int>(kHeaderBytes)) !=
          1 ||
      EVP_DecryptUpdate(ctx, out.data(), &length, datagram.data() + kHeaderBytes,
                        static_cast<int>(payload)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), tag.data()) !=
          1 ||
      EVP_DecryptFinal_ex(ctx, out.data() + length, &final_length) != 1) {
    ++drops_.forged;
    return {};
  }
  newest_ = counter > highest_;
  if (counter > highest_) {
    const std::uint32_t ahead = counter - highest_;
    window_ = ahead >= 64 ? 0 : window_ << ahead;
    window_ |= 1U;
    highest_ = counter;
  } else {
    window_ |= std::uint64_t{1} << (highest_ - counter);
  }
  ++accepted_;
  return payload;
}

// ---- concealment ----

std::size_t IncrementAssembler::take(const IncrementMessage& m, std::span<ConcealedSample> out) {
  const std::uint64_t n = m.sequence;
  if (n <= last_ || out.empty()) return 0;
  const std::uint64_t own_first = n - m.pieces + 1;
  const std::uint64_t k = n - m.segment_length + 1;  // the segment's first number
  // The sums this datagram's are comparable with: the same segment as the last taken.
  const bool saturated = m.segment_length == 0xFFFF;
  const bool same_segment =
      last_ != 0 &&
      (k == segment_start_ || (saturated && segment_start_ != 0 && segment_start_ <= k)) &&
      k <= last_;
  std::array<double, 7> base{};
  std::uint64_t first = 0;  // first number this datagram's motion is spread over
  if (same_segment) {
    base = sum_;
    first = last_ + 1;
  } else if (k > last_) {
    // The segment began after the last taken: numbers before it (if any) belong to another
    // switch state or mode and are lost; the segment's own are recovered from its sum.
    first = k;
  } else {
    // Sums that cannot be compared (a peer that breaks the rule): nothing is recovered,
    // and of its own pieces only those not taken yet.
    first = std::max(own_first, last_ + 1);
    base.fill(0.0);
  }
  std::array<double, 7> total{};
  for (std::size_t i = 0; i < 7; ++i) total[i] = static_cast<double>(m.motion[i]) - base[i];
  const std::uint64_t span = n - first + 1;
  const std::uint64_t emitted = std::min<std::uint64_t>(span, out.size());
  const std::uint64_t start = n - emitted + 1;
  for (std::uint64_t s = start, j = 0; s <= n; ++s, ++j) {
    ConcealedSample& c = out[j];
    c.sequence = s;
    c.concealed = s < own_first;
    for (std::size_t i = 0; i < 7; ++i) c.motion[i] = total[i] / static_cast<double>(span);
    if (c.concealed) ++concealed_;
  }
  if (!same_segment && k <= last_) {
    // Not comparable: the datagram's own motion is unknown, so it moves nothing.
    for (std::uint64_t j = 0; j < emitted; ++j) out[j].motion.fill(0.0);
  }
  last_ = n;
  segment_start_ = k;
  for (std::size_t i = 0; i < 7; ++i) sum_[i] = static_cast<double>(m.motion[i]);
  return static_cast<std::size_t>(emitted);
}

}  // namespace tether::datagram

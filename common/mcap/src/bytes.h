#pragma once

// Little-endian serialization of MCAP's field types (records.h) into a std::string, a
// bounds-checked cursor that parses them back, and CRC-32 (zlib's: the spec's CRC-32 is
// the ISO-HDLC one zlib computes).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tether/mcap/records.h"

namespace tether::mcap::detail {

inline std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size) {
  return static_cast<std::uint32_t>(
      ::crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(size)));
}
inline std::uint32_t crc32_of(std::span<const std::uint8_t> bytes) {
  return crc32_update(0, bytes.data(), bytes.size());
}

// ---- writing ----

template <typename T>
void put_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>(static_cast<std::uint8_t>(value >> (8 * i))));
  }
}
inline void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }
inline void put_u16(std::string& out, std::uint16_t v) { put_le(out, v); }
inline void put_u32(std::string& out, std::uint32_t v) { put_le(out, v); }
inline void put_u64(std::string& out, std::uint64_t v) { put_le(out, v); }

// Overwrites 8 bytes at `at` (a length prefix reserved earlier).
inline void patch_u64(std::string& out, std::size_t at, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i)
    out[at + i] = static_cast<char>(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void patch_u32(std::string& out, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i)
    out[at + i] = static_cast<char>(static_cast<std::uint8_t>(v >> (8 * i)));
}

// String and uint32-prefixed Bytes: u32 length, bytes. Longer than 4 GiB is a caller's bug.
inline void put_string(std::string& out, std::string_view s) {
  if (s.size() > UINT32_MAX) throw std::invalid_argument("MCAP string longer than 4 GiB");
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

// Map<string, string>: u32 byte length of the entries, then key, value, … (std::map: sorted,
// unique keys).
inline void put_string_map(std::string& out, const std::map<std::string, std::string>& map) {
  const std::size_t at = out.size();
  put_u32(out, 0);
  for (const auto& [key, value] : map) {
    put_string(out, key);
    put_string(out, value);
  }
  const std::size_t length = out.size() - at - 4;
  if (length > UINT32_MAX) throw std::invalid_argument("MCAP map longer than 4 GiB");
  patch_u32(out, at, static_cast<std::uint32_t>(length));
}

// A record: begin_record() writes the opcode and reserves the length, end_record() fills it.
inline std::size_t begin_record(std::string& out, Opcode op) {
  put_u8(out, static_cast<std::uint8_t>(op));
  const std::size_t at = out.size();
  put_u64(out, 0);
  return at;
}
inline void end_record(std::string& out, std::size_t at) {
  patch_u64(out, at, out.size() - at - 8);
}

// ---- reading ----

// Parses fields from `bytes`, which begin at offset `base` of what `context` names (e.g.
// "file.mcap: offset "); any read past the end throws std::runtime_error "<context><offset>:
// <what>" with the offset of the field that does not fit.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> bytes, std::uint64_t base, const std::string& context)
      : bytes_(bytes), base_(base), context_(context) {}

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::uint64_t offset() const { return base_ + pos_; }  // of the next field

  [[noreturn]] void fail(const std::string& what) const { fail_at(offset(), what); }
  [[noreturn]] void fail_at(std::uint64_t offset, const std::string& what) const {
    throw std::runtime_error(context_ + std::to_string(offset) + ": " + what);
  }

  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(le(1, what)); }
  std::uint16_t u16(const char* what) { return static_cast<std::uint16_t>(le(2, what)); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(le(4, what)); }
  std::uint64_t u64(const char* what) { return le(8, what); }

  // n bytes, or a failure naming `what`.
  std::span<const std::uint8_t> bytes(std::uint64_t n, const char* what) {
    if (n > remaining()) {
      fail(std::string(what) + " of " + std::to_string(n) + " bytes runs past the end (" +
           std::to_string(remaining()) + " left)");
    }
    const auto out = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::span<const std::uint8_t> rest() { return bytes(remaining(), "rest"); }

  // String / uint32-prefixed Bytes.
  std::string_view string(const char* what) {
    const std::uint32_t n = u32(what);
    const auto b = bytes(n, what);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

  // Map<string, string>.
  std::map<std::string, std::string> string_map(const char* what) {
    const std::uint32_t n = u32(what);
    const std::uint64_t at = offset();
    Cursor entries(bytes(n, what), at, context_);
    std::map<std::string, std::string> map;
    while (entries.remaining() > 0) {
      const std::string_view key = entries.string("map key");
      const std::string_view value = entries.string("map value");
      map.emplace(key, value);
    }
    return map;
  }

 private:
  std::uint64_t le(std::size_t n, const char* what) {
    if (n > remaining()) {
      fail(std::string(what) + " (" + std::to_string(n) + " bytes) runs past the end (" +
           std::to_string(remaining()) + " left)");
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::uint64_t base_;
  const std::string& context_;
};

}  // namespace tether::mcap::detail

#include "report/png.h"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include "tether/remote/report/plot.h"

namespace tether::remote::report {
namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

// RFC 1951 §3.2.5: length codes 257..285 and distance codes 0..29.
constexpr std::array<std::uint16_t, 29> kLengthBase = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                       15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                       67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<std::uint8_t, 29> kLengthExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::array<std::uint16_t, 30> kDistanceBase = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::array<std::uint8_t, 30> kDistanceExtra = {0, 0, 0,  0,  1,  1,  2,  2,  3,  3,
                                                         4, 4, 5,  5,  6,  6,  7,  7,  8,  8,
                                                         9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

constexpr std::size_t kWindow = 32768;
constexpr std::size_t kMinMatch = 3;
constexpr std::size_t kMaxMatch = 258;
// Input per block (a stored block holds at most 65535 bytes). Short blocks let the
// fixed-or-stored choice follow the data: noise is stored, runs are coded.
constexpr std::size_t kMaxBlockInput = 16384;
constexpr int kHashBits = 15;
// Deeper chains find slightly longer matches in text-like data; plots are dominated by the
// hinted distances, so a short chain keeps encoding fast.
constexpr int kMaxChain = 24;

struct Token {
  std::uint16_t length;    // 0: a literal
  std::uint16_t distance;  // 1..32768 for a match
  std::uint8_t literal;
};

int length_code_index(std::size_t length) {
  int i = 28;
  while (kLengthBase[static_cast<std::size_t>(i)] > length) --i;
  return i;
}

int distance_code(std::size_t distance) {
  auto it = std::upper_bound(kDistanceBase.begin(), kDistanceBase.end(), distance);
  return static_cast<int>(it - kDistanceBase.begin()) - 1;
}

// Fixed literal/length code lengths (RFC 1951 §3.2.6).
int fixed_bits(int symbol) {
  if (symbol < 144) return 8;
  if (symbol < 256) return 9;
  if (symbol < 280) return 7;
  return 8;
}

std::uint32_t fixed_code(int symbol) {
  if (symbol < 144) return 0x30u + static_cast<std::uint32_t>(symbol);
  if (symbol < 256) return 0x190u + static_cast<std::uint32_t>(symbol - 144);
  if (symbol < 280) return static_cast<std::uint32_t>(symbol - 256);
  return 0xC0u + static_cast<std::uint32_t>(symbol - 280);
}

std::uint32_t reverse_bits(std::uint32_t code, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i) {
    r = (r << 1) | (code & 1u);
    code >>= 1;
  }
  return r;
}

class BitWriter {
 public:
  explicit BitWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  // DEFLATE packs values least-significant bit first.
  void put(std::uint32_t value, int bits) {
    buffer_ |= static_cast<std::uint64_t>(value) << count_;
    count_ += bits;
    while (count_ >= 8) {
      out_.push_back(static_cast<std::uint8_t>(buffer_));
      buffer_ >>= 8;
      count_ -= 8;
    }
  }
  // Huffman codes are defined most-significant bit first.
  void put_code(std::uint32_t code, int bits) { put(reverse_bits(code, bits), bits); }
  void align() {
    if (count_ > 0) put(0, 8 - count_);
  }
  int pending_bits() const { return count_; }

 private:
  std::vector<std::uint8_t>& out_;
  std::uint64_t buffer_ = 0;
  int count_ = 0;
};

std::size_t match_length(const std::uint8_t* data, std::size_t from, std::size_t at,
                         std::size_t limit) {
  std::size_t n = 0;
  while (n < limit && data[from + n] == data[at + n]) ++n;
  return n;
}

std::uint32_t hash3(const std::uint8_t* p) {
  const std::uint32_t v = (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
  return (v * 2654435761u) >> (32 - kHashBits);
}

std::vector<Token> find_matches(const std::uint8_t* data, std::size_t size,
                                const std::vector<std::size_t>& hints) {
  std::vector<Token> tokens;
  tokens.reserve(size / 8 + 16);
  std::vector<std::int64_t> head(std::size_t{1} << kHashBits, -1);
  std::vector<std::int64_t> prev(kWindow, -1);
  auto insert = [&](std::size_t p) {
    if (p + kMinMatch > size) return;
    const std::uint32_t h = hash3(data + p);
    prev[p & (kWindow - 1)] = head[h];
    head[h] = static_cast<std::int64_t>(p);
  };

  std::size_t pos = 0;
  while (pos < size) {
    std::size_t best_length = 0, best_distance = 0;
    const std::size_t limit = std::min(kMaxMatch, size - pos);
    if (limit >= kMinMatch) {
      for (std::size_t d : hints) {
        if (d == 0 || d > pos || d > kWindow) continue;
        const std::size_t n = match_length(data, pos - d, pos, limit);
        if (n > best_length) {
          best_length = n;
          best_distance = d;
        }
      }
      std::int64_t candidate = head[hash3(data + pos)];
      for (int step = 0; step < kMaxChain && best_length < limit && candidate >= 0; ++step) {
        const std::size_t c = static_cast<std::size_t>(candidate);
        if (pos - c > kWindow) break;
        const std::size_t n = match_length(data, c, pos, limit);
        if (n > best_length) {
          best_length = n;
          best_distance = pos - c;
        }
        const std::int64_t next = prev[c & (kWindow - 1)];
        // A slot overwritten by a newer position would point forward: the chain ends there.
        if (next >= candidate) break;
        candidate = next;
      }
    }
    if (best_length >= kMinMatch) {
      tokens.push_back(
          {static_cast<std::uint16_t>(best_length), static_cast<std::uint16_t>(best_distance), 0});
      for (std::size_t i = 0; i < best_length; ++i) insert(pos + i);
      pos += best_length;
    } else {
      tokens.push_back({0, 0, data[pos]});
      insert(pos);
      ++pos;
    }
  }
  return tokens;
}

std::size_t fixed_token_bits(const Token& t) {
  if (t.length == 0) return static_cast<std::size_t>(fixed_bits(t.literal));
  const int li = length_code_index(t.length);
  const int di = distance_code(t.distance);
  return static_cast<std::size_t>(fixed_bits(257 + li) +
                                  kLengthExtra[static_cast<std::size_t>(li)] + 5 +
                                  kDistanceExtra[static_cast<std::size_t>(di)]);
}

void write_fixed_token(BitWriter& bits, const Token& t) {
  if (t.length == 0) {
    bits.put_code(fixed_code(t.literal), fixed_bits(t.literal));
    return;
  }
  const auto li = static_cast<std::size_t>(length_code_index(t.length));
  const int symbol = 257 + static_cast<int>(li);
  bits.put_code(fixed_code(symbol), fixed_bits(symbol));
  bits.put(static_cast<std::uint32_t>(t.length - kLengthBase[li]), kLengthExtra[li]);
  const auto di = static_cast<std::size_t>(distance_code(t.distance));
  bits.put_code(static_cast<std::uint32_t>(di), 5);
  bits.put(static_cast<std::uint32_t>(t.distance - kDistanceBase[di]), kDistanceExtra[di]);
}

}  // namespace

std::uint32_t crc32(const std::uint8_t* data, std::size_t size, std::uint32_t crc) {
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = kCrcTable[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

std::uint32_t adler32(const std::uint8_t* data, std::size_t size, std::uint32_t adler) {
  constexpr std::uint32_t kMod = 65521;
  // 5552 is the most bytes whose sums cannot overflow 32 bits before the modulo.
  constexpr std::size_t kChunk = 5552;
  std::uint32_t a = adler & 0xFFFFu, b = adler >> 16;
  while (size > 0) {
    const std::size_t n = std::min(size, kChunk);
    for (std::size_t i = 0; i < n; ++i) {
      a += data[i];
      b += a;
    }
    a %= kMod;
    b %= kMod;
    data += n;
    size -= n;
  }
  return (b << 16) | a;
}

void deflate(const std::uint8_t* data, std::size_t size,
             const std::vector<std::size_t>& hint_distances, std::vector<std::uint8_t>& out) {
  BitWriter bits(out);
  if (size == 0) {
    bits.put(1, 1);  // final
    bits.put(1, 2);  // fixed Huffman
    bits.put_code(fixed_code(256), fixed_bits(256));
    bits.align();
    return;
  }
  const std::vector<Token> tokens = find_matches(data, size, hint_distances);
  std::size_t first = 0, input_pos = 0;
  while (first < tokens.size()) {
    std::size_t last = first, block_input = 0, coded_bits = 3 + 7;  // header + end of block
    while (last < tokens.size()) {
      const std::size_t n = tokens[last].length == 0 ? 1 : tokens[last].length;
      if (block_input + n > kMaxBlockInput) break;
      block_input += n;
      coded_bits += fixed_token_bits(tokens[last]);
      ++last;
    }
    const bool final = last == tokens.size();
    const std::size_t pad = static_cast<std::size_t>((8 - (bits.pending_bits() + 3) % 8) % 8);
    const std::size_t stored_bits = 3 + pad + 32 + 8 * block_input;
    if (stored_bits < coded_bits) {
      bits.put(final ? 1 : 0, 1);
      bits.put(0, 2);
      bits.align();
      bits.put(static_cast<std::uint32_t>(block_input), 16);
      bits.put(static_cast<std::uint32_t>(~block_input & 0xFFFFu), 16);
      out.insert(out.end(), data + input_pos, data + input_pos + block_input);
    } else {
      bits.put(final ? 1 : 0, 1);
      bits.put(1, 2);
      for (std::size_t i = first; i < last; ++i) write_fixed_token(bits, tokens[i]);
      bits.put_code(fixed_code(256), fixed_bits(256));
    }
    input_pos += block_input;
    first = last;
  }
  bits.align();
}

void zlib_compress(const std::uint8_t* data, std::size_t size,
                   const std::vector<std::size_t>& hint_distances, std::vector<std::uint8_t>& out) {
  // CMF: deflate with a 32 KiB window; FLG: no dictionary, level "fastest", and the check
  // bits that make (CMF·256 + FLG) a multiple of 31.
  out.push_back(0x78);
  out.push_back(0x01);
  deflate(data, size, hint_distances, out);
  const std::uint32_t adler = adler32(data, size);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<std::uint8_t>(adler >> shift));
}

namespace {

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

void put_chunk(std::vector<std::uint8_t>& out, const char type[4], const std::uint8_t* data,
               std::size_t size) {
  put_u32(out, static_cast<std::uint32_t>(size));
  const std::size_t type_at = out.size();
  out.insert(out.end(), type, type + 4);
  if (size > 0) out.insert(out.end(), data, data + size);
  put_u32(out, crc32(out.data() + type_at, size + 4));
}

}  // namespace

void encode_png(const Image& image, std::vector<std::uint8_t>& out) {
  if (image.width <= 0 || image.height <= 0) {
    throw std::invalid_argument("encode_png: empty image (" + std::to_string(image.width) + "x" +
                                std::to_string(image.height) + ")");
  }
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * 3;
  if (image.pixels.size() != row_bytes * static_cast<std::size_t>(image.height)) {
    throw std::invalid_argument("encode_png: " + std::to_string(image.pixels.size()) +
                                " pixel bytes for a " + std::to_string(image.width) + "x" +
                                std::to_string(image.height) + " RGB image");
  }
  if (static_cast<std::uint64_t>(image.width) > 0x7FFFFFFFu ||
      static_cast<std::uint64_t>(image.height) > 0x7FFFFFFFu) {
    throw std::invalid_argument("encode_png: image too large for PNG");
  }

  // Every row with filter type 0: unfiltered rows keep identical rows identical, which the
  // row-stride hint turns into 258-byte matches.
  const std::size_t stride = row_bytes + 1;
  std::vector<std::uint8_t> raw;
  raw.reserve(stride * static_cast<std::size_t>(image.height));
  for (int y = 0; y < image.height; ++y) {
    raw.push_back(0);
    const auto* row = image.pixels.data() + static_cast<std::size_t>(y) * row_bytes;
    raw.insert(raw.end(), row, row + row_bytes);
  }
  std::vector<std::uint8_t> idat;
  zlib_compress(raw.data(), raw.size(), {3, stride}, idat);

  out.assign({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
  std::vector<std::uint8_t> ihdr;
  put_u32(ihdr, static_cast<std::uint32_t>(image.width));
  put_u32(ihdr, static_cast<std::uint32_t>(image.height));
  for (std::uint8_t v : {8, 2, 0, 0, 0})
    ihdr.push_back(v);  // 8-bit RGB, deflate, filter 0, not interlaced
  put_chunk(out, "IHDR", ihdr.data(), ihdr.size());
  constexpr std::size_t kIdatChunk = 1 << 16;
  for (std::size_t at = 0; at < idat.size(); at += kIdatChunk) {
    put_chunk(out, "IDAT", idat.data() + at, std::min(kIdatChunk, idat.size() - at));
  }
  put_chunk(out, "IEND", nullptr, 0);
}

}  // namespace tether::remote::report

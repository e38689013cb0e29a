#include "report/png.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/remote/report/plot.h"

namespace tether::remote::report {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

// A PNG reader written from the specifications, independent of the encoder: bitwise CRC,
// per-byte Adler-32, and an inflater after RFC 1951 (stored and fixed-Huffman blocks; the
// encoder never emits dynamic ones, so meeting one is an error).

std::uint32_t reference_crc32(const std::uint8_t* data, std::size_t size) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::uint32_t reference_adler32(const Bytes& data) {
  std::uint32_t a = 1, b = 0;
  for (std::uint8_t byte : data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

class BitReader {
 public:
  BitReader(const Bytes& data, std::size_t byte_offset) : data_(data), bit_(byte_offset * 8) {}

  std::uint32_t bits(int n) {
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (bit_ / 8 >= data_.size()) throw std::runtime_error("inflate: ran past the end of input");
      v |= static_cast<std::uint32_t>((data_[bit_ / 8] >> (bit_ % 8)) & 1u) << i;
      ++bit_;
    }
    return v;
  }
  void align() { bit_ = (bit_ + 7) / 8 * 8; }
  std::size_t byte_position() const { return (bit_ + 7) / 8; }

 private:
  const Bytes& data_;
  std::size_t bit_;
};

// Canonical Huffman decoding as in RFC 1951 §3.2.2.
struct Huffman {
  std::vector<int> count = std::vector<int>(16, 0);
  std::vector<int> symbol;

  explicit Huffman(const std::vector<int>& lengths) {
    for (int len : lengths) ++count[static_cast<std::size_t>(len)];
    count[0] = 0;
    std::vector<int> offset(16, 0);
    for (int len = 1; len < 15; ++len) offset[len + 1] = offset[len] + count[len];
    symbol.resize(lengths.size());
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      if (lengths[s] != 0)
        symbol[static_cast<std::size_t>(offset[lengths[s]]++)] = static_cast<int>(s);
    }
  }

  int decode(BitReader& in) const {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= 15; ++len) {
      code |= static_cast<int>(in.bits(1));
      const int n = count[static_cast<std::size_t>(len)];
      if (code - n < first) return symbol[static_cast<std::size_t>(index + (code - first))];
      index += n;
      first = (first + n) << 1;
      code <<= 1;
    }
    throw std::runtime_error("inflate: invalid Huffman code");
  }
};

struct Inflated {
  Bytes data;
  int stored_blocks = 0;
  int fixed_blocks = 0;
  std::size_t end = 0;  // first byte after the DEFLATE data
};

Inflated inflate(const Bytes& in, std::size_t offset) {
  static const int kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
  static const int kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  static const int kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
  static const int kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                     6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
  std::vector<int> lit_lengths(288);
  for (int s = 0; s < 288; ++s)
    lit_lengths[static_cast<std::size_t>(s)] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  const Huffman fixed_lit(lit_lengths);
  const Huffman fixed_dist(std::vector<int>(30, 5));

  Inflated out;
  BitReader br(in, offset);
  bool final = false;
  while (!final) {
    final = br.bits(1) == 1;
    const std::uint32_t type = br.bits(2);
    if (type == 0) {
      ++out.stored_blocks;
      br.align();
      const std::uint32_t len = br.bits(16), nlen = br.bits(16);
      if ((len ^ 0xFFFFu) != nlen) throw std::runtime_error("inflate: stored LEN/NLEN mismatch");
      for (std::uint32_t i = 0; i < len; ++i)
        out.data.push_back(static_cast<std::uint8_t>(br.bits(8)));
    } else if (type == 1) {
      ++out.fixed_blocks;
      for (;;) {
        const int sym = fixed_lit.decode(br);
        if (sym < 256) {
          out.data.push_back(static_cast<std::uint8_t>(sym));
          continue;
        }
        if (sym == 256) break;
        if (sym > 285) throw std::runtime_error("inflate: invalid length symbol");
        const int length =
            kLengthBase[sym - 257] + static_cast<int>(br.bits(kLengthExtra[sym - 257]));
        const int dsym = fixed_dist.decode(br);
        if (dsym > 29) throw std::runtime_error("inflate: invalid distance symbol");
        const std::size_t distance =
            static_cast<std::size_t>(kDistBase[dsym]) + br.bits(kDistExtra[dsym]);
        if (distance > out.data.size() || distance > 32768) {
          throw std::runtime_error("inflate: distance beyond the window");
        }
        for (int i = 0; i < length; ++i) out.data.push_back(out.data[out.data.size() - distance]);
      }
    } else {
      throw std::runtime_error("inflate: unexpected block type " + std::to_string(type));
    }
  }
  out.end = br.byte_position();
  return out;
}

std::uint32_t read_u32(const Bytes& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
         (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// Checks the zlib wrapper (header check bits, no preset dictionary, Adler-32 trailer) and
// returns the inflated payload.
Inflated unzlib(const Bytes& z) {
  if (z.size() < 6) throw std::runtime_error("zlib: too short");
  if ((z[0] & 0x0F) != 8 || (z[0] >> 4) > 7) throw std::runtime_error("zlib: not deflate/32K");
  if ((z[0] * 256 + z[1]) % 31 != 0) throw std::runtime_error("zlib: header check bits wrong");
  if (z[1] & 0x20) throw std::runtime_error("zlib: preset dictionary");
  Inflated r = inflate(z, 2);
  if (r.end + 4 != z.size()) throw std::runtime_error("zlib: trailer not at the end");
  if (read_u32(z, r.end) != reference_adler32(r.data))
    throw std::runtime_error("zlib: Adler-32 mismatch");
  return r;
}

struct DecodedPng {
  int width = 0, height = 0;
  Bytes rgb;
  std::vector<std::string> chunks;
  Inflated stream;
};

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

DecodedPng decode_png(const Bytes& png) {
  static const std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (png.size() < 8 || !std::equal(kSignature, kSignature + 8, png.begin())) {
    throw std::runtime_error("png: bad signature");
  }
  DecodedPng out;
  Bytes idat;
  std::size_t at = 8;
  bool ended = false;
  while (at < png.size()) {
    if (ended) throw std::runtime_error("png: data after IEND");
    if (at + 12 > png.size()) throw std::runtime_error("png: truncated chunk");
    const std::uint32_t length = read_u32(png, at);
    if (at + 12 + length > png.size()) throw std::runtime_error("png: truncated chunk data");
    const std::string type(png.begin() + static_cast<long>(at) + 4,
                           png.begin() + static_cast<long>(at) + 8);
    const std::uint8_t* body = png.data() + at + 8;
    if (read_u32(png, at + 8 + length) != reference_crc32(png.data() + at + 4, length + 4)) {
      throw std::runtime_error("png: CRC mismatch in " + type);
    }
    if (out.chunks.empty() && type != "IHDR") throw std::runtime_error("png: IHDR not first");
    out.chunks.push_back(type);
    if (type == "IHDR") {
      if (length != 13) throw std::runtime_error("png: IHDR length");
      const Bytes h(body, body + 13);
      out.width = static_cast<int>(read_u32(h, 0));
      out.height = static_cast<int>(read_u32(h, 4));
      if (h[8] != 8 || h[9] != 2 || h[10] != 0 || h[11] != 0 || h[12] != 0) {
        throw std::runtime_error("png: not 8-bit RGB, deflate, filter 0, non-interlaced");
      }
    } else if (type == "IDAT") {
      idat.insert(idat.end(), body, body + length);
    } else if (type == "IEND") {
      if (length != 0) throw std::runtime_error("png: IEND has data");
      ended = true;
    }
    at += 12 + length;
  }
  if (!ended) throw std::runtime_error("png: no IEND");
  out.stream = unzlib(idat);
  const std::size_t row = static_cast<std::size_t>(out.width) * 3;
  if (out.stream.data.size() != (row + 1) * static_cast<std::size_t>(out.height)) {
    throw std::runtime_error("png: wrong amount of image data");
  }
  out.rgb.assign(row * static_cast<std::size_t>(out.height), 0);
  for (std::size_t y = 0; y < static_cast<std::size_t>(out.height); ++y) {
    const std::uint8_t filter = out.stream.data[y * (row + 1)];
    const std::uint8_t* src = out.stream.data.data() + y * (row + 1) + 1;
    std::uint8_t* dst = out.rgb.data() + y * row;
    const std::uint8_t* up = y > 0 ? dst - row : nullptr;
    for (std::size_t i = 0; i < row; ++i) {
      const int a = i >= 3 ? dst[i - 3] : 0, b = up ? up[i] : 0, c = (up && i >= 3) ? up[i - 3] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4:
          predictor = paeth(a, b, c);
          break;
        default:
          throw std::runtime_error("png: bad filter type");
      }
      dst[i] = static_cast<std::uint8_t>(src[i] + predictor);
    }
  }
  return out;
}

Bytes deflated(const Bytes& data, const std::vector<std::size_t>& hints = {}) {
  Bytes out;
  deflate(data.data(), data.size(), hints, out);
  return out;
}

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (auto& v : b) v = static_cast<std::uint8_t>(rng());
  return b;
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  const Bytes check = bytes_of("123456789");
  EXPECT_EQ(crc32(check.data(), check.size()), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
  const Bytes iend = bytes_of("IEND");
  EXPECT_EQ(crc32(iend.data(), iend.size()), 0xAE426082u);  // every PNG's last four bytes
}

TEST(Crc32, ContinuesARunningChecksum) {
  const Bytes data = random_bytes(10000, 7);
  const std::uint32_t whole = crc32(data.data(), data.size());
  EXPECT_EQ(crc32(data.data() + 4321, data.size() - 4321, crc32(data.data(), 4321)), whole);
  EXPECT_EQ(whole, reference_crc32(data.data(), data.size()));
}

TEST(Adler32, MatchesKnownVectors) {
  const Bytes wikipedia = bytes_of("Wikipedia");
  EXPECT_EQ(adler32(wikipedia.data(), wikipedia.size()), 0x11E60398u);
  const Bytes check = bytes_of("123456789");
  EXPECT_EQ(adler32(check.data(), check.size()), 0x091E01DEu);
  EXPECT_EQ(adler32(nullptr, 0), 1u);
}

TEST(Adler32, AgreesWithTheDefinitionWhereTheSumsWouldOverflowWithoutReduction) {
  const Bytes ones(100000, 0xFF);
  EXPECT_EQ(adler32(ones.data(), ones.size()), reference_adler32(ones));
  const Bytes data = random_bytes(77777, 3);
  EXPECT_EQ(adler32(data.data() + 5000, data.size() - 5000, adler32(data.data(), 5000)),
            reference_adler32(data));
}

TEST(Deflate, EmptyInputIsOneFinalEmptyBlock) {
  const Inflated r = inflate(deflated({}), 0);
  EXPECT_TRUE(r.data.empty());
  EXPECT_EQ(r.fixed_blocks + r.stored_blocks, 1);
}

TEST(Deflate, TextRoundTripsThroughFixedHuffmanBlocks) {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += "The door opens 35 degrees about its hinge, fast at first, then slower. ";
    text += std::to_string(i * 37 % 101) + "\n";
  }
  const Bytes input = bytes_of(text);
  const Bytes z = deflated(input);
  const Inflated r = inflate(z, 0);
  EXPECT_EQ(r.data, input);
  EXPECT_EQ(r.stored_blocks, 0);
  EXPECT_GT(r.fixed_blocks, 0);
  EXPECT_LT(z.size(), input.size() / 8);
}

TEST(Deflate, LongRunsCostAFewBitsPerMaximalMatch) {
  const Bytes zeros(1'000'000, 0);
  const Bytes z = deflated(zeros);
  EXPECT_EQ(inflate(z, 0).data, zeros);
  // 258-byte matches at distance 1 cost 8 + 5 bits each: ~6.3 kB for a megabyte.
  EXPECT_LT(z.size(), 7000u);
}

TEST(Deflate, MatchesReachBackTheWholeWindowAcrossBlocks) {
  Bytes input = random_bytes(32768, 11);
  input.insert(input.end(), input.begin(), input.end());  // second half 32768 bytes back
  const Bytes z = deflated(input, {32768});
  const Inflated r = inflate(z, 0);
  EXPECT_EQ(r.data, input);
  EXPECT_GT(r.stored_blocks, 0);  // the random half
  EXPECT_LT(z.size(), 32768u + 2000u);
}

TEST(Deflate, IncompressibleDataIsStoredWithLittleOverhead) {
  const Bytes input = random_bytes(200000, 5);
  const Bytes z = deflated(input);
  const Inflated r = inflate(z, 0);
  EXPECT_EQ(r.data, input);
  EXPECT_EQ(r.fixed_blocks, 0);
  EXPECT_EQ(r.stored_blocks, 13);  // 16 KiB blocks
  EXPECT_LE(z.size(), input.size() + 13 * 5);
}

TEST(Deflate, MixedRunsAndNoiseRoundTrip) {
  std::mt19937_64 rng(21);
  Bytes input;
  while (input.size() < 400000) {
    const auto kind = rng() % 3;
    const std::size_t n = 1 + rng() % 5000;
    if (kind == 0) {
      const Bytes noise = random_bytes(n, rng());
      input.insert(input.end(), noise.begin(), noise.end());
    } else if (kind == 1) {
      input.insert(input.end(), n, static_cast<std::uint8_t>(rng()));
    } else if (input.size() > 1000) {
      const std::size_t back = 1 + rng() % std::min<std::size_t>(input.size(), 32768);
      for (std::size_t i = 0; i < n; ++i) input.push_back(input[input.size() - back]);
    }
  }
  const Inflated r = inflate(deflated(input, {3, 1201}), 0);
  EXPECT_EQ(r.data, input);
}

TEST(ZlibStream, HeaderIsValidAndTrailerIsTheAdler32OfTheInput) {
  const Bytes input = bytes_of("tether tether tether tether");
  Bytes z;
  zlib_compress(input.data(), input.size(), {}, z);
  ASSERT_GE(z.size(), 6u);
  EXPECT_EQ(z[0], 0x78);  // deflate, 32 KiB window
  EXPECT_EQ((z[0] * 256 + z[1]) % 31, 0);
  EXPECT_EQ(read_u32(z, z.size() - 4), reference_adler32(input));
  EXPECT_EQ(unzlib(z).data, input);
}

TEST(Png, SmallImageHasSignatureHeaderAndValidChunks) {
  Image image(7, 5);
  std::mt19937_64 rng(1);
  for (auto& v : image.pixels) v = static_cast<std::uint8_t>(rng());
  Bytes png;
  encode_png(image, png);
  const Bytes signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  ASSERT_GE(png.size(), 8u + 25u + 12u);
  EXPECT_TRUE(std::equal(signature.begin(), signature.end(), png.begin()));
  EXPECT_EQ(read_u32(png, 8), 13u);
  EXPECT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  EXPECT_EQ(read_u32(png, 16), 7u);
  EXPECT_EQ(read_u32(png, 20), 5u);
  const DecodedPng d = decode_png(png);
  EXPECT_EQ(d.chunks.front(), "IHDR");
  EXPECT_EQ(d.chunks.back(), "IEND");
  EXPECT_EQ(d.width, 7);
  EXPECT_EQ(d.height, 5);
  EXPECT_EQ(d.rgb, image.pixels);
}

Figure two_panel_figure() {
  Figure f;
  f.title = "Door opening, spring trajectory";
  Panel angle{"Door angle", "time [s]", "angle [°]", {}, std::nullopt, std::nullopt, {}};
  Panel force{"Force magnitude", "time [s]", "|F| [N]", {}, std::nullopt, std::nullopt, {}};
  Series a{"door angle", {}, {}, palette_color(0)};
  Series b{"|F|", {}, {}, palette_color(1)};
  for (int i = 0; i <= 2000; ++i) {
    const double t = 0.005 * i;
    a.x.push_back(t);
    a.y.push_back(35.0 * (1.0 - std::exp(-t / 1.5)));
    b.x.push_back(t);
    b.y.push_back(40.0 * std::exp(-t / 1.5) + 2.0 * std::sin(20.0 * t));
  }
  angle.series = {a};
  angle.references = {{35.0, "target 35°", {110, 110, 110}}};
  force.series = {b};
  f.panels = {angle, force};
  return f;
}

TEST(Png, DecodedPixelsEqualARenderedPlotExactly) {
  const Image image = render(two_panel_figure());
  Bytes png;
  encode_png(image, png);
  const DecodedPng d = decode_png(png);
  EXPECT_EQ(d.width, image.width);
  EXPECT_EQ(d.height, image.height);
  EXPECT_EQ(d.rgb, image.pixels);
  EXPECT_GT(d.stream.fixed_blocks, 0);
  EXPECT_GT(std::count(d.chunks.begin(), d.chunks.end(), "IDAT"), 0);
}

TEST(Png, NoiseImageRoundTripsThroughStoredBlocksAndSeveralIdatChunks) {
  Image image(300, 200);
  std::mt19937_64 rng(9);
  for (auto& v : image.pixels) v = static_cast<std::uint8_t>(rng());
  Bytes png;
  encode_png(image, png);
  const DecodedPng d = decode_png(png);
  EXPECT_EQ(d.rgb, image.pixels);
  EXPECT_GT(d.stream.stored_blocks, 0);
  EXPECT_GT(std::count(d.chunks.begin(), d.chunks.end(), "IDAT"), 1);
}

TEST(Png, ReaderRejectsACorruptedChunk) {
  Bytes png;
  encode_png(render(two_panel_figure()), png);
  png[png.size() / 2] ^= 0x10;  // inside an IDAT
  EXPECT_THROW(
      {
        try {
          decode_png(png);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("CRC mismatch in IDAT"), std::string::npos)
              << e.what();
          throw;
        }
      },
      std::runtime_error);
}

TEST(Png, RejectsAPixelBufferThatDoesNotMatchTheSize) {
  Image image(4, 4);
  image.pixels.pop_back();
  Bytes png;
  EXPECT_THROW(encode_png(image, png), std::invalid_argument);
  EXPECT_THROW(encode_png(Image(0, 3), png), std::invalid_argument);
}

}  // namespace
}  // namespace tether::remote::report

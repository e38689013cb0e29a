#pragma once

// The pieces of tether's PNG encoder, exposed for tests: checksums, the DEFLATE coder and the
// zlib stream around it. encode_png() (plot.h) puts them together.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tether::remote::report {

// CRC-32 as used by PNG chunks and gzip (reflected polynomial 0xEDB88320, initial value and
// final XOR 0xFFFFFFFF). `crc` continues a running CRC: crc32(b, crc32(a)) == crc32(a + b).
std::uint32_t crc32(const std::uint8_t* data, std::size_t size, std::uint32_t crc = 0);

// Adler-32 as used by zlib (RFC 1950); `adler` continues a running checksum.
std::uint32_t adler32(const std::uint8_t* data, std::size_t size, std::uint32_t adler = 1);

// Raw DEFLATE (RFC 1951) appended to `out`. Matches are found by LZ77 over the 32 KiB window:
// the distances `hint_distances` are tried first at every position (for an image, 3 = the
// previous RGB pixel and the row stride = the pixel above), then a short hash chain. Each
// block is coded with the fixed Huffman codes, or stored when that is shorter (noise).
void deflate(const std::uint8_t* data, std::size_t size,
             const std::vector<std::size_t>& hint_distances, std::vector<std::uint8_t>& out);

// A zlib stream (RFC 1950: header, DEFLATE data, Adler-32 of the input) appended to `out`.
void zlib_compress(const std::uint8_t* data, std::size_t size,
                   const std::vector<std::size_t>& hint_distances, std::vector<std::uint8_t>& out);

}  // namespace tether::remote::report

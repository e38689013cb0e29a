#pragma once

// Reads back the PNG files tether writes, through libpng itself (the reference decoder):
// the header fields as stored, and the pixels as 8-bit RGB.

#include <png.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tether::remote::report::testing_png {

struct DecodedPng {
  std::string error;  // libpng's message; empty when the whole file decoded
  std::uint32_t width = 0, height = 0;
  int bit_depth = 0, colour_type = -1;  // from IHDR as stored (colour type 2 = RGB)
  std::vector<std::uint8_t> rgb;        // width * height * 3 bytes, rows top to bottom
};

inline std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline DecodedPng read_png(const std::string& path) {
  DecodedPng out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    out.error = image.message;
    return out;
  }
  out.width = image.width;
  out.height = image.height;
  image.format = PNG_FORMAT_RGB;  // what to decode into, whatever is stored
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr) == 0) {
    out.error = image.message;
    out.rgb.clear();
    return out;
  }
  // libpng has checked the signature and every chunk's CRC; IHDR is the first chunk, its
  // bit depth and colour type at bytes 24 and 25.
  const std::vector<std::uint8_t> bytes = file_bytes(path);
  out.bit_depth = bytes.at(24);
  out.colour_type = bytes.at(25);
  return out;
}

}  // namespace tether::remote::report::testing_png

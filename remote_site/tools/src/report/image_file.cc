#include "report/image_file.h"

#include <cairo-svg.h>
#include <png.h>

#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace tether::remote::report {
namespace {

// A file opened for writing that reports every failure with the path and the reason; the
// first errno seen by a writer is kept, since later calls (fclose) may overwrite it.
class OutputFile {
 public:
  OutputFile(const std::string& path, const std::string& who) : path_(path), who_(who) {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) fail("cannot create", std::strerror(errno));
  }
  ~OutputFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* get() const { return file_; }
  void note_errno(int error) {
    if (first_errno_ == 0) first_errno_ = error;
  }

  // Buffered bytes reach the file only here, so a full disk often shows up only now.
  void close() {
    const bool stream_error = std::ferror(file_) != 0;
    errno = 0;
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) note_errno(errno);
    if (stream_error || rc != 0) fail("cannot write", reason());
  }

  [[noreturn]] void fail(const char* what, const std::string& why) const {
    throw std::runtime_error(who_ + ": " + what + " '" + path_ + "': " + why);
  }
  std::string reason() const {
    return first_errno_ != 0 ? std::strerror(first_errno_) : "write error";
  }

 private:
  std::string path_, who_;
  std::FILE* file_ = nullptr;
  int first_errno_ = 0;
};

cairo_status_t write_to_file(void* closure, const unsigned char* data, unsigned int length) {
  auto* file = static_cast<OutputFile*>(closure);
  errno = 0;
  if (std::fwrite(data, 1, length, file->get()) != length) {
    file->note_errno(errno);
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

void check_surface(cairo_surface_t* surface, const std::string& path, const std::string& who) {
  const cairo_status_t status = cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw std::runtime_error(who + ": cannot draw '" + path +
                             "': " + cairo_status_to_string(status));
  }
}

void draw_on(cairo_surface_t* surface, const std::function<void(cairo_t*)>& draw,
             const std::string& path, const std::string& who) {
  check_surface(surface, path, who);
  const ContextPtr cr(cairo_create(surface));
  cairo_set_source_rgb(cr.get(), 1.0, 1.0, 1.0);
  cairo_paint(cr.get());
  draw(cr.get());
  // Cairo stops drawing at its first error and stays silent; a picture with parts missing
  // must not pass for a complete one.
  const cairo_status_t status = cairo_status(cr.get());
  if (status != CAIRO_STATUS_SUCCESS) {
    throw std::runtime_error(who + ": cannot draw '" + path +
                             "': " + cairo_status_to_string(status));
  }
}

}  // namespace

FileFormat format_for_path(const std::string& path) {
  constexpr std::string_view kSuffix = ".svg";
  if (path.size() < kSuffix.size()) return FileFormat::kPng;
  for (std::size_t i = 0; i < kSuffix.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[path.size() - kSuffix.size() + i]);
    if (std::tolower(c) != kSuffix[i]) return FileFormat::kPng;
  }
  return FileFormat::kSvg;
}

void write_drawing(int width, int height, const std::function<void(cairo_t*)>& draw,
                   const std::string& path, const std::string& who) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument(who + ": cannot write a " + std::to_string(width) + "x" +
                                std::to_string(height) + " picture to '" + path + "'");
  }
  if (format_for_path(path) == FileFormat::kSvg) {
    OutputFile file(path, who);
    // Declared after `file`, so it is finished (and writes its last bytes) before the file
    // closes, even when drawing throws.
    const SurfacePtr svg(cairo_svg_surface_create_for_stream(&write_to_file, &file, width, height));
    check_surface(svg.get(), path, who);
    cairo_svg_surface_set_document_unit(svg.get(), CAIRO_SVG_UNIT_PX);
    draw_on(svg.get(), draw, path, who);
    cairo_surface_finish(svg.get());
    if (cairo_surface_status(svg.get()) != CAIRO_STATUS_SUCCESS) {
      file.fail("cannot write", file.reason());
    }
    file.close();
    return;
  }
  // Drawn in memory first, so a drawing that fails leaves no file behind.
  const SurfacePtr image(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height));
  draw_on(image.get(), draw, path, who);
  write_png_rgb(image.get(), path, who);
}

void write_png_rgb(cairo_surface_t* image, const std::string& path, const std::string& who) {
  if (image == nullptr || cairo_surface_get_type(image) != CAIRO_SURFACE_TYPE_IMAGE ||
      cairo_image_surface_get_format(image) != CAIRO_FORMAT_RGB24) {
    throw std::invalid_argument(who + ": only an RGB24 image surface can be written to '" + path +
                                "'");
  }
  cairo_surface_flush(image);
  const int width = cairo_image_surface_get_width(image);
  const int height = cairo_image_surface_get_height(image);
  const int stride = cairo_image_surface_get_stride(image);
  const unsigned char* data = cairo_image_surface_get_data(image);
  if (data == nullptr || width < 1 || height < 1) {
    throw std::invalid_argument(who + ": cannot write an empty image to '" + path + "'");
  }
  // Cairo keeps each RGB24 pixel as a native-endian 32-bit 0x00RRGGBB; libpng wants r, g, b
  // bytes.
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
                                3);
  std::size_t k = 0;
  for (int y = 0; y < height; ++y) {
    const unsigned char* row = data + static_cast<std::ptrdiff_t>(y) * stride;
    for (int x = 0; x < width; ++x) {
      std::uint32_t pixel = 0;
      std::memcpy(&pixel, row + 4 * static_cast<std::ptrdiff_t>(x), sizeof pixel);
      rgb[k++] = static_cast<std::uint8_t>(pixel >> 16);
      rgb[k++] = static_cast<std::uint8_t>(pixel >> 8);
      rgb[k++] = static_cast<std::uint8_t>(pixel);
    }
  }

  OutputFile file(path, who);
  png_image png{};  // the simplified API wants version set and everything else zero
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(width);
  png.height = static_cast<png_uint_32>(height);
  png.format = PNG_FORMAT_RGB;
  errno = 0;
  if (png_image_write_to_stdio(&png, file.get(), 0, rgb.data(), 0, nullptr) == 0) {
    if (errno != 0) file.note_errno(errno);
    file.fail("cannot write", std::string(png.message) + " (" + file.reason() + ")");
  }
  file.close();
}

}  // namespace tether::remote::report

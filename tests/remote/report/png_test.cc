#include <cairo.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "png_reader.h"
#include "report/image_file.h"

// What tether writes through libpng and Cairo's SVG surface, read back by libpng: the
// pixels as drawn, the header as promised (8-bit RGB), and errors that name the file.

namespace tether::remote::report {
namespace {

using testing_png::DecodedPng;
using testing_png::read_png;

std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string runtime_error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no exception";
}

TEST(ImageFile, FormatFollowsTheExtensionInAnyLetterCase) {
  EXPECT_EQ(format_for_path("plot.svg"), FileFormat::kSvg);
  EXPECT_EQ(format_for_path("/tmp/run 3/Plot.SVG"), FileFormat::kSvg);
  EXPECT_EQ(format_for_path(".svg"), FileFormat::kSvg);
  EXPECT_EQ(format_for_path("plot.png"), FileFormat::kPng);
  EXPECT_EQ(format_for_path("plot.svg.png"), FileFormat::kPng);
  EXPECT_EQ(format_for_path("plotsvg"), FileFormat::kPng);
  EXPECT_EQ(format_for_path("svg"), FileFormat::kPng);
  EXPECT_EQ(format_for_path(""), FileFormat::kPng);
}

TEST(ImageFile, PngKeepsEveryPixelOfAnRgbSurface) {
  // 7 px wide: Cairo pads each row, so the stride is not 4 × width.
  const SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 7, 5));
  ASSERT_EQ(cairo_surface_status(surface.get()), CAIRO_STATUS_SUCCESS);
  cairo_surface_flush(surface.get());
  unsigned char* data = cairo_image_surface_get_data(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  std::mt19937 rng(11);
  std::vector<std::uint8_t> expected;
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 7; ++x) {
      const std::uint32_t pixel = rng() & 0xFFFFFFu;
      std::memcpy(
          data + static_cast<std::ptrdiff_t>(y) * stride + 4 * static_cast<std::ptrdiff_t>(x),
          &pixel, sizeof pixel);
      expected.push_back(static_cast<std::uint8_t>(pixel >> 16));
      expected.push_back(static_cast<std::uint8_t>(pixel >> 8));
      expected.push_back(static_cast<std::uint8_t>(pixel));
    }
  }
  cairo_surface_mark_dirty(surface.get());

  const std::filesystem::path dir = temp_dir("tether_png_pixels");
  const std::string path = (dir / "noise.png").string();
  write_png_rgb(surface.get(), path, "test");
  const DecodedPng png = read_png(path);
  ASSERT_EQ(png.error, "");
  EXPECT_EQ(png.width, 7u);
  EXPECT_EQ(png.height, 5u);
  EXPECT_EQ(png.bit_depth, 8);
  EXPECT_EQ(png.colour_type, 2);
  EXPECT_EQ(png.rgb, expected);
  std::filesystem::remove_all(dir);
}

TEST(ImageFile, DrawingIsWrittenOverAWhiteBackground) {
  const std::filesystem::path dir = temp_dir("tether_png_drawing");
  const std::string path = (dir / "square.png").string();
  write_drawing(
      6, 4,
      [](cairo_t* cr) {
        cairo_rectangle(cr, 2, 1, 3, 2);  // columns 2..4, rows 1..2
        cairo_set_source_rgb(cr, 1.0, 0.0, 0.0);
        cairo_fill(cr);
      },
      path, "test");
  const DecodedPng png = read_png(path);
  ASSERT_EQ(png.error, "");
  ASSERT_EQ(png.width, 6u);
  ASSERT_EQ(png.height, 4u);
  EXPECT_EQ(png.colour_type, 2);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      const bool red = x >= 2 && x <= 4 && y >= 1 && y <= 2;
      const std::size_t k = (static_cast<std::size_t>(y) * 6 + static_cast<std::size_t>(x)) * 3;
      EXPECT_EQ(png.rgb[k], 255) << x << ", " << y;
      EXPECT_EQ(png.rgb[k + 1], red ? 0 : 255) << x << ", " << y;
      EXPECT_EQ(png.rgb[k + 2], red ? 0 : 255) << x << ", " << y;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ImageFile, SvgIsACompleteXmlDocumentOfTheDrawingSize) {
  const std::filesystem::path dir = temp_dir("tether_svg_drawing");
  const std::string path = (dir / "square.svg").string();
  write_drawing(
      40, 30,
      [](cairo_t* cr) {
        cairo_rectangle(cr, 5, 5, 10, 10);
        cairo_set_source_rgb(cr, 0.0, 0.0, 1.0);
        cairo_fill(cr);
      },
      path, "test");
  const std::vector<std::uint8_t> bytes = testing_png::file_bytes(path);
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_EQ(text.rfind("<?xml", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("width=\"40"), std::string::npos);
  EXPECT_NE(text.find("height=\"30"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ImageFile, ErrorsNameTheFileAndTheReason) {
  const auto nothing = [](cairo_t*) {};
  const std::vector<std::string> missing = {"/nonexistent-tether-dir/a.png",
                                            "/nonexistent-tether-dir/a.svg"};
  for (const std::string& path : missing) {
    EXPECT_EQ(runtime_error_message([&] { write_drawing(10, 10, nothing, path, "plotter"); }),
              "plotter: cannot create '" + path + "': No such file or directory");
  }
  // /dev/full opens but takes no byte: the failure shows when the data are flushed. The
  // extension picks the format, so the SVG reaches it through a link named .svg.
  const std::filesystem::path dir = temp_dir("tether_full_disk");
  std::filesystem::create_symlink("/dev/full", dir / "full.svg");
  const std::vector<std::string> full = {"/dev/full", (dir / "full.svg").string()};
  for (const std::string& path : full) {
    EXPECT_EQ(runtime_error_message([&] { write_drawing(10, 10, nothing, path, "plotter"); }),
              "plotter: cannot write '" + path + "': No space left on device");
  }
  std::filesystem::remove_all(dir);
}

TEST(ImageFile, DrawingErrorsAreReportedAndLeaveNoPng) {
  const std::filesystem::path dir = temp_dir("tether_png_broken");
  const std::string path = (dir / "broken.png").string();
  const std::string message = runtime_error_message([&] {
    write_drawing(
        10, 10, [](cairo_t* cr) { cairo_restore(cr); },  // a restore without a save
        path, "plotter");
  });
  EXPECT_NE(message.find("plotter: cannot draw '" + path + "'"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

TEST(ImageFile, RejectsWhatItCannotWriteAsRgb) {
  const SurfacePtr argb(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 4, 4));
  EXPECT_THROW(write_png_rgb(argb.get(), "unused.png", "test"), std::invalid_argument);
  EXPECT_THROW(write_png_rgb(nullptr, "unused.png", "test"), std::invalid_argument);
  EXPECT_THROW(write_drawing(
                   0, 4, [](cairo_t*) {}, "unused.png", "test"),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists("unused.png"));
}

}  // namespace
}  // namespace tether::remote::report

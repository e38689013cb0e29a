#include <gtest/gtest.h>
#include <png.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/remote/report/shake_picture.h"

namespace tether::remote::shake {
namespace {

void expect_pixel_near(const Eigen::Vector2d& actual, double x, double y) {
  EXPECT_NEAR(actual.x(), x, 1e-9);
  EXPECT_NEAR(actual.y(), y, 1e-9);
}

TEST(ShakeCanvas, FitsTheWorldRectangleWithOneScaleAndYUp) {
  const Canvas wide(100, 50, {0.0, 0.0}, {2.0, 1.0});
  EXPECT_DOUBLE_EQ(wide.scale(), 50.0);
  EXPECT_EQ(wide.width(), 100);
  EXPECT_EQ(wide.height(), 50);
  expect_pixel_near(wide.to_pixel({0.0, 0.0}), 0.0, 50.0);   // lo: the bottom-left corner
  expect_pixel_near(wide.to_pixel({2.0, 1.0}), 100.0, 0.0);  // hi: the top-right corner
  expect_pixel_near(wide.to_pixel({0.0, 0.1}), 0.0, 45.0);   // 0.1 m up is 5 px up

  // A square image for a 2:1 world: the scale fits the width, the world is centred.
  const Canvas square(100, 100, {-1.0, 3.0}, {1.0, 4.0});
  EXPECT_DOUBLE_EQ(square.scale(), 50.0);
  expect_pixel_near(square.to_pixel({-1.0, 3.0}), 0.0, 75.0);
  expect_pixel_near(square.to_pixel({1.0, 4.0}), 100.0, 25.0);
  expect_pixel_near(square.to_pixel({0.0, 3.5}), 50.0, 50.0);
}

TEST(ShakeCanvas, RejectsAnEmptyImageOrWorldRectangle) {
  EXPECT_THROW(Canvas(10, 10, {0, 0}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(Canvas(10, 10, {0, 1}, {1, 0}), std::invalid_argument);
  EXPECT_THROW(Canvas(0, 10, {0, 0}, {1, 1}), std::invalid_argument);
}

struct Rgb8 {
  std::uint32_t width = 0, height = 0;
  int colour_type = -1;
  std::vector<std::uint8_t> rgb;
  report::Rgb at(int x, int y) const {
    const std::size_t k = (static_cast<std::size_t>(y) * width + static_cast<std::size_t>(x)) * 3;
    return {rgb.at(k), rgb.at(k + 1), rgb.at(k + 2)};
  }
};

// Decoded by libpng, the reference decoder; colour type from IHDR as stored.
Rgb8 read_png(const std::string& path) {
  Rgb8 out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(image));
  if (png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr) == 0) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  out.width = image.width;
  out.height = image.height;
  out.rgb = std::move(rgb);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  out.colour_type = bytes.size() > 25 ? bytes[25] : -1;
  return out;
}

TEST(ShakeCanvas, WritesWhatWasDrawnWhereItWasDrawnAsAnRgbPng) {
  Canvas canvas(100, 50, {0.0, 0.0}, {2.0, 1.0});  // 50 px per metre
  const report::Rgb red{255, 0, 0}, blue{0, 0, 255}, green{0, 160, 0};
  canvas.line({0.0, 0.1}, {2.0, 0.1}, green, 3.0);
  canvas.circle({1.0, 0.6}, 0.2, blue, true);
  canvas.polygon({{0.1, 0.5}, {0.3, 0.5}, {0.3, 0.9}, {0.1, 0.9}}, red, true);
  canvas.circle({1.6, 0.5}, 0.2, blue, false);
  canvas.dot({1.6, 0.5}, 3.0, red);

  const std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / "tether_shake_picture";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "shapes.png").string();
  canvas.write_png(path);
  const Rgb8 png = read_png(path);
  ASSERT_EQ(png.width, 100u);
  ASSERT_EQ(png.height, 50u);
  EXPECT_EQ(png.colour_type, 2);  // 8-bit RGB
  // The inside of each filled shape, found through the canvas's own mapping.
  auto at = [&](const Eigen::Vector2d& world) {
    const Eigen::Vector2d p = canvas.to_pixel(world);
    return png.at(static_cast<int>(p.x()), static_cast<int>(p.y()));
  };
  EXPECT_EQ(at({1.0, 0.6}), blue);
  EXPECT_EQ(at({0.2, 0.7}), red);
  EXPECT_EQ(at({1.6, 0.5}), red);
  EXPECT_EQ(at({1.0, 0.1}), green);           // the 3 px line's middle row
  EXPECT_EQ(at({0.7, 0.8}), report::kWhite);  // nothing drawn there
  std::filesystem::remove_all(dir);
}

TEST(ShakeCanvas, WritesSvgWhenThePathEndsInSvg) {
  Canvas canvas(120, 80, {0.0, 0.0}, {1.2, 0.8});
  canvas.polygon({{0.1, 0.1}, {0.5, 0.1}, {0.3, 0.6}}, {190, 190, 190}, true);
  canvas.line({0.0, 0.0}, {1.2, 0.8}, report::kBlack, 2.0);
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "tether_shake_svg";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "shapes.svg").string();
  canvas.write(path);
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("<?xml", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("width=\"120"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ShakeCanvas, ThrowsNamingThePathWhenTheFileCannotBeCreated) {
  const Canvas canvas(10, 10, {0.0, 0.0}, {1.0, 1.0});
  const std::vector<std::string> paths = {"/nonexistent-dir/x.png", "/nonexistent-dir/x.svg"};
  for (const std::string& path : paths) {
    try {
      canvas.write_png(path);
      ADD_FAILURE() << "no exception for " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("Canvas: cannot create '" + path + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tether::remote::shake

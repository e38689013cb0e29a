#include "tether/remote/report/shake_picture.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tether::remote::shake {
namespace {

TEST(ShakeCanvas, MapsWorldToPixelsWithYUpAndDrawsShapes) {
  Canvas canvas(100, 50, {0.0, 0.0}, {2.0, 1.0});  // 50 px per metre
  const report::Rgb red{255, 0, 0}, blue{0, 0, 255};
  canvas.line({0.0, 0.1}, {2.0, 0.1}, red, 3.0);
  EXPECT_EQ(canvas.image().at(50, 49 - 5), red);  // y = 0.1 m is 5 px above the bottom row
  EXPECT_EQ(canvas.image().at(50, 20), report::kWhite);
  canvas.circle({1.0, 0.6}, 0.2, blue, true);
  EXPECT_EQ(canvas.image().at(50, 49 - 30), blue);
  canvas.polygon({{0.1, 0.5}, {0.3, 0.5}, {0.3, 0.9}, {0.1, 0.9}}, red, true);
  EXPECT_EQ(canvas.image().at(10, 49 - 35), red);
  EXPECT_THROW(Canvas(10, 10, {0, 0}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(canvas.write_png("/nonexistent-dir/x.png"), std::runtime_error);
}

}  // namespace
}  // namespace tether::remote::shake

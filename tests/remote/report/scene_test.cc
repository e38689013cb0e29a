// The seed pictures' figure writer (report/scene.h): world views keep one scale for both
// axes, the time colours run through the scale in order, and what is drawn lands where the
// data say.

#include "tether/remote/report/scene.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "png_reader.h"

namespace tether::remote::report {
namespace {

int brightness(Rgb c) { return c.r + c.g + c.b; }

TEST(TimeColour, RunsFromDarkVioletToGreenAndClampsOutsideTheScale) {
  const Rgb start = time_color(0.0), end = time_color(1.0);
  EXPECT_GT(start.b, start.g);  // violet
  EXPECT_GT(end.g, end.b);      // green
  EXPECT_LT(brightness(start), brightness(end));
  // Dark enough to read on white at the end too.
  EXPECT_LT(brightness(end), 3 * 200);
  EXPECT_EQ(time_color(-1.0), start);
  EXPECT_EQ(time_color(2.0), end);
  for (int k = 1; k <= 10; ++k) {  // brightening monotonically: later reads as lighter
    EXPECT_LE(brightness(time_color((k - 1) / 10.0)), brightness(time_color(k / 10.0)) + 3);
  }
}

TEST(Scene, RejectsAViewWithAnEmptyRange) {
  Scene scene;
  scene.rows.push_back({});
  scene.rows.back().views.push_back(View{});
  scene.rows.back().views.back().x = {1.0, 1.0};
  EXPECT_THROW(write_scene(scene, "scene_empty_range.png"), std::invalid_argument);
  EXPECT_THROW(write_scene(Scene{}, "scene_no_rows.png"), std::invalid_argument);
}

TEST(Scene, WorldViewDrawsASquareAsASquareWithItsTitleAndColourBar) {
  // A filled 1 m square in a view twice as wide as it is tall: one scale for both axes, so
  // its red pixels span as many columns as rows.
  Scene scene;
  scene.title = "a square";
  scene.time = TimeScale{0.0, 2.0, "time [s]"};
  ViewRow row;
  row.height = 400;
  View v;
  v.x_label = "x [m]";
  v.y_label = "y [m]";
  v.x = {-1.0, 1.0};
  v.y = {-1.0, 1.0};
  v.shapes.push_back(polygon({{-0.5, -0.5}, {0.5, -0.5}, {0.5, 0.5}, {-0.5, 0.5}}, Rgb{255, 0, 0},
                             Rgb{255, 0, 0}, 0.0));
  v.legend = {{"square", LegendEntry::Mark::kPatch, Rgb{255, 0, 0}, Rgb{255, 0, 0}}};
  v.legend_corner = Corner::kBottomLeft;
  row.views.push_back(v);
  scene.rows.push_back(row);
  scene.width = 800;
  const std::string path = "scene_square.png";
  write_scene(scene, path);
  const auto png = testing_png::read_png(path);
  ASSERT_TRUE(png.error.empty()) << png.error;
  EXPECT_EQ(png.width, 800u);
  EXPECT_GT(png.height, 400u);  // the title band and the colour bar below the row
  int left = 10000, right = -1, top = 10000, bottom = -1;
  long violet = 0;
  for (std::uint32_t y = 0; y < png.height; ++y) {
    for (std::uint32_t x = 0; x < png.width; ++x) {
      const std::size_t k = (static_cast<std::size_t>(y) * png.width + x) * 3;
      const Rgb c{png.rgb[k], png.rgb[k + 1], png.rgb[k + 2]};
      // The legend's patch sits in the bottom-left corner; count the square only.
      if (c == Rgb{255, 0, 0} && x > 200) {
        left = std::min(left, static_cast<int>(x));
        right = std::max(right, static_cast<int>(x));
        top = std::min(top, static_cast<int>(y));
        bottom = std::max(bottom, static_cast<int>(y));
      }
      if (c == time_color(0.0)) ++violet;
    }
  }
  ASSERT_GE(right, left);
  EXPECT_NEAR(right - left, bottom - top, 2);
  EXPECT_GT(violet, 10);  // the colour bar's start
}

}  // namespace
}  // namespace tether::remote::report

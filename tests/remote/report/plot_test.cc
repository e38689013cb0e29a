#include "tether/remote/report/plot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "png_reader.h"
#include "report/ticks.h"

// The figure model (layout()) is what these tests check: ranges, ticks, runs, legend and
// geometry. The written files are checked as files: a PNG libpng decodes, an SVG document.

namespace tether::remote::report {
namespace {

constexpr Rgb kSeriesColor{200, 30, 90};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One panel showing exactly [0, 1] × [0, 1].
Figure unit_figure(std::vector<Series> series) {
  Figure f;
  f.width = 1000;
  f.height_per_panel = 700;
  Panel p;
  p.x_range = Range{0.0, 1.0};
  p.y_range = Range{0.0, 1.0};
  p.series = std::move(series);
  f.panels = {p};
  return f;
}

Series line(std::vector<double> x, std::vector<double> y, Rgb color = kSeriesColor,
            std::string label = "") {
  return Series{std::move(label), std::move(x), std::move(y), color};
}

std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Plot, PlotsTheSameSeriesOverTheSameRanges) {
  Figure f = unit_figure({line({2.0, 7.0, 12.0}, {-1.0, 3.0, 0.0})});
  f.panels[0].x_range.reset();
  f.panels[0].y_range.reset();
  PanelLayout p = layout(f).panels.at(0);
  // x spans the data exactly, y the data plus 5 % of the span on either side.
  EXPECT_DOUBLE_EQ(p.area.x.min, 2.0);
  EXPECT_DOUBLE_EQ(p.area.x.max, 12.0);
  EXPECT_DOUBLE_EQ(p.area.y.min, -1.2);
  EXPECT_DOUBLE_EQ(p.area.y.max, 3.2);
  EXPECT_EQ(p.runs, (std::vector<SampleRun>{{0, 0, 3}}));

  f.panels[0].references = {{5.0, "bound", kBlack}};
  p = layout(f).panels.at(0);
  EXPECT_DOUBLE_EQ(p.area.y.min, -1.3);
  EXPECT_DOUBLE_EQ(p.area.y.max, 5.3);
  EXPECT_EQ(p.references, (std::vector<std::size_t>{0}));

  // A fixed range is shown as given, whatever the data.
  f.panels[0].x_range = Range{0.0, 20.0};
  f.panels[0].y_range = Range{-10.0, 10.0};
  p = layout(f).panels.at(0);
  EXPECT_DOUBLE_EQ(p.area.x.min, 0.0);
  EXPECT_DOUBLE_EQ(p.area.x.max, 20.0);
  EXPECT_DOUBLE_EQ(p.area.y.min, -10.0);
  EXPECT_DOUBLE_EQ(p.area.y.max, 10.0);
  // The ends of the ranges map onto the edges of the plot area.
  EXPECT_DOUBLE_EQ(p.area.column(0.0), p.area.left);
  EXPECT_DOUBLE_EQ(p.area.column(20.0), p.area.left + p.area.width);
  EXPECT_DOUBLE_EQ(p.area.row(10.0), p.area.top);
  EXPECT_DOUBLE_EQ(p.area.row(-10.0), p.area.top + p.area.height);
}

TEST(Plot, ConstantSeriesGetsARangeAroundItsValue) {
  Figure f = unit_figure({line({0.0, 0.5, 1.0}, {3.0, 3.0, 3.0})});
  f.panels[0].y_range.reset();
  const PlotArea a = layout(f).panels.at(0).area;
  EXPECT_NEAR(a.y.min, 2.67, 1e-12);  // ±10 % of the value, then the 5 % margin
  EXPECT_NEAR(a.y.max, 3.33, 1e-12);
  EXPECT_NEAR(a.row(3.0), a.top + 0.5 * a.height, 1e-9);  // drawn at mid-height

  f.panels[0].series = {line({0.0, 1.0}, {0.0, 0.0})};
  const PlotArea zero = layout(f).panels.at(0).area;
  EXPECT_DOUBLE_EQ(zero.y.min, -1.1);
  EXPECT_DOUBLE_EQ(zero.y.max, 1.1);
}

TEST(Plot, EmptySeriesAndEmptyPanelsShowTheUnitRangeWithNothingToDraw) {
  Figure f = unit_figure({line({}, {}, kSeriesColor, "empty")});
  f.panels[0].x_range.reset();
  f.panels[0].y_range.reset();
  f.panels.push_back(Panel{});
  const FigureLayout fl = layout(f);
  ASSERT_EQ(fl.panels.size(), 2u);
  for (const PanelLayout& p : fl.panels) {
    EXPECT_DOUBLE_EQ(p.area.x.min, 0.0);
    EXPECT_DOUBLE_EQ(p.area.x.max, 1.0);
    EXPECT_DOUBLE_EQ(p.area.y.min, 0.0);
    EXPECT_DOUBLE_EQ(p.area.y.max, 1.0);
    EXPECT_TRUE(p.runs.empty());
    EXPECT_FALSE(p.x_ticks.values.empty());
  }
  // A labelled series is listed even when it has no samples; an unlabelled panel has no legend.
  EXPECT_EQ(fl.panels[0].legend, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(fl.panels[0].legend_box.has_value());
  EXPECT_FALSE(fl.panels[1].legend_box.has_value());
}

TEST(Plot, NonFiniteSamplesSplitTheLineIntoRuns) {
  std::vector<double> x, y;
  for (int i = 0; i <= 100; ++i) {
    x.push_back(i / 100.0);
    y.push_back(i >= 40 && i <= 60 ? (i == 50 ? INFINITY : kNaN) : 0.5);
  }
  const Figure f = unit_figure({line(x, y), line({0.2, kNaN, 0.5, 0.8}, {0.1, 0.5, 0.5, kNaN}),
                                line({0.1, 0.2}, {-INFINITY, 0.3})});
  EXPECT_EQ(layout(f).panels.at(0).runs, (std::vector<SampleRun>{{0, 0, 40},
                                                                 {0, 61, 101},
                                                                 {1, 0, 1},  // dots
                                                                 {1, 2, 3},
                                                                 {2, 1, 2}}));
}

TEST(Plot, OnlyReferenceLinesInsideTheRangeAreShown) {
  Figure f = unit_figure({});
  f.panels[0].y_range = Range{0.0, 50.0};
  f.panels[0].references = {{35.0, "target 35°"}, {60.0, "outside"}, {kNaN, "nan"}, {0.0, ""}};
  EXPECT_EQ(layout(f).panels.at(0).references, (std::vector<std::size_t>{0, 3}));
}

// True if `values` are all the multiples of `step` within `r`.
bool every_multiple_within(const std::vector<double>& values, double step, const Range& r) {
  if (values.empty()) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < r.min - 1e-9 * step || values[i] > r.max + 1e-9 * step) return false;
    if (std::abs(values[i] / step - std::round(values[i] / step)) > 1e-9) return false;
    if (i > 0 && std::abs(values[i] - values[i - 1] - step) > 1e-9 * step) return false;
  }
  return values.front() - step < r.min && values.back() + step > r.max;
}

bool one_two_five(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
  return std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
         std::abs(mantissa - 5) < 1e-9;
}

TEST(Plot, TicksAreEveryMultipleOfAOneTwoFiveStepWithinTheRange) {
  Figure f = unit_figure({});
  f.panels[0].x_range = Range{0.0, 10.0};
  f.panels[0].y_range = Range{-0.23, 1.17};
  const PanelLayout p = layout(f).panels.at(0);
  for (const Ticks* t : {&p.x_ticks, &p.y_ticks}) {
    const Range& r = t == &p.x_ticks ? p.area.x : p.area.y;
    EXPECT_TRUE(one_two_five(t->step)) << t->step;
    EXPECT_TRUE(every_multiple_within(t->values, t->step, r)) << "step " << t->step;
    EXPECT_GE(t->values.size(), 4u);  // a 1000 x 700 panel has room for several
    ASSERT_EQ(t->labels.size(), t->values.size());
    const double largest = std::max(std::abs(r.min), std::abs(r.max));
    for (std::size_t i = 0; i < t->values.size(); ++i) {
      EXPECT_EQ(t->labels[i], format_tick(t->values[i], t->step, largest));
    }
  }
  EXPECT_EQ(p.y_ticks.labels.front(), "-0.2");

  // A narrower figure never gets more x ticks: their labels need room.
  f.width = 300;
  const PanelLayout narrow = layout(f).panels.at(0);
  EXPECT_LE(narrow.x_ticks.values.size(), p.x_ticks.values.size());
  EXPECT_TRUE(every_multiple_within(narrow.x_ticks.values, narrow.x_ticks.step, narrow.area.x));
}

TEST(Ticks, StepsAreTheSmallestOneTwoFiveMultipleThatFits) {
  EXPECT_DOUBLE_EQ(nice_step(1.0, 5), 0.2);
  EXPECT_DOUBLE_EQ(nice_step(10.0, 5), 2.0);
  EXPECT_DOUBLE_EQ(nice_step(7.3, 5), 2.0);
  EXPECT_DOUBLE_EQ(nice_step(100.0, 4), 50.0);
  EXPECT_DOUBLE_EQ(nice_step(0.3, 3), 0.1);
  EXPECT_DOUBLE_EQ(nice_step(36.0, 6), 10.0);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> exponent(-8.0, 8.0);
  for (int n = 0; n < 2000; ++n) {
    const double span = std::pow(10.0, exponent(rng));
    const int max_intervals = 2 + static_cast<int>(rng() % 12);
    const double step = nice_step(span, max_intervals);
    ASSERT_TRUE(one_two_five(step)) << step;
    ASSERT_LE(span / step, max_intervals * (1 + 1e-9)) << span << " / " << step;
    // The next smaller step of the sequence: 1 → 0.5, 2 → 1, 5 → 2.
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    const double next_smaller = std::abs(mantissa - 5) < 1e-9 ? step * 0.4 : step / 2;
    ASSERT_GT(span / next_smaller, max_intervals * (1 - 1e-9)) << span << " / " << step;
  }
}

TEST(Ticks, LabelsCarryTheStepsDecimalsAndNeverANegativeZero) {
  const Ticks t = make_ticks(Range{-0.23, 1.17}, 7);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  EXPECT_EQ(t.labels, (std::vector<std::string>{"-0.2", "0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  EXPECT_EQ(make_ticks(Range{-1.0, 1.0}, 4).labels,
            (std::vector<std::string>{"-1.0", "-0.5", "0.0", "0.5", "1.0"}));
  EXPECT_EQ(make_ticks(Range{0.0, 40.0}, 4).labels,
            (std::vector<std::string>{"0", "10", "20", "30", "40"}));
  EXPECT_EQ(
      make_ticks(Range{0.0, 3e6}, 6).labels,
      (std::vector<std::string>{"0", "5e+05", "1e+06", "1.5e+06", "2e+06", "2.5e+06", "3e+06"}));
  EXPECT_EQ(make_ticks(Range{1.0, 1.0003}, 3).labels,
            (std::vector<std::string>{"1.0000", "1.0001", "1.0002", "1.0003"}));
  EXPECT_EQ(make_ticks(Range{0.0, 3e-5}, 3).labels,
            (std::vector<std::string>{"0", "1e-05", "2e-05", "3e-05"}));
}

bool boxes_overlap(const Box& b, double x0, double y0, double x1, double y1) {
  return x0 < b.left + b.width && x1 > b.left && y0 < b.top + b.height && y1 > b.top;
}

bool inside(const Box& b, const PlotArea& a) {
  return b.left >= a.left && b.top >= a.top && b.left + b.width <= a.left + a.width &&
         b.top + b.height <= a.top + a.height;
}

TEST(Plot, LegendListsLabelledSeriesInOrderAndSitsAwayFromTheData) {
  const Rgb blue{30, 30, 200};
  // Data low in the panel: the legend takes the empty top-right corner.
  Figure f = unit_figure({line({0.0, 1.0}, {0.1, 0.1}, kSeriesColor, "measured"),
                          line({0.0, 1.0}, {0.2, 0.2}, blue),
                          line({0.0, 1.0}, {0.3, 0.3}, blue, "commanded")});
  PanelLayout p = layout(f).panels.at(0);
  EXPECT_EQ(p.legend, (std::vector<std::size_t>{0, 2}));
  ASSERT_TRUE(p.legend_box.has_value());
  EXPECT_TRUE(inside(*p.legend_box, p.area));
  EXPECT_EQ(p.legend_box->left + p.legend_box->width, p.area.left + p.area.width - 8);
  EXPECT_EQ(p.legend_box->top, p.area.top + 8);
  EXPECT_GT(p.legend_box->width, 24);   // sample line and text
  EXPECT_GT(p.legend_box->height, 10);  // two entries

  // A vertical line near the right edge and a line across the top: the legend moves off
  // both, to the left edge just below the top line.
  f.panels[0].series = {line({0.9, 0.9}, {0.0, 1.0}, kSeriesColor, "measured"),
                        line({0.0, 1.0}, {0.95, 0.95}, blue, "commanded")};
  p = layout(f).panels.at(0);
  ASSERT_TRUE(p.legend_box.has_value());
  const PlotArea& a = p.area;
  EXPECT_TRUE(inside(*p.legend_box, a));
  EXPECT_EQ(p.legend_box->left, a.left + 8);
  EXPECT_GT(p.legend_box->top, a.row(0.95));
  EXPECT_LT(p.legend_box->top, a.row(0.5));  // as high as it can go
  EXPECT_FALSE(
      boxes_overlap(*p.legend_box, a.left, a.row(0.95) - 2, a.left + a.width, a.row(0.95) + 2));
  EXPECT_FALSE(
      boxes_overlap(*p.legend_box, a.column(0.9) - 2, a.top, a.column(0.9) + 2, a.top + a.height));
}

TEST(Plot, PanelsStackUnderTheTitleAndShareOneLeftEdge) {
  Figure f;
  f.height_per_panel = 200;
  for (double scale : {1.0, 1000.0, 0.001}) {
    Panel p;
    p.y_label = "value";
    p.series = {line({0.0, 1.0}, {-scale, scale})};
    f.panels.push_back(p);
  }
  const FigureLayout untitled = layout(f);
  EXPECT_EQ(untitled.title_band, 0);
  EXPECT_EQ(untitled.height, 600);
  EXPECT_EQ(untitled.width, f.width);
  f.title = "Three panels";
  const FigureLayout titled = layout(f);
  EXPECT_GT(titled.title_band, f.font_size);
  EXPECT_EQ(titled.height, titled.title_band + 600);
  for (std::size_t p = 0; p < 3; ++p) {
    const PanelLayout& panel = titled.panels[p];
    EXPECT_EQ(panel.top, titled.title_band + static_cast<int>(p) * 200);
    EXPECT_EQ(panel.area.top, untitled.panels[p].area.top + titled.title_band);
    EXPECT_GT(panel.area.top, panel.top);
    EXPECT_LT(panel.area.top + panel.area.height, panel.top + 200);
    EXPECT_EQ(panel.area.left, titled.panels[0].area.left);
    EXPECT_EQ(panel.area.width, titled.panels[0].area.width);
    EXPECT_LT(panel.area.left + panel.area.width, f.width);
  }
}

TEST(Plot, LargerTextTakesRoomFromThePlotArea) {
  Figure f = unit_figure({});
  f.panels[0].title = "force";
  f.panels[0].x_label = "time [s]";
  f.panels[0].y_label = "|F| [N]";
  f.panels[0].y_range = Range{-20000.0, 20000.0};
  f.font_size = 10.0;
  const PlotArea small = layout(f).panels.at(0).area;
  f.font_size = 24.0;
  const PlotArea large = layout(f).panels.at(0).area;
  EXPECT_GT(large.left, small.left);  // wider tick labels and a taller y label
  EXPECT_LT(large.width, small.width);
  EXPECT_GT(large.top, small.top);  // a taller panel title
  EXPECT_LT(large.height, small.height);

  // Wider tick labels alone push the left edge too.
  f.panels[0].y_range = Range{0.0, 1.0};
  EXPECT_LT(layout(f).panels.at(0).area.left, large.left);
}

std::string invalid_argument_message(const Figure& f) {
  try {
    layout(f);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

TEST(Plot, RejectsMalformedFiguresNamingTheCulprit) {
  Figure f = unit_figure({line({0.0, 1.0, 2.0}, {0.0, 1.0}, kSeriesColor, "bad")});
  f.panels[0].title = "force";
  EXPECT_NE(
      invalid_argument_message(f).find("panel 'force', series 'bad': 3 x values but 2 y values"),
      std::string::npos)
      << invalid_argument_message(f);
  f = unit_figure({});
  f.panels[0].title = "angle";
  f.panels[0].y_range = Range{1.0, 1.0};
  EXPECT_NE(invalid_argument_message(f).find("panel 'angle': fixed y range"), std::string::npos)
      << invalid_argument_message(f);
  f = unit_figure({});
  f.title = "door";
  f.panels.clear();
  EXPECT_NE(invalid_argument_message(f).find("figure 'door' has no panels"), std::string::npos)
      << invalid_argument_message(f);
  f = unit_figure({});
  f.font_size = 3.0;
  EXPECT_NE(invalid_argument_message(f).find("font_size 3"), std::string::npos)
      << invalid_argument_message(f);
  f.font_size = kNaN;
  EXPECT_NE(invalid_argument_message(f).find("font_size"), std::string::npos)
      << invalid_argument_message(f);
  f = unit_figure({});
  f.width = 100;
  EXPECT_NE(invalid_argument_message(f).find("below the minimum"), std::string::npos)
      << invalid_argument_message(f);

  // Nothing is written for a figure that cannot be laid out.
  const std::filesystem::path dir = temp_dir("tether_plot_rejects");
  const std::string path = (dir / "bad.png").string();
  EXPECT_THROW(write_figure(f, path), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

Figure door_figure(bool noisy) {
  Figure f;
  f.title = "Door opening, spring trajectory";
  Panel angle{"Door angle", "time [s]", "angle [°]", {}, std::nullopt, std::nullopt, {}};
  Panel force{"Force and torque magnitude",
              "time [s]",
              "|F| [N], |τ| [N·m]",
              {},
              std::nullopt,
              std::nullopt,
              {}};
  std::mt19937_64 rng(17);
  std::normal_distribution<double> noise(0.0, noisy ? 1.5 : 0.0);
  for (int s = 0; s < 3; ++s) {
    Series a{"spring trajectory " + std::to_string(s + 1),
             {},
             {},
             palette_color(static_cast<std::size_t>(s))};
    Series b{"|F| " + std::to_string(s + 1), {}, {}, palette_color(static_cast<std::size_t>(s))};
    const double tau = 0.8 + 0.7 * s;
    for (int i = 0; i <= 5000; ++i) {
      const double t = 0.002 * i;
      a.x.push_back(t);
      a.y.push_back(35.0 * (1.0 - std::exp(-t / tau)) + 0.1 * noise(rng));
      b.x.push_back(t);
      b.y.push_back(60.0 * std::exp(-t / tau) + noise(rng));
    }
    angle.series.push_back(a);
    force.series.push_back(b);
  }
  angle.references = {{35.0, "target 35°", {110, 110, 110}}};
  force.references = {{50.0, "force bound", {214, 39, 40}}};
  f.panels = {angle, force};
  return f;
}

TEST(WriteFigure, WritesAnRgbPngOfTheLaidOutSize) {
  const std::filesystem::path dir = temp_dir("tether_plot_png");
  for (bool noisy : {false, true}) {
    Figure f = door_figure(noisy);
    f.antialias = !noisy;  // both ways of drawing the series
    const FigureLayout fl = layout(f);
    const std::string path = (dir / (noisy ? "noisy.png" : "smooth.png")).string();
    write_figure(f, path);
    const testing_png::DecodedPng png = testing_png::read_png(path);
    ASSERT_EQ(png.error, "");
    EXPECT_EQ(png.width, 1000u);
    EXPECT_EQ(png.height, static_cast<std::uint32_t>(fl.height));
    EXPECT_EQ(png.colour_type, 2);  // RGB, no alpha, no palette
    EXPECT_EQ(png.bit_depth, 8);
    // Something was drawn on the white background: mostly white, with black text and frame.
    std::size_t white = 0, black = 0;
    for (std::size_t k = 0; k + 2 < png.rgb.size(); k += 3) {
      white += png.rgb[k] == 255 && png.rgb[k + 1] == 255 && png.rgb[k + 2] == 255;
      black += png.rgb[k] < 40 && png.rgb[k + 1] < 40 && png.rgb[k + 2] < 40;
    }
    EXPECT_GT(white, png.rgb.size() / 3 / 2);
    EXPECT_GT(black, 1000u);
    RecordProperty(noisy ? "noisy_png_bytes" : "smooth_png_bytes",
                   static_cast<int>(std::filesystem::file_size(path)));
  }
  std::filesystem::remove_all(dir);
}

TEST(WriteFigure, WritesSvgWhenThePathEndsInSvg) {
  const std::filesystem::path dir = temp_dir("tether_plot_svg");
  const Figure f = door_figure(false);
  const std::string lower = (dir / "door.svg").string(), upper = (dir / "DOOR.SVG").string();
  write_figure(f, lower);
  write_png(f, upper);  // the older name follows the extension too
  for (const std::string& path : {lower, upper}) {
    const std::vector<std::uint8_t> bytes = testing_png::file_bytes(path);
    const std::string text(bytes.begin(), bytes.end());
    EXPECT_EQ(text.rfind("<?xml", 0), 0u) << path;
    EXPECT_NE(text.find("<svg"), std::string::npos) << path;
    EXPECT_NE(text.find("width=\"1000"), std::string::npos) << path;
    EXPECT_NE(text.find("</svg>"), std::string::npos) << path;  // finished, not cut short
  }
  std::filesystem::remove_all(dir);
}

TEST(WriteFigure, ThrowsNamingThePathWhenTheFileCannotBeCreated) {
  const std::vector<std::string> paths = {"/nonexistent-tether-dir/plot.png",
                                          "/nonexistent-tether-dir/plot.svg"};
  for (const std::string& path : paths) {
    try {
      write_figure(unit_figure({}), path);
      ADD_FAILURE() << "no exception for " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot create '" + path + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tether::remote::report

#include "tether/remote/report/plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/ticks.h"

namespace tether::remote::report {
namespace {

constexpr Rgb kSeriesColor{200, 30, 90};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One panel showing exactly [0, 1] × [0, 1], no grid, so every pixel of the plot area that
// is not a series pixel is white.
Figure unit_figure(std::vector<Series> series, bool antialias = false) {
  Figure f;
  f.width = 1000;
  f.height_per_panel = 700;
  f.grid = false;
  f.antialias = antialias;
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

bool coloured(Rgb c) { return c.r > c.g + 40 && c.r > c.b + 40; }  // kSeriesColor, or blended

Rgb at_value(const Image& image, const PlotArea& a, double x, double y) {
  return image.at(static_cast<int>(std::floor(a.column(x))),
                  static_cast<int>(std::floor(a.row(y))));
}

// Longest run of exactly `color` along one row within [x0, x1).
int longest_run(const Image& image, int y, int x0, int x1, Rgb color) {
  int best = 0, run = 0;
  for (int x = x0; x < x1; ++x) {
    run = image.at(x, y) == color ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

TEST(Plot, DiagonalSeriesColoursPixelsAlongTheDiagonalAndLeavesTheRestWhite) {
  std::vector<double> x;
  for (int i = 0; i <= 100; ++i) x.push_back(i / 100.0);
  for (bool antialias : {false, true}) {
    SCOPED_TRACE(antialias ? "antialiased" : "hard edges");
    const Figure f = unit_figure({line(x, x)}, antialias);
    const PlotArea a = layout(f).at(0);
    const Image image = render(f);
    // The diagonal in image coordinates runs from the bottom-left to the top-right corner.
    const double x0 = a.left, y0 = a.top + a.height, dx = a.width, dy = -a.height;
    const double length = std::hypot(dx, dy);
    int on_line = 0;
    for (int j = a.top; j < a.top + a.height; ++j) {
      for (int i = a.left; i < a.left + a.width; ++i) {
        const double d = std::abs((i + 0.5 - x0) * dy - (j + 0.5 - y0) * dx) / length;
        const Rgb c = image.at(i, j);
        if (d > 2.5) {
          ASSERT_EQ(c, kWhite) << "pixel (" << i << ", " << j << ") " << d << " px off the line";
        } else if (d < 0.5) {
          ASSERT_TRUE(coloured(c)) << "pixel (" << i << ", " << j << ") on the line";
          if (!antialias) {
            ASSERT_EQ(c, kSeriesColor);
          }
          ++on_line;
        }
      }
    }
    EXPECT_GT(on_line, a.width);  // every column crosses the line
  }
}

TEST(Plot, ReferenceLineIsDashedOnThePixelRowOfItsValue) {
  Figure f = unit_figure({});
  f.panels[0].y_range = Range{0.0, 50.0};
  const Rgb green{0, 150, 0};
  f.panels[0].references = {{35.0, "", green}, {60.0, "", green}};  // 60 lies outside
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  const int row = a.top + static_cast<int>(std::floor((50.0 - 35.0) / 50.0 * a.height));
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(image.at(a.left + i, row), i < 8 ? green : kWhite) << "column " << i;
  }
  int on = 0;
  for (int j = a.top; j < a.top + a.height; ++j) {
    for (int i = a.left; i < a.left + a.width; ++i) {
      if (j == row) {
        on += image.at(i, j) == green;
      } else {
        ASSERT_EQ(image.at(i, j), kWhite) << "pixel (" << i << ", " << j << ")";
      }
    }
  }
  EXPECT_GE(on, a.width * 8 / 12 - 8);
}

TEST(Plot, ReferenceLabelIsWrittenJustAboveTheLineAtTheRightEnd) {
  Figure f = unit_figure({});
  f.panels[0].y_range = Range{0.0, 50.0};
  const Rgb grey{110, 110, 110};
  f.panels[0].references = {{35.0, "target 35°", grey}};
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  const int row = static_cast<int>(std::floor(a.row(35.0)));
  int label_pixels = 0;
  for (int j = row - 30; j < row; ++j) {
    for (int i = a.left + a.width / 2; i < a.left + a.width; ++i)
      label_pixels += image.at(i, j) == grey;
  }
  EXPECT_GT(label_pixels, 100);
  for (int i = a.left; i < a.left + a.width / 2; ++i) EXPECT_EQ(image.at(i, row - 8), kWhite);
}

TEST(Plot, AutoscaleSpansTheDataAndReferencesWithFivePercentOnY) {
  Figure f = unit_figure({line({2.0, 7.0, 12.0}, {-1.0, 3.0, 0.0})});
  f.panels[0].x_range.reset();
  f.panels[0].y_range.reset();
  PlotArea a = layout(f).at(0);
  EXPECT_DOUBLE_EQ(a.x.min, 2.0);
  EXPECT_DOUBLE_EQ(a.x.max, 12.0);
  EXPECT_DOUBLE_EQ(a.y.min, -1.2);
  EXPECT_DOUBLE_EQ(a.y.max, 3.2);

  f.panels[0].references = {{5.0, "bound", kBlack}};
  a = layout(f).at(0);
  EXPECT_DOUBLE_EQ(a.y.min, -1.3);
  EXPECT_DOUBLE_EQ(a.y.max, 5.3);
}

TEST(Plot, ConstantSeriesGetsARangeAroundItsValueAndIsDrawnAtMidHeight) {
  Figure f = unit_figure({line({0.0, 0.5, 1.0}, {3.0, 3.0, 3.0})});
  f.panels[0].y_range.reset();
  const PlotArea a = layout(f).at(0);
  EXPECT_NEAR(a.y.min, 2.67, 1e-12);  // ±10 % of the value, then the 5 % margin
  EXPECT_NEAR(a.y.max, 3.33, 1e-12);
  const Image image = render(f);
  EXPECT_EQ(at_value(image, a, 0.5, 3.0), kSeriesColor);

  f.panels[0].series = {line({0.0, 1.0}, {0.0, 0.0})};
  const PlotArea zero = layout(f).at(0);
  EXPECT_DOUBLE_EQ(zero.y.min, -1.1);
  EXPECT_DOUBLE_EQ(zero.y.max, 1.1);
}

TEST(Plot, NonFiniteSamplesBreakTheLine) {
  std::vector<double> x, y;
  for (int i = 0; i <= 100; ++i) {
    x.push_back(i / 100.0);
    y.push_back(i >= 40 && i <= 60 ? (i == 50 ? INFINITY : kNaN) : 0.5);
  }
  const Figure f = unit_figure({line(x, y)});
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  EXPECT_EQ(at_value(image, a, 0.2, 0.5), kSeriesColor);
  EXPECT_EQ(at_value(image, a, 0.8, 0.5), kSeriesColor);
  for (double gap = 0.40; gap <= 0.60; gap += 0.01) {
    EXPECT_EQ(at_value(image, a, gap, 0.5), kWhite) << "x = " << gap;
  }
}

TEST(Plot, IsolatedSampleIsDrawnAsADot) {
  const Figure f = unit_figure({line({0.2, 0.5, 0.8}, {kNaN, 0.5, kNaN})});
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  EXPECT_EQ(at_value(image, a, 0.5, 0.5), kSeriesColor);
  EXPECT_EQ(at_value(image, a, 0.52, 0.5), kWhite);
  EXPECT_EQ(at_value(image, a, 0.5, 0.52), kWhite);
}

TEST(Plot, EmptySeriesAndEmptyPanelsShowTheUnitRangeWithNothingInside) {
  Figure f = unit_figure({line({}, {})});
  f.panels[0].x_range.reset();
  f.panels[0].y_range.reset();
  f.panels.push_back(Panel{});
  const std::vector<PlotArea> areas = layout(f);
  ASSERT_EQ(areas.size(), 2u);
  const Image image = render(f);
  for (const PlotArea& a : areas) {
    EXPECT_DOUBLE_EQ(a.x.min, 0.0);
    EXPECT_DOUBLE_EQ(a.x.max, 1.0);
    EXPECT_DOUBLE_EQ(a.y.min, 0.0);
    EXPECT_DOUBLE_EQ(a.y.max, 1.0);
    for (int j = a.top; j < a.top + a.height; ++j) {
      for (int i = a.left; i < a.left + a.width; ++i) ASSERT_EQ(image.at(i, j), kWhite);
    }
    EXPECT_EQ(image.at(a.left - 1, a.top + a.height / 2), kBlack);  // the frame
    EXPECT_EQ(image.at(a.left + a.width / 2, a.top + a.height), kBlack);
  }
}

TEST(Plot, LinesAreClippedToThePlotArea) {
  std::vector<double> x, y;
  for (int i = 0; i <= 40; ++i) {
    x.push_back(i / 40.0);
    y.push_back(i % 2 == 0 ? -10.0 : 10.0);  // far beyond the fixed [0, 1]
  }
  const Figure f = unit_figure({line(x, y)}, true);
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  int inside = 0;
  for (int j = a.top; j < a.top + a.height; ++j) {
    for (int i = a.left; i < a.left + a.width; ++i) inside += coloured(image.at(i, j));
  }
  EXPECT_GT(inside, 40 * a.height);      // 40 crossings, each at least one pixel per row
  for (int j = 0; j < a.top - 1; ++j) {  // above the frame (no title; tick labels are left)
    for (int i = a.left - 1; i < image.width; ++i)
      ASSERT_EQ(image.at(i, j), kWhite) << i << ", " << j;
  }
  for (int j = a.top; j < a.top + a.height; ++j) {  // right of the frame
    for (int i = a.left + a.width + 1; i < image.width; ++i) ASSERT_EQ(image.at(i, j), kWhite);
  }
  for (int i = a.left - 1; i <= a.left + a.width; ++i) {
    ASSERT_EQ(image.at(i, a.top - 1), kBlack);
    ASSERT_EQ(image.at(i, a.top + a.height), kBlack);
  }
}

// The step a pair of neighbouring tick values shows, snapped to the 1-2-5 sequence (or 0 if
// it is not one).
double one_two_five(double step) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(step)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (std::abs(step / magnitude - m) < 0.05 * m) return m * magnitude;
  }
  return 0.0;
}

TEST(Plot, TickMarksSitAtEveryMultipleOfAOneTwoFiveStep) {
  Figure f = unit_figure({});
  f.panels[0].x_range = Range{0.0, 10.0};
  f.panels[0].y_range = Range{-0.23, 1.17};
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);

  std::vector<int> columns;  // tick marks hang below the frame
  for (int i = a.left - 1; i <= a.left + a.width; ++i) {
    if (image.at(i, a.top + a.height + 3) == kBlack) columns.push_back(i);
  }
  ASSERT_GE(columns.size(), 3u);
  const double x_step = one_two_five((columns[1] - columns[0]) * (a.x.max - a.x.min) / a.width);
  ASSERT_GT(x_step, 0.0);
  std::vector<int> expected;
  for (int k = 0; k * x_step <= a.x.max + 1e-9; ++k) {
    expected.push_back(
        std::min(static_cast<int>(std::floor(a.column(k * x_step))), a.left + a.width - 1));
  }
  EXPECT_EQ(columns, expected) << "step " << x_step;

  std::vector<int> rows;  // and stick out left of it
  for (int j = a.top - 1; j <= a.top + a.height; ++j) {
    if (image.at(a.left - 4, j) == kBlack) rows.push_back(j);
  }
  ASSERT_GE(rows.size(), 3u);
  const double y_step = one_two_five((rows[1] - rows[0]) * (a.y.max - a.y.min) / a.height);
  ASSERT_GT(y_step, 0.0);
  std::vector<int> expected_rows;
  for (int k = static_cast<int>(std::floor(a.y.max / y_step)); k * y_step >= a.y.min; --k) {
    expected_rows.push_back(static_cast<int>(std::floor(a.row(k * y_step))));
  }
  EXPECT_EQ(rows, expected_rows) << "step " << y_step;
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
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    ASSERT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
                std::abs(mantissa - 5) < 1e-9)
        << step;
    ASSERT_LE(span / step, max_intervals * (1 + 1e-9)) << span << " / " << step;
    // The next smaller step of the sequence: 1 → 0.5, 2 → 1, 5 → 2.
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

TEST(Plot, LegendShowsEachLabelledSeriesInItsColourAwayFromTheData) {
  const Rgb blue{30, 30, 200};
  const Figure f = unit_figure(
      {line({0.0, 1.0}, {0.1, 0.1}, kSeriesColor, "measured"), line({0.0, 1.0}, {0.2, 0.2}, blue)});
  const PlotArea a = layout(f).at(0);
  const Image image = render(f);
  int labelled_run = 0, unlabelled_run = 0, text = 0;
  for (int j = a.top; j < a.top + a.height / 2; ++j) {
    labelled_run =
        std::max(labelled_run, longest_run(image, j, a.left, a.left + a.width, kSeriesColor));
    unlabelled_run =
        std::max(unlabelled_run, longest_run(image, j, a.left, a.left + a.width, blue));
    for (int i = a.left + a.width / 2; i < a.left + a.width; ++i) text += image.at(i, j) == kBlack;
  }
  EXPECT_GE(labelled_run, 24);  // the legend's sample line
  EXPECT_EQ(unlabelled_run, 0);
  EXPECT_GT(text, 50);  // "measured"
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
  const std::vector<PlotArea> untitled = layout(f);
  EXPECT_EQ(render(f).height, 600);
  f.title = "Three panels";
  const std::vector<PlotArea> titled = layout(f);
  const Image image = render(f);
  const int band = image.height - 600;
  EXPECT_GT(band, 0);
  int title_ink = 0;
  for (int j = 0; j < band; ++j) {
    for (int i = 0; i < image.width; ++i) title_ink += image.at(i, j) == kBlack;
  }
  EXPECT_GT(title_ink, 100);
  for (std::size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(titled[p].top, untitled[p].top + band);
    EXPECT_EQ(titled[p].top - titled[0].top, static_cast<int>(p) * 200);
    EXPECT_EQ(titled[p].left, titled[0].left);
    EXPECT_EQ(titled[p].width, titled[0].width);
  }
}

TEST(Plot, RejectsMalformedFiguresNamingTheCulprit) {
  auto message = [](const Figure& f) {
    try {
      layout(f);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  Figure f = unit_figure({line({0.0, 1.0, 2.0}, {0.0, 1.0}, kSeriesColor, "bad")});
  f.panels[0].title = "force";
  EXPECT_NE(message(f).find("panel 'force', series 'bad': 3 x values but 2 y values"),
            std::string::npos)
      << message(f);
  f = unit_figure({});
  f.panels[0].y_range = Range{1.0, 1.0};
  EXPECT_NE(message(f).find("fixed y range"), std::string::npos) << message(f);
  f = unit_figure({});
  f.panels.clear();
  EXPECT_NE(message(f).find("no panels"), std::string::npos) << message(f);
  f = unit_figure({});
  f.text_scale = 3;
  EXPECT_NE(message(f).find("text_scale 3"), std::string::npos) << message(f);
  f = unit_figure({});
  f.width = 100;
  EXPECT_NE(message(f).find("below the minimum"), std::string::npos) << message(f);
  EXPECT_THROW(render(f), std::invalid_argument);
}

Figure door_figure(bool noisy) {
  Figure f;
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

TEST(WritePng, A1000By700FigureIsWrittenAsTheEncodedRenderUnder200KB) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "tether_plot_test";
  std::filesystem::create_directories(dir);
  for (bool noisy : {false, true}) {
    const Figure f = door_figure(noisy);
    const std::string path = (dir / (noisy ? "noisy.png" : "smooth.png")).string();
    write_png(f, path);
    const Image image = render(f);
    EXPECT_EQ(image.width, 1000);
    EXPECT_EQ(image.height, 700);
    std::vector<std::uint8_t> expected;
    encode_png(image, expected);
    std::ifstream in(path, std::ios::binary);
    const std::vector<std::uint8_t> written((std::istreambuf_iterator<char>(in)),
                                            std::istreambuf_iterator<char>());
    EXPECT_EQ(written, expected);
    EXPECT_GT(written.size(), 0u);
    EXPECT_LT(written.size(), 200u * 1024u);
    std::cout << (noisy ? "noisy" : "smooth") << " 1000x700 figure: " << written.size()
              << " bytes (raw " << image.pixels.size() << ")\n";
    RecordProperty(noisy ? "noisy_png_bytes" : "smooth_png_bytes",
                   static_cast<int>(written.size()));
  }
  std::filesystem::remove_all(dir);
}

TEST(WritePng, ThrowsNamingThePathWhenTheFileCannotBeCreated) {
  const std::string path = "/nonexistent-tether-dir/plot.png";
  try {
    write_png(unit_figure({}), path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tether::remote::report

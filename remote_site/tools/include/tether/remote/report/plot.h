#pragma once

// Time-series figures in the style of the seed's plots (door angle and force against time,
// one quantity per panel, panels stacked vertically), drawn with Cairo in a real font and
// written as PNG (through libpng) or SVG.
//
// Reporting only: nothing here is called from the control cycle; it allocates and throws.
//
// Image coordinates: x (columns) to the right, y (rows) down, origin at the top-left corner,
// 1 unit = 1 pixel (1 px in an SVG). Pixel (i, j) covers [i, i+1) × [j, j+1).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tether::remote::report {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

inline constexpr Rgb kWhite{255, 255, 255};
inline constexpr Rgb kBlack{0, 0, 0};

// A palette of well-separated line colours; wraps around after its 8 entries.
Rgb palette_color(std::size_t index);

// A closed data range, min < max.
struct Range {
  double min = 0.0;
  double max = 1.0;
};

// One line. x and y have equal lengths; a sample whose x or y is not finite (NaN, ±inf) is a
// gap: the line stops before it and restarts after it (an isolated sample is drawn as a dot).
struct Series {
  std::string label;  // legend text; a series with an empty label is left out of the legend
  std::vector<double> x, y;
  Rgb color = kBlack;
};

// A horizontal line at a fixed value (an execution bound, the 35° door target), dashed,
// 1 px thick, labelled at the right end of the plot area.
struct ReferenceLine {
  double y = 0.0;
  std::string label;
  Rgb color{110, 110, 110};
};

struct Panel {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  // Without a fixed range, x spans the finite data exactly and y spans the finite data and
  // the reference lines plus 5 % on either side; a zero-width span is widened around its
  // value, and a panel without any finite data shows [0, 1] × [0, 1].
  std::optional<Range> x_range, y_range;
  std::vector<ReferenceLine> references;
};

// Panels share the width and are stacked top to bottom under an optional figure title, so
// the image is width × (title band + panels × height_per_panel) pixels; the title band is 0
// without a title. Text is UTF-8 (invalid bytes show as '?') in Cairo's "sans-serif" face;
// the figure title is 1.3 × font_size and bold, panel titles bold.
struct Figure {
  std::string title;
  std::vector<Panel> panels;
  int width = 1000;            // [px], at least 240
  int height_per_panel = 350;  // [px], at least 140
  double font_size = 14.0;     // [px] em size of axis, legend and panel text, 6 to 48
  bool antialias = true;       // series lines: smooth edges, else hard 0/1 pixels
  bool grid = true;            // light lines at the ticks
};

// Where a panel's data land: the plot area is columns [left, left + width) and rows
// [top, top + height); x.min maps to the area's left edge, x.max to its right edge, y.max to
// its top edge and y.min to its bottom edge. The frame is drawn just outside the area.
struct PlotArea {
  int left = 0, top = 0, width = 0, height = 0;  // [px]
  Range x, y;                                    // data ranges shown

  double column(double x_value) const;  // continuous image x coordinate of a data x
  double row(double y_value) const;     // continuous image y coordinate of a data y
};

// Axis ticks at "nice" values: multiples of a step of the form {1, 2, 5} × 10^k.
struct Ticks {
  double step = 1.0;
  std::vector<double> values;       // multiples of step within the range, ascending
  std::vector<std::string> labels;  // one per value, as printed beside the axis
};

// A run of consecutive finite samples of one series, drawn as one connected line (a run of
// one sample as a dot).
struct SampleRun {
  std::size_t series = 0;          // index into Panel::series
  std::size_t begin = 0, end = 0;  // samples [begin, end)
  friend bool operator==(const SampleRun&, const SampleRun&) = default;
};

// An axis-aligned box in image pixels: columns [left, left + width), rows [top, top + height).
struct Box {
  int left = 0, top = 0, width = 0, height = 0;  // [px]
};

// Everything a panel shows, in the order it is drawn: grid and tick marks at the ticks, the
// reference lines shown, the series runs, the legend.
struct PanelLayout {
  int top = 0;  // [px] first row of the panel's band
  PlotArea area;
  Ticks x_ticks, y_ticks;
  std::vector<SampleRun> runs;          // per series in order, runs in sample order
  std::vector<std::size_t> references;  // indices of the reference lines inside the y range
  std::vector<std::size_t> legend;      // indices of the labelled series, in order
  std::optional<Box> legend_box;        // inside the area, over the least data; none if no labels
};

// The figure as write_figure() draws it; the figure model the tests check.
struct FigureLayout {
  int width = 0, height = 0;  // [px] of the whole image
  int title_band = 0;         // [px] rows above the first panel
  std::vector<PanelLayout> panels;
};

// Lays the figure out (text measured in the font it is drawn in). Throws
// std::invalid_argument (naming the figure, panel or series) for a figure without panels, a
// size or font size out of range, a series with x and y of different lengths, a fixed range
// that is not finite with min < max, or a panel too small for its text.
FigureLayout layout(const Figure& figure);

// Draws the figure and writes it to `path`: SVG if the path ends in ".svg" (any letter case),
// else an 8-bit RGB PNG. Throws std::runtime_error naming `path` if the file cannot be
// created or written, std::invalid_argument as layout() does.
void write_figure(const Figure& figure, const std::string& path);

// The older name of write_figure(), kept for its callers; a ".svg" path gives SVG here too.
void write_png(const Figure& figure, const std::string& path);

}  // namespace tether::remote::report

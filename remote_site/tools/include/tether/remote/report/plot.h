#pragma once

// Time-series figures in the style of the seed's plots (door angle and force against time,
// one quantity per panel, panels stacked vertically), written as PNG without any library:
// the PNG container, zlib wrapper and DEFLATE coder are tether's own (src/report/png.cc).
//
// Reporting only: nothing here is called from the control cycle; it allocates and throws.
//
// Image coordinates: x (columns) to the right, y (rows) down, origin at the top-left corner.
// Pixel (i, j) covers [i, i+1) × [j, j+1), so its centre is (i + 0.5, j + 0.5).

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

// An 8-bit RGB raster, rows top to bottom, 3 bytes (r, g, b) per pixel.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // width * height * 3 bytes

  Image() = default;
  explicit Image(int width, int height, Rgb fill = kWhite);

  Rgb at(int x, int y) const;  // unchecked beyond the vector's own bounds
  void set(int x, int y, Rgb color);
};

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
// without a title. Text is drawn in tether's 5×7 bitmap font (ASCII plus ° ± ² · Δ θ μ τ ψ ω,
// UTF-8 encoded; other characters show as '?'), magnified by text_scale; the figure title is
// always drawn twice the font size, in bold.
struct Figure {
  std::string title;
  std::vector<Panel> panels;
  int width = 1000;            // [px], at least 240
  int height_per_panel = 350;  // [px], at least 140
  int text_scale = 2;          // 1 or 2: image pixels per font pixel, each way
  bool antialias = true;       // series lines: coverage-blended edges, else hard 0/1 pixels
  bool grid = true;            // light lines at the ticks
};

// Where a panel's data landed: the plot area is columns [left, left + width) and rows
// [top, top + height); x.min maps to the area's left edge, x.max to its right edge, y.max to
// its top edge and y.min to its bottom edge. The frame is drawn just outside the area.
struct PlotArea {
  int left = 0, top = 0, width = 0, height = 0;  // [px]
  Range x, y;                                    // data ranges shown

  double column(double x_value) const;  // continuous image x coordinate of a data x
  double row(double y_value) const;     // continuous image y coordinate of a data y
};

// The image size and each panel's plot area exactly as render() draws them. Throws
// std::invalid_argument (naming the panel or series) for a figure without panels, a size or
// text scale out of range, a series with x and y of different lengths, or a fixed range
// that is not finite with min < max.
std::vector<PlotArea> layout(const Figure& figure);

Image render(const Figure& figure);

// Encodes an RGB image as a PNG (colour type 2, 8 bits, filter 0, not interlaced) into `out`
// (replacing its contents). Throws std::invalid_argument if the pixel buffer does not match
// the size or the image is empty.
void encode_png(const Image& image, std::vector<std::uint8_t>& out);

// render() + encode_png() + write the file. Throws std::runtime_error naming `path` if the
// file cannot be created or written, std::invalid_argument as layout() does.
void write_png(const Figure& figure, const std::string& path);

}  // namespace tether::remote::report

#pragma once

// Figures a reader can hold against the seed documents: a title, views with axes in metres
// (or any unit) and ticks, a legend per view, and time as a colour scale (a colour bar with
// its time labels along the bottom of the figure). A view is either a world view (one scale
// for both axes, so lengths and angles look as they are) or a plain data view (time series).
// Drawn with Cairo, written as PNG or SVG.
//
// Reporting only: nothing here is called from the control cycle; it allocates and throws.
//
// Data coordinates: x to the right, y up. Image coordinates as in plot.h.

#include <Eigen/Core>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tether/remote/report/plot.h"

namespace tether::remote::report {

// The colour of a moment: fraction 0 (start) → 1 (end) through dark violet, blue, teal and
// green (viridis up to 0.85, where it is still dark enough to read on white). Clamped.
Rgb time_color(double fraction);

// A colour moved toward white by `amount` (0 unchanged, 1 white): obstacles' spheres of
// influence, earlier or secondary things.
Rgb lighter(Rgb color, double amount);

struct Shape {
  enum class Kind {
    kPolyline,  // points joined in order
    kPolygon,   // closed; filled with `fill` when set, outlined with `color` when width > 0
    kCircle,    // centre points[0], `radius` in data units; fill and outline as a polygon
    kDots,      // a disc of `radius` pixels at every point
    kText,      // `text` with its left end of the baseline at points[0], in `color`
  };
  Kind kind = Kind::kPolyline;
  std::vector<Eigen::Vector2d> points;
  double radius = 0.0;
  Rgb color = kBlack;
  double width = 1.5;  // [px] line width; 0: no outline
  bool dashed = false;
  std::optional<Rgb> fill;
  std::string text;
};

Shape polyline(std::vector<Eigen::Vector2d> points, Rgb color, double width = 1.5,
               bool dashed = false);
Shape polygon(std::vector<Eigen::Vector2d> vertices, std::optional<Rgb> fill, Rgb outline,
              double width = 1.0);
Shape circle(const Eigen::Vector2d& centre, double radius, std::optional<Rgb> fill, Rgb outline,
             double width = 1.0, bool dashed = false);
Shape dots(std::vector<Eigen::Vector2d> points, double radius_px, Rgb color);
Shape label(const Eigen::Vector2d& at, std::string text, Rgb color = kBlack);

struct LegendEntry {
  enum class Mark { kLine, kDashed, kPatch, kDot, kRing, kTimeLine };
  LegendEntry(std::string text, Mark how, Rgb line = kBlack, std::optional<Rgb> inside = {})
      : label(std::move(text)), mark(how), color(line), fill(inside) {}
  std::string label;
  Mark mark = Mark::kLine;
  Rgb color = kBlack;
  std::optional<Rgb> fill;  // kPatch and kRing: inside
};

// kAuto: the corner whose legend box covers the fewest drawn points (ties: the order
// top right, top left, bottom right, bottom left).
enum class Corner { kAuto, kTopRight, kTopLeft, kBottomRight, kBottomLeft };

struct View {
  std::string title, x_label, y_label;
  Range x, y;                 // data shown; a world view widens one of them to keep one scale
  bool equal_aspect = true;   // world view
  std::vector<Shape> shapes;  // drawn in order, clipped to the plot area
  std::vector<LegendEntry> legend;
  Corner legend_corner = Corner::kAuto;
  int legend_columns = 1;  // entries fill the columns row by row
  double weight = 1.0;     // share of its row's width
};

struct ViewRow {
  int height = 420;  // [px]
  std::vector<View> views;
};

// A colour bar under the views: time_color() from `start` to `end`, with ticks and `label`.
struct TimeScale {
  double start = 0.0, end = 1.0;
  std::string label = "time [s]";
};

struct Scene {
  std::string title;     // bold, at the top
  std::string subtitle;  // one line under it: what the picture shows, which seed it is
  std::vector<ViewRow> rows;
  std::optional<TimeScale> time;
  int width = 1200;  // [px]
  double font_size = 14.0;
};

// Draws the scene and writes it: SVG for a ".svg" path, else an 8-bit RGB PNG. Throws
// std::invalid_argument for a scene without views, an empty range or a row too small for
// its text, std::runtime_error naming the path if it cannot be written.
void write_scene(const Scene& scene, const std::string& path);

// The ranges that frame `points` with `margin` (data units) on every side.
std::pair<Range, Range> bounds(const std::vector<Eigen::Vector2d>& points, double margin);

}  // namespace tether::remote::report

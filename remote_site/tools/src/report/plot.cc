#include "tether/remote/report/plot.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "report/font.h"
#include "report/ticks.h"

namespace tether::remote::report {
namespace {

constexpr Rgb kGridColor{226, 226, 226};
constexpr Rgb kLegendBorder{150, 150, 150};
constexpr double kLineHalfWidth = 1.0;  // [px]: series lines are 2 px wide
constexpr int kTickLength = 5;          // [px]
constexpr int kDashOn = 8, kDashPeriod = 12;
constexpr double kAutoscaleMargin = 0.05;  // of the y span, on either side

// Text --------------------------------------------------------------------------------------

// Malformed sequences decode to '?', one per offending byte.
std::u32string decode_utf8(const std::string& text) {
  std::u32string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    int extra = 0;
    char32_t cp = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07u;
    } else {
      out.push_back(U'?');
      ++i;
      continue;
    }
    bool ok = i + static_cast<std::size_t>(extra) < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if (!ok) {
      out.push_back(U'?');
      ++i;
      continue;
    }
    out.push_back(cp);
    i += 1 + static_cast<std::size_t>(extra);
  }
  return out;
}

struct Rect {
  int x0, y0, x1, y1;  // [x0, x1) × [y0, y1)
  bool contains(int x, int y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

int text_width(const std::u32string& text, int scale) {
  if (text.empty()) return 0;
  return (static_cast<int>(text.size()) * font::kAdvance - 1) * scale;
}

void put_pixel(Image& image, const Rect& clip, int x, int y, Rgb color) {
  if (clip.contains(x, y) && x >= 0 && y >= 0 && x < image.width && y < image.height) {
    image.set(x, y, color);
  }
}

// Left-to-right text; (x, y) is the top-left corner of the first character cell.
void draw_text(Image& image, const Rect& clip, int x, int y, const std::u32string& text, Rgb color,
               int scale, bool bold = false) {
  for (std::size_t n = 0; n < text.size(); ++n) {
    const font::Glyph& g = font::glyph(text[n]);
    const int cell_x = x + static_cast<int>(n) * font::kAdvance * scale;
    for (int row = 0; row < font::kGlyphRows; ++row) {
      for (int col = 0; col < font::kGlyphWidth; ++col) {
        if (!((g[static_cast<std::size_t>(row)] >> (font::kGlyphWidth - 1 - col)) & 1u)) continue;
        for (int dy = 0; dy < scale; ++dy) {
          for (int dx = 0; dx < scale + (bold && scale > 1 ? 1 : 0); ++dx) {
            put_pixel(image, clip, cell_x + col * scale + dx, y + row * scale + dy, color);
          }
        }
      }
    }
  }
}

// Text turned 90° counter-clockwise, reading bottom to top; (x, y_bottom) is the cell's
// left edge (the tops of the letters) and the row just below the first character.
void draw_text_up(Image& image, const Rect& clip, int x, int y_bottom, const std::u32string& text,
                  Rgb color, int scale) {
  for (std::size_t n = 0; n < text.size(); ++n) {
    const font::Glyph& g = font::glyph(text[n]);
    const int along0 = static_cast<int>(n) * font::kAdvance * scale;
    for (int row = 0; row < font::kGlyphRows; ++row) {
      for (int col = 0; col < font::kGlyphWidth; ++col) {
        if (!((g[static_cast<std::size_t>(row)] >> (font::kGlyphWidth - 1 - col)) & 1u)) continue;
        for (int du = 0; du < scale; ++du) {
          for (int dv = 0; dv < scale; ++dv) {
            const int along = along0 + col * scale + du;
            const int across = row * scale + dv;
            put_pixel(image, clip, x + across, y_bottom - 1 - along, color);
          }
        }
      }
    }
  }
}

// Ticks ---------------------------------------------------------------------------------------

// Tick values with their labels decoded for drawing.
struct AxisTicks {
  std::vector<double> values;
  std::vector<std::u32string> labels;
  int widest = 0;  // [px] at the figure's text scale
};

AxisTicks axis_ticks(const Range& range, int max_intervals, int scale) {
  const Ticks t = make_ticks(range, max_intervals);
  AxisTicks out;
  out.values = t.values;
  for (const std::string& label : t.labels) {
    out.labels.push_back(decode_utf8(label));
    out.widest = std::max(out.widest, text_width(out.labels.back(), scale));
  }
  return out;
}

// Data ranges ---------------------------------------------------------------------------------

bool finite_sample(const Series& s, std::size_t i) {
  return std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
}

// A span too small to show as distinct ticks is a constant.
Range widened(double lo, double hi) {
  const double centre = 0.5 * (lo + hi);
  if (hi - lo > 1e-9 * std::abs(centre) && hi - lo > 1e-300) return {lo, hi};
  const double half = centre == 0.0 ? 1.0 : 0.1 * std::abs(centre);
  return {centre - half, centre + half};
}

void check_range(const std::optional<Range>& r, const char* axis, const std::string& panel) {
  if (r && !(std::isfinite(r->min) && std::isfinite(r->max) && r->min < r->max)) {
    throw std::invalid_argument("plot: panel '" + panel + "': fixed " + axis +
                                " range must be finite with min < max");
  }
}

std::pair<Range, Range> data_ranges(const Panel& panel) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
  for (const Series& s : panel.series) {
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!finite_sample(s, i)) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  }
  for (const ReferenceLine& ref : panel.references) {
    if (!std::isfinite(ref.y)) continue;
    y_lo = std::min(y_lo, ref.y);
    y_hi = std::max(y_hi, ref.y);
  }
  Range x{0.0, 1.0}, y{0.0, 1.0};
  if (x_lo <= x_hi) x = widened(x_lo, x_hi);
  if (y_lo <= y_hi) {
    y = widened(y_lo, y_hi);
    const double margin = kAutoscaleMargin * (y.max - y.min);
    y = {y.min - margin, y.max + margin};
  }
  if (panel.x_range) x = *panel.x_range;
  if (panel.y_range) y = *panel.y_range;
  if (!std::isfinite(x.max - x.min) || !std::isfinite(y.max - y.min)) {
    throw std::invalid_argument("plot: panel '" + panel.title +
                                "': data span too large to plot (overflows a double)");
  }
  return {x, y};
}

// Layout --------------------------------------------------------------------------------------

struct PanelGeometry {
  PlotArea area;
  int top = 0;  // [px] first row of the panel's band
  AxisTicks x_ticks, y_ticks;
};

struct Geometry {
  int width = 0, height = 0, title_band = 0, scale = 1;
  std::vector<PanelGeometry> panels;
};

int line_height(int scale) { return font::kLineHeight * scale; }
int title_band(const Figure& f) { return f.title.empty() ? 0 : 10 + line_height(2) + 2; }
int top_margin(const Panel& p, int scale) {
  return p.title.empty() ? 12 : 8 + line_height(scale) + 6;
}
int bottom_margin(const Panel& p, int scale) {
  return 1 + kTickLength + 4 + line_height(scale) +
         (p.x_label.empty() ? 0 : 4 + line_height(scale)) + 6;
}
int right_margin(int scale) { return 10 + 3 * font::kAdvance * scale; }

// Most intervals whose labels stay apart: one label's width plus two characters per interval.
AxisTicks fit_x_ticks(const Range& range, int pixels, int scale) {
  for (int max_intervals = std::max(pixels / 60, 2); max_intervals > 1; --max_intervals) {
    AxisTicks t = axis_ticks(range, max_intervals, scale);
    if (t.values.size() < 2) return t;
    const double spacing = (t.values[1] - t.values[0]) / (range.max - range.min) * pixels;
    if (spacing >= t.widest + 2 * font::kAdvance * scale) return t;
  }
  return axis_ticks(range, 1, scale);
}

Geometry compute_geometry(const Figure& figure) {
  if (figure.panels.empty())
    throw std::invalid_argument("plot: figure '" + figure.title + "' has no panels");
  if (figure.width < 240 || figure.height_per_panel < 140) {
    throw std::invalid_argument(
        "plot: figure '" + figure.title + "': size " + std::to_string(figure.width) + "x" +
        std::to_string(figure.height_per_panel) + " per panel is below the minimum 240x140");
  }
  if (figure.text_scale != 1 && figure.text_scale != 2) {
    throw std::invalid_argument("plot: figure '" + figure.title + "': text_scale " +
                                std::to_string(figure.text_scale) + " is not 1 or 2");
  }
  Geometry g;
  g.scale = figure.text_scale;
  g.width = figure.width;
  g.title_band = title_band(figure);
  const int n = static_cast<int>(figure.panels.size());
  g.height = g.title_band + n * figure.height_per_panel;

  int widest_y_label = 0;
  bool any_y_label = false;
  for (int p = 0; p < n; ++p) {
    const Panel& panel = figure.panels[static_cast<std::size_t>(p)];
    for (const Series& s : panel.series) {
      if (s.x.size() != s.y.size()) {
        throw std::invalid_argument("plot: panel '" + panel.title + "', series '" + s.label +
                                    "': " + std::to_string(s.x.size()) + " x values but " +
                                    std::to_string(s.y.size()) + " y values");
      }
    }
    check_range(panel.x_range, "x", panel.title);
    check_range(panel.y_range, "y", panel.title);
    const auto [xr, yr] = data_ranges(panel);
    PanelGeometry pg;
    pg.top = g.title_band + p * figure.height_per_panel;
    pg.area.x = xr;
    pg.area.y = yr;
    pg.area.top = pg.top + top_margin(panel, g.scale);
    pg.area.height =
        figure.height_per_panel - top_margin(panel, g.scale) - bottom_margin(panel, g.scale);
    if (pg.area.height < 40) {
      throw std::invalid_argument("plot: panel '" + panel.title + "': height_per_panel " +
                                  std::to_string(figure.height_per_panel) +
                                  " leaves no room for the plot beside its text");
    }
    const int max_y_ticks = std::max(pg.area.height / (line_height(g.scale) + 24), 2);
    pg.y_ticks = axis_ticks(yr, max_y_ticks, g.scale);
    widest_y_label = std::max(widest_y_label, pg.y_ticks.widest);
    any_y_label = any_y_label || !panel.y_label.empty();
    g.panels.push_back(std::move(pg));
  }
  // One left edge for all panels, so stacked time axes line up.
  const int left =
      8 + (any_y_label ? line_height(g.scale) + 6 : 0) + widest_y_label + 4 + kTickLength + 1;
  const int area_width = figure.width - left - right_margin(g.scale);
  if (area_width < 40) {
    throw std::invalid_argument("plot: figure '" + figure.title + "': width " +
                                std::to_string(figure.width) +
                                " leaves no room for the plot beside its tick labels");
  }
  for (PanelGeometry& pg : g.panels) {
    pg.area.left = left;
    pg.area.width = area_width;
    pg.x_ticks = fit_x_ticks(pg.area.x, area_width, g.scale);
  }
  return g;
}

// Lines ---------------------------------------------------------------------------------------

double distance_to_segment(double px, double py, double x0, double y0, double x1, double y1) {
  const double dx = x1 - x0, dy = y1 - y0;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0.0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(px - (x0 + t * dx), py - (y0 + t * dy));
}

// Liang–Barsky: keeps the part of the segment inside the rectangle; false if none.
bool clip_segment(double& x0, double& y0, double& x1, double& y1, double lo_x, double lo_y,
                  double hi_x, double hi_y) {
  const double dx = x1 - x0, dy = y1 - y0;
  double t0 = 0.0, t1 = 1.0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - lo_x, hi_x - x0, y0 - lo_y, hi_y - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0.0) {
      if (q[i] < 0.0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0.0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  const double nx0 = x0 + t0 * dx, ny0 = y0 + t0 * dy;
  x1 = x0 + t1 * dx;
  y1 = y0 + t1 * dy;
  x0 = nx0;
  y0 = ny0;
  return true;
}

// A coverage raster over one plot area; a series is accumulated as the per-pixel maximum over
// its segments (round caps and joins, no double-darkening) and blended once.
class Coverage {
 public:
  Coverage(int width, int height, bool antialias)
      : width_(width),
        height_(height),
        antialias_(antialias),
        value_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0.0f) {}

  // Endpoints in area pixel coordinates (continuous, origin at the area's top-left corner).
  void segment(double x0, double y0, double x1, double y1) {
    // Only data ~1e300 beyond a fixed range maps this far; it cannot be drawn, so it is a gap.
    if (!std::isfinite(x1 - x0) || !std::isfinite(y1 - y0)) return;
    const double reach = kLineHalfWidth + 1.0;
    if (!clip_segment(x0, y0, x1, y1, -reach, -reach, width_ + reach, height_ + reach)) return;
    const double dx = x1 - x0;
    const int i0 = std::max(0, static_cast<int>(std::floor(std::min(x0, x1) - reach)));
    const int i1 = std::min(width_ - 1, static_cast<int>(std::ceil(std::max(x0, x1) + reach)));
    for (int i = i0; i <= i1; ++i) {
      const double cx = i + 0.5;
      // Only the part of the segment within `reach` of this column can touch it.
      double ta = 0.0, tb = 1.0;
      if (dx != 0.0) {
        ta = (cx - reach - x0) / dx;
        tb = (cx + reach - x0) / dx;
        if (ta > tb) std::swap(ta, tb);
        ta = std::max(ta, 0.0);
        tb = std::min(tb, 1.0);
        if (ta > tb) continue;
      } else if (std::abs(x0 - cx) > reach) {
        continue;
      }
      const double ya = y0 + ta * (y1 - y0), yb = y0 + tb * (y1 - y0);
      const int j0 = std::max(0, static_cast<int>(std::floor(std::min(ya, yb) - reach)));
      const int j1 = std::min(height_ - 1, static_cast<int>(std::ceil(std::max(ya, yb) + reach)));
      for (int j = j0; j <= j1; ++j) {
        const double d = distance_to_segment(cx, j + 0.5, x0, y0, x1, y1);
        const double c = antialias_ ? std::clamp(kLineHalfWidth + 0.5 - d, 0.0, 1.0)
                                    : (d < kLineHalfWidth ? 1.0 : 0.0);
        float& v = value_[static_cast<std::size_t>(j) * static_cast<std::size_t>(width_) +
                          static_cast<std::size_t>(i)];
        v = std::max(v, static_cast<float>(c));
      }
    }
  }

  // Blends `color` into the area at (left, top) and marks touched pixels in `ink`.
  void blend_into(Image& image, int left, int top, Rgb color, std::vector<std::uint8_t>& ink) {
    for (int j = 0; j < height_; ++j) {
      for (int i = 0; i < width_; ++i) {
        const std::size_t k = static_cast<std::size_t>(j) * static_cast<std::size_t>(width_) +
                              static_cast<std::size_t>(i);
        const float c = value_[k];
        if (c <= 0.0f) continue;
        ink[k] = 1;
        const Rgb old = image.at(left + i, top + j);
        auto mix = [c](std::uint8_t a, std::uint8_t b) {
          return static_cast<std::uint8_t>(std::lround(a + (b - a) * static_cast<double>(c)));
        };
        image.set(left + i, top + j,
                  {mix(old.r, color.r), mix(old.g, color.g), mix(old.b, color.b)});
      }
    }
  }

 private:
  int width_, height_;
  bool antialias_;
  std::vector<float> value_;
};

// Drawing a panel ---------------------------------------------------------------------------

int clamp_row(const PlotArea& a, double y) {
  return std::clamp(static_cast<int>(std::floor(a.row(y))), a.top, a.top + a.height - 1);
}
int clamp_column(const PlotArea& a, double x) {
  return std::clamp(static_cast<int>(std::floor(a.column(x))), a.left, a.left + a.width - 1);
}
bool within(const Range& r, double v) { return v >= r.min && v <= r.max; }

void draw_series(Image& image, const PlotArea& a, const Series& s, bool antialias,
                 std::vector<std::uint8_t>& ink) {
  Coverage cov(a.width, a.height, antialias);
  const double left = a.left, top = a.top;
  std::size_t i = 0;
  const std::size_t n = s.x.size();
  while (i < n) {
    if (!finite_sample(s, i)) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;  // the run of finite samples is [i, end)
    while (end < n && finite_sample(s, end)) ++end;
    if (end - i == 1) {
      const double px = a.column(s.x[i]) - left, py = a.row(s.y[i]) - top;
      cov.segment(px, py, px, py);
    }
    for (std::size_t k = i + 1; k < end; ++k) {
      cov.segment(a.column(s.x[k - 1]) - left, a.row(s.y[k - 1]) - top, a.column(s.x[k]) - left,
                  a.row(s.y[k]) - top);
    }
    i = end;
  }
  cov.blend_into(image, a.left, a.top, s.color, ink);
}

void draw_legend(Image& image, const PlotArea& a, const Panel& panel, int scale,
                 const std::vector<std::uint8_t>& ink) {
  std::vector<std::pair<std::u32string, Rgb>> entries;
  int widest = 0;
  for (const Series& s : panel.series) {
    if (s.label.empty()) continue;
    entries.emplace_back(decode_utf8(s.label), s.color);
    widest = std::max(widest, text_width(entries.back().first, scale));
  }
  if (entries.empty()) return;
  const int sample = 24, pad = 8, entry_h = line_height(scale) + 4;
  const int w = pad + sample + 6 + widest + pad;
  const int h = 6 + static_cast<int>(entries.size()) * entry_h + 2;
  const int inset = 8;
  // Hug the right or left edge at the height that hides the fewest inked pixels; ties go to
  // the higher place and to the right, so an empty top-right corner is the usual spot.
  // Summed-area table of the ink: sum over [0, i) × [0, j) at (i, j).
  const std::size_t stride = static_cast<std::size_t>(a.width) + 1;
  std::vector<long> sat(stride * (static_cast<std::size_t>(a.height) + 1), 0);
  for (int j = 0; j < a.height; ++j) {
    long row_sum = 0;
    for (int i = 0; i < a.width; ++i) {
      row_sum += ink[static_cast<std::size_t>(j) * static_cast<std::size_t>(a.width) +
                     static_cast<std::size_t>(i)];
      sat[static_cast<std::size_t>(j + 1) * stride + static_cast<std::size_t>(i + 1)] =
          sat[static_cast<std::size_t>(j) * stride + static_cast<std::size_t>(i + 1)] + row_sum;
    }
  }
  // Ink under the legend's box at area offset (x0, y0) and a 3 px clearance around it.
  auto ink_in = [&](int x0, int y0) {
    constexpr int kClearance = 3;
    const auto cx0 = static_cast<std::size_t>(std::clamp(x0 - kClearance, 0, a.width));
    const auto cy0 = static_cast<std::size_t>(std::clamp(y0 - kClearance, 0, a.height));
    const auto cx1 = static_cast<std::size_t>(std::clamp(x0 + w + kClearance, 0, a.width));
    const auto cy1 = static_cast<std::size_t>(std::clamp(y0 + h + kClearance, 0, a.height));
    return sat[cy1 * stride + cx1] - sat[cy0 * stride + cx1] - sat[cy1 * stride + cx0] +
           sat[cy0 * stride + cx0];
  };
  const int right = a.width - inset - w, lowest = std::max(a.height - inset - h, inset);
  std::pair<int, int> best{right, inset};
  long best_ink = std::numeric_limits<long>::max();
  for (int y0 = inset; y0 <= lowest; y0 = y0 < lowest ? std::min(y0 + 4, lowest) : lowest + 1) {
    for (int x0 : {right, inset}) {
      const long count = ink_in(x0, y0);
      if (count < best_ink) {
        best_ink = count;
        best = {x0, y0};
      }
    }
    if (best_ink == 0) break;
  }
  const int x = a.left + best.first, y = a.top + best.second;
  const Rect clip{a.left, a.top, a.left + a.width, a.top + a.height};
  for (int j = y; j < y + h; ++j) {
    for (int i = x; i < x + w; ++i) {
      const bool border = j == y || j == y + h - 1 || i == x || i == x + w - 1;
      put_pixel(image, clip, i, j, border ? kLegendBorder : kWhite);
    }
  }
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const int row_top = y + 6 + static_cast<int>(e) * entry_h;
    const int mid = row_top + (font::kAscent * scale) / 2;
    for (int i = x + pad; i < x + pad + sample; ++i) {
      put_pixel(image, clip, i, mid - 1, entries[e].second);
      put_pixel(image, clip, i, mid, entries[e].second);
    }
    draw_text(image, clip, x + pad + sample + 6, row_top, entries[e].first, kBlack, scale);
  }
}

void draw_panel(Image& image, const Figure& figure, const Panel& panel, const PanelGeometry& pg,
                int scale) {
  const PlotArea& a = pg.area;
  const Rect whole{0, 0, image.width, image.height};
  const Rect inside{a.left, a.top, a.left + a.width, a.top + a.height};
  std::vector<std::uint8_t> ink(
      static_cast<std::size_t>(a.width) * static_cast<std::size_t>(a.height), 0);

  if (figure.grid) {
    for (double v : pg.x_ticks.values) {
      const int c = clamp_column(a, v);
      for (int j = a.top; j < a.top + a.height; ++j) image.set(c, j, kGridColor);
    }
    for (double v : pg.y_ticks.values) {
      const int r = clamp_row(a, v);
      for (int i = a.left; i < a.left + a.width; ++i) image.set(i, r, kGridColor);
    }
  }

  // Reference lines under the data, their labels over it.
  struct PlacedLabel {
    std::u32string text;
    int x, y;
    Rgb color;
  };
  std::vector<PlacedLabel> labels;
  for (const ReferenceLine& ref : panel.references) {
    if (!std::isfinite(ref.y) || !within(a.y, ref.y)) continue;
    const int r = clamp_row(a, ref.y);
    for (int i = a.left; i < a.left + a.width; ++i) {
      if ((i - a.left) % kDashPeriod >= kDashOn) continue;
      image.set(i, r, ref.color);
      ink[static_cast<std::size_t>(r - a.top) * static_cast<std::size_t>(a.width) +
          static_cast<std::size_t>(i - a.left)] = 1;
    }
    if (ref.label.empty()) continue;
    PlacedLabel label{decode_utf8(ref.label), 0, r - 3 - font::kAscent * scale, ref.color};
    label.x = a.left + a.width - 6 - text_width(label.text, scale);
    if (label.y < a.top + 2) label.y = r + 4;  // no room above the line
    for (int j = std::max(label.y - 1, a.top);
         j < std::min(label.y + font::kGlyphRows * scale + 1, a.top + a.height); ++j) {
      for (int i = std::max(label.x - 1, a.left); i < a.left + a.width; ++i) {
        ink[static_cast<std::size_t>(j - a.top) * static_cast<std::size_t>(a.width) +
            static_cast<std::size_t>(i - a.left)] = 1;
      }
    }
    labels.push_back(std::move(label));
  }

  for (const Series& s : panel.series) draw_series(image, a, s, figure.antialias, ink);

  for (const PlacedLabel& label : labels) {
    // A white halo keeps the label legible where a series crosses it.
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        draw_text(image, inside, label.x + dx, label.y + dy, label.text, kWhite, scale);
      }
    }
    draw_text(image, inside, label.x, label.y, label.text, label.color, scale);
  }
  draw_legend(image, a, panel, scale, ink);

  // Frame just outside the area, then ticks and their labels.
  for (int i = a.left - 1; i <= a.left + a.width; ++i) {
    image.set(i, a.top - 1, kBlack);
    image.set(i, a.top + a.height, kBlack);
  }
  for (int j = a.top - 1; j <= a.top + a.height; ++j) {
    image.set(a.left - 1, j, kBlack);
    image.set(a.left + a.width, j, kBlack);
  }
  const int label_top = a.top + a.height + 1 + kTickLength + 4;
  for (std::size_t t = 0; t < pg.x_ticks.values.size(); ++t) {
    const int c = clamp_column(a, pg.x_ticks.values[t]);
    for (int j = a.top + a.height + 1; j <= a.top + a.height + kTickLength; ++j)
      image.set(c, j, kBlack);
    const std::u32string& label = pg.x_ticks.labels[t];
    const int w = text_width(label, scale);
    const int x = std::clamp(c - w / 2, 0, std::max(image.width - w, 0));
    draw_text(image, whole, x, label_top, label, kBlack, scale);
  }
  const int label_right = a.left - 1 - kTickLength - 4;
  for (std::size_t t = 0; t < pg.y_ticks.values.size(); ++t) {
    const int r = clamp_row(a, pg.y_ticks.values[t]);
    for (int i = a.left - 1 - kTickLength; i < a.left - 1; ++i) image.set(i, r, kBlack);
    const std::u32string& label = pg.y_ticks.labels[t];
    draw_text(image, whole, label_right - text_width(label, scale), r - (font::kAscent * scale) / 2,
              label, kBlack, scale);
  }

  if (!panel.x_label.empty()) {
    const std::u32string label = decode_utf8(panel.x_label);
    draw_text(image, whole, a.left + (a.width - text_width(label, scale)) / 2,
              label_top + line_height(scale) + 4, label, kBlack, scale);
  }
  if (!panel.y_label.empty()) {
    const std::u32string label = decode_utf8(panel.y_label);
    const int w = text_width(label, scale);
    draw_text_up(image, whole, 8, a.top + (a.height + w) / 2, label, kBlack, scale);
  }
  if (!panel.title.empty()) {
    const std::u32string title = decode_utf8(panel.title);
    draw_text(image, whole, a.left + (a.width - text_width(title, scale)) / 2, pg.top + 8, title,
              kBlack, scale, true);
  }
}

}  // namespace

Rgb palette_color(std::size_t index) {
  static constexpr std::array<Rgb, 8> kPalette = {{{31, 119, 180},
                                                   {214, 39, 40},
                                                   {44, 160, 44},
                                                   {255, 127, 14},
                                                   {148, 103, 189},
                                                   {140, 86, 75},
                                                   {227, 119, 194},
                                                   {23, 190, 207}}};
  return kPalette[index % kPalette.size()];
}

Image::Image(int width_px, int height_px, Rgb fill) : width(width_px), height(height_px) {
  if (width_px < 0 || height_px < 0) {
    throw std::invalid_argument("Image: negative size " + std::to_string(width_px) + "x" +
                                std::to_string(height_px));
  }
  pixels.resize(static_cast<std::size_t>(width_px) * static_cast<std::size_t>(height_px) * 3);
  for (std::size_t i = 0; i < pixels.size(); i += 3) {
    pixels[i] = fill.r;
    pixels[i + 1] = fill.g;
    pixels[i + 2] = fill.b;
  }
}

Rgb Image::at(int x, int y) const {
  const std::size_t k = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                         static_cast<std::size_t>(x)) *
                        3;
  return {pixels[k], pixels[k + 1], pixels[k + 2]};
}

void Image::set(int x, int y, Rgb color) {
  const std::size_t k = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                         static_cast<std::size_t>(x)) *
                        3;
  pixels[k] = color.r;
  pixels[k + 1] = color.g;
  pixels[k + 2] = color.b;
}

double PlotArea::column(double x_value) const {
  return left + (x_value - x.min) / (x.max - x.min) * width;
}

double PlotArea::row(double y_value) const {
  return top + (y.max - y_value) / (y.max - y.min) * height;
}

std::vector<PlotArea> layout(const Figure& figure) {
  const Geometry g = compute_geometry(figure);
  std::vector<PlotArea> areas;
  for (const PanelGeometry& pg : g.panels) areas.push_back(pg.area);
  return areas;
}

Image render(const Figure& figure) {
  const Geometry g = compute_geometry(figure);
  Image image(g.width, g.height, kWhite);
  if (!figure.title.empty()) {
    const std::u32string title = decode_utf8(figure.title);
    draw_text(image, {0, 0, image.width, image.height}, (g.width - text_width(title, 2)) / 2, 10,
              title, kBlack, 2, true);
  }
  for (std::size_t p = 0; p < figure.panels.size(); ++p) {
    draw_panel(image, figure, figure.panels[p], g.panels[p], g.scale);
  }
  return image;
}

void write_png(const Figure& figure, const std::string& path) {
  std::vector<std::uint8_t> bytes;
  encode_png(render(figure), bytes);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    throw std::runtime_error("write_png: cannot create '" + path + "': " + std::strerror(errno));
  }
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) {
    throw std::runtime_error("write_png: cannot write " + std::to_string(bytes.size()) +
                             " bytes to '" + path + "': " + std::strerror(errno));
  }
}

}  // namespace tether::remote::report

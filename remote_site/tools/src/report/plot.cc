#include "tether/remote/report/plot.h"

#include <cairo.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "report/image_file.h"
#include "report/ticks.h"

namespace tether::remote::report {
namespace {

constexpr Rgb kGridColor{226, 226, 226};
constexpr Rgb kLegendBorder{150, 150, 150};
constexpr double kLineWidth = 2.0;                         // [px] series lines
constexpr int kTickLength = 5;                             // [px]
constexpr std::array<double, 2> kDash = {8, 4};            // [px] on, off: reference lines
constexpr double kAutoscaleMargin = 0.05;                  // of the y span, on either side
constexpr double kTitleScale = 1.3;                        // figure title size / Figure::font_size
constexpr double kMinFontSize = 6.0, kMaxFontSize = 48.0;  // [px]
constexpr const char* kFontFamily = "sans-serif";

void set_color(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

// Text ----------------------------------------------------------------------------------------

// Cairo rejects invalid UTF-8 and then stops drawing altogether, so each offending byte
// (also overlong forms, surrogates, code points past U+10FFFF and NUL) becomes '?'.
std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    char32_t cp = c, least = 1;
    bool ok = true;
    if (c >= 0x80) {
      if ((c & 0xE0) == 0xC0) {
        extra = 1;
        cp = c & 0x1Fu;
        least = 0x80;
      } else if ((c & 0xF0) == 0xE0) {
        extra = 2;
        cp = c & 0x0Fu;
        least = 0x800;
      } else if ((c & 0xF8) == 0xF0) {
        extra = 3;
        cp = c & 0x07u;
        least = 0x10000;
      } else {
        ok = false;
      }
    }
    ok = ok && i + extra < text.size();
    for (std::size_t k = 1; ok && k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    ok = ok && cp >= least && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!ok) {
      out.push_back('?');
      ++i;
      continue;
    }
    out.append(text, i, extra + 1);
    i += extra + 1;
  }
  return out;
}

// Unhinted advances make text as wide on the layout's scratch surface as on the PNG or SVG
// surface it is drawn on, so the layout holds for both.
void set_text_options(cairo_t* cr) {
  cairo_font_options_t* options = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
  cairo_set_font_options(cr, options);
  cairo_font_options_destroy(options);
}

void use_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// [px] in the current font; `text` must be valid UTF-8.
double text_width(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, text.c_str(), &e);
  return e.x_advance;
}

double widest(cairo_t* cr, const std::vector<std::string>& texts) {
  double w = 0.0;
  for (const std::string& t : texts) w = std::max(w, text_width(cr, valid_utf8(t)));
  return w;
}

struct FontMetrics {
  double ascent = 0.0, descent = 0.0;  // [px] above and below the baseline
  int line = 0;                        // [px] rows one line of text takes
};

FontMetrics font_metrics(cairo_t* cr) {
  cairo_font_extents_t e;
  cairo_font_extents(cr, &e);
  return {e.ascent, e.descent, static_cast<int>(std::ceil(e.ascent + e.descent))};
}

void show_text(cairo_t* cr, double x, double baseline, const std::string& text) {
  cairo_move_to(cr, x, baseline);
  cairo_show_text(cr, text.c_str());
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

bool within(const Range& r, double v) { return v >= r.min && v <= r.max; }

std::vector<SampleRun> sample_runs(const Panel& panel) {
  std::vector<SampleRun> runs;
  for (std::size_t s = 0; s < panel.series.size(); ++s) {
    const Series& series = panel.series[s];
    std::size_t i = 0;
    while (i < series.x.size()) {
      if (!finite_sample(series, i)) {
        ++i;
        continue;
      }
      std::size_t end = i + 1;
      while (end < series.x.size() && finite_sample(series, end)) ++end;
      runs.push_back({s, i, end});
      i = end;
    }
  }
  return runs;
}

// Geometry ------------------------------------------------------------------------------------

// The centre of the pixel column or row a value falls in, kept inside the area, so 1 px lines
// at ticks and reference values are crisp.
double crisp_column(const PlotArea& a, double x) {
  return std::clamp(static_cast<int>(std::floor(a.column(x))), a.left, a.left + a.width - 1) + 0.5;
}
double crisp_row(const PlotArea& a, double y) {
  return std::clamp(static_cast<int>(std::floor(a.row(y))), a.top, a.top + a.height - 1) + 0.5;
}

// Liang–Barsky: keeps the part of the segment inside the rectangle; false if none. An end
// that is inside stays bit-identical, so clipped neighbours still meet exactly.
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
  const double nx0 = t0 > 0.0 ? x0 + t0 * dx : x0, ny0 = t0 > 0.0 ? y0 + t0 * dy : y0;
  if (t1 < 1.0) {
    x1 = x0 + t1 * dx;
    y1 = y0 + t1 * dy;
  }
  x0 = nx0;
  y0 = ny0;
  return true;
}

// Which pixels of a plot area carry data, reference lines or their labels: the legend goes
// where it hides the fewest.
class InkMap {
 public:
  InkMap(int width, int height)
      : width_(width),
        height_(height),
        ink_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0) {}

  // Coordinates relative to the area's top-left corner.
  void mark(double x, double y) {
    if (!(x >= 0.0 && y >= 0.0 && x < width_ && y < height_)) return;
    ink_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) +
         static_cast<std::size_t>(x)] = 1;
  }
  void mark_segment(double x0, double y0, double x1, double y1) {
    // Only data ~1e300 beyond a fixed range maps this far; it cannot be drawn: a gap.
    if (!std::isfinite(x1 - x0) || !std::isfinite(y1 - y0)) return;
    if (!clip_segment(x0, y0, x1, y1, 0.0, 0.0, width_, height_)) return;
    const int steps = static_cast<int>(std::ceil(std::max(std::abs(x1 - x0), std::abs(y1 - y0))));
    for (int k = 0; k <= steps; ++k) {
      const double t = steps == 0 ? 0.0 : static_cast<double>(k) / steps;
      mark(x0 + t * (x1 - x0), y0 + t * (y1 - y0));
    }
  }
  void mark_box(int x0, int y0, int x1, int y1) {  // [x0, x1) × [y0, y1)
    for (int j = std::max(y0, 0); j < std::min(y1, height_); ++j) {
      for (int i = std::max(x0, 0); i < std::min(x1, width_); ++i) mark(i, j);
    }
  }

  // Inked pixels in [x0, x1) × [y0, y1), clamped to the area.
  long count(int x0, int y0, int x1, int y1) {
    if (sums_.empty()) summarise();
    const std::size_t stride = static_cast<std::size_t>(width_) + 1;
    const auto cx0 = static_cast<std::size_t>(std::clamp(x0, 0, width_));
    const auto cy0 = static_cast<std::size_t>(std::clamp(y0, 0, height_));
    const auto cx1 = static_cast<std::size_t>(std::clamp(x1, 0, width_));
    const auto cy1 = static_cast<std::size_t>(std::clamp(y1, 0, height_));
    if (cx1 <= cx0 || cy1 <= cy0) return 0;
    return sums_[cy1 * stride + cx1] - sums_[cy0 * stride + cx1] - sums_[cy1 * stride + cx0] +
           sums_[cy0 * stride + cx0];
  }

 private:
  // Summed-area table: the ink in [0, i) × [0, j) at (i, j).
  void summarise() {
    const std::size_t stride = static_cast<std::size_t>(width_) + 1;
    sums_.assign(stride * (static_cast<std::size_t>(height_) + 1), 0);
    for (int j = 0; j < height_; ++j) {
      long row = 0;
      for (int i = 0; i < width_; ++i) {
        row += ink_[static_cast<std::size_t>(j) * static_cast<std::size_t>(width_) +
                    static_cast<std::size_t>(i)];
        sums_[static_cast<std::size_t>(j + 1) * stride + static_cast<std::size_t>(i + 1)] =
            sums_[static_cast<std::size_t>(j) * stride + static_cast<std::size_t>(i + 1)] + row;
      }
    }
  }

  int width_, height_;
  std::vector<std::uint8_t> ink_;
  std::vector<long> sums_;
};

// Layout --------------------------------------------------------------------------------------

constexpr int kLegendPad = 8, kLegendSample = 24, kLegendGap = 6, kLegendInset = 8;

struct ReferenceLabel {
  std::size_t reference = 0;
  std::string text;                   // valid UTF-8
  double left = 0.0, baseline = 0.0;  // [px]
};

// The public layout plus what drawing needs beyond it.
struct Plan {
  FigureLayout figure;
  FontMetrics text, title;
  std::vector<std::vector<ReferenceLabel>> reference_labels;  // per panel
};

int top_margin(const Panel& p, int line) { return p.title.empty() ? 12 : 8 + line + 6; }
int bottom_margin(const Panel& p, int line) {
  return 1 + kTickLength + 4 + line + (p.x_label.empty() ? 0 : 4 + line) + 6;
}

// Most intervals whose labels stay apart: one label's width plus two digits per interval.
Ticks fit_x_ticks(cairo_t* cr, const Range& range, int pixels, double digit) {
  for (int max_intervals = std::max(pixels / 60, 2); max_intervals > 1; --max_intervals) {
    Ticks t = make_ticks(range, max_intervals);
    if (t.values.size() < 2) return t;
    const double spacing = t.step / (range.max - range.min) * pixels;
    if (spacing >= widest(cr, t.labels) + 2.0 * digit) return t;
  }
  return make_ticks(range, 1);
}

void place_references(cairo_t* cr, const Panel& panel, const FontMetrics& font, PanelLayout& pl,
                      std::vector<ReferenceLabel>& labels, InkMap& ink) {
  const PlotArea& a = pl.area;
  for (std::size_t r = 0; r < panel.references.size(); ++r) {
    const ReferenceLine& ref = panel.references[r];
    if (!std::isfinite(ref.y) || !within(a.y, ref.y)) continue;
    pl.references.push_back(r);
    const int row = static_cast<int>(crisp_row(a, ref.y));
    ink.mark_box(0, row - a.top, a.width, row - a.top + 1);
    if (ref.label.empty()) continue;
    ReferenceLabel label{r, valid_utf8(ref.label), 0.0, 0.0};
    const double width = text_width(cr, label.text);
    label.left = a.left + a.width - 6 - width;
    int top = row - 3 - font.line;       // just above the line
    if (top < a.top + 2) top = row + 4;  // no room there: just below
    label.baseline = top + font.ascent;
    ink.mark_box(static_cast<int>(std::floor(label.left)) - 1 - a.left, top - 1 - a.top, a.width,
                 top + font.line + 1 - a.top);
    labels.push_back(std::move(label));
  }
}

// Against the right or left edge at the height that hides the fewest inked pixels (with a
// 3 px clearance); ties go to the higher place and to the right, so an empty top-right
// corner is the usual spot.
void place_legend(cairo_t* cr, const Panel& panel, int line, PanelLayout& pl, InkMap& ink) {
  std::vector<std::string> texts;
  for (std::size_t s = 0; s < panel.series.size(); ++s) {
    if (panel.series[s].label.empty()) continue;
    pl.legend.push_back(s);
    texts.push_back(panel.series[s].label);
  }
  if (texts.empty()) return;
  const PlotArea& a = pl.area;
  const int w = kLegendPad + kLegendSample + kLegendGap +
                static_cast<int>(std::ceil(widest(cr, texts))) + kLegendPad;
  const int h = 4 + static_cast<int>(texts.size()) * (line + 4);
  constexpr int kClearance = 3;
  const int right = a.width - kLegendInset - w;
  const int lowest = std::max(a.height - kLegendInset - h, kLegendInset);
  std::pair<int, int> best{right, kLegendInset};
  long best_ink = std::numeric_limits<long>::max();
  for (int y = kLegendInset; y <= lowest; y = y < lowest ? std::min(y + 4, lowest) : lowest + 1) {
    for (int x : {right, kLegendInset}) {
      const long count =
          ink.count(x - kClearance, y - kClearance, x + w + kClearance, y + h + kClearance);
      if (count < best_ink) {
        best_ink = count;
        best = {x, y};
      }
    }
    if (best_ink == 0) break;
  }
  pl.legend_box = Box{a.left + best.first, a.top + best.second, w, h};
}

void mark_series(const Panel& panel, const PanelLayout& pl, InkMap& ink) {
  const PlotArea& a = pl.area;
  for (const SampleRun& run : pl.runs) {
    const Series& s = panel.series[run.series];
    if (run.end - run.begin == 1) {
      ink.mark(a.column(s.x[run.begin]) - a.left, a.row(s.y[run.begin]) - a.top);
    }
    for (std::size_t k = run.begin + 1; k < run.end; ++k) {
      ink.mark_segment(a.column(s.x[k - 1]) - a.left, a.row(s.y[k - 1]) - a.top,
                       a.column(s.x[k]) - a.left, a.row(s.y[k]) - a.top);
    }
  }
}

// A context only for measuring text; its 1 × 1 surface is never looked at.
ContextPtr measuring_context() {
  const SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1));
  ContextPtr cr(cairo_create(surface.get()));  // holds its own reference to the surface
  set_text_options(cr.get());
  return cr;
}

void validate(const Figure& figure) {
  if (figure.panels.empty())
    throw std::invalid_argument("plot: figure '" + figure.title + "' has no panels");
  if (figure.width < 240 || figure.height_per_panel < 140) {
    throw std::invalid_argument(
        "plot: figure '" + figure.title + "': size " + std::to_string(figure.width) + "x" +
        std::to_string(figure.height_per_panel) + " per panel is below the minimum 240x140");
  }
  if (!(figure.font_size >= kMinFontSize && figure.font_size <= kMaxFontSize)) {
    throw std::invalid_argument("plot: figure '" + figure.title + "': font_size " +
                                std::to_string(figure.font_size) + " px is outside [6, 48] px");
  }
  for (const Panel& panel : figure.panels) {
    for (const Series& s : panel.series) {
      if (s.x.size() != s.y.size()) {
        throw std::invalid_argument("plot: panel '" + panel.title + "', series '" + s.label +
                                    "': " + std::to_string(s.x.size()) + " x values but " +
                                    std::to_string(s.y.size()) + " y values");
      }
    }
    check_range(panel.x_range, "x", panel.title);
    check_range(panel.y_range, "y", panel.title);
  }
}

Plan make_plan(const Figure& figure) {
  validate(figure);
  const ContextPtr measuring = measuring_context();
  cairo_t* cr = measuring.get();
  Plan plan;
  use_font(cr, kTitleScale * figure.font_size, true);
  plan.title = font_metrics(cr);
  use_font(cr, figure.font_size, false);
  plan.text = font_metrics(cr);
  const int line = plan.text.line;
  const double digit = text_width(cr, "0");

  FigureLayout& fl = plan.figure;
  fl.width = figure.width;
  fl.title_band = figure.title.empty() ? 0 : 8 + plan.title.line + 6;
  const int n = static_cast<int>(figure.panels.size());
  fl.height = fl.title_band + n * figure.height_per_panel;

  double widest_y_label = 0.0;
  bool any_y_label = false;
  for (int p = 0; p < n; ++p) {
    const Panel& panel = figure.panels[static_cast<std::size_t>(p)];
    const auto [xr, yr] = data_ranges(panel);
    PanelLayout pl;
    pl.top = fl.title_band + p * figure.height_per_panel;
    pl.area.x = xr;
    pl.area.y = yr;
    pl.area.top = pl.top + top_margin(panel, line);
    pl.area.height = figure.height_per_panel - top_margin(panel, line) - bottom_margin(panel, line);
    if (pl.area.height < 40) {
      throw std::invalid_argument("plot: panel '" + panel.title + "': height_per_panel " +
                                  std::to_string(figure.height_per_panel) +
                                  " leaves no room for the plot beside its text");
    }
    pl.y_ticks = make_ticks(yr, std::max(pl.area.height / (line + 24), 2));
    widest_y_label = std::max(widest_y_label, widest(cr, pl.y_ticks.labels));
    any_y_label = any_y_label || !panel.y_label.empty();
    pl.runs = sample_runs(panel);
    fl.panels.push_back(std::move(pl));
  }
  // One left edge for all panels, so stacked time axes line up.
  const int left = 8 + (any_y_label ? line + 6 : 0) + static_cast<int>(std::ceil(widest_y_label)) +
                   4 + kTickLength + 1;
  // Room for half of the last x tick label.
  const int right = 10 + static_cast<int>(std::ceil(1.5 * digit));
  const int area_width = figure.width - left - right;
  if (area_width < 40) {
    throw std::invalid_argument("plot: figure '" + figure.title + "': width " +
                                std::to_string(figure.width) +
                                " leaves no room for the plot beside its tick labels");
  }
  for (int p = 0; p < n; ++p) {
    const Panel& panel = figure.panels[static_cast<std::size_t>(p)];
    PanelLayout& pl = fl.panels[static_cast<std::size_t>(p)];
    pl.area.left = left;
    pl.area.width = area_width;
    pl.x_ticks = fit_x_ticks(cr, pl.area.x, area_width, digit);
    InkMap ink(pl.area.width, pl.area.height);
    plan.reference_labels.emplace_back();
    place_references(cr, panel, plan.text, pl, plan.reference_labels.back(), ink);
    mark_series(panel, pl, ink);
    place_legend(cr, panel, line, pl, ink);
  }
  return plan;
}

// Drawing -------------------------------------------------------------------------------------

void draw_series(cairo_t* cr, const PlotArea& a, const Series& s, std::size_t index,
                 const std::vector<SampleRun>& runs) {
  // Clipped in double precision before Cairo sees them: its fixed-point coordinates overflow
  // for data far outside a fixed range.
  const double reach = kLineWidth + 2.0;
  const double lo_x = a.left - reach, lo_y = a.top - reach;
  const double hi_x = a.left + a.width + reach, hi_y = a.top + a.height + reach;
  std::vector<std::pair<double, double>> dots;
  for (const SampleRun& run : runs) {
    if (run.series != index) continue;
    if (run.end - run.begin == 1) {
      const double x = a.column(s.x[run.begin]), y = a.row(s.y[run.begin]);
      if (x >= lo_x && x <= hi_x && y >= lo_y && y <= hi_y) dots.emplace_back(x, y);
      continue;
    }
    bool open = false;
    double last_x = 0.0, last_y = 0.0;
    for (std::size_t k = run.begin + 1; k < run.end; ++k) {
      double x0 = a.column(s.x[k - 1]), y0 = a.row(s.y[k - 1]);
      double x1 = a.column(s.x[k]), y1 = a.row(s.y[k]);
      if (!std::isfinite(x1 - x0) || !std::isfinite(y1 - y0) ||
          !clip_segment(x0, y0, x1, y1, lo_x, lo_y, hi_x, hi_y)) {
        open = false;
        continue;
      }
      if (!open || x0 != last_x || y0 != last_y) cairo_move_to(cr, x0, y0);
      cairo_line_to(cr, x1, y1);
      last_x = x1;
      last_y = y1;
      open = true;
    }
  }
  // One stroke per series: where the line crosses itself it is not darkened twice.
  set_color(cr, s.color);
  cairo_set_line_width(cr, kLineWidth);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_stroke(cr);
  for (const auto& [x, y] : dots) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, 0.5 * kLineWidth, 0.0, 2.0 * std::numbers::pi);
  }
  cairo_fill(cr);
}

void draw_legend(cairo_t* cr, const Panel& panel, const PanelLayout& pl, const FontMetrics& font) {
  if (!pl.legend_box) return;
  const Box& b = *pl.legend_box;
  cairo_rectangle(cr, b.left + 0.5, b.top + 0.5, b.width - 1.0, b.height - 1.0);
  set_color(cr, kWhite);
  cairo_fill_preserve(cr);
  set_color(cr, kLegendBorder);
  cairo_set_line_width(cr, 1.0);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
  cairo_stroke(cr);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  for (std::size_t e = 0; e < pl.legend.size(); ++e) {
    const Series& s = panel.series[pl.legend[e]];
    const int row_top = b.top + 4 + static_cast<int>(e) * (font.line + 4);
    // Half a line rounded down to a whole pixel, so the 2 px sample stays crisp.
    const double mid = row_top + std::floor(font.line / 2.0);
    cairo_move_to(cr, b.left + kLegendPad, mid);
    cairo_line_to(cr, b.left + kLegendPad + kLegendSample, mid);
    set_color(cr, s.color);
    cairo_set_line_width(cr, kLineWidth);
    cairo_stroke(cr);
    set_color(cr, kBlack);
    show_text(cr, b.left + kLegendPad + kLegendSample + kLegendGap, row_top + font.ascent,
              valid_utf8(s.label));
  }
}

void draw_panel(cairo_t* cr, const Figure& figure, const Panel& panel, const PanelLayout& pl,
                const std::vector<ReferenceLabel>& reference_labels, const FontMetrics& font) {
  const PlotArea& a = pl.area;
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  cairo_set_line_width(cr, 1.0);
  if (figure.grid) {
    for (double v : pl.x_ticks.values) {
      cairo_move_to(cr, crisp_column(a, v), a.top);
      cairo_line_to(cr, crisp_column(a, v), a.top + a.height);
    }
    for (double v : pl.y_ticks.values) {
      cairo_move_to(cr, a.left, crisp_row(a, v));
      cairo_line_to(cr, a.left + a.width, crisp_row(a, v));
    }
    set_color(cr, kGridColor);
    cairo_stroke(cr);
  }

  cairo_save(cr);
  cairo_rectangle(cr, a.left, a.top, a.width, a.height);
  cairo_clip(cr);
  // Reference lines under the data, their labels over it.
  cairo_set_dash(cr, kDash.data(), static_cast<int>(kDash.size()), 0.0);
  for (std::size_t r : pl.references) {
    const ReferenceLine& ref = panel.references[r];
    cairo_move_to(cr, a.left, crisp_row(a, ref.y));
    cairo_line_to(cr, a.left + a.width, crisp_row(a, ref.y));
    set_color(cr, ref.color);
    cairo_stroke(cr);
  }
  cairo_set_dash(cr, nullptr, 0, 0.0);
  cairo_set_antialias(cr, figure.antialias ? CAIRO_ANTIALIAS_DEFAULT : CAIRO_ANTIALIAS_NONE);
  for (std::size_t s = 0; s < panel.series.size(); ++s) {
    draw_series(cr, a, panel.series[s], s, pl.runs);
  }
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
  use_font(cr, figure.font_size, false);
  for (const ReferenceLabel& label : reference_labels) {
    // A white halo keeps the label legible where a series crosses it.
    cairo_move_to(cr, label.left, label.baseline);
    cairo_text_path(cr, label.text.c_str());
    set_color(cr, kWhite);
    cairo_set_line_width(cr, 3.0);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_stroke_preserve(cr);
    set_color(cr, panel.references[label.reference].color);
    cairo_fill(cr);
  }
  draw_legend(cr, panel, pl, font);
  cairo_restore(cr);

  // Frame just outside the area, then the ticks and their labels.
  set_color(cr, kBlack);
  cairo_set_line_width(cr, 1.0);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  cairo_rectangle(cr, a.left - 0.5, a.top - 0.5, a.width + 1.0, a.height + 1.0);
  const int below = a.top + a.height + 1;
  for (double v : pl.x_ticks.values) {
    cairo_move_to(cr, crisp_column(a, v), below);
    cairo_line_to(cr, crisp_column(a, v), below + kTickLength);
  }
  for (double v : pl.y_ticks.values) {
    cairo_move_to(cr, a.left - 1 - kTickLength, crisp_row(a, v));
    cairo_line_to(cr, a.left - 1, crisp_row(a, v));
  }
  cairo_stroke(cr);

  use_font(cr, figure.font_size, false);
  const int label_top = below + kTickLength + 4;
  const double image_width = figure.width;
  for (std::size_t t = 0; t < pl.x_ticks.values.size(); ++t) {
    const std::string label = valid_utf8(pl.x_ticks.labels[t]);
    const double w = text_width(cr, label);
    const double x = std::clamp(crisp_column(a, pl.x_ticks.values[t]) - 0.5 * w, 0.0,
                                std::max(image_width - w, 0.0));
    show_text(cr, x, label_top + font.ascent, label);
  }
  for (std::size_t t = 0; t < pl.y_ticks.values.size(); ++t) {
    const std::string label = valid_utf8(pl.y_ticks.labels[t]);
    cairo_text_extents_t e;
    cairo_text_extents(cr, label.c_str(), &e);
    // The digits' ink centred on the tick.
    show_text(cr, a.left - 1 - kTickLength - 4 - e.x_advance,
              crisp_row(a, pl.y_ticks.values[t]) - (e.y_bearing + 0.5 * e.height), label);
  }
  if (!panel.x_label.empty()) {
    const std::string label = valid_utf8(panel.x_label);
    show_text(cr, a.left + 0.5 * (a.width - text_width(cr, label)),
              label_top + font.line + 4 + font.ascent, label);
  }
  if (!panel.y_label.empty()) {
    // Turned 90° counter-clockwise, reading bottom to top, the letters' tops at x = 8.
    const std::string label = valid_utf8(panel.y_label);
    cairo_save(cr);
    cairo_translate(cr, 8.0 + font.ascent, a.top + 0.5 * (a.height + text_width(cr, label)));
    cairo_rotate(cr, -0.5 * std::numbers::pi);
    show_text(cr, 0.0, 0.0, label);
    cairo_restore(cr);
  }
  if (!panel.title.empty()) {
    use_font(cr, figure.font_size, true);
    const std::string title = valid_utf8(panel.title);
    show_text(cr, a.left + 0.5 * (a.width - text_width(cr, title)), pl.top + 8 + font.ascent,
              title);
  }
}

void draw_figure(cairo_t* cr, const Figure& figure, const Plan& plan) {
  set_text_options(cr);
  if (!figure.title.empty()) {
    use_font(cr, kTitleScale * figure.font_size, true);
    const std::string title = valid_utf8(figure.title);
    set_color(cr, kBlack);
    show_text(cr, 0.5 * (plan.figure.width - text_width(cr, title)), 8 + plan.title.ascent, title);
  }
  for (std::size_t p = 0; p < figure.panels.size(); ++p) {
    draw_panel(cr, figure, figure.panels[p], plan.figure.panels[p], plan.reference_labels[p],
               plan.text);
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

double PlotArea::column(double x_value) const {
  return left + (x_value - x.min) / (x.max - x.min) * width;
}

double PlotArea::row(double y_value) const {
  return top + (y.max - y_value) / (y.max - y.min) * height;
}

FigureLayout layout(const Figure& figure) { return make_plan(figure).figure; }

void write_figure(const Figure& figure, const std::string& path) {
  const Plan plan = make_plan(figure);
  write_drawing(
      plan.figure.width, plan.figure.height, [&](cairo_t* cr) { draw_figure(cr, figure, plan); },
      path, "write_figure");
}

void write_png(const Figure& figure, const std::string& path) { write_figure(figure, path); }

}  // namespace tether::remote::report

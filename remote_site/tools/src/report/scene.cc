#include "tether/remote/report/scene.h"

#include <cairo.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "report/image_file.h"
#include "report/ticks.h"

namespace tether::remote::report {
namespace {

constexpr const char* kFontFamily = "sans-serif";
constexpr Rgb kGrid{230, 230, 230};
constexpr Rgb kLegendBorder{150, 150, 150};
constexpr Rgb kSubtitle{70, 70, 70};
constexpr int kTick = 5;                      // [px]
constexpr std::array<double, 2> kDash{7, 4};  // [px] on, off
constexpr int kLegendSample = 26, kLegendPad = 7, kLegendInset = 8;
constexpr int kBarHeight = 14;  // [px] the colour bar

void set_color(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

void use_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// Unhinted advances: text is as wide on the measuring surface as on the PNG or SVG one.
void set_text_options(cairo_t* cr) {
  cairo_font_options_t* options = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
  cairo_set_font_options(cr, options);
  cairo_font_options_destroy(options);
}

double text_width(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, text.c_str(), &e);
  return e.x_advance;
}

double widest(cairo_t* cr, const std::vector<std::string>& texts) {
  double w = 0.0;
  for (const auto& t : texts) w = std::max(w, text_width(cr, t));
  return w;
}

struct Metrics {
  double ascent = 0.0;
  int line = 0;
};

Metrics metrics(cairo_t* cr) {
  cairo_font_extents_t e;
  cairo_font_extents(cr, &e);
  return {e.ascent, static_cast<int>(std::ceil(e.ascent + e.descent))};
}

void show(cairo_t* cr, double x, double baseline, const std::string& text) {
  cairo_move_to(cr, x, baseline);
  cairo_show_text(cr, text.c_str());
}

ContextPtr measuring_context() {
  const SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1));
  ContextPtr cr(cairo_create(surface.get()));
  set_text_options(cr.get());
  return cr;
}

// Where one view lands.
struct ViewPlan {
  int cell_left = 0, cell_top = 0, cell_width = 0, cell_height = 0;
  PlotArea area;
  Ticks x_ticks, y_ticks;
};

struct ScenePlan {
  int height = 0, title_band = 0, bar_top = 0;
  Metrics text, title;
  std::vector<std::vector<ViewPlan>> rows;
  Ticks time_ticks;
};

Ticks fit_ticks(cairo_t* cr, const Range& range, int pixels, double gap, int min_spacing) {
  for (int n = std::max(pixels / min_spacing, 2); n > 1; --n) {
    Ticks t = make_ticks(range, n);
    if (t.values.size() < 2) return t;
    const double spacing = t.step / (range.max - range.min) * pixels;
    if (spacing >= widest(cr, t.labels) + gap) return t;
  }
  return make_ticks(range, 1);
}

void check(const Range& r, const std::string& what) {
  if (!(std::isfinite(r.min) && std::isfinite(r.max) && r.min < r.max)) {
    throw std::invalid_argument("write_scene: " + what + ": range must be finite with min < max");
  }
}

ScenePlan plan_scene(const Scene& scene) {
  if (scene.rows.empty())
    throw std::invalid_argument("write_scene: '" + scene.title + "' has no rows");
  const ContextPtr measuring = measuring_context();
  cairo_t* cr = measuring.get();
  ScenePlan plan;
  use_font(cr, 1.3 * scene.font_size, true);
  plan.title = metrics(cr);
  use_font(cr, scene.font_size, false);
  plan.text = metrics(cr);
  const int line = plan.text.line;
  const double digit = text_width(cr, "0");
  plan.title_band = scene.title.empty() ? 4 : 10 + plan.title.line;
  if (!scene.subtitle.empty()) plan.title_band += 4 + line;
  plan.title_band += 6;

  int top = plan.title_band;
  for (const ViewRow& row : scene.rows) {
    if (row.views.empty()) throw std::invalid_argument("write_scene: a row without views");
    double weights = 0.0;
    for (const View& v : row.views) weights += std::max(v.weight, 0.0);
    if (!(weights > 0.0)) throw std::invalid_argument("write_scene: a row's weights sum to 0");
    std::vector<ViewPlan> plans;
    double left = 0.0;
    for (const View& v : row.views) {
      check(v.x, "view '" + v.title + "' x");
      check(v.y, "view '" + v.title + "' y");
      ViewPlan p;
      p.cell_left = static_cast<int>(std::lround(left));
      left += scene.width * std::max(v.weight, 0.0) / weights;
      p.cell_width = static_cast<int>(std::lround(left)) - p.cell_left;
      p.cell_top = top;
      p.cell_height = row.height;
      const int margin_top = v.title.empty() ? 10 : 8 + line + 8;
      const int margin_bottom = 1 + kTick + 4 + line + (v.x_label.empty() ? 0 : 4 + line) + 8;
      const int area_height = row.height - margin_top - margin_bottom;
      // Tick labels are measured on the unwidened range; two digits spare cover the widening.
      const Ticks first_y = make_ticks(v.y, std::max(area_height / (line + 10), 2));
      const int margin_left = 10 + (v.y_label.empty() ? 0 : line + 6) +
                              static_cast<int>(std::ceil(widest(cr, first_y.labels) + 2 * digit)) +
                              4 + kTick + 1;
      const int margin_right = 14 + static_cast<int>(std::ceil(digit));
      const int area_width = p.cell_width - margin_left - margin_right;
      if (area_height < 40 || area_width < 40) {
        throw std::invalid_argument("write_scene: view '" + v.title +
                                    "' is too small for its text");
      }
      p.area.left = p.cell_left + margin_left;
      p.area.top = top + margin_top;
      p.area.width = area_width;
      p.area.height = area_height;
      p.area.x = v.x;
      p.area.y = v.y;
      if (v.equal_aspect) {
        // One scale for both axes: the tighter one wins, the other range widens about its centre.
        const double scale =
            std::min(area_width / (v.x.max - v.x.min), area_height / (v.y.max - v.y.min));
        const double cx = 0.5 * (v.x.min + v.x.max), cy = 0.5 * (v.y.min + v.y.max);
        const double hx = 0.5 * area_width / scale, hy = 0.5 * area_height / scale;
        p.area.x = {cx - hx, cx + hx};
        p.area.y = {cy - hy, cy + hy};
      }
      p.y_ticks = make_ticks(p.area.y, std::max(area_height / (line + 10), 2));
      p.x_ticks = fit_ticks(cr, p.area.x, area_width, 2.5 * digit, 60);
      plans.push_back(std::move(p));
    }
    plan.rows.push_back(std::move(plans));
    top += row.height;
  }
  plan.bar_top = top + 10;
  if (scene.time) {
    check({scene.time->start, scene.time->end}, "time scale");
    plan.time_ticks =
        fit_ticks(cr, {scene.time->start, scene.time->end}, scene.width / 2, 2.5 * digit, 50);
    top += 10 + kBarHeight + kTick + 4 + line + 10;
  }
  plan.height = top + 4;
  return plan;
}

double crisp(double v) { return std::floor(v) + 0.5; }

void stroke_style(cairo_t* cr, double width, bool dashed) {
  cairo_set_line_width(cr, std::max(width, 0.5));
  if (dashed) {
    cairo_set_dash(cr, kDash.data(), static_cast<int>(kDash.size()), 0.0);
  } else {
    cairo_set_dash(cr, nullptr, 0, 0.0);
  }
}

void draw_shape(cairo_t* cr, const PlotArea& a, const Shape& s) {
  const auto px = [&a](const Eigen::Vector2d& p) {
    return std::pair<double, double>{a.column(p.x()), a.row(p.y())};
  };
  cairo_new_path(cr);
  switch (s.kind) {
    case Shape::Kind::kPolyline:
    case Shape::Kind::kPolygon: {
      if (s.points.size() < 2) return;
      for (const auto& p : s.points) {
        const auto [x, y] = px(p);
        cairo_line_to(cr, x, y);
      }
      if (s.kind == Shape::Kind::kPolygon) {
        cairo_close_path(cr);
        if (s.fill) {
          set_color(cr, *s.fill);
          cairo_fill_preserve(cr);
        }
        if (s.width <= 0.0) {
          cairo_new_path(cr);
          return;
        }
      }
      set_color(cr, s.color);
      stroke_style(cr, s.width, s.dashed);
      cairo_stroke(cr);
      return;
    }
    case Shape::Kind::kCircle: {
      if (s.points.empty()) return;
      const auto [x, y] = px(s.points[0]);
      const double r = s.radius * a.width / (a.x.max - a.x.min);
      cairo_arc(cr, x, y, r, 0.0, 2.0 * std::numbers::pi);
      if (s.fill) {
        set_color(cr, *s.fill);
        cairo_fill_preserve(cr);
      }
      if (s.width > 0.0) {
        set_color(cr, s.color);
        stroke_style(cr, s.width, s.dashed);
        cairo_stroke(cr);
      }
      cairo_new_path(cr);
      return;
    }
    case Shape::Kind::kDots: {
      for (const auto& p : s.points) {
        const auto [x, y] = px(p);
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, s.radius, 0.0, 2.0 * std::numbers::pi);
      }
      set_color(cr, s.color);
      cairo_fill(cr);
      return;
    }
    case Shape::Kind::kText: {
      if (s.points.empty()) return;
      const auto [x, y] = px(s.points[0]);
      // A white halo keeps the text legible over lines.
      cairo_move_to(cr, x, y);
      cairo_text_path(cr, s.text.c_str());
      set_color(cr, kWhite);
      stroke_style(cr, 3.0, false);
      cairo_stroke_preserve(cr);
      set_color(cr, s.color);
      cairo_fill(cr);
      return;
    }
  }
}

// How much of what the view draws falls in the pixel box [x0, x1) × [y0, y1): lines sampled
// every few pixels, dots and text anchors as points, circles by their outline and centre.
long ink_in_box(const View& v, const PlotArea& a, int x0, int y0, int x1, int y1) {
  long ink = 0;
  const auto count = [&](const Eigen::Vector2d& p, long weight) {
    const double x = a.column(p.x()), y = a.row(p.y());
    if (x >= x0 && x < x1 && y >= y0 && y < y1) ink += weight;
  };
  for (const Shape& s : v.shapes) {
    switch (s.kind) {
      case Shape::Kind::kPolyline:
      case Shape::Kind::kPolygon:
        for (std::size_t i = 0; i + 1 < s.points.size(); ++i) {
          const Eigen::Vector2d& p = s.points[i];
          const Eigen::Vector2d& q = s.points[i + 1];
          const double pixels =
              std::hypot(a.column(q.x()) - a.column(p.x()), a.row(q.y()) - a.row(p.y()));
          const int n = std::clamp(static_cast<int>(pixels / 4.0), 1, 400);
          for (int k = 0; k < n; ++k) count(p + (q - p) * (static_cast<double>(k) / n), 1);
        }
        if (!s.points.empty()) count(s.points.back(), 1);
        break;
      case Shape::Kind::kCircle:
        for (int k = 0; k < 16; ++k) {
          const double t = k * std::numbers::pi / 8.0;
          count(s.points[0] + s.radius * Eigen::Vector2d(std::cos(t), std::sin(t)), 2);
        }
        count(s.points[0], 8);
        break;
      case Shape::Kind::kDots:
      case Shape::Kind::kText:
        for (const auto& p : s.points) count(p, 2);
        break;
    }
  }
  return ink;
}

void draw_legend(cairo_t* cr, const View& v, const PlotArea& a, const Metrics& font) {
  if (v.legend.empty()) return;
  std::vector<std::string> texts;
  for (const auto& e : v.legend) texts.push_back(e.label);
  const int columns = std::clamp(v.legend_columns, 1, static_cast<int>(v.legend.size()));
  const int rows = (static_cast<int>(v.legend.size()) + columns - 1) / columns;
  const int column_width =
      kLegendSample + 6 + static_cast<int>(std::ceil(widest(cr, texts))) + kLegendPad;
  const int w = kLegendPad + columns * column_width;
  const int h = 4 + rows * (font.line + 4);
  const auto place = [&](Corner corner) {
    const bool right = corner == Corner::kTopRight || corner == Corner::kBottomRight;
    const bool top = corner == Corner::kTopRight || corner == Corner::kTopLeft;
    return std::pair<int, int>{right ? a.left + a.width - kLegendInset - w : a.left + kLegendInset,
                               top ? a.top + kLegendInset : a.top + a.height - kLegendInset - h};
  };
  Corner corner = v.legend_corner;
  if (corner == Corner::kAuto) {
    long least = std::numeric_limits<long>::max();
    for (Corner c :
         {Corner::kTopRight, Corner::kTopLeft, Corner::kBottomRight, Corner::kBottomLeft}) {
      const auto [x, y] = place(c);
      const long ink = ink_in_box(v, a, x - 4, y - 4, x + w + 4, y + h + 4);
      if (ink < least) {
        least = ink;
        corner = c;
      }
    }
  }
  const auto [left, box_top] = place(corner);
  cairo_rectangle(cr, left + 0.5, box_top + 0.5, w - 1.0, h - 1.0);
  cairo_set_source_rgba(cr, 1.0, 1.0, 1.0, 0.92);
  cairo_fill_preserve(cr);
  set_color(cr, kLegendBorder);
  stroke_style(cr, 1.0, false);
  cairo_stroke(cr);
  for (std::size_t i = 0; i < v.legend.size(); ++i) {
    const LegendEntry& e = v.legend[i];
    const int row_top = box_top + 4 + static_cast<int>(i) / columns * (font.line + 4);
    const double mid = row_top + std::floor(font.line / 2.0) + 0.5;
    const double x0 = left + kLegendPad + static_cast<int>(i) % columns * column_width;
    const double x1 = x0 + kLegendSample;
    cairo_new_path(cr);
    const double xm = 0.5 * (x0 + x1);
    switch (e.mark) {
      case LegendEntry::Mark::kLine:
      case LegendEntry::Mark::kDashed:
        cairo_move_to(cr, x0, mid);
        cairo_line_to(cr, x1, mid);
        set_color(cr, e.color);
        stroke_style(cr, 2.0, e.mark == LegendEntry::Mark::kDashed);
        cairo_stroke(cr);
        break;
      case LegendEntry::Mark::kTimeLine: {
        // A line in the time colours: "this is drawn once per moment".
        for (int k = 0; k < 4; ++k) {
          cairo_move_to(cr, x0 + k * (x1 - x0) / 4.0, mid);
          cairo_line_to(cr, x0 + (k + 1) * (x1 - x0) / 4.0, mid);
          set_color(cr, time_color(k / 3.0));
          stroke_style(cr, 2.0, false);
          cairo_stroke(cr);
        }
        break;
      }
      case LegendEntry::Mark::kPatch:
        cairo_rectangle(cr, x0, mid - 0.35 * font.line, x1 - x0, 0.7 * font.line);
        set_color(cr, e.fill.value_or(e.color));
        cairo_fill_preserve(cr);
        set_color(cr, e.color);
        stroke_style(cr, 1.0, false);
        cairo_stroke(cr);
        break;
      case LegendEntry::Mark::kDot:
        cairo_arc(cr, xm, mid, 4.0, 0.0, 2.0 * std::numbers::pi);
        set_color(cr, e.color);
        cairo_fill(cr);
        break;
      case LegendEntry::Mark::kRing:
        cairo_arc(cr, xm, mid, 0.4 * font.line, 0.0, 2.0 * std::numbers::pi);
        if (e.fill) {
          set_color(cr, *e.fill);
          cairo_fill_preserve(cr);
        }
        set_color(cr, e.color);
        stroke_style(cr, 1.0, false);
        cairo_stroke(cr);
        break;
    }
    set_color(cr, kBlack);
    show(cr, x1 + 6, row_top + font.ascent, e.label);
  }
}

void draw_view(cairo_t* cr, const Scene& scene, const View& v, const ViewPlan& p,
               const Metrics& font) {
  const PlotArea& a = p.area;
  cairo_set_dash(cr, nullptr, 0, 0.0);
  cairo_set_line_width(cr, 1.0);
  for (double t : p.x_ticks.values) {
    cairo_move_to(cr, crisp(a.column(t)), a.top);
    cairo_line_to(cr, crisp(a.column(t)), a.top + a.height);
  }
  for (double t : p.y_ticks.values) {
    cairo_move_to(cr, a.left, crisp(a.row(t)));
    cairo_line_to(cr, a.left + a.width, crisp(a.row(t)));
  }
  set_color(cr, kGrid);
  cairo_stroke(cr);

  cairo_save(cr);
  cairo_rectangle(cr, a.left, a.top, a.width, a.height);
  cairo_clip(cr);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  use_font(cr, scene.font_size, false);
  for (const Shape& s : v.shapes) draw_shape(cr, a, s);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
  draw_legend(cr, v, a, font);
  cairo_restore(cr);

  set_color(cr, kBlack);
  stroke_style(cr, 1.0, false);
  cairo_rectangle(cr, a.left - 0.5, a.top - 0.5, a.width + 1.0, a.height + 1.0);
  const int below = a.top + a.height + 1;
  for (double t : p.x_ticks.values) {
    cairo_move_to(cr, crisp(a.column(t)), below);
    cairo_line_to(cr, crisp(a.column(t)), below + kTick);
  }
  for (double t : p.y_ticks.values) {
    cairo_move_to(cr, a.left - 1 - kTick, crisp(a.row(t)));
    cairo_line_to(cr, a.left - 1, crisp(a.row(t)));
  }
  cairo_stroke(cr);

  use_font(cr, scene.font_size, false);
  const int label_top = below + kTick + 4;
  for (std::size_t i = 0; i < p.x_ticks.values.size(); ++i) {
    const double w = text_width(cr, p.x_ticks.labels[i]);
    show(cr, crisp(a.column(p.x_ticks.values[i])) - 0.5 * w, label_top + font.ascent,
         p.x_ticks.labels[i]);
  }
  for (std::size_t i = 0; i < p.y_ticks.values.size(); ++i) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, p.y_ticks.labels[i].c_str(), &e);
    show(cr, a.left - 1 - kTick - 4 - e.x_advance,
         crisp(a.row(p.y_ticks.values[i])) - (e.y_bearing + 0.5 * e.height), p.y_ticks.labels[i]);
  }
  if (!v.x_label.empty()) {
    show(cr, a.left + 0.5 * (a.width - text_width(cr, v.x_label)),
         label_top + font.line + 4 + font.ascent, v.x_label);
  }
  if (!v.y_label.empty()) {
    cairo_save(cr);
    cairo_translate(cr, p.cell_left + 10 + font.ascent,
                    a.top + 0.5 * (a.height + text_width(cr, v.y_label)));
    cairo_rotate(cr, -0.5 * std::numbers::pi);
    show(cr, 0.0, 0.0, v.y_label);
    cairo_restore(cr);
  }
  if (!v.title.empty()) {
    use_font(cr, scene.font_size, true);
    show(cr, a.left + 0.5 * (a.width - text_width(cr, v.title)), p.cell_top + 8 + font.ascent,
         v.title);
  }
}

void draw_time_bar(cairo_t* cr, const Scene& scene, const ScenePlan& plan) {
  const TimeScale& t = *scene.time;
  const double width = 0.5 * scene.width;
  const double left = 0.5 * (scene.width - width);
  const double top = plan.bar_top;
  cairo_pattern_t* gradient = cairo_pattern_create_linear(left, 0.0, left + width, 0.0);
  for (int k = 0; k <= 32; ++k) {
    const Rgb c = time_color(k / 32.0);
    cairo_pattern_add_color_stop_rgb(gradient, k / 32.0, c.r / 255.0, c.g / 255.0, c.b / 255.0);
  }
  cairo_rectangle(cr, left, top, width, kBarHeight);
  cairo_set_source(cr, gradient);
  cairo_fill(cr);
  cairo_pattern_destroy(gradient);
  set_color(cr, kBlack);
  stroke_style(cr, 1.0, false);
  cairo_rectangle(cr, left - 0.5, top - 0.5, width + 1.0, kBarHeight + 1.0);
  const auto column = [&](double v) { return left + (v - t.start) / (t.end - t.start) * width; };
  for (double v : plan.time_ticks.values) {
    cairo_move_to(cr, crisp(column(v)), top + kBarHeight);
    cairo_line_to(cr, crisp(column(v)), top + kBarHeight + kTick);
  }
  cairo_stroke(cr);
  use_font(cr, scene.font_size, false);
  for (std::size_t i = 0; i < plan.time_ticks.values.size(); ++i) {
    const double w = text_width(cr, plan.time_ticks.labels[i]);
    show(cr, crisp(column(plan.time_ticks.values[i])) - 0.5 * w,
         top + kBarHeight + kTick + 4 + plan.text.ascent, plan.time_ticks.labels[i]);
  }
  cairo_text_extents_t e;
  cairo_text_extents(cr, t.label.c_str(), &e);
  show(cr, left - 12 - e.x_advance, top + 0.5 * kBarHeight - (e.y_bearing + 0.5 * e.height),
       t.label);
}

}  // namespace

Rgb time_color(double fraction) {
  // viridis at 0, 0.1, …, 0.9; the scale uses 0 … 0.85 of it.
  static constexpr std::array<std::array<double, 3>, 10> kViridis = {{{68, 1, 84},
                                                                      {72, 36, 117},
                                                                      {65, 68, 135},
                                                                      {53, 95, 141},
                                                                      {42, 120, 142},
                                                                      {33, 145, 140},
                                                                      {34, 168, 132},
                                                                      {68, 191, 112},
                                                                      {122, 209, 81},
                                                                      {189, 223, 38}}};
  const double f = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0) * 0.85 * 10.0;
  const auto k = std::min(static_cast<std::size_t>(f), kViridis.size() - 2);
  const double u = f - static_cast<double>(k);
  const auto mix = [&](int c) {
    return static_cast<std::uint8_t>(
        std::lround(kViridis[k][c] + u * (kViridis[k + 1][c] - kViridis[k][c])));
  };
  return {mix(0), mix(1), mix(2)};
}

Rgb lighter(Rgb c, double amount) {
  const double a = std::clamp(amount, 0.0, 1.0);
  const auto mix = [a](std::uint8_t v) {
    return static_cast<std::uint8_t>(std::lround(v + a * (255.0 - v)));
  };
  return {mix(c.r), mix(c.g), mix(c.b)};
}

Shape polyline(std::vector<Eigen::Vector2d> points, Rgb color, double width, bool dashed) {
  Shape s;
  s.kind = Shape::Kind::kPolyline;
  s.points = std::move(points);
  s.color = color;
  s.width = width;
  s.dashed = dashed;
  return s;
}

Shape polygon(std::vector<Eigen::Vector2d> vertices, std::optional<Rgb> fill, Rgb outline,
              double width) {
  Shape s;
  s.kind = Shape::Kind::kPolygon;
  s.points = std::move(vertices);
  s.fill = fill;
  s.color = outline;
  s.width = width;
  return s;
}

Shape circle(const Eigen::Vector2d& centre, double radius, std::optional<Rgb> fill, Rgb outline,
             double width, bool dashed) {
  Shape s;
  s.kind = Shape::Kind::kCircle;
  s.points = {centre};
  s.radius = radius;
  s.fill = fill;
  s.color = outline;
  s.width = width;
  s.dashed = dashed;
  return s;
}

Shape dots(std::vector<Eigen::Vector2d> points, double radius_px, Rgb color) {
  Shape s;
  s.kind = Shape::Kind::kDots;
  s.points = std::move(points);
  s.radius = radius_px;
  s.color = color;
  return s;
}

Shape label(const Eigen::Vector2d& at, std::string text, Rgb color) {
  Shape s;
  s.kind = Shape::Kind::kText;
  s.points = {at};
  s.text = std::move(text);
  s.color = color;
  return s;
}

std::pair<Range, Range> bounds(const std::vector<Eigen::Vector2d>& points, double margin) {
  Eigen::Vector2d lo = Eigen::Vector2d::Constant(std::numeric_limits<double>::infinity());
  Eigen::Vector2d hi = -lo;
  for (const auto& p : points) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  if (points.empty()) {
    lo.setZero();
    hi.setOnes();
  }
  return {Range{lo.x() - margin, hi.x() + margin}, Range{lo.y() - margin, hi.y() + margin}};
}

void write_scene(const Scene& scene, const std::string& path) {
  const ScenePlan plan = plan_scene(scene);
  write_drawing(
      scene.width, plan.height,
      [&](cairo_t* cr) {
        set_text_options(cr);
        if (!scene.title.empty()) {
          use_font(cr, 1.3 * scene.font_size, true);
          set_color(cr, kBlack);
          show(cr, 0.5 * (scene.width - text_width(cr, scene.title)), 10 + plan.title.ascent,
               scene.title);
        }
        if (!scene.subtitle.empty()) {
          use_font(cr, scene.font_size, false);
          // A subtitle wider than the picture is set smaller rather than cut off.
          const double wide = text_width(cr, scene.subtitle);
          if (wide > scene.width - 16) {
            use_font(cr, scene.font_size * (scene.width - 16) / wide, false);
          }
          set_color(cr, kSubtitle);
          show(cr, 0.5 * (scene.width - text_width(cr, scene.subtitle)),
               (scene.title.empty() ? 4 : 10 + plan.title.line) + 4 + plan.text.ascent,
               scene.subtitle);
        }
        for (std::size_t r = 0; r < scene.rows.size(); ++r) {
          for (std::size_t v = 0; v < scene.rows[r].views.size(); ++v) {
            set_color(cr, kBlack);
            draw_view(cr, scene, scene.rows[r].views[v], plan.rows[r][v], plan.text);
          }
        }
        if (scene.time) draw_time_bar(cr, scene, plan);
      },
      path, "write_scene");
}

}  // namespace tether::remote::report

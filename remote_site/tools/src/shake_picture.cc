#include "tether/remote/report/shake_picture.h"

#include <cairo.h>

#include <algorithm>
#include <numbers>
#include <stdexcept>
#include <string>

#include "report/image_file.h"

namespace tether::remote::shake {
namespace {

void set_color(cairo_t* cr, report::Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

}  // namespace

// Shapes are recorded, not rasterised, so write() can replay them into a PNG or an SVG alike.
struct Canvas::Drawing {
  report::SurfacePtr surface;
  report::ContextPtr cr;
};

Canvas::Canvas(int width, int height, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi)
    : width_(width), height_(height), lo_(lo) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("Canvas: pixel size must be >= 1x1");
  }
  const Eigen::Vector2d span = hi - lo;
  if (!(span.x() > 0.0 && span.y() > 0.0)) {
    throw std::invalid_argument("Canvas: world rectangle must have hi > lo on both axes");
  }
  scale_ = std::min(width / span.x(), height / span.y());
  origin_px_ = {0.5 * (width - scale_ * span.x()), height - 0.5 * (height - scale_ * span.y())};
  const cairo_rectangle_t extents{0.0, 0.0, static_cast<double>(width),
                                  static_cast<double>(height)};
  drawing_ = std::make_unique<Drawing>();
  drawing_->surface.reset(cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &extents));
  drawing_->cr.reset(cairo_create(drawing_->surface.get()));
  cairo_set_line_cap(drawing_->cr.get(), CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join(drawing_->cr.get(), CAIRO_LINE_JOIN_ROUND);
}

Canvas::~Canvas() = default;
Canvas::Canvas(Canvas&&) noexcept = default;
Canvas& Canvas::operator=(Canvas&&) noexcept = default;

Eigen::Vector2d Canvas::to_pixel(const Eigen::Vector2d& world) const {
  const Eigen::Vector2d q = (world - lo_) * scale_;
  return {origin_px_.x() + q.x(), origin_px_.y() - q.y()};
}

void Canvas::line(const Eigen::Vector2d& a, const Eigen::Vector2d& b, report::Rgb color,
                  double thickness_px) {
  cairo_t* cr = drawing_->cr.get();
  const Eigen::Vector2d pa = to_pixel(a), pb = to_pixel(b);
  cairo_move_to(cr, pa.x(), pa.y());
  cairo_line_to(cr, pb.x(), pb.y());
  set_color(cr, color);
  cairo_set_line_width(cr, std::max(1.0, thickness_px));
  cairo_stroke(cr);
}

void Canvas::dot(const Eigen::Vector2d& centre, double radius_px, report::Rgb color) {
  cairo_t* cr = drawing_->cr.get();
  const Eigen::Vector2d c = to_pixel(centre);
  cairo_new_path(cr);
  cairo_arc(cr, c.x(), c.y(), radius_px, 0.0, 2.0 * std::numbers::pi);
  set_color(cr, color);
  cairo_fill(cr);
}

void Canvas::circle(const Eigen::Vector2d& centre, double radius, report::Rgb color, bool filled) {
  cairo_t* cr = drawing_->cr.get();
  const Eigen::Vector2d c = to_pixel(centre);
  cairo_new_path(cr);
  cairo_arc(cr, c.x(), c.y(), radius * scale_, 0.0, 2.0 * std::numbers::pi);
  set_color(cr, color);
  if (filled) {
    cairo_fill(cr);
  } else {
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
  }
}

void Canvas::polygon(const std::vector<Eigen::Vector2d>& vertices, report::Rgb color, bool filled) {
  if (vertices.size() < 2) return;
  cairo_t* cr = drawing_->cr.get();
  cairo_new_path(cr);
  for (const Eigen::Vector2d& v : vertices) {
    const Eigen::Vector2d p = to_pixel(v);
    cairo_line_to(cr, p.x(), p.y());  // the first line_to of a path only moves there
  }
  cairo_close_path(cr);
  set_color(cr, color);
  if (filled) cairo_fill_preserve(cr);
  cairo_set_line_width(cr, 1.0);
  cairo_stroke(cr);
}

void Canvas::write(const std::string& path) const {
  cairo_surface_t* recording = drawing_->surface.get();
  const cairo_status_t status = cairo_status(drawing_->cr.get());
  if (status != CAIRO_STATUS_SUCCESS) {
    throw std::runtime_error("Canvas: cannot draw '" + path +
                             "': " + cairo_status_to_string(status));
  }
  cairo_surface_flush(recording);
  report::write_drawing(
      width_, height_,
      [recording](cairo_t* cr) {
        cairo_set_source_surface(cr, recording, 0.0, 0.0);
        cairo_paint(cr);
      },
      path, "Canvas");
}

void Canvas::write_png(const std::string& path) const { write(path); }

}  // namespace tether::remote::shake

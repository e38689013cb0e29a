#include "tether/remote/report/shake_picture.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <stdexcept>

namespace tether::remote::shake {

Canvas::Canvas(int width, int height, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi)
    : image_(std::max(width, 1), std::max(height, 1)), lo_(lo) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("Canvas: pixel size must be >= 1x1");
  }
  const Eigen::Vector2d span = hi - lo;
  if (!(span.x() > 0.0 && span.y() > 0.0)) {
    throw std::invalid_argument("Canvas: world rectangle must have hi > lo on both axes");
  }
  scale_ = std::min(width / span.x(), height / span.y());
  origin_px_ = {0.5 * (width - scale_ * span.x()), 0.5 * (height - scale_ * span.y())};
}

Eigen::Vector2d Canvas::to_pixel(const Eigen::Vector2d& world) const {
  const Eigen::Vector2d q = (world - lo_) * scale_ + origin_px_;
  return {q.x(), image_.height - 1 - q.y()};
}

void Canvas::disc_px(const Eigen::Vector2d& c, double r, report::Rgb color) {
  const int x0 = std::max(0, static_cast<int>(std::floor(c.x() - r)));
  const int x1 = std::min(image_.width - 1, static_cast<int>(std::ceil(c.x() + r)));
  const int y0 = std::max(0, static_cast<int>(std::floor(c.y() - r)));
  const int y1 = std::min(image_.height - 1, static_cast<int>(std::ceil(c.y() + r)));
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if ((Eigen::Vector2d(x, y) - c).squaredNorm() <= r * r) image_.set(x, y, color);
    }
  }
}

void Canvas::line(const Eigen::Vector2d& a, const Eigen::Vector2d& b, report::Rgb color,
                  double thickness_px) {
  const Eigen::Vector2d pa = to_pixel(a), pb = to_pixel(b);
  const int steps = std::max(1, static_cast<int>(std::ceil((pb - pa).norm() * 2.0)));
  const double r = std::max(0.5, 0.5 * thickness_px);
  for (int i = 0; i <= steps; ++i) disc_px(pa + (pb - pa) * (double(i) / steps), r, color);
}

void Canvas::dot(const Eigen::Vector2d& centre, double radius_px, report::Rgb color) {
  disc_px(to_pixel(centre), radius_px, color);
}

void Canvas::circle(const Eigen::Vector2d& centre, double radius, report::Rgb color, bool filled) {
  if (filled) {
    disc_px(to_pixel(centre), radius * scale_, color);
    return;
  }
  const int n = std::max(16, static_cast<int>(radius * scale_ * 4.0));
  for (int i = 0; i < n; ++i) {
    const double t0 = 2.0 * std::numbers::pi * i / n, t1 = 2.0 * std::numbers::pi * (i + 1) / n;
    line(centre + radius * Eigen::Vector2d(std::cos(t0), std::sin(t0)),
         centre + radius * Eigen::Vector2d(std::cos(t1), std::sin(t1)), color);
  }
}

void Canvas::polygon(const std::vector<Eigen::Vector2d>& vertices, report::Rgb color, bool filled) {
  if (vertices.size() < 2) return;
  if (filled) {
    std::vector<Eigen::Vector2d> px;
    px.reserve(vertices.size());
    for (const auto& v : vertices) px.push_back(to_pixel(v));
    for (int y = 0; y < image_.height; ++y) {
      for (int x = 0; x < image_.width; ++x) {
        bool in = false;
        for (std::size_t i = 0, j = px.size() - 1; i < px.size(); j = i++) {
          if ((px[i].y() > y) != (px[j].y() > y) &&
              x < (px[j].x() - px[i].x()) * (y - px[i].y()) / (px[j].y() - px[i].y()) + px[i].x()) {
            in = !in;
          }
        }
        if (in) image_.set(x, y, color);
      }
    }
  }
  for (std::size_t i = 0, j = vertices.size() - 1; i < vertices.size(); j = i++) {
    line(vertices[j], vertices[i], color);
  }
}

void Canvas::write_png(const std::string& path) const {
  std::vector<std::uint8_t> bytes;
  report::encode_png(image_, bytes);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("Canvas: cannot write PNG to " + path);
}

}  // namespace tether::remote::shake

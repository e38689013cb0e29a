#pragma once

// A small rasteriser for pictures of the SHAKE resolver's runs (chain over time, obstacles,
// path): thick lines, circles and filled polygons on a report::Image, in world coordinates
// [m] mapped onto the pixel grid with equal scale on both axes (y up).

#include <Eigen/Core>
#include <string>
#include <vector>

#include "tether/remote/report/plot.h"

namespace tether::remote::shake {

class Canvas {
 public:
  // The world rectangle [lo, hi] is fitted (aspect kept, centred) into width × height pixels.
  // Throws std::invalid_argument for an empty pixel size or world rectangle.
  Canvas(int width, int height, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi);

  void line(const Eigen::Vector2d& a, const Eigen::Vector2d& b, report::Rgb color,
            double thickness_px = 1.0);
  void circle(const Eigen::Vector2d& centre, double radius, report::Rgb color, bool filled);
  void polygon(const std::vector<Eigen::Vector2d>& vertices, report::Rgb color, bool filled);
  void dot(const Eigen::Vector2d& centre, double radius_px, report::Rgb color);

  const report::Image& image() const { return image_; }
  // Encodes as PNG and writes `path`; throws std::runtime_error naming the path on failure.
  void write_png(const std::string& path) const;

 private:
  Eigen::Vector2d to_pixel(const Eigen::Vector2d& world) const;
  void disc_px(const Eigen::Vector2d& centre_px, double radius_px, report::Rgb color);

  report::Image image_;
  Eigen::Vector2d origin_px_;
  double scale_;  // pixels per metre
  Eigen::Vector2d lo_;
};

}  // namespace tether::remote::shake

#pragma once

// Pictures of the SHAKE resolver's runs (chain over time, obstacles, path): lines, circles,
// polygons and dots in world coordinates [m], drawn with Cairo (antialiased) and written as
// PNG or SVG.
//
// World coordinates: x to the right, y up, in metres. Image coordinates: x to the right, y
// down, in pixels, origin at the image's top-left corner; pixel (i, j) covers
// [i, i+1) × [j, j+1). The world rectangle is fitted into the image with one scale for both
// axes (aspect kept) and centred.

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "tether/remote/report/plot.h"

namespace tether::remote::shake {

class Canvas {
 public:
  // The world rectangle [lo, hi] is fitted into width × height pixels. Throws
  // std::invalid_argument for an empty pixel size or world rectangle.
  Canvas(int width, int height, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi);
  ~Canvas();
  Canvas(Canvas&&) noexcept;
  Canvas& operator=(Canvas&&) noexcept;
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  // A line thickness_px wide (at least 1 px) with round ends.
  void line(const Eigen::Vector2d& a, const Eigen::Vector2d& b, report::Rgb color,
            double thickness_px = 1.0);
  // radius in metres; an outline is 1 px wide.
  void circle(const Eigen::Vector2d& centre, double radius, report::Rgb color, bool filled);
  // Closed through the first vertex; a filled polygon also gets its 1 px outline. Fewer than
  // two vertices draw nothing.
  void polygon(const std::vector<Eigen::Vector2d>& vertices, report::Rgb color, bool filled);
  // A filled disc of radius_px pixels, whatever the scale.
  void dot(const Eigen::Vector2d& centre, double radius_px, report::Rgb color);

  int width() const { return width_; }     // [px]
  int height() const { return height_; }   // [px]
  double scale() const { return scale_; }  // [px/m]
  // Continuous image coordinates of a world point.
  Eigen::Vector2d to_pixel(const Eigen::Vector2d& world) const;

  // Writes everything drawn so far on a white background: SVG if the path ends in ".svg"
  // (any letter case), else an 8-bit RGB PNG. Throws std::runtime_error naming the path if
  // the file cannot be created or written.
  void write(const std::string& path) const;
  // The older name of write(), kept for its callers; a ".svg" path gives SVG here too.
  void write_png(const std::string& path) const;

 private:
  struct Drawing;  // Cairo's recording surface and the context drawing into it

  int width_ = 0, height_ = 0;
  double scale_ = 1.0;         // [px/m]
  Eigen::Vector2d lo_;         // [m] the world rectangle's lower-left corner
  Eigen::Vector2d origin_px_;  // [px] where lo_ lands in the image
  std::unique_ptr<Drawing> drawing_;
};

}  // namespace tether::remote::shake

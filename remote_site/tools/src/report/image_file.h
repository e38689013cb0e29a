#pragma once

// Writing what Cairo draws to a file, shared by the plots (plot.cc) and the SHAKE pictures
// (shake_picture.cc): SVG through Cairo's SVG surface, PNG through libpng (8-bit RGB, colour
// type 2: the drawings are opaque, so an alpha channel would only cost bytes).
//
// Drawing coordinates are Cairo's user space on a fresh surface: 1 unit = 1 pixel (1 px in
// the SVG), x to the right, y down, origin at the top-left corner of the image.

#include <cairo.h>

#include <functional>
#include <memory>
#include <string>

namespace tether::remote::report {

// Owners of Cairo objects, so a throw between create and destroy leaks nothing.
struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

enum class FileFormat { kPng, kSvg };

// kSvg for a path ending in ".svg" (any letter case), kPng for every other path.
FileFormat format_for_path(const std::string& path);

// Paints a width × height surface white, calls draw(cr) on it, and writes the result to `path`
// in format_for_path(path). `who` starts every error message. Throws std::invalid_argument for
// a size below 1 × 1, std::runtime_error naming `path` if the file cannot be created or
// written, and std::runtime_error if the drawing left Cairo in an error state (nothing is
// silently missing from a written picture). A file that fails half way may remain, truncated.
void write_drawing(int width, int height, const std::function<void(cairo_t*)>& draw,
                   const std::string& path, const std::string& who);

// Writes a CAIRO_FORMAT_RGB24 image surface as an 8-bit RGB PNG through libpng. Throws
// std::invalid_argument for any other kind of surface, std::runtime_error naming `path` as
// write_drawing() does.
void write_png_rgb(cairo_surface_t* image, const std::string& path, const std::string& who);

}  // namespace tether::remote::report

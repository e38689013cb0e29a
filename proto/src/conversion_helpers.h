#pragma once

// Helpers shared by the conversions in this folder (not installed, not public).

#include <cmath>
#include <sstream>
#include <string>

#include "tether/proto/convert.h"

namespace tether::proto::detail {

// Shortest faithful text of a value for error messages.
inline std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

inline double finite(double v, const std::string& path) {
  if (!std::isfinite(v)) throw ConversionError(path, " = " + number(v) + ": must be finite");
  return v;
}

}  // namespace tether::proto::detail

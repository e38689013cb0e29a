#pragma once

// Set-up checks for the hand-controller configurations: each failure names the field, the
// value and what is allowed.

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tether::local::detail {

[[noreturn]] inline void config_error(const std::string& field, double value,
                                      const std::string& allowed) {
  std::ostringstream message;
  message << field << " = " << value << ": " << allowed;
  throw std::invalid_argument(message.str());
}

// "name[index]"; built with a stream because GCC 12 warns falsely (-Wrestrict) on the
// equivalent chain of string concatenations.
inline std::string indexed_field(const char* name, int index) {
  std::ostringstream field;
  field << name << '[' << index << ']';
  return field.str();
}

// value ∈ [lo, hi] and finite.
inline void require_range(const std::string& field, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi) {
    std::ostringstream allowed;
    allowed << "must be finite and in [" << lo << ", " << hi << "]";
    config_error(field, value, allowed.str());
  }
}

// value > 0 and finite.
inline void require_positive(const std::string& field, double value) {
  if (!std::isfinite(value) || !(value > 0.0)) config_error(field, value, "must be finite and > 0");
}

// value ≥ 0 and finite.
inline void require_non_negative(const std::string& field, double value) {
  if (!std::isfinite(value) || value < 0.0) config_error(field, value, "must be finite and >= 0");
}

}  // namespace tether::local::detail

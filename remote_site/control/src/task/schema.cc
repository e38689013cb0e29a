#include "tether/remote/task/schema.h"

#include <array>
#include <cctype>
#include <cmath>
#include <sstream>

namespace tether {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Written by tether-task-schema --rules from proto/tether/v1/ at build time.
constexpr FieldRule kRules[] = {
#include "tether/remote/task/schema_rules.inc"
};

std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

// "[3]" → "[]".
std::string without_indices(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] != '[') continue;
    std::size_t j = i + 1;
    while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j])) != 0) ++j;
    if (j < path.size() && path[j] == ']' && j > i + 1) i = j - 1;
  }
  return out;
}

}  // namespace

bool FieldRule::allows(double v) const {
  if (std::isnan(v)) return false;
  if (std::isinf(v) && !(infinite_allowed && v > 0.0)) return false;
  if (min_exclusive ? !(v > min) : !(v >= min)) return false;
  if (std::isinf(v)) return true;  // +infinity: no bound
  return max_exclusive ? v < max : v <= max;
}

std::string FieldRule::requirement(bool whole) const {
  const bool has_min = std::isfinite(min);
  const bool has_max = std::isfinite(max);
  std::string range;
  if (has_min && has_max) {
    range = std::string("in ") + (min_exclusive ? "(" : "[") + number(min) + ", " + number(max) +
            (max_exclusive ? ")" : "]");
  } else if (has_min) {
    range = std::string(min_exclusive ? "> " : "≥ ") + number(min);
  } else if (has_max) {
    range = std::string(max_exclusive ? "< " : "≤ ") + number(max);
  }
  // A vector's per-row units ("m | rad") are not one unit: the range is then shown bare.
  if (!range.empty() && !unit.empty() && unit.find('|') == std::string_view::npos) {
    range += " ";
    range += unit;
  }
  if (infinite_allowed) {
    return "must be " + (range.empty() ? std::string("a number") : range) +
           " (leave it out for no bound)";
  }
  if (whole) return range.empty() ? std::string("must be a whole number") : "must be " + range;
  return range.empty() ? std::string("must be finite") : "must be finite and " + range;
}

std::span<const FieldRule> field_rules() { return kRules; }

const FieldRule* find_field_rule(std::string_view path) {
  std::string key = without_indices(path);
  while (!key.empty()) {
    for (const FieldRule& rule : kRules) {
      if (rule.path == key) return &rule;
    }
    const std::size_t cut = key.find_last_of(".[");
    if (cut == std::string::npos) break;
    key.resize(cut);
  }
  return nullptr;
}

}  // namespace tether

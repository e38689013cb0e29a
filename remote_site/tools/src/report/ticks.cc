#include "report/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tether::remote::report {

double nice_step(double span, int max_intervals) {
  const double raw = span / std::max(max_intervals, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  // The tolerance keeps 0.3 / 3 = 0.09999… on step 0.1 rather than 0.2.
  double nice = 10.0;
  if (normalized <= 1.0 + 1e-9) {
    nice = 1.0;
  } else if (normalized <= 2.0 + 1e-9) {
    nice = 2.0;
  } else if (normalized <= 5.0 + 1e-9) {
    nice = 5.0;
  }
  return nice * magnitude;
}

std::string format_tick(double value, double step, double largest) {
  char buffer[48];
  if (largest >= 1e6 || step < 1e-4) {
    const int significant =
        std::clamp(static_cast<int>(std::ceil(std::log10(largest / step) + 1e-9)) + 1, 1, 12);
    std::snprintf(buffer, sizeof buffer, "%.*g", significant, value);
  } else {
    const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 10);
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  }
  return buffer;
}

Ticks make_ticks(const Range& range, int max_intervals) {
  Ticks ticks;
  ticks.step = nice_step(range.max - range.min, max_intervals);
  const double largest = std::max(std::abs(range.min), std::abs(range.max));
  // Integer multiples, so long axes do not accumulate rounding.
  const auto k0 = static_cast<long long>(std::ceil(range.min / ticks.step - 1e-9));
  const auto k1 = static_cast<long long>(std::floor(range.max / ticks.step + 1e-9));
  for (long long k = k0; k <= k1; ++k) {
    double v = static_cast<double>(k) * ticks.step;
    if (std::abs(v) < ticks.step * 1e-9) v = 0.0;  // never "-0"
    ticks.values.push_back(v);
    ticks.labels.push_back(format_tick(v, ticks.step, largest));
  }
  return ticks;
}

}  // namespace tether::remote::report

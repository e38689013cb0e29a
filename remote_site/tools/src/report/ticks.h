#pragma once

// Axis ticks at "nice" values: multiples of 1, 2 or 5 times a power of ten.

#include <string>

#include "tether/remote/report/plot.h"

namespace tether::remote::report {

// The smallest step of the form {1, 2, 5} × 10^k that splits `span` (> 0) into at most
// `max_intervals` intervals (at least 1).
double nice_step(double span, int max_intervals);

// Ticks (plot.h) at every multiple of nice_step(range span, max_intervals) within `range`.
Ticks make_ticks(const Range& range, int max_intervals);

// Fixed-point with as many decimals as the step needs (step 0.2 → "0.4", step 0.05 →
// "0.15", step 5 → "15"); when the axis reaches magnitudes of 1e6 or more or the step is
// below 1e-4, %g with enough significant digits to tell neighbouring ticks apart. `largest`
// is the largest magnitude on the axis.
std::string format_tick(double value, double step, double largest);

}  // namespace tether::remote::report

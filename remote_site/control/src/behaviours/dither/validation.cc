// Validation of the dither section (validate() in parameters.h).

#include "tether/remote/task/validation.h"

#include <cmath>
#include <string>

#include "tether/remote/behaviours/dither/parameters.h"

namespace tether {

void validate(const DitherParameters& parameters, TaskChecker& check) {
  const DitherParameters& d = parameters;
  for (int i = 0; i < 6; ++i) {
    check.in_spec(FieldPath("dither.amplitude").twist_row(i), d.amplitude[i],
                  " (peak speed; the wave's phase is fixed)");
  }
  if (check.period_ok() && d.enabled) {
    const double min = 2.0 * check.task().period;
    if (!(std::isfinite(d.period) && d.period > min)) {
      check.reject("dither.period_s", d.period,
                   "must be finite and > " + check.number(min) +
                       " s (2·period_s: a triangle wave needs more than two samples per period)");
    }
  } else {
    check.in_spec("dither.period_s", d.period);
  }
  check.frame("dither.motion_T_dither", d.motion_T_dither);
  check.behaviour_damping("dither", d.enabled, d.input, d.damping);
}

}  // namespace tether

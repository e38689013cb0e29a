#pragma once

// The operator's warning about the achieved fraction p (the constrained-optimisation patent): the
// share of the commanded motion the remote site's resolver delivered in a cycle. p drops near joint
// limits, singularities and obstacles, before anything stops, so the console says so
// once when p falls below the task's threshold and once when it recovers, not per cycle.

#include <optional>
#include <string>

#include "tether/local/link/site_types.h"

namespace tether::local {

class AchievedFractionWarning {
 public:
  // A line to show when the sample changes the warning state; nothing otherwise.
  std::optional<std::string> update(const TelemetrySample& sample);
  bool low() const { return low_; }
  double lowest() const { return lowest_; }   // smallest p seen while running
  int warnings() const { return warnings_; }  // times p fell below the threshold

 private:
  bool low_ = false;
  double lowest_ = 1.0;
  int warnings_ = 0;
};

}  // namespace tether::local

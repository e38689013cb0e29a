#include "tether/local/console/p_warning.h"

#include <algorithm>
#include <cstdio>

namespace tether::local {

std::optional<std::string> AchievedFractionWarning::update(const TelemetrySample& s) {
  if (s.state != ExecutorState::kRunning) {
    if (!low_) return std::nullopt;
    low_ = false;
    return std::string("p warning cleared: the task is no longer running");
  }
  const double p = s.resolver.achieved_fraction;
  lowest_ = std::min(lowest_, p);
  char text[256];
  if (!low_ && p < s.resolver.warn_below) {
    low_ = true;
    ++warnings_;
    std::snprintf(text, sizeof text,
                  "WARNING: achieved fraction p = %.3f < %.3f at t = %.3f s (%s resolver, %s): "
                  "the arm is near a joint limit, a singularity or an obstacle",
                  p, s.resolver.warn_below, s.task_time, to_string(s.resolver.kind),
                  s.resolver.status.c_str());
    return std::string(text);
  }
  if (low_ && p >= s.resolver.warn_below) {
    low_ = false;
    std::snprintf(text, sizeof text, "p recovered to %.3f at t = %.3f s", p, s.task_time);
    return std::string(text);
  }
  return std::nullopt;
}

}  // namespace tether::local

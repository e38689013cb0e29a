#pragma once

// The jitter both link emulators draw, one definition of "uniform in ±jitter, or normal
// with σ = jitter clipped at 3σ and never below zero delay".

#include <algorithm>
#include <random>

#include "tether/linkem/link_emulator.h"

namespace tether::linkem {

// Added to `delay` [s]; the sum is never negative.
inline double sample_jitter(double delay, double jitter, Jitter distribution,
                            std::mt19937_64& random) {
  if (jitter <= 0.0) return 0.0;
  if (distribution == Jitter::kUniform) {
    return std::uniform_real_distribution<double>(-jitter, jitter)(random);
  }
  const double x = std::normal_distribution<double>(0.0, jitter)(random);
  return std::clamp(x, -std::min(3.0 * jitter, delay), 3.0 * jitter);
}

}  // namespace tether::linkem

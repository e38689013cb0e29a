#include "sincos.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace tether {
namespace {

TEST(SinCos, AgreesWithTheCLibraryToAFewUlpOverJointRanges) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> angle(-20.0, 20.0);
  double worst = 0.0;
  for (int n = 0; n < 200000; ++n) {
    double x[7], s[7], c[7];
    for (double& v : x) v = angle(rng);
    detail::sincos_n<7>(x, s, c);
    for (int i = 0; i < 7; ++i) {
      worst = std::max(worst, std::abs(s[i] - std::sin(x[i])));
      worst = std::max(worst, std::abs(c[i] - std::cos(x[i])));
    }
  }
  EXPECT_LE(worst, 4e-16);
}

TEST(SinCos, HandlesQuadrantBoundariesAndSigns) {
  double x[7] = {0.0, M_PI_2, M_PI, -M_PI_2, -M_PI, 3 * M_PI_4, -5 * M_PI_4};
  double s[7], c[7];
  detail::sincos_n<7>(x, s, c);
  for (int i = 0; i < 7; ++i) {
    EXPECT_NEAR(s[i], std::sin(x[i]), 1e-16) << x[i];
    EXPECT_NEAR(c[i], std::cos(x[i]), 1e-16) << x[i];
  }
}

TEST(SinCos, FallsBackToTheCLibraryForHugeArguments) {
  double x[2] = {1e9, 0.5};
  double s[2], c[2];
  detail::sincos_n<2>(x, s, c);
  EXPECT_EQ(s[0], std::sin(1e9));
  EXPECT_EQ(c[0], std::cos(1e9));
  EXPECT_EQ(s[1], std::sin(0.5));
}

}  // namespace
}  // namespace tether

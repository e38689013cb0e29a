#pragma once

// Branch-free sine and cosine of a whole joint vector at once. glibc's scalar sincos is
// the largest single cost of forward kinematics; this loop vectorises (SSE2/AVX) and is
// accurate to a few ulp for |x| < 1e5 rad, far beyond any joint angle. Larger or
// non-finite arguments fall back to the C library.
//
// Method: Cody–Waite reduction x = k·π/2 + r with π/2 split in three parts, then the
// Cephes minimax polynomials for sin and cos on |r| ≤ π/4, then the quadrant swap.

#include <cmath>

namespace tether::detail {

template <int N>
inline void sincos_n(const double* x, double* s, double* c) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  // π/2 in three parts (fdlibm pio2_1, pio2_2, pio2_2t): the first two have 33
  // significant bits, so k·A and k·B are exact for |k| < 2^20.
  constexpr double kPio2A = 1.57079632673412561417e+00;
  constexpr double kPio2B = 6.07710050630396597660e-11;
  constexpr double kPio2C = 2.02226624879595063154e-21;
  // Adding and subtracting 1.5·2^52 rounds to the nearest integer in the default
  // rounding mode without a library call, so the loop stays vectorisable.
  constexpr double kRoundMagic = 6755399441055744.0;
  bool in_range = true;
  for (int i = 0; i < N; ++i) in_range &= std::abs(x[i]) < 1e5;
  if (!in_range) {
    for (int i = 0; i < N; ++i) {
      s[i] = std::sin(x[i]);
      c[i] = std::cos(x[i]);
    }
    return;
  }
  for (int i = 0; i < N; ++i) {
    const double k = (x[i] * kTwoOverPi + kRoundMagic) - kRoundMagic;
    const double r = ((x[i] - k * kPio2A) - k * kPio2B) - k * kPio2C;
    const double z = r * r;
    const double sr =
        r +
        r * z *
            (-1.66666666666666307295e-1 +
             z * (8.33333333332211858878e-3 +
                  z * (-1.98412698295895385996e-4 +
                       z * (2.75573136213857245213e-6 +
                            z * (-2.50507477628578072866e-8 + z * 1.58962301576546568060e-10)))));
    const double cr =
        1.0 - 0.5 * z +
        z * z *
            (4.16666666666665929218e-2 +
             z * (-1.38888888888730564116e-3 +
                  z * (2.48015872888517045348e-5 +
                       z * (-2.75573141792967388112e-7 +
                            z * (2.08757008419747316778e-9 + z * -1.13585365213876817300e-11)))));
    // Quadrant arithmetic stays in doubles (k is an exact integer) so the whole loop
    // vectorises without integer conversions or branches:
    //   odd  = k mod 2  selects cos(r) for sin(x) and sin(r) for cos(x);
    //   half = ⌊k/2⌋ mod 2 flips the sign of sin(x); cos(x) flips when ⌊(k+1)/2⌋ is odd.
    const double k2 = (k * 0.5 - 0.25 + kRoundMagic) - kRoundMagic;  // ⌊k/2⌋
    const double odd = k - 2.0 * k2;
    const double k4 = (k2 * 0.5 - 0.25 + kRoundMagic) - kRoundMagic;  // ⌊k/4⌋
    const double half = k2 - 2.0 * k4;
    const double k1 = ((k + 1.0) * 0.5 - 0.25 + kRoundMagic) - kRoundMagic;  // ⌊(k+1)/2⌋
    const double k1_2 = (k1 * 0.5 - 0.25 + kRoundMagic) - kRoundMagic;
    const double cos_flip = k1 - 2.0 * k1_2;
    // odd ∈ {0, 1}, so these products select exactly (a blend a + odd·(b − a) would not).
    const double sv = odd * cr + (1.0 - odd) * sr;
    const double cv = odd * sr + (1.0 - odd) * cr;
    s[i] = sv * (1.0 - 2.0 * half);
    c[i] = cv * (1.0 - 2.0 * cos_flip);
  }
}

}  // namespace tether::detail

// exp_nonpositive_bounded(x), x <= 0 (error analysis):
//  * x < -708: returns 0; exp(x) < 2^-1021.4 < kExpAbsErr.
//  * k = round(x / ln 2) (|k| <= 1022), r = (x - k ln2_hi) - k ln2_lo with fdlibm's split (ln2_hi has 32
//    significant bits, so k ln2_hi is exact; |ln2 - ln2_hi - ln2_lo| < 2^-86): |r| <= 0.3467 and the computed
//    r differs from x - k ln 2 by <= 0.36 u (one rounding of the last subtraction, the tiny k ln2_lo
//    rounding, and the split's error), i.e. a relative change <= 0.37 u of exp(r).
//  * Taylor polynomial of degree 13 by Horner: truncation <= |r|^14 / 14! e^|r| <= 5.8e-18 < 2^-56 relative
//    (exp(r) >= 0.707); coefficients 1/i! rounded (<= u e^|r| / 0.707 = 2.01 u relative); Horner rounding
//    <= gamma_26 sum |c_i| |r|^i <= 26.001 u * 1.415 / 0.707 < 52.1 u relative.
//  * multiplication by 2^k is exact (the result stays normal for x >= -708).
//  Total relative error < 55 u < 2^-47 <= kExpRelErr = 2^-44.
#include "memcert/numeric/exp_bounded.hpp"

#include <cmath>
#include <stdexcept>

namespace memcert {

double exp_nonpositive_bounded(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) throw std::domain_error("exp_nonpositive_bounded: x > 0");
  if (x < -708.0) return 0.0;
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
  constexpr double kMagic = 0x1.8p52;
  const double k = (x * kInvLn2 + kMagic) - kMagic;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // 1/i! for i = 13..0, each the double nearest to it.
  static const double c[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                               1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,
                               1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,        0.5,
                               1.0,                1.0};
  double p = c[0];
  for (int i = 1; i < 14; ++i) p = p * r + c[i];
  return std::ldexp(p, static_cast<int>(k));
}

}  // namespace memcert

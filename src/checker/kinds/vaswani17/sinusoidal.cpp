// Correctly rounded float64 sinusoidal encodings (see sinusoidal.hpp), with MPFR for the elementary
// functions so the checker's matrix is the same on every platform.
#include "kinds/vaswani17/sinusoidal.hpp"

#include <mpfr.h>

namespace memcert_checker {

namespace {
// f(x) rounded to the nearest double (MPFR at 53 bits; the values here are normal doubles, far from the
// exponent range limits, so no subnormal emulation is needed).
double round_nearest(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), double x) {
  mpfr_t a, r;
  mpfr_init2(a, 53);
  mpfr_init2(r, 53);
  mpfr_set_d(a, x, MPFR_RNDN);
  f(r, a, MPFR_RNDN);
  double out = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clear(a);
  mpfr_clear(r);
  return out;
}
}  // namespace

QMat sinusoidal_encoding_float64(std::size_t n, std::size_t d) {
  QMat P(n, QRow(d, mpq_class(0)));
  const double k = -round_nearest(mpfr_log, 10000.0) / static_cast<double>(d);
  for (std::size_t j = 0; 2 * j < d; ++j) {
    const double div = round_nearest(mpfr_exp, static_cast<double>(2 * j) * k);
    for (std::size_t pos = 0; pos < n; ++pos) {
      const double angle = static_cast<double>(pos) * div;
      P[pos][2 * j] = round_nearest(mpfr_sin, angle);  // a double converts to mpq_class exactly
      if (2 * j + 1 < d) P[pos][2 * j + 1] = round_nearest(mpfr_cos, angle);
    }
  }
  return P;
}

}  // namespace memcert_checker

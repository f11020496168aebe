// The bounded exp against MPFR, and the neighbouring doubles against std::nextafter.
#include "catch.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "memcert/numeric/double_bits.hpp"
#include "memcert/numeric/exp_bounded.hpp"
#include "memcert/numeric/interval.hpp"

using namespace memcert;

TEST_CASE("exp_nonpositive_bounded stays within its stated error (MPFR reference)", "[numeric]") {
  std::mt19937_64 g(83);
  Interval::set_default_precision(200);
  for (int it = 0; it < 3000; ++it) {
    double x = -std::ldexp(static_cast<double>(g() % 1000000) / 1000000.0, static_cast<int>(g() % 14) - 4);
    if (it % 10 == 0) x = -static_cast<double>(g() % 740);
    if (it == 0) x = 0;
    const double y = exp_nonpositive_bounded(x);
    Interval ex = interval_exp(Interval(rational_from_double(x)));
    Rational err = rational_from_double(y) - ex.midpoint();
    if (err < 0) err = -err;
    Rational allowed = ex.upper() * rational_from_double(kExpRelErr) + rational_from_double(kExpAbsErr);
    REQUIRE(err + ex.radius() <= allowed);
  }
  REQUIRE(exp_nonpositive_bounded(0.0) == 1.0);
  Interval::set_default_precision(128);
}

TEST_CASE("next_up / next_down match std::nextafter", "[numeric]") {
  std::mt19937_64 g(85);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 1.0, -1.0, 0x1p-1022, -0x1p-1022,
                            std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), inf, -inf};
  for (int i = 0; i < 2000; ++i) xs.push_back(std::ldexp(static_cast<double>(g() % 1000003) - 500000.0, static_cast<int>(g() % 2000) - 1000));
  for (double x : xs) {
    REQUIRE(next_up(x) == std::nextafter(x, inf));
    REQUIRE(next_down(x) == std::nextafter(x, -inf));
  }
}

// The outward-rounded double interval (numeric/dinterval.hpp) against exact rationals and MPFR at high
// precision: every result encloses the exact one, within a few ulps; comparisons are certain only when
// the exact answer is known.
#include "catch.hpp"

#include <cmath>
#include <random>

#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/numeric/rational.hpp"

using namespace memcert;

namespace {

Rational exact(double x) { return rational_from_double(x); }

bool encloses(DInterval r, const Rational& x) { return exact(r.lo) <= x && x <= exact(r.hi); }

// At most `ulps` doubles between the ends (the one-step-outward rule gives <= 2 for a point operation).
bool tight(DInterval r, int ulps) {
  double x = r.lo;
  for (int i = 0; i < ulps && x < r.hi; ++i) x = next_up(x);
  return x >= r.hi;
}

double random_double(std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  return std::ldexp(u(g), static_cast<int>(g() % 200) - 100);
}

}  // namespace

TEST_CASE("DInterval: + - * / of points enclose the exact rational result, two ulps wide", "[numeric]") {
  std::mt19937_64 g(20261127);
  for (int it = 0; it < 20000; ++it) {
    const double x = random_double(g), y = random_double(g);
    const DInterval a = DInterval::point(x), b = DInterval::point(y);
    const Rational ex = exact(x), ey = exact(y);
    REQUIRE(encloses(a + b, ex + ey));
    REQUIRE(encloses(a - b, ex - ey));
    REQUIRE(encloses(a * b, ex * ey));
    REQUIRE(tight(a + b, 2));
    REQUIRE(tight(a * b, 2));
    if (y > 0) {
      REQUIRE(encloses(a / b, ex / ey));
      REQUIRE(tight(a / b, 2));
    }
    REQUIRE(encloses(scale_exact(y, a), ey * ex));
  }
}

TEST_CASE("DInterval: operations on wide intervals enclose every combination of the ends", "[numeric]") {
  std::mt19937_64 g(20261128);
  for (int it = 0; it < 5000; ++it) {
    double p = random_double(g), q = random_double(g), r = random_double(g), s = random_double(g);
    if (p > q) std::swap(p, q);
    if (r > s) std::swap(r, s);
    const DInterval a{p, q}, b{r, s};
    for (double x : {p, q, 0.5 * (p + q)})
      for (double y : {r, s, 0.5 * (r + s)}) {
        if (!a.contains(x) || !b.contains(y)) continue;
        REQUIRE(encloses(a + b, exact(x) + exact(y)));
        REQUIRE(encloses(a - b, exact(x) - exact(y)));
        REQUIRE(encloses(a * b, exact(x) * exact(y)));
        if (r > 0) REQUIRE(encloses(a / b, exact(x) / exact(y)));
        DInterval acc = DInterval::point(1.0);
        fma_into(acc, y, a);
        REQUIRE(encloses(acc, 1 + exact(y) * exact(x)));
      }
  }
}

TEST_CASE("DInterval: exp of non-positive intervals encloses MPFR's exp at 256 bits", "[numeric]") {
  std::mt19937_64 g(20261129);
  Interval::set_default_precision(256);
  for (int it = 0; it < 3000; ++it) {
    double lo = -std::ldexp(static_cast<double>(g() % 1000000) / 1000000.0, static_cast<int>(g() % 14) - 4);
    if (it % 10 == 0) lo = -static_cast<double>(g() % 740);
    const double hi = it % 3 == 0 ? lo : std::min(0.0, lo + std::ldexp(1.0, static_cast<int>(g() % 10) - 8));
    const DInterval r = exp_nonpositive(DInterval{lo, hi});
    const Interval elo = interval_exp(Interval(exact(lo))), ehi = interval_exp(Interval(exact(hi)));
    REQUIRE(exact(r.lo) <= elo.lower());
    REQUIRE(ehi.upper() <= exact(r.hi));
    REQUIRE(r.lo >= 0);
  }
  Interval::set_default_precision(128);
}

TEST_CASE("dbound: one-sided bounds and gamma_k against exact rationals", "[numeric]") {
  std::mt19937_64 g(20261130);
  for (int it = 0; it < 5000; ++it) {
    const double x = std::fabs(random_double(g)), y = std::fabs(random_double(g)) + 0x1p-60;
    REQUIRE(exact(dbound::add_up(x, y)) >= exact(x) + exact(y));
    REQUIRE(exact(dbound::add_dn(x, y)) <= exact(x) + exact(y));
    REQUIRE(exact(dbound::sub_up(x, y)) >= exact(x) - exact(y));
    REQUIRE(exact(dbound::sub_dn(x, y)) <= exact(x) - exact(y));
    REQUIRE(exact(dbound::mul_up(x, y)) >= exact(x) * exact(y));
    REQUIRE(exact(dbound::mul_dn(x, y)) <= exact(x) * exact(y));
    REQUIRE(exact(dbound::div_up(x, y)) >= exact(x) / exact(y));
    REQUIRE(exact(dbound::div_dn(x, y)) <= exact(x) / exact(y));
  }
  for (double k : {1.0, 2.0, 3.0, 768.0, 1e6, 1e12}) {
    for (double u : {0x1p-53, 0x1p-24}) {
      const Rational ku = Rational(exact(k)) * exact(u);
      if (ku >= Rational(1, 2)) {
        REQUIRE(std::isinf(dbound::gamma_up(k, u)));
        continue;
      }
      REQUIRE(exact(dbound::gamma_up(k, u)) >= ku / (1 - ku));
    }
  }
  REQUIRE(exact(dbound::inflate_up(3.0, 5)) >= 3 * (1 + 7 * exact(0x1p-53)));
  // sum of k non-negative products computed as s: (s + k eta) / (1 - gamma_k) rounded up is above s.
  REQUIRE(dbound::nonneg_sum_up(1.0, 10, next_down(1.0 - dbound::gamma_up(10))) > 1.0);
}

TEST_CASE("DInterval comparisons: certain only when the exact answer is known", "[numeric]") {
  const DInterval a{1, 2}, b{3, 4}, c{1.5, 3.5}, d{2, 3};
  REQUIRE((a < b).certainly_true());
  REQUIRE((b < a).certainly_false());
  REQUIRE(!(a < c).is_certain());
  REQUIRE((a <= d).certainly_true());  // touching ends: <= holds everywhere
  REQUIRE(!(a < d).is_certain());      // 2 < 2 is false, 1 < 3 true
  REQUIRE((b > a).certainly_true());
  REQUIRE((a >= b).certainly_false());
  REQUIRE(UncertainBool::indeterminate() == UncertainBool::indeterminate());
}

// The outward-rounded double interval (numeric/dinterval.hpp) against exact rationals and MPFR at high
// precision: every result encloses the exact one, within a few ulps; comparisons are certain only when
// the exact answer is known.
#include "catch.hpp"

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

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

namespace {

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// gamma_k = k u / (1 - k u) by MPFR at 256 bits, every step rounded upward (k u and 1 - k u are exact
// there), then rounded upward to a double: the least double >= gamma_k (gamma_k is not a dyadic rational
// for 0 < k u < 1/2, and 256 bits leave no double between it and the MPFR value).
double gamma_mpfr_up(double k, double u) {
  mpfr_t ku, den;
  mpfr_inits2(256, ku, den, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(ku, k, MPFR_RNDU);
  mpfr_mul_d(ku, ku, u, MPFR_RNDU);
  mpfr_ui_sub(den, 1, ku, MPFR_RNDD);
  mpfr_div(ku, ku, den, MPFR_RNDU);
  const double r = mpfr_get_d(ku, MPFR_RNDU);
  mpfr_clears(ku, den, static_cast<mpfr_ptr>(nullptr));
  return r;
}

// The gamma_k inputs: the counts of the call sites (non-negative integers), small, random, and up to
// k u = 1/2 (2^52 for double, 2^23 for float) and far beyond.
std::vector<double> gamma_counts(std::mt19937_64& g, double u) {
  const double half = 0.5 / u;  // k u = 1/2
  std::vector<double> ks = {0, 1, 2, 3, 4, 5, 768, 1e6, 1e12, half - 1, half, half + 1, 2 * half, 1e300,
                            std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 3000; ++i) {
    const int bits = static_cast<int>(g() % 53);
    double k = static_cast<double>(g() >> (64 - std::max(bits, 1)));
    if (k >= half) k = half - 1 - static_cast<double>(g() % 1000);
    ks.push_back(k);
  }
  return ks;
}

}  // namespace

TEST_CASE("dbound: the call sites' gamma_k formulas are upper bounds and keep every bit", "[numeric]") {
  // The formulas as they were written at their call sites (model/mha.cpp, theory/mahdavi24/z_enclosure.cpp).
  using dbound::dn;
  using dbound::up;
  const auto num_was = [](double nn, double u) { return up(up(nn * u) / (1.0 - nn * u)); };
  const auto outward_was = [](double nn, double u) { return up(up(nn * u) / dn(1.0 - nn * u)); };
  const auto margin_was = [](double N, double u) { return N * u / (1.0 - N * u) * 1.01; };
  const auto exact_was = [](double m, double u) { return next_up(m * u / (1.0 - m * u)); };
  std::mt19937_64 g(20261131);
  for (double u : {0x1p-53, 0x1p-24}) {
    for (double k : gamma_counts(g, u)) {
      const double a = dbound::gamma_up_num(k, u), b = dbound::gamma_up_outward(k, u);
      const double c = dbound::gamma_margin(k, u), e = dbound::gamma_up_exact(k, u);
      if (!(k * u < 0.5)) {  // no useful bound: +inf
        for (double x : {a, b, c, e}) REQUIRE(x == std::numeric_limits<double>::infinity());
        continue;
      }
      REQUIRE(same_bits(a, num_was(k, u)));
      REQUIRE(same_bits(b, outward_was(k, u)));
      REQUIRE(same_bits(c, margin_was(k, u)));
      REQUIRE(same_bits(e, exact_was(k, u)));
      const double hi = gamma_mpfr_up(k, u);  // the least double >= gamma_k
      for (double x : {a, b, c, e}) REQUIRE(x >= hi);
      if (k == 0) continue;
      // ... and not loose: a few ulps (the margin formula: 1%).
      for (double x : {a, b, e}) REQUIRE(x <= hi * (1 + 0x1p-48));
      REQUIRE(c <= hi * 1.0101);
    }
  }
  // Bit for bit also outside the contract (negative, subnormal, non-integer counts), below k u = 1/2.
  for (double k : {-1.0, -1e6, -1e300, 0x1p-1074, 0x1p-1030, 0.5, 3.25, 1e15 + 0.5}) {
    const double u = 0x1p-53;
    REQUIRE(same_bits(dbound::gamma_up_num(k, u), num_was(k, u)));
    REQUIRE(same_bits(dbound::gamma_up_outward(k, u), outward_was(k, u)));
    REQUIRE(same_bits(dbound::gamma_margin(k, u), margin_was(k, u)));
    REQUIRE(same_bits(dbound::gamma_up_exact(k, u), exact_was(k, u)));
  }
}

TEST_CASE("dbound::sqrt_dn is below MPFR's square root rounded down and equals the stepped root", "[numeric]") {
  std::mt19937_64 g(20261132);
  std::vector<double> xs = {0.0, -0.0, 0x1p-1074, 0x1p-1073, 3 * 0x1p-1074, 0x1p-1022, next_down(0x1p-1022), 1.0, 2.0,
                            4.0, 0.25, 1e300, std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 5000; ++i) xs.push_back(std::fabs(random_double(g)));
  for (int i = 0; i < 500; ++i) xs.push_back(std::ldexp(static_cast<double>(g() >> 12), static_cast<int>(g() % 2098) - 1126));
  mpfr_t r;
  mpfr_init2(r, 256);
  for (double x : xs) {
    const double s = dbound::sqrt_dn(x);
    REQUIRE(same_bits(s, next_down(std::sqrt(x))));  // the formula it replaces
    mpfr_set_d(r, x, MPFR_RNDN);  // exact
    mpfr_sqrt(r, r, MPFR_RNDD);   // <= sqrt(x)
    if (std::isinf(x)) continue;  // sqrt(inf) = inf: next_down gives the largest double
    REQUIRE(mpfr_cmp_d(r, s) > 0);  // strictly below the root
    REQUIRE(s >= next_down(next_down(mpfr_get_d(r, MPFR_RNDD))));  // within two ulps
  }
  mpfr_clear(r);
  // Negative input: no root (NaN), as before.
  REQUIRE(std::isnan(dbound::sqrt_dn(-1.0)));
  REQUIRE(std::isnan(next_down(std::sqrt(-1.0))));
}

TEST_CASE("dbound: add_up, sub_up and sub_dn are the nextafter forms written out at call sites", "[numeric]") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::mt19937_64 g(20261133);
  std::vector<double> xs = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1022, 1.0, -1.0,
                            std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), inf, -inf,
                            std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 300; ++i) xs.push_back(random_double(g));
  for (double a : xs)
    for (double b : xs) {
      REQUIRE(same_bits(dbound::add_up(a, b), std::nextafter(a + b, inf)));
      REQUIRE(same_bits(dbound::sub_up(a, b), std::nextafter(a - b, inf)));
      REQUIRE(same_bits(dbound::sub_dn(a, b), std::nextafter(a - b, -inf)));
    }
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

// The checker's double kernels with rigorous bounds (src/checker/kernel/float_kernels.hpp), checked against
// exact rational arithmetic (mpq_class) on random and adversarial inputs: the mixing enclosure must
// contain E^T alpha for EVERY E and alpha of its input boxes, the Gram error must stay within its bound,
// Rump's test must never accept a matrix that is not positive definite, and nothing may depend on the
// number of threads.
#include "catch.hpp"
#include "portable_mode.hpp"
#include <gmpxx.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "../../src/checker/kernel/float_kernels.hpp"
#include "support/next_double_check.hpp"

using namespace memcert_checker;

namespace {

mpq_class Q(double x) { return mpq_class(x); }  // exact

// A random double: sign, mantissa and a binary exponent in [emin, emax] (subnormal results allowed).
double random_double(std::mt19937_64& rng, int emin, int emax, bool allow_negative = true) {
  std::uniform_real_distribution<double> mant(0.5, 1.0);
  const int e = emin + static_cast<int>(rng() % static_cast<unsigned>(emax - emin + 1));
  double x = std::ldexp(mant(rng), e);
  return allow_negative && rng() % 2 ? -x : x;
}

// The exact range of sum_j E_jc alpha_j over the boxes (separable: each term is extreme at a corner).
void exact_range(const std::vector<double>& em, const std::vector<double>& er, const std::vector<double>& am,
                 const std::vector<double>& ar, std::size_t n, std::size_t d, std::size_t c, mpq_class& lo,
                 mpq_class& hi) {
  lo = 0;
  hi = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const mpq_class e[2] = {Q(em[j * d + c]) - Q(er[j * d + c]), Q(em[j * d + c]) + Q(er[j * d + c])};
    const mpq_class a[2] = {Q(am[j]) - Q(ar[j]), Q(am[j]) + Q(ar[j])};
    mpq_class mn = e[0] * a[0], mx = mn;
    for (const auto& x : e)
      for (const auto& y : a) {
        mpq_class p = x * y;
        if (p < mn) mn = p;
        if (p > mx) mx = p;
      }
    lo += mn;
    hi += mx;
  }
}

struct MixCase {
  int emin_e, emax_e, emin_a, emax_a;
  bool radii;
};

}  // namespace

TEST_CASE("float kernels: up / dn equal std::nextafter on every kind of double", "[checker][float]") {
  memcert_test::check_next_double_pair([](double x) { return up(x); }, [](double x) { return dn(x); }, 41);
}

TEST_CASE("float kernels: midrad covers [lo, hi]", "[checker][float]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    double a = random_double(rng, -1074, 60), b = trial % 5 == 0 ? a : random_double(rng, -1074, 60);
    if (trial % 7 == 0) b = std::nextafter(a, INFINITY);
    if (a > b) std::swap(a, b);
    double m, r;
    midrad(a, b, m, r);
    REQUIRE(r >= 0);
    CHECK(Q(m) - Q(r) <= Q(a));
    CHECK(Q(b) <= Q(m) + Q(r));
    if (a == b) CHECK(r == 0);
  }
}

TEST_CASE("float kernels: the mixing enclosure contains E^T alpha for every E and alpha of the boxes", "[checker][float]") {
  std::mt19937_64 rng(2024);
  const MixCase cases[] = {
      {-8, 3, -30, 0, false},        // exact dyadic contexts, softmax-like alphas
      {-8, 3, -30, 0, true},         // contexts with radii
      {-60, 60, -1000, 0, true},     // wide exponent ranges, tiny alphas
      {-1000, -990, -80, -60, true}, // products deep in the subnormal range (the n eta term)
      {-1074, -1060, -20, 0, false}, // subnormal contexts
      {500, 520, -600, -500, true},  // huge contexts, tiny alphas
  };
  for (const MixCase& mc : cases)
    for (int trial = 0; trial < 40; ++trial) {
      const std::size_t n = 1 + rng() % 40, d = 1 + rng() % 9;
      std::vector<double> em(n * d), er(n * d, 0.0), am(n), ar(n), centre(d), radius(d);
      for (auto& x : em) x = rng() % 11 == 0 ? 0.0 : random_double(rng, mc.emin_e, mc.emax_e);
      if (mc.radii)
        for (std::size_t i = 0; i < n * d; ++i) er[i] = rng() % 3 ? 0.0 : std::ldexp(std::fabs(em[i]), -40 - int(rng() % 20));
      for (std::size_t j = 0; j < n; ++j) {  // alpha_j in [lo, hi] with 0 <= lo <= hi
        double lo = rng() % 9 == 0 ? 0.0 : random_double(rng, mc.emin_a, mc.emax_a, false);
        double hi = rng() % 2 ? lo : std::nextafter(lo, INFINITY) * (1 + std::ldexp(1.0, -50 + int(rng() % 40)));
        midrad(lo, hi, am[j], ar[j]);
      }
      if (trial % 4 == 0)  // heavy cancellation: the second half of the rows negates the first
        for (std::size_t j = n / 2; j < n; ++j) {
          for (std::size_t c = 0; c < d; ++c) em[j * d + c] = -em[(j - n / 2) * d + c];
          am[j] = am[j - n / 2];
          ar[j] = ar[j - n / 2];
        }
      REQUIRE(mix_enclosure(em.data(), er.data(), am.data(), ar.data(), n, d, centre.data(), radius.data()));
      // The same with the column bounds of |E| (tiny-weight rows then not read): also an enclosure.
      std::vector<double> colabs, centre2(d), radius2(d);
      REQUIRE(column_abs_bounds(em.data(), er.data(), n, d, colabs));
      REQUIRE(mix_enclosure(em.data(), er.data(), am.data(), ar.data(), n, d, centre2.data(), radius2.data(), colabs.data()));
      for (std::size_t c = 0; c < d; ++c) {
        mpq_class lo, hi, colsum = 0;
        exact_range(em, er, am, ar, n, d, c, lo, hi);
        for (std::size_t j = 0; j < n; ++j) colsum += abs(Q(em[j * d + c])) + Q(er[j * d + c]);
        INFO("n=" << n << " d=" << d << " c=" << c << " centre=" << centre[c] << " radius=" << radius[c]);
        REQUIRE(radius[c] >= 0);
        CHECK(Q(centre[c]) - Q(radius[c]) <= lo);
        CHECK(hi <= Q(centre[c]) + Q(radius[c]));
        CHECK(Q(centre2[c]) - Q(radius2[c]) <= lo);
        CHECK(hi <= Q(centre2[c]) + Q(radius2[c]));
        CHECK(colsum <= Q(colabs[c]));
      }
    }
}

TEST_CASE("float kernels: the mixing enclosure is tight for exact inputs and refuses non-finite ones", "[checker][float]") {
  // Small integers: every product and sum is exact, so only the bound's own terms remain.
  const std::size_t n = 4, d = 2;
  std::vector<double> em = {1, -2, 3, 4, -5, 6, 7, 8}, er(n * d, 0.0), am = {0.5, 0.25, 0.125, 0.125}, ar(n, 0.0);
  std::vector<double> centre(d), radius(d);
  REQUIRE(mix_enclosure(em.data(), er.data(), am.data(), ar.data(), n, d, centre.data(), radius.data()));
  CHECK(centre[0] == 0.5 + 0.75 - 0.625 + 0.875);
  CHECK(radius[0] < 1e-14);
  em[3] = INFINITY;
  CHECK(!mix_enclosure(em.data(), er.data(), am.data(), ar.data(), n, d, centre.data(), radius.data()));
  em[3] = 1e308;
  em[5] = 1e308;
  am = {1, 1, 1, 1};
  CHECK(!mix_enclosure(em.data(), er.data(), am.data(), ar.data(), n, d, centre.data(), radius.data()));  // overflow
}

TEST_CASE("float kernels: Gram entries within gamma_m sum |c_a||c_b| + m eta, identical on 1 and 2 threads", "[checker][float]") {
  const bool portable = GENERATE(false, true);  // the default routes, then their portable twins
  PortableMode mode(portable);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t rows = 1 + rng() % 23, cols = 1 + rng() % 70;
    std::vector<double> c(rows * cols);
    for (auto& x : c) x = rng() % 13 == 0 ? 0.0 : random_double(rng, trial % 3 == 0 ? -1060 : -30, trial % 3 == 0 ? -1000 : 30);
    std::vector<double> g1, g2;
    gram_lower(c, rows, cols, g1, 1);
    gram_lower(c, rows, cols, g2, 2);
    REQUIRE(g1 == g2);
    const mpq_class gam = Q(gamma_up(cols)), eta = Q(std::ldexp(1.0, -1074));
    for (std::size_t a = 0; a < rows; ++a)
      for (std::size_t b = 0; b <= a; ++b) {
        mpq_class exact = 0, abs_sum = 0;
        for (std::size_t j = 0; j < cols; ++j) {
          mpq_class p = Q(c[a * cols + j]) * Q(c[b * cols + j]);
          exact += p;
          abs_sum += abs(p);
        }
        CHECK(abs(Q(g1[a * rows + b]) - exact) <= gam * abs_sum + mpq_class(long(cols)) * eta);
      }
  }
}

TEST_CASE("float kernels: Gram across several row tiles and column chunks equals the exact integer Gram", "[checker][float]") {
  const bool portable = GENERATE(false, true);  // the default routes, then their portable twins
  PortableMode mode(portable);
  // Small integers: every product and sum is exact in double, so each entry must come out exactly --
  // an entry missed, or a column chunk added twice, by the cache-blocked loops would show.
  std::mt19937_64 rng(11);
  for (std::size_t rows : {1u, 63u, 65u, 130u, 151u})
    for (std::size_t cols : {7u, 512u, 513u, 1100u}) {
      std::vector<double> c(rows * cols);
      for (auto& x : c) x = static_cast<double>(static_cast<int>(rng() % 15) - 7);
      std::vector<double> g1, g2;
      gram_lower(c, rows, cols, g1, 1);
      gram_lower(c, rows, cols, g2, 2);
      REQUIRE(g1 == g2);
      REQUIRE(g1.size() == rows * rows);
      std::size_t wrong = 0;
      for (std::size_t a = 0; a < rows; ++a)
        for (std::size_t b = 0; b <= a; ++b) {
          long exact = 0;
          for (std::size_t j = 0; j < cols; ++j) exact += static_cast<long>(c[a * cols + j]) * static_cast<long>(c[b * cols + j]);
          if (g1[a * rows + b] != static_cast<double>(exact)) ++wrong;
        }
      INFO("rows " << rows << " cols " << cols);
      CHECK(wrong == 0);
    }
}

namespace {
// Exact positive definiteness of the symmetric matrix with lower triangle `a` (k x k): Gaussian
// elimination over Q without pivoting; PD iff every pivot is > 0 (test-side, independent of the checker).
bool exact_pd(const std::vector<double>& a, std::size_t k) {
  std::vector<std::vector<mpq_class>> m(k, std::vector<mpq_class>(k));
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) m[i][j] = m[j][i] = Q(a[i * k + j]);
  for (std::size_t p = 0; p < k; ++p) {
    if (sgn(m[p][p]) <= 0) return false;
    for (std::size_t i = p + 1; i < k; ++i) {
      if (sgn(m[i][p]) == 0) continue;
      mpq_class f = m[i][p] / m[p][p];
      for (std::size_t j = p; j < k; ++j) m[i][j] -= f * m[p][j];
    }
  }
  return true;
}
// B B^T + s I (lower triangle, row-major) for a random k x r matrix B of small integers.
std::vector<double> gram_plus(std::mt19937_64& rng, std::size_t k, std::size_t r, double s) {
  std::vector<double> b(k * r), a(k * k, 0.0);
  for (auto& x : b) x = static_cast<double>(static_cast<int>(rng() % 7) - 3);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t t = 0; t < r; ++t) acc += b[i * r + t] * b[j * r + t];  // exact: small integers
      a[i * k + j] = acc + (i == j ? s : 0.0);
    }
  return a;
}
}  // namespace

TEST_CASE("float kernels: the blocked Cholesky meets Lemma 8.4's bound entrywise (exact rational residual)", "[checker][float]") {
  const bool portable = GENERATE(false, true);  // the default routes, then their portable twins
  PortableMode mode(portable);
  // |A - L L^T|_ij <= gamma_{k+1} (|L| |L^T|)_ij, checked in exact rationals: the property Rump's test rests
  // on, whatever the tiling (sizes across the block width 64, the 8 x 16 tiles and the 64-row panels).
  std::mt19937_64 rng(7);
  for (std::size_t k : {1, 2, 9, 17, 64, 65, 130, 203}) {
    const std::vector<double> a = gram_plus(rng, k, k + 3, 0.25);
    std::vector<double> l1 = a, l2 = a;
    REQUIRE(cholesky_lower(l1, k, 1));
    REQUIRE(cholesky_lower(l2, k, 2));
    CHECK(l1 == l2);
    const mpq_class g = mpq_class(static_cast<long>(k + 1), 1) / mpq_class(mpz_class(1) << 53) /
                        (1 - mpq_class(static_cast<long>(k + 1), 1) / mpq_class(mpz_class(1) << 53));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        mpq_class r(a[i * k + j]), bound(0);
        for (std::size_t t = 0; t <= j; ++t) {
          const mpq_class p = mpq_class(l1[i * k + t]) * mpq_class(l1[j * k + t]);
          r -= p;
          bound += abs(p);
        }
        if (abs(r) > g * bound) ++bad;
      }
    CHECK(bad == 0);
  }
  // A pivot that is not positive is reported, not passed over (B B^T - I/2 with B of rank 99: its smallest
  // eigenvalue -1/2 is far beyond rounding, so every evaluation order meets a pivot <= 0).
  std::vector<double> s = gram_plus(rng, 100, 99, -0.5);
  CHECK(!cholesky_lower(s, 100, 2));
}

TEST_CASE("float kernels: Rump's test accepts well-conditioned PD matrices, never a matrix that is not PD", "[checker][float]") {
  std::mt19937_64 rng(99);
  // Well-conditioned, across the block size (64): accepted, with the same factor on 1 and 2 threads.
  for (std::size_t k : {1, 5, 63, 64, 65, 130, 200}) {
    std::vector<double> a = gram_plus(rng, k, k / 2 + 1, 1.0 + k);
    std::vector<double> a1 = a, a2 = a;
    CHECK(rump_pd(a1, k, 0.0, 1));
    CHECK(rump_pd(a2, k, 0.0, 2));
    CHECK(a1 == a2);
    std::vector<double> a3 = a;
    CHECK(!rump_pd(a3, k, 2.0 * (1.0 + k) + 1e6, 2));  // a radius beyond the smallest eigenvalue bound
  }
  // Singular PSD (rank r < k), and indefinite: never accepted.
  for (std::size_t k : {3, 40, 70, 150}) {
    std::vector<double> a = gram_plus(rng, k, k - 1, 0.0);  // B is k x (k-1): B B^T is singular
    CHECK(!rump_pd(a, k, 0.0, 2));
    std::vector<double> b = gram_plus(rng, k, k - 1, -0.5);  // ... and B B^T - I/2 indefinite
    CHECK(!rump_pd(b, k, 0.0, 2));
  }
  // Near the boundary: B B^T - s I with s around the smallest eigenvalue. Whatever Rump decides,
  // acceptance must imply exact positive definiteness; 1 and 2 threads must agree.
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t k = trial < 4 ? 66 + rng() % 6 : 2 + rng() % 20;
    const double s = std::ldexp(static_cast<double>(rng() % 1024), -10 - static_cast<int>(rng() % 8));
    std::vector<double> a = gram_plus(rng, k, k + 2, 0.0);
    for (std::size_t j = 0; j < k; ++j) a[j * k + j] -= s;  // exact: small integers minus a short dyadic
    std::vector<double> a1 = a, a2 = a;
    const bool r1 = rump_pd(a1, k, 0.0, 1), r2 = rump_pd(a2, k, 0.0, 2);
    CHECK(r1 == r2);
    if (r1) {
      CHECK(exact_pd(a, k));
      ++accepted;
    } else {
      ++rejected;
    }
  }
  CHECK(accepted > 0);  // the test is not vacuous
}

TEST_CASE("float kernels: parallel_for visits every index once and rethrows", "[checker][float]") {
  for (unsigned threads : {1u, 2u, 5u}) {
    std::vector<std::atomic<int>> hits(1000);
    std::atomic<bool> bad_worker{false};
    parallel_for(hits.size(), threads, [&](std::size_t i, unsigned w) {  // no Catch2 assertions in threads
      if (w >= threads) bad_worker = true;
      hits[i]++;
    });
    CHECK(!bad_worker);
    for (auto& h : hits) CHECK(h.load() == 1);
    CHECK_THROWS_AS(parallel_for(100, threads, [](std::size_t i, unsigned) { if (i == 37) throw std::runtime_error("x"); }),
                    std::runtime_error);
  }
  set_checker_threads(3);
  CHECK(checker_threads() == 3);
  set_checker_threads(0);
  CHECK(checker_threads() >= 1);
}

// The storage-filtered engine (linalg/rank.hpp) against the exact rational route: every rank is
// compared with textbook Gauss-Jordan over Q (testref::rref_rank) and with qmat_rank_certified, and
// every certificate is re-verified by the independent checker. Inputs: random, low-rank, near-singular
// (one entry perturbed by one unit in the last place), adversarial (entries near 2^63, exponent ranges
// of 2^-1074..2^1000 in one row, duplicated rows, zero rows and columns, non-dyadic rationals).
#include "catch.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "memcert/cert/linalg_cert.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "support/reference_linalg.hpp"

using namespace memcert;

namespace {

std::vector<std::int64_t> random_i64(std::mt19937_64& g, std::size_t count, std::int64_t range) {
  std::vector<std::int64_t> v(count);
  for (auto& x : v) x = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(2 * range + 1)) - range;
  return v;
}

// m x n of rank <= k: the product of m x k and k x n factors with entries in [-range, range].
std::vector<std::int64_t> low_rank_i64(std::mt19937_64& g, std::size_t m, std::size_t n, std::size_t k, std::int64_t range) {
  auto b = random_i64(g, m * k, range), c = random_i64(g, k * n, range);
  std::vector<std::int64_t> a(m * n, 0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < n; ++j) a[i * n + j] += b[i * k + t] * c[t * n + j];
  return a;
}

// Checks one matrix: rank equals the exact references, the certificate passes the independent checker.
void require_rank_route(const TypedMatrix& a, const char* what) {
  INFO(what << " (" << storage_name(a.storage) << ", " << a.rows << " x " << a.cols << ")");
  const QMatrix q = typed_matrix_to_qmat(a);
  RankCertificate c = rank_certified(a);
  REQUIRE(c.rank == testref::rref_rank(q));
  REQUIRE(c.rank == qmat_rank_certified(q).rank);
  REQUIRE(c.storage == a.storage);
  auto v = memcert_checker::verify_certificate_text(rank_certificate_text(a, c));
  INFO("checker: " << v.reason);
  REQUIRE(v.valid);
  REQUIRE(v.kind == "rank");
}

TypedMatrix f64_of(std::size_t m, std::size_t n, std::vector<double> v) { return typed_matrix_from_f64(m, n, std::move(v)); }

}  // namespace

TEST_CASE("rank_certified on int64 storage equals the exact rational rank", "[linalg][dispatch]") {
  std::mt19937_64 g(20261123);
  for (int trial = 0; trial < 12; ++trial) {
    std::size_t m = 3 + g() % 30, n = 3 + g() % 30, k = g() % (std::min(m, n) + 1);
    require_rank_route(typed_matrix_from_i64(m, n, low_rank_i64(g, m, n, k, 1000)), "low rank");
    require_rank_route(typed_matrix_from_i64(m, n, random_i64(g, m * n, 3)), "random small entries");
  }
  // Near-singular: a rank-deficient integer matrix with one entry moved by one.
  auto a = low_rank_i64(g, 20, 20, 19, 50);
  a[7 * 20 + 3] += 1;
  require_rank_route(typed_matrix_from_i64(20, 20, a), "near-singular (one unit off rank 19)");
  // Entries near 2^63: residues and Hadamard bound must not overflow.
  std::vector<std::int64_t> big(6 * 6);
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = (i % 7 == 0) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(i);
  require_rank_route(typed_matrix_from_i64(6, 6, big), "entries near 2^63");
  // Two equal rows of huge entries: rank deficient, many primes for the upper side.
  for (std::size_t j = 0; j < 6; ++j) big[6 + j] = big[j];
  require_rank_route(typed_matrix_from_i64(6, 6, big), "duplicated row of huge entries");
  require_rank_route(typed_matrix_from_i64(4, 5, std::vector<std::int64_t>(20, 0)), "zero matrix");
}

TEST_CASE("rank_certified on float64 storage decides the exact dyadic rank", "[linalg][dispatch]") {
  std::mt19937_64 g(7);
  std::normal_distribution<double> gauss;
  for (int trial = 0; trial < 8; ++trial) {
    std::size_t m = 2 + g() % 25, n = 2 + g() % 25;
    std::vector<double> v(m * n);
    for (auto& x : v) x = gauss(g);
    require_rank_route(f64_of(m, n, v), "Gaussian");
    // Rank deficiency that is exact in double: row 1 = 2 x row 0, row 2 = row 0 / 1024, a zero column.
    if (m >= 3) {
      for (std::size_t j = 0; j < n; ++j) v[n + j] = 2 * v[j], v[2 * n + j] = std::ldexp(v[j], -10);
      for (std::size_t i = 0; i < m; ++i) v[i * n + (n - 1)] = 0;
      require_rank_route(f64_of(m, n, v), "scaled copies of a row, zero column");
    }
  }
  // Small integers times powers of two (float16/float32-like data), low rank.
  {
    auto z = low_rank_i64(g, 15, 12, 5, 8);
    std::vector<double> v(z.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(static_cast<double>(z[i]), -static_cast<int>(i / 12) - 3);
    require_rank_route(f64_of(15, 12, v), "low-rank dyadic, per-row exponents");
  }
  // Near-singular: x and nextafter(x) rows differ by one ulp, so the rank is full.
  {
    std::vector<double> v = {1.0, 3.0, 0.1, 1.0, 3.0, std::nextafter(0.1, 1.0), 2.0, 6.0, 0.2};
    require_rank_route(f64_of(3, 3, v), "one ulp from singular");
  }
  // Adversarial exponent ranges: subnormals and 2^1000 in one row; a dependent pair of such rows.
  {
    double tiny = std::numeric_limits<double>::denorm_min(), huge = std::ldexp(1.0, 1000);
    std::vector<double> v = {tiny, huge, 1.0, 3 * tiny, 3 * huge, 3.0, 0.5, 0.25, 0.125};
    require_rank_route(f64_of(3, 3, v), "subnormal and 2^1000 in one row (dependent pair)");
    v[5] = 3.5;
    require_rank_route(f64_of(3, 3, v), "subnormal and 2^1000 in one row (independent)");
  }
}

TEST_CASE("rank_certified on rational storage, and the narrowing of typed_matrix_from_qmat", "[linalg][dispatch]") {
  std::mt19937_64 g(11);
  for (int trial = 0; trial < 6; ++trial) {
    std::size_t m = 2 + g() % 12, n = 2 + g() % 12, k = g() % (std::min(m, n) + 1);
    QMatrix q = testref::random_low_rank(g, m, n, k);
    TypedMatrix t = typed_matrix_from_qmat(q);
    REQUIRE(typed_matrix_to_qmat(t) == q);  // narrowing is exact
    require_rank_route(t, "random low-rank rationals");
  }
  QMatrix third(2, 2);
  third(0, 0) = Rational(1, 3); third(0, 1) = Rational(2, 3); third(1, 0) = Rational(1, 7); third(1, 1) = Rational(2, 7);
  TypedMatrix t = typed_matrix_from_qmat(third);
  REQUIRE(t.storage == Storage::rational);
  require_rank_route(t, "non-dyadic, rank 1");
  QMatrix ints(1, 2);
  ints(0, 0) = 5; ints(0, 1) = -7;
  REQUIRE(typed_matrix_from_qmat(ints).storage == Storage::int64);
  QMatrix halves(1, 2);
  halves(0, 0) = Rational(1, 2); halves(0, 1) = Rational(-3, 1024);
  REQUIRE(typed_matrix_from_qmat(halves).storage == Storage::float64);
  QMatrix beyond(1, 1);
  beyond(0, 0) = Rational(Integer("36893488147419103232"));  // 2^65: a double, not an int64
  REQUIRE(typed_matrix_from_qmat(beyond).storage == Storage::float64);
}

TEST_CASE("rank_certified gives the same certificate with 1 and 2 threads", "[linalg][dispatch]") {
  std::mt19937_64 g(3);
  TypedMatrix a = typed_matrix_from_i64(60, 50, low_rank_i64(g, 60, 50, 30, 100));
  RankCertificate c1 = rank_certified(a, 1), c2 = rank_certified(a, 2);
  REQUIRE(rank_certificate_text(a, c1) == rank_certificate_text(a, c2));
  REQUIRE(c1.rank == 30);
  REQUIRE(c1.upper == RankUpper::multi_prime);
}

TEST_CASE("kruskal_sample_certified: the double route matches the rational route subset for subset",
          "[linalg][dispatch]") {
  std::mt19937_64 g(5);
  // 12 vectors in R^4 with a planted dependency among rows 0, 1, 2 (row 2 = row 0 + row 1).
  auto v = random_i64(g, 12 * 4, 5);
  for (std::size_t j = 0; j < 4; ++j) v[8 + j] = v[j] + v[4 + j];
  TypedMatrix t = typed_matrix_from_i64(12, 4, v);
  KruskalSample fast = kruskal_sample_certified(t, 3, 400, 99);
  KruskalSample exact = qmat_kruskal_sample(typed_matrix_to_qmat(t), 3, 400, 99);
  REQUIRE(fast.independent == exact.independent);
  REQUIRE(fast.dependent == exact.dependent);
  REQUIRE(fast.first_dependent_subset == exact.first_dependent_subset);
  REQUIRE(fast.dependent > 0);
}

TEST_CASE("rank_certified escalations: the kernel route for huge Hadamard bounds, big-integer rationals",
          "[linalg][dispatch]") {
  std::mt19937_64 g(17);
  // 14 x 14 of rank 13 whose rows mix 2^1000 and 2^-1074 multiples: each row scaled to integers has
  // ~2080-bit entries, the Hadamard bound of the 14-minors needs over 1024 primes, so the float64 route
  // must escalate to the exact kernel.
  const std::size_t n = 14;
  std::vector<double> v(n * n);
  for (std::size_t i = 0; i + 1 < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double k = static_cast<double>(static_cast<int>(g() % 15) - 7);
      v[i * n + j] = j % 2 ? std::ldexp(k, 1000) : k * std::numeric_limits<double>::denorm_min();
    }
  for (std::size_t j = 0; j < n; ++j) v[(n - 1) * n + j] = v[j] + v[n + j];  // exact: same scale per column
  TypedMatrix a = f64_of(n, n, v);
  RankCertificate c = rank_certified(a);
  REQUIRE(c.upper == RankUpper::kernel);
  require_rank_route(a, "exponent span 2^-1074..2^1000, rank deficient");

  // Rationals whose row-scaled integers exceed 64 bits: the big-integer residues and norms.
  QMatrix q(5, 4);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      q(i, j) = Rational(Integer(static_cast<long>(g() % 1000) - 500) * (Integer(1) << 80) + 1, Integer(3 + i));
  for (std::size_t j = 0; j < 4; ++j) q(4, j) = q(0, j) - q(3, j) * Rational(2, 7);
  for (auto& x : q.data()) x.canonicalize();
  TypedMatrix t = typed_matrix_from_qmat(q);
  REQUIRE(t.storage == Storage::rational);
  require_rank_route(t, "rationals beyond 64 bits, rank 4");
}

// kruskal_rank_certified on int64 / float64 storage (residues straight from the stored values) against
// qmat_kruskal_rank on the same exact rationals (the generic route), on random, low-rank (near-singular:
// rows that are exact combinations, then perturbed by one ulp in the float case so they are NOT) and
// adversarial sets (parallel pairs, zero rows, entries spanning 2^-60 .. 2^60 in one row); each
// result's certificate is re-verified by the independent checker.
TEST_CASE("kruskal_rank_certified on typed storage equals the rational route", "[linalg][dispatch][kruskal]") {
  std::mt19937_64 g(404);
  for (int it = 0; it < 120; ++it) {
    const std::size_t T = 2 + g() % 9, d = 1 + g() % 6;
    TypedMatrix t;
    if (it % 2 == 0) {
      std::vector<std::int64_t> v = it % 6 == 0 ? low_rank_i64(g, T, d, 1 + g() % d, 5) : random_i64(g, T * d, 3);
      if (it % 8 == 4) v[(T - 1) * d] = INT64_MIN + 1;  // residues of extreme values
      if (it % 10 == 2)
        for (std::size_t j = 0; j < d; ++j) v[(T - 1) * d + j] = -3 * v[j];  // a parallel pair
      t = typed_matrix_from_i64(T, d, std::move(v));
    } else {
      std::vector<double> v(T * d);
      std::vector<std::int64_t> base = low_rank_i64(g, T, d, 1 + g() % d, 4);
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::ldexp(static_cast<double>(base[k]), -3);
      if (it % 4 == 1)  // wide exponents within a row: exact values far from the double grid's middle
        for (std::size_t i = 0; i < T; ++i) v[i * d] = std::ldexp(v[i * d] + 1, static_cast<int>(g() % 121) - 60);
      if (it % 6 == 3) v[0] = std::nextafter(v[0], 1e9);  // one ulp off an exact dependency
      if (it % 10 == 5)
        for (std::size_t j = 0; j < d; ++j) v[(T - 1) * d + j] = 0;  // a zero vector
      t = typed_matrix_from_f64(T, d, std::move(v));
    }
    const QMatrix q = typed_matrix_to_qmat(t);
    const KruskalResult fast = kruskal_rank_certified(t);
    const KruskalResult exact = qmat_kruskal_rank(q);
    INFO("iteration " << it << " storage " << storage_name(t.storage));
    REQUIRE(fast.exact());
    REQUIRE(fast.lower == exact.lower);
    REQUIRE(fast.upper == exact.upper);
    REQUIRE(fast.dependent_subset.size() == exact.dependent_subset.size());
    const auto v = memcert_checker::verify_certificate_text(kruskal_certificate_to_json(q, fast).dump());
    INFO(v.reason);
    REQUIRE(v.valid);
  }
}

// Rows of float64 integers that are all multiples of a large power of two, rank-deficient: the upper
// side's Hadamard bound must be the checker's (rows unscaled), not that of the rows divided by their
// common power of two (smaller by 2^60 per row here), or the checker rejects the certificate.
TEST_CASE("rank_certified on float64 rows of even integers: the Hadamard bound is the checker's", "[linalg][dispatch]") {
  std::mt19937_64 g(77);
  for (int it = 0; it < 8; ++it) {
    const std::size_t m = 9, n = 8, k = 1 + it % 4;
    std::vector<std::int64_t> base = low_rank_i64(g, m, n, k, 3);
    std::vector<double> v(m * n);
    for (std::size_t t = 0; t < v.size(); ++t) v[t] = std::ldexp(static_cast<double>(base[t]), 30 + it);
    require_rank_route(f64_of(m, n, std::move(v)), "even-integer rows");
  }
}

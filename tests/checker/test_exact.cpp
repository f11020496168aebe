// The checker's arithmetic against independent second methods: trial division for primality,
// cofactor expansion for determinants, Sylvester's criterion for positive definiteness.
#include "catch.hpp"
#include "portable_mode.hpp"

#include <random>

#include "../../src/checker/kernel/definite.hpp"
#include "../../src/checker/kernel/exact.hpp"
#include "../../src/checker/kernel/sha256.hpp"
#include "../../src/checker/kernel/modp.hpp"
#include "brute_q.hpp"

using namespace memcert_checker;

namespace {
bool prime_by_trial_division(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}
mpz_class det_cofactor(const ZMat& a) {
  const std::size_t n = a.size();
  if (n == 0) return 1;
  mpz_class d = 0;
  for (std::size_t j = 0; j < n; ++j) {
    ZMat minor;
    for (std::size_t i = 1; i < n; ++i) {
      ZRow r;
      for (std::size_t c = 0; c < n; ++c)
        if (c != j) r.push_back(a[i][c]);
      minor.push_back(r);
    }
    d += (j % 2 ? -1 : 1) * a[0][j] * det_cofactor(minor);
  }
  return d;
}
mpq_class q(const std::string& s) {
  mpq_class x;
  std::string err;
  REQUIRE(parse_rational(s, x, err));
  return x;
}
}  // namespace

TEST_CASE("exact: decimal strings are read exactly", "[checker][exact]") {
  CHECK(q("-3") == -3);
  CHECK(q("7/12") == mpq_class(7, 12));
  CHECK(q("-14/24") == mpq_class(-7, 12));
  CHECK(q("0.125") == mpq_class(1, 8));
  CHECK(q("1e-3") == mpq_class(1, 1000));
  CHECK(q("+2.5E4") == 25000);
  CHECK(q("-0.0") == 0);
  CHECK(q(".5") == mpq_class(1, 2));
  CHECK(q("5.") == 5);
  CHECK(q("0.1") == mpq_class(1, 10));  // exactly 1/10, not the double nearest to it
  CHECK(q("12345678901234567890123456789") == mpq_class(mpz_class("12345678901234567890123456789")));
  mpq_class tiny(mpz_class("49406564584124654"), mpz_class("1" + std::string(340, '0')));
  tiny.canonicalize();
  CHECK(q("4.9406564584124654e-324") == tiny);
  for (const char* bad : {"", " 1", "1 ", "abc", "1/0", "1/-2", "1/+2", "--1", "1e", "1e+", "e5", ".", "-", "1.2.3",
                          "0x10", "inf", "nan", "1e99999", "1e-10001", "1/2/3", "/2", "2/", "1,5", "1e1234567890"}) {
    mpq_class x;
    std::string err;
    INFO(bad);
    CHECK_FALSE(parse_rational(bad, x, err));
    CHECK_FALSE(err.empty());
  }
  unsigned long long u;
  CHECK(parse_u64("18446744073709551615", u));
  CHECK(u == 18446744073709551615ull);
  CHECK_FALSE(parse_u64("18446744073709551616", u));
  CHECK_FALSE(parse_u64("-1", u));
  CHECK_FALSE(parse_u64("+1", u));
  CHECK_FALSE(parse_u64("", u));
}

TEST_CASE("exact: integers and fractions of up to 19 digits a side read as GMP reads their digits", "[checker][exact]") {
  // parse_rational reads these without GMP's string reader; the value must be the one GMP gives the same
  // digits (signs, leading zeros, 19 and 20 digits, which straddle the machine-word reading).
  std::mt19937_64 rng(7);
  auto digits = [&](std::size_t n) {
    std::string d;
    for (std::size_t i = 0; i < n; ++i) d += char('0' + rng() % 10);
    return d;
  };
  for (int it = 0; it < 4000; ++it) {
    const std::string sign = it % 3 == 0 ? "-" : it % 7 == 0 ? "+" : "";
    const std::string num = digits(1 + rng() % 20), den = digits(1 + rng() % 20);
    const bool frac = it % 2 == 0;
    const std::string text = sign + num + (frac ? "/" + den : "");
    INFO(text);
    mpq_class want(mpz_class(num, 10), frac ? mpz_class(den, 10) : mpz_class(1));
    mpq_class got;
    std::string err;
    if (frac && mpz_class(den, 10) == 0) {
      CHECK_FALSE(parse_rational(text, got, err));
      continue;
    }
    want.canonicalize();
    if (sign == "-") want = -want;
    REQUIRE(parse_rational(text, got, err));
    CHECK(got == want);
    CHECK(mpz_cmp_ui(got.get_den_mpz_t(), 0) > 0);  // lowest terms, positive denominator
    mpz_class g;
    mpz_gcd(g.get_mpz_t(), got.get_num_mpz_t(), got.get_den_mpz_t());
    CHECK(g == 1);
  }
  CHECK(q("9999999999999999999/10000000000000000000") == mpq_class(mpz_class("9999999999999999999"), mpz_class("10000000000000000000")));
  CHECK(q("-0") == 0);
  CHECK(q("007/014") == mpq_class(1, 2));
}

TEST_CASE("exact: row scaling by the lcm of denominators", "[checker][exact]") {
  mpz_class f;
  ZRow z = scale_row_to_integers({mpq_class(1, 2), mpq_class(-2, 3), mpq_class(5)}, &f);
  CHECK(f == 6);
  CHECK(z == ZRow{3, -4, 30});
  CHECK(scale_row_to_integers({}).empty());
}

TEST_CASE("modp: Miller-Rabin agrees with trial division and known hard cases", "[checker][modp]") {
  for (std::uint64_t n = 0; n < 20000; ++n) {
    INFO(n);
    REQUIRE(is_prime_u64(n) == prime_by_trial_division(n));
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::uint64_t n = rng() % 4000000000ull;
    REQUIRE(is_prime_u64(n) == prime_by_trial_division(n));
  }
  // Carmichael numbers and strong pseudoprimes to several small bases.
  for (std::uint64_t c : {561ull, 1105ull, 1729ull, 2047ull, 3215031751ull, 2152302898747ull, 3474749660383ull,
                          341550071728321ull, 3825123056546413051ull, 4294967297ull,
                          2305843009213693953ull, 18446744073709551615ull})
    CHECK_FALSE(is_prime_u64(c));
  for (std::uint64_t p : {2ull, 3ull, 2147483647ull, 1000000007ull, 2305843009213693951ull, 4611686018427387847ull,
                          9223372036854775783ull, 18446744073709551557ull})
    CHECK(is_prime_u64(p));
}

TEST_CASE("modp: determinants agree with cofactor expansion, rank with the determinant", "[checker][modp]") {
  std::mt19937_64 rng(11);
  for (std::uint64_t p : {2ull, 3ull, 101ull, 2147483647ull, 2305843009213693951ull, 9223372036854775783ull}) {
    ModP f{p};
    for (int trial = 0; trial < 40; ++trial) {
      std::size_t n = 1 + rng() % 5;
      ZMat a(n, ZRow(n));
      for (auto& r : a)
        for (auto& x : r) x = static_cast<long>(rng() % 2001) - 1000;
      if (trial % 3 == 0) a[n - 1] = a[0];  // some singular ones
      mpz_class d = det_cofactor(a);
      REQUIRE(det_bareiss(a) == d);
      REQUIRE(det_mod_p(reduce_mod(a, f), f) == f.reduce(d));
      std::size_t r = rank_mod_p(reduce_mod(a, f), f);
      REQUIRE((r == n) == (f.reduce(d) != 0));
    }
  }
}

TEST_CASE("modp: rank of a 500x500 matrix over a 31-bit and a 61-bit prime", "[checker][modp]") {
  std::mt19937_64 rng(3);
  const std::size_t n = 500;
  ModMat a(n, std::vector<std::uint64_t>(n));
  const ModP f{2147483647ull};
  // Rank 400: rows 400.. are sums of two earlier rows.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a[i][j] = i < 400 ? rng() % f.p : f.add(a[i - 400][j], a[i - 399][j]);
  CHECK(rank_mod_p(a, f) == 400);
  const ModP g{2305843009213693951ull};  // the 128-bit multiplication path
  ModMat b(n, std::vector<std::uint64_t>(n));
  for (auto& r : b)
    for (auto& x : r) x = rng() % g.p;
  CHECK(rank_mod_p(b, g) == n);
}

TEST_CASE("exact: LDL^T positive definiteness agrees with Sylvester's criterion", "[checker][exact]") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::size_t n = 1 + rng() % 5;
    QMat b(n, QRow(n));
    for (auto& r : b)
      for (auto& x : r) x = mpq_class(static_cast<long>(rng() % 9) - 4, 1 + rng() % 3);
    QMat a(n, QRow(n));  // B B^T - shift I: PD or not depending on the shift
    mpq_class shift(static_cast<long>(rng() % 7), 2);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t k = 0; k < n; ++k) a[i][j] += b[i][k] * b[j][k];
        if (i == j) a[i][j] -= shift;
      }
    bool sylvester = true;  // every leading principal minor > 0
    for (std::size_t k = 1; k <= n; ++k) {
      QMat lead(k, QRow(k));
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j) lead[i][j] = a[i][j];
      sylvester = sylvester && brute_q::det(lead) > 0;
    }
    REQUIRE(positive_definite_ldlt(a) == sylvester);
    REQUIRE(positive_definite(a) == sylvester);
    int iv = positive_definite_interval(a, 64);
    if (iv != 0) REQUIRE((iv > 0) == sylvester);  // when the intervals decide, they are right
  }
  // Positive definite by a margin of 2^-300: 256-bit intervals cannot tell, the exact tier can.
  mpq_class tiny(1);
  tiny /= mpq_class(mpz_class(1) << 300);
  QMat near{{1, 1}, {1, 1 + tiny}}, singular{{1, 1}, {1, 1}}, below{{1, 1}, {1, 1 - tiny}};
  CHECK(positive_definite_interval(near, 256) == 0);
  CHECK(positive_definite(near));
  CHECK_FALSE(positive_definite(singular));
  CHECK_FALSE(positive_definite(below));
  CHECK(positive_definite_interval({{2, 1}, {1, 2}}, 64) == 1);
  CHECK(positive_definite_interval({{1, 2}, {2, 1}}, 64) == -1);
  CHECK_FALSE(positive_definite_ldlt({{1, 2}, {3, 10}}));  // not symmetric
  CHECK_FALSE(positive_definite_ldlt({{1, 2}}));           // not square
  CHECK(positive_definite_ldlt({}));                      // vacuous
}

// The delayed-reduction route (p < 2^26) against the plain u64 elimination, which runs the textbook
// algorithm: random full-rank, low-rank (near-singular: rows that are combinations of others), and
// adversarial inputs (every entry p - 1, so unreduced sums grow the fastest and the reduction
// schedule is exercised at its bound; zero columns and pivots that appear only after many updates).
namespace {
bool sylvester_pd(const QMat& a) {  // every leading principal minor > 0
  for (std::size_t k = 1; k <= a.size(); ++k) {
    QMat lead(k, QRow(k));
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) lead[i][j] = a[i][j];
    if (brute_q::det(lead) <= 0) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("exact: enclosed and Gram-shift positive definiteness agree with Sylvester's criterion", "[checker][exact]") {
  std::mt19937_64 rng(20261128);
  int decided = 0, trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    const std::size_t m = 1 + rng() % 5, n = m + rng() % 3;
    QMat C(m, QRow(n));
    for (auto& r : C)
      for (auto& x : r) x = mpq_class(static_cast<long>(rng() % 9) - 4, 1 + rng() % 5);
    for (auto& r : C)
      for (auto& x : r) x.canonicalize();
    if (m > 1 && trial % 4 == 0) C[m - 1] = C[0];  // singular Gram: no shift >= 0 leaves it PD
    QMat G(m, QRow(m));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t l = 0; l < n; ++l) G[i][j] += C[i][l] * C[j][l];
    // The shift: a small rational, or exactly a value making C C^T - mu I singular (mu = G's 1x1 minor
    // when m = 1, else the determinant route decides).
    mpq_class mu(static_cast<long>(rng() % 7), 1 + static_cast<long>(rng() % 4));
    mu.canonicalize();
    if (m == 1 && trial % 3 == 0) mu = G[0][0];
    QMat shifted = G;
    for (std::size_t i = 0; i < m; ++i) shifted[i][i] -= mu;
    const bool want = sylvester_pd(shifted);
    CAPTURE(trial, m, n, mu.get_str());
    REQUIRE(gram_minus_shift_definite(C, mu) == want);
    // Boxes around the exact entries: when the interval recurrence decides, it is right.
    mpq_class eps(1, 1L << (rng() % 40));
    std::vector<std::vector<Interval>> box(m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j <= i; ++j) box[i].emplace_back(shifted[i][j] - eps, shifted[i][j] + eps, 128);
    if (const int v = positive_definite_enclosed(box); v != 0) {
      ++decided;
      REQUIRE((v > 0) == want);
    }
    // Sum of squares: below mu, at mu exactly (not below), above.
    mpq_class ss = 0;
    for (const auto& r : C)
      for (const auto& x : r) ss += x * x;
    REQUIRE(sum_of_squares_below(C, ss + mpq_class(1, 1000)));
    REQUIRE_FALSE(sum_of_squares_below(C, ss));
    if (sgn(ss) > 0) REQUIRE_FALSE(sum_of_squares_below(C, ss - mpq_class(1, 1000000)));
  }
  CHECK(decided > trials / 2);  // the filter does decide most cases
  // A margin of 2^-300: 256-bit entries cannot tell; the exact route can.
  mpq_class tiny(1);
  tiny /= mpq_class(mpz_class(1) << 300);
  CHECK(gram_minus_shift_definite({{1, 0}, {0, 1}}, 1 - tiny));
  CHECK_FALSE(gram_minus_shift_definite({{1, 0}, {0, 1}}, 1));
  CHECK(sum_of_squares_below({{1, 1}}, 2 + tiny));
  CHECK_FALSE(sum_of_squares_below({{1, 1}}, 2));
  CHECK_FALSE(sum_of_squares_below({{1, 1}}, 2 - tiny));
}

TEST_CASE("modp: small-prime route agrees with the u64 reference route", "[checker][modp]") {
  std::mt19937_64 rng(29);
  // 2: lazy_max is huge; 8388593: memcert's primes; 67108859 (just below 2^26): lazy_max = 1.
  for (std::uint64_t p : {2ull, 3ull, 65521ull, 8388593ull, 67108859ull}) {
    REQUIRE(is_prime_u64(p));
    const ModP f{p};
    for (int trial = 0; trial < 60; ++trial) {
      const std::size_t m = 1 + rng() % 90, n = 1 + rng() % 90;
      ModMat a(m, std::vector<std::uint64_t>(n));
      const int shape = trial % 4;
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) a[i][j] = shape == 2 ? p - 1 - (i == j && rng() % 2) : rng() % p;
      if (shape == 1) {  // rank about m / 2: later rows are combinations of two earlier ones
        for (std::size_t i = m / 2 + 1; i < m; ++i) {
          const std::size_t s = rng() % (m / 2 + 1), t = rng() % (m / 2 + 1);
          const std::uint64_t g = rng() % p;
          for (std::size_t j = 0; j < n; ++j) a[i][j] = f.add(a[s][j], f.mul(g, a[t][j]));
        }
      }
      if (shape == 3)  // zero columns, and a last row equal to the sum of all others
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; j += 3) a[i][j] = 0;
      if (shape == 3 && m > 1)
        for (std::size_t j = 0; j < n; ++j) {
          std::uint64_t s = 0;
          for (std::size_t i = 0; i + 1 < m; ++i) s = f.add(s, a[i][j]);
          a[m - 1][j] = s;
        }
      REQUIRE(rank_mod_p(a, f) == rank_mod_p_reference(a, f));
      ModMat sq(m, std::vector<std::uint64_t>(m));
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) sq[i][j] = a[i][j % n];
      REQUIRE(det_mod_p(sq, f) == det_mod_p_reference(sq, f));
    }
  }
}

// The blocked route at sizes that span several panels (16 columns) and column tiles (256), with rank
// deficiencies placed so that pivot columns shift across panel boundaries, on 1 and 3 threads, against
// the u64 reference elimination: same rank, same determinant.
TEST_CASE("modp: blocked route agrees with the reference across panels, tiles and threads", "[checker][modp]") {
  const bool portable = GENERATE(false, true);  // the default routes, then their portable twins
  PortableMode mode(portable);
  std::mt19937_64 rng(31);
  for (std::uint64_t p : {3ull, 8388593ull, 67108859ull}) {
    const ModP f{p};
    for (int trial = 0; trial < 6; ++trial) {
      const std::size_t m = 33 + rng() % 270, n = 33 + rng() % 300;
      ModMat a(m, std::vector<std::uint64_t>(n));
      for (auto& row : a)
        for (auto& x : row) x = trial % 3 == 2 ? p - 1 : rng() % p;
      if (trial % 3 == 2)  // every entry p - 1 but a perturbed diagonal: unreduced sums grow fastest
        for (std::size_t i = 0; i < std::min(m, n); ++i) a[i][i] = rng() % p;
      if (trial % 3 == 1) {  // zero column blocks and rows that combine two earlier ones
        for (auto& row : a)
          for (std::size_t j = 30; j < std::min(n, std::size_t{45}); ++j) row[j] = 0;
        for (std::size_t i = m / 3; i < m; i += 2) {
          const std::size_t s = rng() % (m / 3), t = rng() % (m / 3);
          const std::uint64_t g = rng() % p;
          for (std::size_t j = 0; j < n; ++j) a[i][j] = f.add(a[s][j], f.mul(g, a[t][j]));
        }
      }
      const std::size_t want = rank_mod_p_reference(a, f);
      for (unsigned threads : {1u, 3u}) {
        std::vector<double> w(m * n);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; ++j) w[i * n + j] = static_cast<double>(a[i][j]);
        CHECK(rank_mod_p_dense(w, m, n, p, nullptr, threads) == want);
        const std::size_t k = std::min(m, n);
        ModMat sq(k, std::vector<std::uint64_t>(a[0].begin(), a[0].begin() + k));
        for (std::size_t i = 0; i < k; ++i) sq[i].assign(a[i].begin(), a[i].begin() + k);
        std::vector<double> ws(k * k);
        for (std::size_t i = 0; i < k; ++i)
          for (std::size_t j = 0; j < k; ++j) ws[i * k + j] = static_cast<double>(sq[i][j]);
        std::uint64_t det = 7;
        rank_mod_p_dense(ws, k, k, p, &det, threads);
        CHECK(det == det_mod_p_reference(sq, f));
      }
    }
  }
}

// The strided form the rank kind uses (row stride ld > n, the columns beyond n zero; residues reduced from
// exact doubles into a second buffer) against independent methods: the residues against GMP's remainder,
// the rank against the u64 reference elimination of those GMP residues, the determinant against the exact
// Bareiss determinant reduced mod p. Integer matrices of known low rank (products of m x r and r x n
// factors, entries up to 2^46 in absolute value, a few set to +-2^52), primes from 3 to just below 2^26
// (every lazy window length; the pivots' inverses by Euclid's algorithm), 1 and 3 threads, default routes
// and portable twins. The padding must still be 0 afterwards.
TEST_CASE("modp: strided dense route agrees with GMP residues, the reference rank and the Bareiss determinant",
          "[checker][modp]") {
  const bool portable = GENERATE(false, true);
  PortableMode mode(portable);
  std::mt19937_64 rng(43);
  const long big = long{1} << 52;
  for (std::uint64_t p : {3ull, 65521ull, 8388593ull, 8388587ull, 67108859ull}) {
    const ModP f{p};
    for (int trial = 0; trial < 4; ++trial) {
      const std::size_t m = 17 + rng() % 100, n = 17 + rng() % 100, r = 1 + rng() % std::min(m, n);
      ZMat x(m, ZRow(r)), y(r, ZRow(n)), a(m, ZRow(n));
      for (auto& row : x)
        for (auto& v : row) v = static_cast<long>(rng() % (1u << 21)) - (1L << 20);
      for (auto& row : y)
        for (auto& v : row) v = static_cast<long>(rng() % (1u << 21)) - (1L << 20);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t t = 0; t < r; ++t) a[i][j] += x[i][t] * y[t][j];
      for (std::size_t i = 0; i < m; ++i)  // within 2^52, products of r <= 116 terms of 2^40
        for (std::size_t j = 0; j < n; ++j) REQUIRE(abs(a[i][j]) <= big);
      if (trial % 2 == 1) a[rng() % m][rng() % n] = big, a[rng() % m][rng() % n] = -big;
      const std::size_t ld = dense_stride(n) + (trial % 2 == 0 ? 0 : kDenseStride);
      REQUIRE(ld % kDenseStride == 0);
      REQUIRE(ld >= n);
      std::vector<double> exact(m * ld, 0.0);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) exact[i * ld + j] = static_cast<double>(a[i][j].get_si());
      std::vector<double> w(exact.size(), -1.0);
      residues_dense(w.data(), exact.data(), exact.size(), p);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < ld; ++j) {
          INFO("p = " << p << ", entry " << i << ", " << j);
          REQUIRE(w[i * ld + j] == static_cast<double>(j < n ? f.reduce(a[i][j]) : 0));
        }
      const std::size_t want = rank_mod_p_reference(reduce_mod(a, f), f);
      for (unsigned threads : {1u, 3u}) {
        std::vector<double> v = w;
        CHECK(rank_mod_p_dense(v.data(), m, n, ld, p, nullptr, threads) == want);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = n; j < ld; ++j) REQUIRE(v[i * ld + j] == 0);
        // The leading square block, cut small so that Bareiss stays quick; non-singular or not.
        const std::size_t k = std::min({m, n, std::size_t{40}}), lk = dense_stride(k);
        ZMat sq(k, ZRow(k));
        std::vector<double> ws(k * lk, 0.0);
        for (std::size_t i = 0; i < k; ++i)
          for (std::size_t j = 0; j < k; ++j) sq[i][j] = a[i][j], ws[i * lk + j] = w[i * ld + j];
        std::uint64_t det = 7;
        rank_mod_p_dense(ws.data(), k, k, lk, p, &det, threads);
        CHECK(det == f.reduce(det_bareiss(sq)));
      }
    }
  }
}

// residues_dense (a rounding trick on doubles) against the integer remainder, at the ends of its range
// (|x| = 2^52), around multiples of p and for negative entries.
TEST_CASE("modp: residues_dense agrees with the integer remainder", "[checker][modp]") {
  const bool portable = GENERATE(false, true);  // the default routes, then their portable twins
  PortableMode mode(portable);
  std::mt19937_64 rng(37);
  for (std::uint64_t p : {2ull, 3ull, 8388593ull, 67108859ull}) {
    std::vector<long> xs = {0, 1, -1, long{1} << 52, -(long{1} << 52), (long{1} << 52) - 1, -(long{1} << 52) + 1};
    const long pl = static_cast<long>(p);
    for (long q : {1L, 2L, 1000003L, (long{1} << 52) / pl})
      for (long d : {-1L, 0L, 1L})
        if (q * pl + d <= (long{1} << 52)) xs.insert(xs.end(), {q * pl + d, -(q * pl + d)});  // the contract's range
    for (int t = 0; t < 2000; ++t) {
      const long x = static_cast<long>(rng() % ((std::uint64_t{1} << 53) + 1)) - (long{1} << 52);
      xs.push_back(x);
    }
    std::vector<double> w(xs.begin(), xs.end());
    residues_dense(w.data(), w.size(), p);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const long want = ((xs[i] % pl) + pl) % pl;
      INFO("p = " << p << ", x = " << xs[i]);
      CHECK(w[i] == static_cast<double>(want));
    }
  }
}

TEST_CASE("checker SHA-256: FIPS 180-4 vectors; the SHA-NI route equals the portable one", "[checker][sha256]") {
  // Known answers (FIPS 180-4 examples), then random inputs fed in random pieces through both routes
  // (on a CPU without the SHA extensions both are the portable code and the comparison is trivial).
  auto digest = [](const std::string& s, bool portable) {
    PortableMode mode(portable);
    memcert_checker::Sha256 h;
    h.update(s.data(), s.size());
    return h.hex();
  };
  for (bool portable : {false, true}) {
    CHECK(digest("abc", portable) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(digest("", portable) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", portable) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  }
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    std::string s(rng() % 3000, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    memcert_checker::Sha256 a, b;  // a on the default route, b on the portable one, fed the same pieces
    auto on = [](bool portable, auto&& step) {
      PortableMode mode(portable);
      return step();
    };
    std::size_t at = 0;
    while (at < s.size()) {
      const std::size_t k = std::min<std::size_t>(s.size() - at, rng() % 200);
      on(false, [&] { a.update(s.data() + at, k); return 0; });
      on(true, [&] { b.update(s.data() + at, k); return 0; });
      at += k;
    }
    const std::string ha = on(false, [&] { return a.hex(); }), hb = on(true, [&] { return b.hex(); });
    CHECK(ha == hb);
  }
}

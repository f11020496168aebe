// The double modular fast path against the exact u64 path (independent second method), the exact rank,
// and itself with 1 and 2 threads.
#include "catch.hpp"

#include <cstring>
#include <random>

#include "memcert/checker/checker.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/cert/linalg_cert.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/numeric/modp.hpp"

using namespace memcert;

namespace {

ZMatrix random_z(std::mt19937_64& g, std::size_t m, std::size_t n, long range) {
  ZMatrix a(m, n);
  for (auto& x : a.data()) x = static_cast<long>(g() % (2 * range + 1)) - range;
  return a;
}
// Product of m x k and k x n random factors: rank <= k (= k generically).
ZMatrix low_rank(std::mt19937_64& g, std::size_t m, std::size_t n, std::size_t k, long range) {
  if (k == 0) return ZMatrix(m, n, Integer(0));
  return mat_mul(random_z(g, m, k, range), random_z(g, k, n, range));
}

std::uint64_t mulmod(std::uint64_t a, std::uint64_t b, std::uint64_t p) {
  return (a * b) % p;  // a, b < p < 2^26: the product fits in 64 bits
}

// Rank profile of an integer matrix mod p through its residues.
ModpRankProfile dmod_profile_of(const ZMatrix& a, std::uint64_t p) {
  DModMatrix r = dmod_from_zmat(a, p);
  return dmod_rank_profile(r);
}

void require_kernel_mod_p(const ZMatrix& a, const Matrix<std::uint32_t>& k, std::uint64_t p) {
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < k.cols(); ++j) {
      std::uint64_t s = 0;
      for (std::size_t t = 0; t < a.cols(); ++t) s = (s + mulmod(modp::reduce(a(i, t), p), k(t, j), p)) % p;
      REQUIRE(s == 0);
    }
}

void require_same_profile(const ZMatrix& a, std::uint64_t p) {
  ModpRankProfile ref = zmat_rank_profile_modp(a, p);
  ModpRankProfile fast = dmod_profile_of(a, p);
  REQUIRE(fast.prime == p);
  REQUIRE(fast.rank == ref.rank);
  REQUIRE(fast.pivot_rows.size() == fast.rank);
  REQUIRE(fast.pivot_cols.size() == fast.rank);
  if (fast.rank > 0) {  // the minor is non-zero mod p (checked by the u64 path)
    ZMatrix minor = mat_submatrix(a, fast.pivot_rows, fast.pivot_cols);
    REQUIRE(zmat_rank_profile_modp(minor, p).rank == fast.rank);
  }
  std::vector<std::size_t> free_cols;
  auto k = dmod_kernel(dmod_from_zmat(a, p), &free_cols);
  REQUIRE(k.cols() == a.cols() - fast.rank);
  REQUIRE(free_cols.size() == k.cols());
  require_kernel_mod_p(a, k, p);
}

}  // namespace

TEST_CASE("dmod rank profile agrees with the u64 elimination", "[linalg][fast]") {
  std::mt19937_64 g(61);
  const std::uint64_t primes[] = {3, 13, 65521, prime_fast(0), prime_fast(7), 67108859 /* < 2^26 */};
  for (std::uint64_t p : primes) {
    for (int it = 0; it < 12; ++it) {
      const std::size_t m = 1 + g() % 60, n = 1 + g() % 60;
      require_same_profile(random_z(g, m, n, 5), p);                                     // full rank
      require_same_profile(low_rank(g, m, n, g() % (std::min(m, n) + 1), 3), p);         // deficient
    }
    // Larger: crosses the recursion, the blocked product and (for big primes) delayed-reduction limits.
    require_same_profile(low_rank(g, 150, 170, 120, 20), p);
  }
}

TEST_CASE("dmod handles empty, 1x1, zero and huge-entry matrices", "[linalg][fast]") {
  const std::uint64_t p = prime_fast(0);
  REQUIRE(dmod_profile_of(ZMatrix(0, 0), p).rank == 0);
  REQUIRE(dmod_profile_of(ZMatrix(0, 5), p).rank == 0);
  REQUIRE(dmod_profile_of(ZMatrix(4, 0), p).rank == 0);
  REQUIRE(dmod_profile_of(ZMatrix(1, 1, Integer(7)), p).rank == 1);
  REQUIRE(dmod_profile_of(ZMatrix(1, 1, Integer(0)), p).rank == 0);
  REQUIRE(dmod_profile_of(ZMatrix(1, 1, Integer(p)), p).rank == 0);  // rank mod p only
  REQUIRE(dmod_profile_of(ZMatrix(3, 4, Integer(0)), p).rank == 0);
  std::mt19937_64 g(62);
  ZMatrix a = low_rank(g, 30, 25, 17, 9);
  Integer huge;
  mpz_ui_pow_ui(huge.get_mpz_t(), 3, 200);  // far beyond 64 bits
  for (auto& x : a.data()) x *= huge;
  for (std::size_t j = 0; j < a.cols(); ++j) a(0, j) += 1;
  require_same_profile(a, p);
  auto c = zmat_rank_certified_fast(a);
  REQUIRE(c.rank == qmat_rank(mat_map<Rational>(a, [](const Integer& z) { return Rational(z); })));
  REQUIRE(zmat_rank_certificate_check(a, c));
}

TEST_CASE("dmod results are identical with 1 and 2 threads", "[linalg][fast]") {
  std::mt19937_64 g(63);
  ZMatrix a = low_rank(g, 260, 300, 230, 50);
  const std::uint64_t p = prime_fast(3);
  DModMatrix d = dmod_from_zmat(a, p);
  ModpRankProfile r1 = dmod_rank_profile(d, {.threads = 1, .in_place = false}),
                  r2 = dmod_rank_profile(d, {.threads = 2, .in_place = false});
  REQUIRE(r1.rank == r2.rank);
  REQUIRE(r1.pivot_rows == r2.pivot_rows);
  REQUIRE(r1.pivot_cols == r2.pivot_cols);
  REQUIRE(dmod_kernel(d, nullptr, 1) == dmod_kernel(d, nullptr, 2));
  fast_set_threads(1);
  auto c1 = zmat_rank_certified_fast(a);
  fast_set_threads(2);
  auto c2 = zmat_rank_certified_fast(a);
  REQUIRE(c1.rank == c2.rank);
  REQUIRE(c1.upper_primes == c2.upper_primes);
  REQUIRE(c1.minor_rows == c2.minor_rows);
}

TEST_CASE("dmod_solve solves modulo p and detects singular systems", "[linalg][fast]") {
  std::mt19937_64 g(64);
  const std::uint64_t p = prime_fast(1);
  for (int it = 0; it < 10; ++it) {
    const std::size_t n = 1 + g() % 80, nb = 1 + g() % 5;
    ZMatrix a = random_z(g, n, n, 100), b = random_z(g, n, nb, 100);
    auto x = dmod_solve(dmod_from_zmat(a, p), dmod_from_zmat(b, p));
    if (zmat_rank_profile_modp(a, p).rank < n) {
      REQUIRE(!x);
      continue;
    }
    REQUIRE(x);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < nb; ++j) {
        std::uint64_t s = 0;
        for (std::size_t t = 0; t < n; ++t) s = (s + mulmod(modp::reduce(a(i, t), p), (*x)(t, j), p)) % p;
        REQUIRE(s == modp::reduce(b(i, j), p));
      }
  }
  ZMatrix s = low_rank(g, 20, 20, 19, 4);
  REQUIRE(!dmod_solve(dmod_from_zmat(s, p), dmod_from_zmat(random_z(g, 20, 1, 3), p)));
}

TEST_CASE("exact certified rank via the fast path matches qmat_rank and the checker accepts it", "[linalg][fast]") {
  std::mt19937_64 g(65);
  for (int it = 0; it < 8; ++it) {
    const std::size_t m = 1 + g() % 25, n = 1 + g() % 25, k = g() % (std::min(m, n) + 1);
    QMatrix q = mat_map<Rational>(low_rank(g, m, n, k, 6), [](const Integer& z) { return Rational(z); });
    // Rational entries: scale a few rows by fractions (rank unchanged).
    for (std::size_t j = 0; j < n; ++j) q(0, j) /= 7;
    auto c = rank_certified(typed_matrix_from_qmat(q));
    REQUIRE(c.rank == qmat_rank(q));
    REQUIRE(c.upper != RankUpper::kernel);
    REQUIRE(zmat_rank_certificate_check(qmat_row_scaled_integer(q), c));
    auto v = memcert_checker::verify_certificate_text(multimodular_rank_certificate_to_json(q, c).dump());
    INFO(v.reason);
    REQUIRE(v.valid);
  }
}

TEST_CASE("float64 matrices: rank of the exact values through row-scaled residues", "[linalg][fast]") {
  std::mt19937_64 g(66);
  std::normal_distribution<double> nd;
  const std::size_t m = 12, n = 15;
  std::vector<double> a(m * n);
  for (auto& x : a) x = nd(g) * std::ldexp(1.0, static_cast<int>(g() % 40) - 20);
  for (std::size_t j = 0; j < n; ++j) a[5 * n + j] = 0.5 * a[2 * n + j];  // exact dependency
  QMatrix q(m, n);
  for (std::size_t i = 0; i < m * n; ++i) q.data()[i] = rational_from_double(a[i]);
  auto d = dmod_from_double_rows(a.data(), m, n, prime_fast(0));
  REQUIRE(dmod_rank_profile(d).rank == qmat_rank(q));
  REQUIRE(qmat_rank(q) == m - 1);
}

TEST_CASE("CRT kernel: the fast RankCertificate equals the exact path's and the checker accepts it", "[linalg][fast]") {
  std::mt19937_64 g(67);
  for (int it = 0; it < 10; ++it) {
    const std::size_t m = 1 + g() % 30, n = 1 + g() % 30, k = g() % (std::min(m, n) + 1);
    QMatrix q = mat_map<Rational>(low_rank(g, m, n, k, 30), [](const Integer& z) { return Rational(z); });
    for (std::size_t j = 0; j < n; ++j) q(m - 1, j) /= 3;
    RankCertificate c = ZmatElimination(qmat_row_scaled_integer(q)).certificate(/*with_kernel=*/true);
    REQUIRE(c.rank == k);  // generic factors: rank k (confirmed by the multi-prime certificate below)
    REQUIRE(c.upper == RankUpper::kernel);
    REQUIRE(rank_certified(typed_matrix_from_qmat(q)).rank == k);
    REQUIRE(c.kernel.cols() == n - k);
    REQUIRE(mat_mul(q, c.kernel) == QMatrix(m, n - k, Rational(0)));
    auto v = memcert_checker::verify_certificate_text(rank_certificate_to_json(q, c).dump());
    INFO(v.reason);
    REQUIRE(v.valid);
  }
}

TEST_CASE("zmat_solve_crt matches qmat_solve and detects singular systems", "[linalg][fast]") {
  std::mt19937_64 g(68);
  for (int it = 0; it < 8; ++it) {
    const std::size_t n = 1 + g() % 25, nb = 1 + g() % 3;
    ZMatrix a = random_z(g, n, n, 1000), b = random_z(g, n, nb, 1000);
    auto x = zmat_solve_crt(a, b);
    auto to_q = [](const ZMatrix& z) { return mat_map<Rational>(z, [](const Integer& v) { return Rational(v); }); };
    auto y = qmat_solve(to_q(a), to_q(b));
    REQUIRE(x.has_value() == y.has_value());
    if (x) REQUIRE(*x == *y);
  }
  ZMatrix s = low_rank(g, 12, 12, 11, 5);
  REQUIRE(!zmat_solve_crt(s, random_z(g, 12, 2, 5)));
  REQUIRE(zmat_solve_crt(ZMatrix(0, 0), ZMatrix(0, 1))->rows() == 0);
}

TEST_CASE("dmod_from_double_rows gives the residues of the exactly row-scaled integers", "[linalg][fast]") {
  std::mt19937_64 g(69);
  std::normal_distribution<double> nd;
  for (std::uint64_t p : {3ull, 13ull, 65521ull, static_cast<unsigned long long>(prime_fast(0)), 67108859ull}) {
    const std::size_t rows = 6, cols = 9;
    std::vector<double> a(rows * cols);
    for (auto& x : a) x = nd(g) * std::ldexp(1.0, static_cast<int>(g() % 200) - 100);
    a[3] = 0;
    a[10] = 0x1p-1074;    // subnormals
    a[11] = -0x1.8p-1060;
    a[12] = std::ldexp(1.0, 1000);
    a[20] = -std::ldexp(0x1.fffffffffffffp0, 52);  // 2^53 - 1: the largest mantissa
    DModMatrix d = dmod_from_double_rows(a.data(), rows, cols, p);
    for (std::size_t i = 0; i < rows; ++i) {
      std::vector<Rational> q(cols);
      for (std::size_t j = 0; j < cols; ++j) q[j] = rational_from_double(a[i * cols + j]);
      // Reference: the row times 2^(1075 - min E) (min over its non-zero entries' exponent fields), exactly.
      int emin = 1 << 20;
      for (std::size_t j = 0; j < cols; ++j)
        if (a[i * cols + j] != 0) {
          std::uint64_t bits;
          std::memcpy(&bits, &a[i * cols + j], sizeof bits);
          int be = static_cast<int>((bits >> 52) & 0x7ff);
          emin = std::min(emin, be == 0 ? 1 : be);
        }
      for (std::size_t j = 0; j < cols; ++j) {
        Rational z = q[j];
        if (emin < (1 << 20) && 1075 - emin >= 0) {
          mpz_mul_2exp(z.get_num_mpz_t(), z.get_num_mpz_t(), static_cast<mp_bitcnt_t>(1075 - emin));
          z.canonicalize();
        }
        REQUIRE(z.get_den() == 1);
        std::uint64_t u = mpz_fdiv_ui(z.get_num_mpz_t(), p);
        double c = u > (p - 1) / 2 ? double(u) - double(p) : double(u);
        REQUIRE(d(i, j) == c);
      }
    }
  }
}

TEST_CASE("an unlucky first prime is retried: det = prime_fast(0)", "[linalg][fast]") {
  const long p = static_cast<long>(prime_fast(0));
  QMatrix a(3, 3, Rational(0));
  a(0, 0) = p;
  a(1, 1) = 1;
  a(2, 0) = 2 * p;  // rank 2 over Q; rank 1 mod p
  a(2, 1) = 3;
  REQUIRE(dmod_profile_of(qmat_row_scaled_integer(a), prime_fast(0)).rank == 1);
  RankCertificate c = ZmatElimination(qmat_row_scaled_integer(a)).certificate(/*with_kernel=*/true);
  REQUIRE(c.rank == 2);
  REQUIRE(c.prime != prime_fast(0));
  REQUIRE(mat_mul(a, c.kernel) == QMatrix(3, 1, Rational(0)));
  REQUIRE(qmat_rank_certified(a).rank == 2);
  auto m = rank_certified(typed_matrix_from_qmat(a));
  REQUIRE(m.rank == 2);
  REQUIRE(zmat_rank_certificate_check(qmat_row_scaled_integer(a), m));
}

TEST_CASE("dmod_from_i64: both the double and the integer reduction paths are exact", "[linalg][fast]") {
  std::mt19937_64 g(70);
  for (std::uint64_t p : {3ull, static_cast<unsigned long long>(prime_fast(2)), 67108859ull}) {
    for (int big = 0; big < 2; ++big) {
      std::vector<std::int64_t> a(50);
      for (auto& x : a) x = static_cast<std::int64_t>(g() >> (big ? 2 : 13)) * ((g() & 1) ? 1 : -1);
      a[0] = big ? INT64_MIN + 1 : (std::int64_t(1) << 52) - 1;
      DModMatrix d = dmod_from_i64(a.data(), 5, 10, p);
      for (std::size_t i = 0; i < a.size(); ++i) {
        Integer z = static_cast<long>(a[i]);
        std::uint64_t u = mpz_fdiv_ui(z.get_mpz_t(), p);
        REQUIRE(d.a[i] == (u > (p - 1) / 2 ? double(u) - double(p) : double(u)));
      }
    }
  }
}

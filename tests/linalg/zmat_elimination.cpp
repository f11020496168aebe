// The exact elimination object (ZmatElimination): one settled profile answers rank, minor, kernel and
// certificate, each checked here against an independent method (Gauss-Jordan over Q, determinants,
// products), and against the free functions it serves (qmat_rank_certified, qmat_kernel, qmat_rank).
#include "catch.hpp"

#include <random>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/zmat/zmat.hpp"
#include "support/reference_linalg.hpp"

using namespace memcert;

namespace {

QMatrix elim_low_rank(std::mt19937_64& g, std::size_t m, std::size_t n, std::size_t k) {
  std::uniform_int_distribution<int> d(-9, 9);
  QMatrix b(m, k), c(k, n);
  for (auto& x : b.data()) x = d(g);
  for (auto& x : c.data()) x = Rational(d(g), 1 + (g() % 3));
  return mat_mul(b, c);
}

}  // namespace

TEST_CASE("ZmatElimination: rank, minor, kernel and certificate from one elimination", "[linalg]") {
  std::mt19937_64 g(20261127);
  for (int it = 0; it < 60; ++it) {
    const std::size_t m = g() % 12, n = g() % 12, k = std::min(m, n) ? g() % (std::min(m, n) + 1) : 0;
    const QMatrix a = elim_low_rank(g, m, n, k);
    const std::size_t r = testref::rref_rank(a);
    ZmatElimination e(qmat_row_scaled_integer(a));
    REQUIRE(e.rank() == r);
    const ModpRankProfile& p = e.profile();
    REQUIRE(p.pivot_rows.size() == r);
    REQUIRE(p.pivot_cols.size() == r);
    if (r > 0) REQUIRE(qmat_det(mat_submatrix(a, p.pivot_rows, p.pivot_cols)) != 0);
    const QMatrix& ker = e.kernel();
    REQUIRE(ker.rows() == n);
    REQUIRE(ker.cols() == n - r);
    REQUIRE(mat_mul(a, ker) == QMatrix(m, n - r, Rational(0)));
    for (std::size_t f = 0; f < e.kernel_free_rows().size(); ++f)
      for (std::size_t j = 0; j < ker.cols(); ++j) REQUIRE(ker(e.kernel_free_rows()[f], j) == (f == j ? 1 : 0));
    // The free functions are this object's answers.
    const RankCertificate c = e.certificate(), q = qmat_rank_certified(a);
    REQUIRE(c.rank == q.rank);
    REQUIRE(c.prime == q.prime);
    REQUIRE(c.minor_rows == q.minor_rows);
    REQUIRE(c.minor_cols == q.minor_cols);
    REQUIRE(c.upper == q.upper);
    REQUIRE(c.kernel == q.kernel);
    REQUIRE(c.upper == (r == m && r < n ? RankUpper::trivial : RankUpper::kernel));
    REQUIRE(qmat_kernel(a) == ker);
    REQUIRE(qmat_rank(a) == r);
    const RankCertificate ck = e.certificate(/*with_kernel=*/true);
    REQUIRE(ck.upper == RankUpper::kernel);
    REQUIRE(ck.kernel == ker);
  }
}

TEST_CASE("ZmatElimination: an unlucky first prime is settled by the next one", "[linalg]") {
  const long p = static_cast<long>(prime_fast(0));
  QMatrix a(3, 3, Rational(0));
  a(0, 0) = p;
  a(1, 1) = 1;
  a(2, 0) = 2 * p;  // rank 2 over Q; rank 1 mod p
  a(2, 1) = 3;
  ZmatElimination e(qmat_row_scaled_integer(a));
  REQUIRE(e.rank() == 2);
  REQUIRE(e.profile().prime != prime_fast(0));
  REQUIRE(mat_mul(a, e.kernel()) == QMatrix(3, 1, Rational(0)));
  REQUIRE(e.certificate().prime == e.profile().prime);
}

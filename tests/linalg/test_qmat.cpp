// Exact linear algebra against independent textbook methods (tests/support/reference_linalg.hpp).
#include "catch.hpp"

#include <random>

#include "memcert/linalg/qmat/qmat.hpp"
#include "support/reference_linalg.hpp"

using namespace memcert;
using namespace memcert::testref;

namespace {

// Every part of a rank certificate, re-checked here by direct computation.
void require_certificate_sound(const QMatrix& a, const RankCertificate& c) {
  REQUIRE(c.minor_rows.size() == c.rank);
  REQUIRE(c.minor_cols.size() == c.rank);
  REQUIRE(qmat_det(mat_submatrix(a, c.minor_rows, c.minor_cols)) != 0);
  REQUIRE(c.kernel.rows() == a.cols());
  if (c.upper == RankUpper::trivial) {
    REQUIRE(c.rank == std::min(a.rows(), a.cols()));
    REQUIRE(c.kernel.cols() == 0);
    REQUIRE(qmat_kernel(a).cols() == a.cols() - c.rank);  // the kernel is still available on demand
    return;
  }
  REQUIRE(c.kernel.cols() == a.cols() - c.rank);
  if (c.kernel.cols() > 0 && a.rows() > 0) {
    QMatrix prod = mat_mul(a, c.kernel);
    for (auto& x : prod.data()) REQUIRE(x == 0);
  }
  QMatrix id = mat_select_rows(c.kernel, c.kernel_free_rows);
  REQUIRE(id == QMatrix::identity(c.kernel.cols()));
}

}  // namespace

TEST_CASE("qmat_rank_certified matches Gauss-Jordan on hundreds of random matrices", "[linalg]") {
  std::mt19937_64 rng(11);
  for (int it = 0; it < 300; ++it) {
    std::size_t m = rng() % 9, n = rng() % 9;
    QMatrix a;
    switch (it % 5) {
      case 0: a = random_qmatrix(rng, m, n); break;                                   // generic
      case 1: a = random_low_rank(rng, m, n, rng() % (std::min(m, n) + 1)); break;    // deficient
      case 2: a = random_qmatrix(rng, m, n, 6, 40); break;                            // big denominators
      case 3: a = random_low_rank(rng, m, n, 1 + rng() % 3, 2, 30); break;            // low rank, rationals
      default: {                                                                     // huge entries
        a = random_low_rank(rng, m, n, rng() % (std::min(m, n) + 1), 8);
        Integer big;
        mpz_ui_pow_ui(big.get_mpz_t(), 10, 60);
        for (auto& x : a.data()) x *= big;
      }
    }
    RankCertificate c = qmat_rank_certified(a);
    REQUIRE(c.rank == rref_rank(a));
    require_certificate_sound(a, c);
  }
}

TEST_CASE("rank edge cases: empty, 1x1, zero, identity", "[linalg]") {
  CHECK(qmat_rank(QMatrix(0, 0)) == 0);
  CHECK(qmat_rank(QMatrix(0, 5)) == 0);
  CHECK(qmat_kernel(QMatrix(0, 3)) == QMatrix::identity(3));
  CHECK(qmat_rank_certified(QMatrix(2, 5, Rational(0))).upper == RankUpper::kernel);
  CHECK(qmat_rank(QMatrix(4, 0)) == 0);
  CHECK(qmat_rank(QMatrix(1, 1, Rational(0))) == 0);
  CHECK(qmat_rank(QMatrix(1, 1, Rational(-3, 7))) == 1);
  CHECK(qmat_rank(QMatrix(5, 7, Rational(0))) == 0);
  CHECK(qmat_rank(QMatrix::identity(12)) == 12);
  // Hand computed: rows (1,2,3),(4,5,6),(7,8,9) have rank 2, kernel spanned by (1,-2,1).
  QMatrix a(3, 3);
  for (int i = 0; i < 9; ++i) a.data()[i] = i + 1;
  RankCertificate c = qmat_rank_certified(a);
  CHECK(c.rank == 2);
  REQUIRE(c.kernel.cols() == 1);
  Rational s = c.kernel(2, 0);
  CHECK(c.kernel(0, 0) == s);
  CHECK(c.kernel(1, 0) == -2 * s);
}

TEST_CASE("rank over Q differs from rank mod p: the certificate retries primes", "[linalg]") {
  // det = p (the first prime used): singular mod p, non-singular over Q.
  const long p = 2147483647L;
  QMatrix a(2, 2);
  a(0, 0) = p; a(0, 1) = 0; a(1, 0) = 0; a(1, 1) = 1;
  RankCertificate c = qmat_rank_certified(a);
  CHECK(c.rank == 2);
  CHECK(c.prime != static_cast<std::uint64_t>(p));
}

TEST_CASE("qmat_det matches cofactor expansion", "[linalg]") {
  std::mt19937_64 rng(12);
  for (int it = 0; it < 200; ++it) {
    std::size_t n = rng() % 6;
    QMatrix a = it % 3 == 0 ? random_low_rank(rng, n, n, n ? rng() % n : 0) : random_qmatrix(rng, n, n, 5, it % 2 ? 10 : 0);
    REQUIRE(qmat_det(a) == cofactor_det(a));
  }
}

TEST_CASE("solve, inverses and rank factorisation satisfy their defining equations", "[linalg]") {
  std::mt19937_64 rng(13);
  for (int it = 0; it < 150; ++it) {
    std::size_t n = 1 + rng() % 7, k = 1 + rng() % 3;
    QMatrix a = random_qmatrix(rng, n, n, 5, it % 2 ? 8 : 0), b = random_qmatrix(rng, n, k);
    auto x = qmat_solve(a, b);
    REQUIRE(x.has_value() == (cofactor_det(a) != 0));
    if (x) REQUIRE(mat_mul(a, *x) == b);
    // Singular systems: consistent right-hand sides are solved, inconsistent ones are refused.
    QMatrix s = random_low_rank(rng, n + 2, n, n - 1 < 1 ? 1 : n - 1);
    QMatrix y = random_qmatrix(rng, n, k);
    QMatrix rhs = mat_mul(s, y);
    auto z = qmat_solve_any(s, rhs);
    REQUIRE(z.has_value());
    REQUIRE(mat_mul(s, *z) == rhs);
    if (rref_rank(mat_hcat(s, QMatrix(n + 2, 1, Rational(1)))) > rref_rank(s))
      REQUIRE_FALSE(qmat_solve_any(s, QMatrix(n + 2, 1, Rational(1))).has_value());
    // Right inverse of a wide full-row-rank matrix, left inverse of a tall one.
    QMatrix w = random_qmatrix(rng, n, n + 3);
    auto r = qmat_right_inverse(w);
    REQUIRE(r.has_value() == (rref_rank(w) == n));
    if (r) REQUIRE(mat_mul(w, *r) == QMatrix::identity(n));
    QMatrix t = mat_transpose(w);
    auto l = qmat_left_inverse(t);
    REQUIRE(l.has_value() == (rref_rank(t) == n));
    if (l) REQUIRE(mat_mul(*l, t) == QMatrix::identity(n));
    QMatrix f = random_low_rank(rng, n + 1, n + 2, k);
    QMatrix fb, fc;
    qmat_rank_factor(f, fb, fc);
    REQUIRE(fb.cols() == rref_rank(f));
    REQUIRE(mat_mul(fb, fc) == f);
  }
  QMatrix sing(2, 2, Rational(1));
  CHECK_FALSE(qmat_inverse(sing).has_value());
  CHECK_FALSE(qmat_right_inverse(sing).has_value());
}

TEST_CASE("qmat_is_positive_definite agrees with Sylvester minors by cofactors", "[linalg]") {
  std::mt19937_64 rng(14);
  for (int it = 0; it < 200; ++it) {
    std::size_t n = 1 + rng() % 5;
    QMatrix b = random_qmatrix(rng, n, n + (rng() % 3), 3, it % 2 ? 5 : 0);
    QMatrix g = mat_mul(b, mat_transpose(b));
    Rational shift = random_rational(rng, 4, 2);
    for (std::size_t i = 0; i < n; ++i) g(i, i) -= shift;
    bool expect = true;
    for (std::size_t k = 1; k <= n; ++k) {
      std::vector<std::size_t> idx(k);
      for (std::size_t i = 0; i < k; ++i) idx[i] = i;
      if (cofactor_det(mat_submatrix(g, idx, idx)) <= 0) { expect = false; break; }
    }
    std::vector<Rational> piv;
    REQUIRE(qmat_is_positive_definite(g, &piv) == expect);
    if (expect) {
      Rational prod = 1;
      for (auto& d : piv) prod *= d;
      REQUIRE(prod == cofactor_det(g));  // LDL^T pivots multiply to the determinant
    }
  }
}

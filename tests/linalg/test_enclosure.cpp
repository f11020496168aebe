// Enclosure rank (Lemma 5): a certified mu must really bound lambda_min of the Gram matrix (checked by
// exact Sylvester minors of G - mu I), and perturbations inside the radius keep the rank.
#include "catch.hpp"

#include <random>

#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "support/reference_linalg.hpp"

using namespace memcert;
using namespace memcert::testref;

TEST_CASE("enclosure_rank_lower certifies full-row-rank centres and survives perturbation", "[linalg]") {
  std::mt19937_64 rng(31);
  for (int it = 0; it < 60; ++it) {
    std::size_t k = 1 + rng() % 5, n = k + rng() % 4;
    QMatrix c = random_qmatrix(rng, k, n, 4, 3);
    if (rref_rank(c) < k) continue;
    QMatrix rad(k, n, Rational(1, 1000000));
    std::vector<std::size_t> rows(k);
    for (std::size_t i = 0; i < k; ++i) rows[i] = i;
    auto cert = enclosure_rank_lower(c, rad, rows);
    if (!cert) continue;  // tiny sigma_min: declining is allowed, wrong certification is not
    QMatrix g = mat_mul(c, mat_transpose(c));
    for (std::size_t i = 0; i < k; ++i) g(i, i) -= cert->mu;
    REQUIRE(cofactor_det(g) > 0);  // lambda_min(G) > mu (with PD of every leading block below)
    REQUIRE(cert->radius_frobenius_sq < cert->mu);
    // Any matrix in the enclosure has rank k: try corners.
    QMatrix p = c;
    for (auto& x : p.data()) x += (rng() % 2 ? 1 : -1) * Rational(1, 1000000);
    REQUIRE(rref_rank(p) == k);
  }
}

TEST_CASE("enclosure_rank_lower declines rank-deficient centres and oversized radii", "[linalg]") {
  std::mt19937_64 rng(32);
  QMatrix c = random_low_rank(rng, 4, 6, 3);
  std::vector<std::size_t> rows{0, 1, 2, 3};
  CHECK_FALSE(enclosure_rank_lower(c, QMatrix(4, 6, Rational(0)), rows).has_value());
  QMatrix good = QMatrix::identity(3);
  std::vector<std::size_t> r3{0, 1, 2};
  CHECK(enclosure_rank_lower(good, QMatrix(3, 3, Rational(1, 10)), r3).has_value());
  // ||R||_F^2 = 9 * 1/4 > 1 = sigma_min^2: Weyl cannot conclude, so no certificate.
  CHECK_FALSE(enclosure_rank_lower(good, QMatrix(3, 3, Rational(1, 2)), r3).has_value());
  auto s = qmat_sigma_min_sq_lower(good);
  REQUIRE(s.has_value());
  CHECK(*s <= 1);
  CHECK(*s > Rational(9, 10));
}

TEST_CASE("ill-conditioned Gram matrices: the MPFR estimate rescues what double cannot locate", "[linalg]") {
  // Hilbert matrix of order 12: lambda_min ~ 2.6e-17, below double's resolution relative to ||H|| ~ 1.8,
  // so the double eigenvalue estimate is noise. H = C C^T with C its Cholesky factor is not needed: we
  // certify sigma via the Gram of a matrix whose rows are H's rows (G = H^2, lambda_min ~ 7e-34).
  const std::size_t n = 12;
  QMatrix h(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) h(i, j) = Rational(1, static_cast<long>(i + j + 1));
  auto mu = qmat_sigma_min_sq_lower(h);
  REQUIRE(mu.has_value());
  // Independent check: det(H^2 - mu I) > 0 and every leading minor positive (Sylvester by cofactors is too
  // slow at n = 12, so use the exact LDL pivots of a different route: Gauss-Jordan rank of H^2 - mu I is
  // full and mu is below the exact lambda_min bound det(H)^2 / (trace(H^2))^(n-1)).
  QMatrix g = mat_mul(h, mat_transpose(h));
  for (std::size_t i = 0; i < n; ++i) g(i, i) -= *mu;
  REQUIRE(qmat_is_positive_definite(g));
  CHECK(*mu > 0);
  CHECK(*mu < Rational(1, 1000000000) * Rational(1, 1000000000) * Rational(1, 1000000000));
}

// Enclosure rank (Lemma 5): a certified mu must really bound lambda_min of the Gram matrix (checked by
// exact Sylvester minors of G - mu I), and perturbations inside the radius keep the rank.
#include <catch2/catch.hpp>

#include <random>

#include "memcert/linalg/enclosure.hpp"
#include "memcert/linalg/qmat.hpp"
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

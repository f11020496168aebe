// Rank lower bounds for enclosure-known matrices via a certified positive-definite Gram matrix and Weyl's
// inequality (docs/THEORY.md Lemma 5 and section 7). Doubles (Eigen) only propose mu; the decision is exact.
#include "memcert/linalg/qmat/enclosure.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "memcert/linalg/qmat/qmat.hpp"
#include "lambda_min_mpfr.hpp"

namespace memcert {

namespace {

QMatrix gram_rows(const QMatrix& c) {
  QMatrix g(c.rows(), c.rows());
  for (std::size_t i = 0; i < c.rows(); ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      Rational s = 0;
      for (std::size_t k = 0; k < c.cols(); ++k) s += c(i, k) * c(j, k);
      g(i, j) = s;
      g(j, i) = s;
    }
  return g;
}

// Smallest eigenvalue of a symmetric rational matrix, estimated in double (a proposal, not a proof).
double lambda_min_estimate(const QMatrix& g) {
  Eigen::MatrixXd m(g.rows(), g.cols());
  for (std::size_t i = 0; i < g.rows(); ++i)
    for (std::size_t j = 0; j < g.cols(); ++j) m(i, j) = rational_to_double(g(i, j));
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(m, Eigen::EigenvaluesOnly);
  return es.eigenvalues()(0);
}

bool shifted_is_pd(const QMatrix& g, const Rational& mu) {
  QMatrix s = g;
  for (std::size_t i = 0; i < s.rows(); ++i) s(i, i) -= mu;
  return qmat_is_positive_definite(s);
}

// Tries mu candidates from large to small (fractions of the estimate, kept above `floor`); returns the
// first one certified, i.e. a certified lower bound on lambda_min(g).
// Escalates the estimate from double to multiprecision (lambda_min_mpfr.hpp) when double cannot propose a
// certifiable mu.
std::optional<Rational> certified_mu(const QMatrix& g, const Rational& floor) {
  if (g.rows() == 0) return std::nullopt;
  auto try_estimate = [&](const Rational& est) -> std::optional<Rational> {
    if (est <= 0) return std::nullopt;
    for (int f : {99, 90, 50, 10}) {
      Rational mu = rational_round_to_bits(est * Rational(f, 100), 20);
      if (mu <= floor) continue;
      if (shifted_is_pd(g, mu)) return mu;
    }
    return std::nullopt;
  };
  double est = lambda_min_estimate(g);
  if (std::isfinite(est)) {
    if (auto mu = try_estimate(rational_from_double(est))) return mu;
  }
  return try_estimate(detail::lambda_min_estimate_mpfr(g));
}

}  // namespace

std::optional<Rational> qmat_sigma_min_sq_lower(const QMatrix& c) {
  if (c.rows() > c.cols()) return std::nullopt;
  return certified_mu(gram_rows(c), Rational(0));
}

std::optional<EnclosureRankCertificate> enclosure_rank_lower(const QMatrix& centre, const QMatrix& radius,
                                                             const std::vector<std::size_t>& rows) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("enclosure_rank_lower: centre and radius shapes differ");
  if (rows.size() > centre.cols()) return std::nullopt;
  EnclosureRankCertificate cert;
  cert.rows = rows;
  cert.method = "exact-ldl";
  for (std::size_t i : rows)
    for (std::size_t j = 0; j < radius.cols(); ++j) {
      if (radius(i, j) < 0) throw std::invalid_argument("enclosure_rank_lower: negative radius");
      cert.radius_frobenius_sq += radius(i, j) * radius(i, j);
    }
  auto mu = certified_mu(gram_rows(mat_select_rows(centre, rows)), cert.radius_frobenius_sq);
  if (!mu) return std::nullopt;
  cert.mu = *mu;
  return cert;
}

}  // namespace memcert

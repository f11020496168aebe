// Rank lower bounds for enclosure-known matrices via a certified positive-definite Gram matrix and Weyl's
// inequality (docs/THEORY.md Lemma 5 and section 7). Doubles (Eigen) only propose mu; the decision is exact.
#include "memcert/linalg/enclosure.hpp"

#include <boost/multiprecision/mpfr.hpp>
#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>

#include "memcert/linalg/qmat.hpp"

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

// The same estimate in 256-bit MPFR (Boost.Multiprecision): the escalation for Gram matrices too
// ill-conditioned for double to even locate lambda_min. Inverse power iteration through a Cholesky
// factor G = L L^T; 0 when the factorization breaks down (G not numerically positive definite).
// Still only a proposal: the caller certifies mu exactly.
Rational lambda_min_estimate_mpfr(const QMatrix& g) {
  using mp = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>,
                                           boost::multiprecision::et_off>;
  mp::default_precision(80);  // decimal digits, ~266 bits
  const std::size_t n = g.rows();
  std::vector<mp> l(n * n, mp(0));
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = j; i < n; ++i) {
      mp s;
      mpfr_set_q(s.backend().data(), g(i, j).get_mpq_t(), MPFR_RNDN);
      for (std::size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        if (s <= 0) return Rational(0);
        l[j * n + j] = sqrt(s);
      } else {
        l[i * n + j] = s / l[j * n + j];
      }
    }
  }
  std::vector<mp> x(n, mp(1)), y(n);
  mp lambda_inv = 0;
  for (int it = 0; it < 60; ++it) {
    for (std::size_t i = 0; i < n; ++i) {  // L y = x
      mp s = x[i];
      for (std::size_t k = 0; k < i; ++k) s -= l[i * n + k] * y[k];
      y[i] = s / l[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) {  // L^T x' = y
      mp s = y[i];
      for (std::size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * y[k];
      y[i] = s / l[i * n + i];
    }
    mp norm = 0;
    for (auto& v : y) norm += v * v;
    norm = sqrt(norm);
    mp xn = 0;
    for (auto& v : x) xn += v * v;
    lambda_inv = norm / sqrt(xn);  // ||G^-1 x|| / ||x|| -> lambda_max(G^-1)
    for (std::size_t i = 0; i < n; ++i) x[i] = y[i] / norm;
  }
  mp lam = 1 / lambda_inv;
  Rational r;
  mpfr_get_q(r.get_mpq_t(), lam.backend().data());
  return r;
}

bool shifted_is_pd(const QMatrix& g, const Rational& mu) {
  QMatrix s = g;
  for (std::size_t i = 0; i < s.rows(); ++i) s(i, i) -= mu;
  return qmat_is_positive_definite(s);
}

// Tries mu candidates from large to small (fractions of the estimate, kept above `floor`); returns the
// first one certified, i.e. a certified lower bound on lambda_min(g).
// Escalates the estimate from double to 256-bit MPFR when double cannot propose a certifiable mu.
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
  return try_estimate(lambda_min_estimate_mpfr(g));
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

// The enclosure of Z as the induction builds it (THEORY.md section 4) and its certified rank test:
// the Gram matrix of the interval centres plus Rump's positive-definiteness test (THEORY.md section 7).
#include "z_enclosure.hpp"

#include <cmath>

namespace memcert::mahdavi24 {

using Eigen::MatrixXd;

namespace {
// Upper bound on a non-negative double sum computed in round-to-nearest (relative error <= k u).
double up(double x, std::size_t terms = 1) {
  return std::nextafter(x * (1.0 + double(terms + 2) * std::ldexp(1.0, -52)), INFINITY);
}
}  // namespace

GramAccumulator::GramAccumulator(std::size_t T) : G_(MatrixXd::Zero(T, T)), A_(MatrixXd::Zero(T, T)), rad2_(T, 0.0) {}

void GramAccumulator::add(const MatrixXd& C, const MatrixXd& R) {
  G_.noalias() += C * C.transpose();
  MatrixXd Ca = C.cwiseAbs();
  A_.noalias() += Ca * Ca.transpose();
  for (Eigen::Index i = 0; i < R.rows(); ++i) rad2_[i] += R.row(i).squaredNorm();
  cols_ += C.cols();
  ++blocks_;
}

GramRankResult GramAccumulator::certify(const std::vector<std::size_t>& rows, const MatrixXd* XC, const MatrixXd* XR,
                                        bool want_sigma) const {
  const std::size_t k = rows.size();
  GramRankResult res;
  if (k == 0) { res.ok = true; return res; }
  MatrixXd GS(k, k), AS(k, k);
  double radF2 = 0;
  for (std::size_t i = 0; i < k; ++i) {
    radF2 += rad2_[rows[i]];
    for (std::size_t j = 0; j < k; ++j) {
      GS(i, j) = G_(rows[i], rows[j]);
      AS(i, j) = A_(rows[i], rows[j]);
    }
  }
  std::size_t m = cols_, depth = blocks_;
  if (XC) {
    GS.noalias() += (*XC) * XC->transpose();
    MatrixXd Xa = XC->cwiseAbs();
    AS.noalias() += Xa * Xa.transpose();
    radF2 += XR->squaredNorm();
    m += XC->cols();
    ++depth;
  }
  // |fl(G) - C C^T| <= gamma_N |C||C|^T, N = m + depth bounds the depth of every summation
  // (within-block dot products and the block-wise accumulation); the computed |C||C|^T is itself
  // inflated; 1e-300 per term covers underflow.
  const double u = std::ldexp(1.0, -53);
  const double N = double(2 * (m + depth) + 4);
  const double gamma = N * u / (1.0 - N * u) * 1.01;
  double errF2 = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      double e = up(gamma * AS(i, j)) + double(m) * 1e-300;
      errF2 += e * e;
    }
  const double errF = up(std::sqrt(up(errF2, k * k)));
  radF2 = up(radF2, m * k + 8);
  const double radF = up(std::sqrt(radF2));
  res.radius_f = radF;
  std::vector<double> mus;
  double lam = 0;
  if (want_sigma) {
    Eigen::SelfAdjointEigenSolver<MatrixXd> es(GS, Eigen::EigenvaluesOnly);
    lam = es.eigenvalues()(0);
    res.lambda_estimate = lam;
    if (lam > 0) { mus.push_back(0.81 * lam); mus.push_back(0.25 * lam); }
  }
  mus.push_back(std::nextafter(2.0 * radF * radF + 1e-300, INFINITY));
  for (double mu : mus) {
    if (!(mu > radF * radF)) continue;
    std::vector<double> a(k * k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) a[i * k + j] = GS(i, j);
    for (std::size_t i = 0; i < k; ++i) a[i * k + i] = std::nextafter(a[i * k + i] - mu, -INFINITY);
    if (!rump_positive_definite(std::move(a), k, errF)) continue;
    res.ok = true;
    res.mu = mu;
    double sq = std::nextafter(std::sqrt(mu), -INFINITY);
    res.sigma_lower = std::nextafter(sq - radF, -INFINITY);
    if (!(res.sigma_lower > 0)) { res.ok = false; continue; }
    return res;
  }
  return res;
}

ZExamples z_examples(const AttentionDataset& ds, mpfr_prec_t prec) {
  ZExamples z;
  const std::size_t T = ds.T(), n = ds.n(), d = ds.d();
  z.n = n;
  z.d = d;
  z.ctx.reserve(T);
  for (std::size_t t = 0; t < T; ++t) {
    z.ctx.emplace_back(ds.contexts[t], prec);
    z.Es.push_back(scaled_from_qmat(ds.contexts[t]));
    z.eq.push_back(QVector(ds.queries.row(t), ds.queries.row(t) + ds.queries.cols()));
    z.es.push_back(scaled_from_qvec(z.eq.back()));
    for (std::size_t j = 0; j < n; ++j) {
      Rational s = 0;
      for (std::size_t c = 0; c < d; ++c) s += ds.contexts[t](j, c) * ds.contexts[t](j, c);
      if (s > z.B2) z.B2 = s;
    }
  }
  z.B = std::sqrt(rational_to_double(z.B2));
  return z;
}

void z_fill_rows(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, const QVector& logits, std::size_t t) {
  std::vector<double> c(z.d), rr(z.d);
  z.ctx[t].mix(logits, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

void z_fill_scaled(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, const ScaledVector& a,
                   const ScaledVector& s, const Rational& cc, std::size_t t) {
  std::vector<double> c(z.d), rr(z.d);
  z.ctx[t].mix_scaled(a, &s, cc, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

void z_fill_token(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, std::size_t t, std::size_t j) {
  std::vector<double> c(z.d), rr(z.d);
  z.ctx[t].token(j, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

SaturationData scaled_saturation(const ScaledVector& a, const ScaledVector& s) {
  SaturationData r;
  const std::size_t n = s.num.size();
  if (n == 0) return r;
  std::size_t j = 0;
  for (std::size_t i = 1; i < n; ++i) if (s.num[i] > s.num[j]) j = i;
  r.jstar = j;
  r.unique = true;
  const Integer* second = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == j) continue;
    if (s.num[i] == s.num[j]) r.unique = false;
    if (!second || s.num[i] > *second) second = &s.num[i];
  }
  r.gap = second ? Rational(s.num[j] - *second, s.den) : Rational(0);
  r.gap.canonicalize();
  Integer best = 0;
  for (std::size_t i = 0; i < n && i < a.num.size(); ++i)
    if (a.num[i] - a.num[j] > best) best = a.num[i] - a.num[j];
  r.spread = Rational(best, a.den);
  r.spread.canonicalize();
  return r;
}

}  // namespace memcert::mahdavi24

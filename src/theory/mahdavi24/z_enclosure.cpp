// The enclosure of Z as the induction builds it (THEORY.md section 4) and its certified rank test:
// the Gram matrix of the interval centres plus Rump's positive-definiteness test (THEORY.md section 7).
#include "z_enclosure.hpp"

#include <cmath>

#include "memcert/linalg/fast/rump.hpp"

namespace memcert::mahdavi24 {

using Eigen::MatrixXd;

namespace {
const double kU = std::ldexp(1.0, -53), kEta = std::ldexp(1.0, -1074);
// Upper bound on a non-negative double sum of `terms` non-negative terms computed in round-to-nearest.
double up(double x, std::size_t terms = 1) {
  return std::nextafter(x * (1.0 + double(terms + 2) * kU), INFINITY);
}
DMatrix to_dmatrix(const MatrixXd& a) {
  DMatrix d(a.rows(), a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) d(i, j) = a(i, j);
  return d;
}
}  // namespace

GramAccumulator::GramAccumulator(std::size_t T) : G_(T, T, 0.0), norm2_(T, 0.0), rad2_(T, 0.0) {}

void GramAccumulator::add(const MatrixXd& C, const MatrixXd& R) {
  gram_accumulate(G_, to_dmatrix(C));
  for (Eigen::Index i = 0; i < C.rows(); ++i) {
    norm2_[i] += C.row(i).squaredNorm();
    rad2_[i] += R.row(i).squaredNorm();
  }
  cols_ += C.cols();
  ++blocks_;
}

GramRankResult GramAccumulator::certify(const std::vector<std::size_t>& rows, const MatrixXd* XC, const MatrixXd* XR,
                                        bool want_sigma) const {
  const std::size_t k = rows.size();
  GramRankResult res;
  if (k == 0) { res.ok = true; return res; }
  DMatrix GS(k, k);
  double radF2 = 0, norm2 = 0;
  for (std::size_t i = 0; i < k; ++i) {
    radF2 += rad2_[rows[i]];
    norm2 += norm2_[rows[i]];
    for (std::size_t j = 0; j < k; ++j) GS(i, j) = G_(rows[i], rows[j]);
  }
  std::size_t m = cols_, depth = blocks_;
  if (XC) {
    gram_accumulate(GS, to_dmatrix(*XC));
    norm2 += XC->squaredNorm();
    radF2 += XR->squaredNorm();
    m += XC->cols();
    ++depth;
  }
  // |fl(G)_ij - (C C^T)_ij| <= gamma_N sum_l |c_il||c_jl| + m eta <= gamma_N ||c_i|| ||c_j|| + m eta, with
  // N = m + depth bounding every entry's chain of roundings (dot products within a block, one addition
  // per block) -- taken twice, plus 4, as a margin. So the error's Frobenius norm (>= its 2-norm) is at
  // most gamma_N sum_{i in S} ||c_i||^2 + k m eta. The squared norms were summed in round-to-nearest
  // over m k non-negative terms: inflated accordingly.
  const double N = double(2 * (m + depth) + 4);
  const double gamma = N * kU / (1.0 - N * kU) * 1.01;
  const double norm2_up = up(norm2, m * k + 8);
  const double errF = up(up(gamma * norm2_up) + up(double(k) * double(m) * kEta * 2.0));
  radF2 = up(radF2, m * k + 8);
  const double radF = up(std::sqrt(radF2));
  res.radius_f = radF;
  // Candidate mu: near the estimated lambda_min when a good sigma bound is wanted, else just above
  // ||R_S||_F^2 (all the rank claim needs). Each candidate costs one blocked Cholesky.
  std::vector<double> mus;
  if (want_sigma) {
    if (auto lam = lambda_min_estimate(GS); lam && *lam > 0) {
      res.lambda_estimate = *lam;
      mus.push_back(0.81 * *lam);
      mus.push_back(0.25 * *lam);
    }
  }
  mus.push_back(std::nextafter(2.0 * radF * radF + 1e-300, INFINITY));
  for (double mu : mus) {
    if (!(mu > radF * radF)) continue;
    DMatrix a = GS;
    for (std::size_t i = 0; i < k; ++i) a(i, i) = std::nextafter(GS(i, i) - mu, -INFINITY);
    if (!rump_isspd(a, errF).certified) continue;
    double sq = std::nextafter(std::sqrt(mu), -INFINITY);
    double sl = std::nextafter(sq - radF, -INFINITY);
    if (!(sl > 0)) continue;
    res.ok = true;
    res.mu = mu;
    res.sigma_lower = sl;
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
    z.eq.push_back(QVector(ds.queries.row(t), ds.queries.row(t) + ds.queries.cols()));
    for (std::size_t j = 0; j < n; ++j) {
      Rational s = 0;
      for (std::size_t c = 0; c < d; ++c) s += ds.contexts[t](j, c) * ds.contexts[t](j, c);
      if (s > z.B2) z.B2 = s;
    }
  }
  z.B = std::sqrt(rational_to_double(z.B2));
  z.sd = scaled_dataset(ds);
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

void z_fill_affine(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, const AffineLogits& L,
                   const Rational& cc, std::size_t t) {
  thread_local std::vector<double> c, rr;
  c.resize(z.d);
  rr.resize(z.d);
  z.ctx[t].mix_affine(L, cc, c.data(), rr.data());
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

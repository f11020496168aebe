// Kind "model": the double midpoint-radius arithmetic (model_enclosure.hpp). Notation of
// float_kernels.hpp: u = 2^-53, eta = 2^-1074, gamma_k = k u / (1 - k u); up()/dn() step one double
// outward from a round-to-nearest result, so up(fl(x)) >= x and dn(fl(x)) <= x for one operation.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel/float_kernels.hpp"
#include "kinds/model/model_enclosure.hpp"

namespace memcert_checker::model_kind {

namespace {
constexpr double kEtaD = 0x1p-1074;

// [lo, hi] of m +- r, outward.
inline void ends(double m, double r, double& lo, double& hi) {
  lo = dn(m - r);
  hi = up(m + r);
}
// Knuth's TwoSum: s = fl(a + b) and the exact error e = (a + b) - s (round-to-nearest, no overflow).
inline double two_sum_err(double a, double b, double s) {
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb);
}
inline bool finite(double x) { return std::isfinite(x); }

// Bounds for a sum of n products sum_k a_k x_k with a in [am +- ar] (ar null: exact), x in [xm +- xr]:
// with q_k >= xr_k + gamma_n |xm_k| and b_k >= |xm_k| + xr_k (rounded upward), the exact value lies
// within s +- rad where s = fl(sum am_k xm_k) in any order (Higham (3.5): gamma_n sum |am_k xm_k|, plus
// n eta for products that underflow) and rad bounds sum (|am_k| q_k + ar_k b_k) + n eta: that sum of at most
// 2n non-negative products, evaluated as R in round-to-nearest, is at most (R + 2n eta) / (1 - gamma_2n).
struct DotConsts {
  double gn, denom, tail2n, tailn;
  bool ok;
  explicit DotConsts(std::size_t n) {
    gn = gamma_up(n == 0 ? 1 : n);
    const double g2n = gamma_up(2 * (n == 0 ? 1 : n));
    ok = finite(g2n) && finite(gn);
    denom = dn(1.0 - g2n);
    tail2n = up(static_cast<double>(2 * n) * kEtaD);
    tailn = up(static_cast<double>(n) * kEtaD);
  }
  double radius(double R) const { return up(up(up(R + tail2n) / denom) + tailn); }
};
void xq(const DotConsts& k, const std::vector<double>& xm, const std::vector<double>& xr, std::vector<double>& q,
        std::vector<double>& b) {
  const std::size_t n = xm.size();
  q.resize(n);
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    q[i] = up(xr[i] + up(k.gn * std::fabs(xm[i])));
    b[i] = up(std::fabs(xm[i]) + xr[i]);
  }
}
// s and R of one row (four partial sums each: any order is covered by the bound).
inline void dot_row(const double* am, const double* ar, const double* xm, const double* q, const double* b,
                    std::size_t n, double& s, double& R) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  std::size_t k = 0;
  if (ar) {
    for (; k + 4 <= n; k += 4) {
      s0 += am[k] * xm[k]; s1 += am[k + 1] * xm[k + 1]; s2 += am[k + 2] * xm[k + 2]; s3 += am[k + 3] * xm[k + 3];
      r0 += std::fabs(am[k]) * q[k]; r1 += std::fabs(am[k + 1]) * q[k + 1];
      r2 += std::fabs(am[k + 2]) * q[k + 2]; r3 += std::fabs(am[k + 3]) * q[k + 3];
      r0 += ar[k] * b[k]; r1 += ar[k + 1] * b[k + 1]; r2 += ar[k + 2] * b[k + 2]; r3 += ar[k + 3] * b[k + 3];
    }
    for (; k < n; ++k) {
      s0 += am[k] * xm[k];
      r0 += std::fabs(am[k]) * q[k];
      r0 += ar[k] * b[k];
    }
  } else {
    for (; k + 4 <= n; k += 4) {
      s0 += am[k] * xm[k]; s1 += am[k + 1] * xm[k + 1]; s2 += am[k + 2] * xm[k + 2]; s3 += am[k + 3] * xm[k + 3];
      r0 += std::fabs(am[k]) * q[k]; r1 += std::fabs(am[k + 1]) * q[k + 1];
      r2 += std::fabs(am[k + 2]) * q[k + 2]; r3 += std::fabs(am[k + 3]) * q[k + 3];
    }
    for (; k < n; ++k) {
      s0 += am[k] * xm[k];
      r0 += std::fabs(am[k]) * q[k];
    }
  }
  s = (s0 + s1) + (s2 + s3);
  R = (r0 + r1) + (r2 + r3);
}
void midrad_set(double lo, double hi, double& m, double& r) {
  midrad(lo, hi, m, r);
}
}  // namespace

// exp(x): x = k ln2 + r with k = round(x / ln2) (any integer k is correct; this one makes |r| <= 0.35),
// ln2 within [L, up(L)], L = 0x1.62e42fefa39efp-1 < ln 2; r enclosed outward; exp(r) at both ends of r's
// enclosure (exp is increasing) by the Taylor polynomial of degree 17 in Horner form, whose error is at most
// gamma_34 e^0.36 (rounding; Higham (5.3)) + gamma_17 e^0.36 (coefficients c_i = fl(c_{i-1} / i)) + 34 eta
// (underflow) + 0.36^18 / 18! e^0.36 < 1e-22 (truncation); then times 2^k (scalbn: exact or one rounding).
bool exp_bounds(double x, double& lo, double& hi) {
  if (!(x <= 709.0)) return false;
  if (x < -708.0) {  // exp(x) < 2^-1021
    lo = 0;
    hi = 0x1p-1000;
    return true;
  }
  constexpr int N = 17;
  static const double* coef = [] {
    static double c[N + 1];
    c[0] = 1;
    for (int i = 1; i <= N; ++i) c[i] = c[i - 1] / i;
    return c;
  }();
  static const double err = up(up(up(gamma_up(2 * N) + gamma_up(N)) * 1.44) + 1e-22);
  const double k = std::nearbyint(x * 1.4426950408889634);
  constexpr double L = 0x1.62e42fefa39efp-1;
  const double Lh = up(L);
  double klo, khi;
  if (k >= 0) {
    klo = dn(k * L);
    khi = up(k * Lh);
  } else {
    klo = dn(k * Lh);
    khi = up(k * L);
  }
  const double rl = dn(x - khi), rh = up(x - klo);
  if (!(std::fabs(rl) < 0.36 && std::fabs(rh) < 0.36)) return false;
  auto poly = [&](double a) {
    double p = coef[N];
    for (int i = N - 1; i >= 0; --i) p = p * a + coef[i];
    return p;
  };
  const double pl = dn(poly(rl) - err), ph = up(poly(rh) + err);
  const int ki = static_cast<int>(k);
  lo = std::max(0.0, dn(std::scalbn(pl, ki)));
  hi = up(std::scalbn(ph, ki));
  return finite(hi) && lo <= hi;
}

void DoubleEnc::set_exact(Vec& v, const double* x, std::size_t n) const {
  v.m.assign(x, x + n);
  v.r.assign(n, 0.0);
}
void DoubleEnc::resize(Mat& M, std::size_t rows, std::size_t cols) const {
  M.rows = rows;
  M.cols = cols;
  M.m.assign(rows * cols, 0.0);
  M.r.assign(rows * cols, 0.0);
}
bool DoubleEnc::set_row(Mat& M, std::size_t i, const Vec& v) const {
  std::copy(v.m.begin(), v.m.end(), M.m.begin() + static_cast<long>(i * M.cols));
  std::copy(v.r.begin(), v.r.end(), M.r.begin() + static_cast<long>(i * M.cols));
  return true;
}
void DoubleEnc::row(const Mat& M, std::size_t i, Vec& v) const {
  v.m.assign(M.m.begin() + static_cast<long>(i * M.cols), M.m.begin() + static_cast<long>((i + 1) * M.cols));
  if (M.r.empty()) v.r.assign(M.cols, 0.0);
  else v.r.assign(M.r.begin() + static_cast<long>(i * M.cols), M.r.begin() + static_cast<long>((i + 1) * M.cols));
}

void DoubleEnc::slice(const Vec& v, std::size_t off, std::size_t len, Vec& out) const {
  out.m.assign(v.m.begin() + static_cast<long>(off), v.m.begin() + static_cast<long>(off + len));
  out.r.assign(v.r.begin() + static_cast<long>(off), v.r.begin() + static_cast<long>(off + len));
}
void DoubleEnc::place(Vec& dst, std::size_t off, const Vec& src) const {
  std::copy(src.m.begin(), src.m.end(), dst.m.begin() + static_cast<long>(off));
  std::copy(src.r.begin(), src.r.end(), dst.r.begin() + static_cast<long>(off));
}

bool DoubleEnc::mv_exact(const double* W, std::size_t rows, std::size_t cols, const Vec& x, Vec& y) const {
  const DotConsts k(cols);
  if (!k.ok) return false;
  thread_local std::vector<double> q, b;
  xq(k, x.m, x.r, q, b);
  y.m.resize(rows);
  y.r.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    double s, R;
    dot_row(W + i * cols, nullptr, x.m.data(), q.data(), b.data(), cols, s, R);
    y.m[i] = s;
    y.r[i] = k.radius(R);
    if (!finite(s) || !finite(y.r[i])) return false;
  }
  return true;
}

bool DoubleEnc::mv(const Mat& M, std::size_t j0, std::size_t j1, const Vec& x, Vec& y) const {
  const std::size_t n = M.cols;
  const DotConsts k(n);
  if (!k.ok) return false;
  thread_local std::vector<double> q, b;
  xq(k, x.m, x.r, q, b);
  y.m.resize(j1 - j0);
  y.r.resize(j1 - j0);
  for (std::size_t j = j0; j < j1; ++j) {
    double s, R;
    dot_row(&M.m[j * n], M.r.empty() ? nullptr : &M.r[j * n], x.m.data(), q.data(), b.data(), n, s, R);
    y.m[j - j0] = s;
    y.r[j - j0] = k.radius(R);
    if (!finite(s) || !finite(y.r[j - j0])) return false;
  }
  return true;
}

bool DoubleEnc::mix(const Mat& M, std::size_t j0, std::size_t j1, const Vec& alpha, Vec& p) const {
  const std::size_t n = j1 - j0, d = M.cols;
  p.m.assign(d, 0.0);
  p.r.assign(d, 0.0);
  if (n == 0) return true;
  thread_local std::vector<double> zeros;
  const double* er = M.r.empty() ? nullptr : &M.r[j0 * d];
  if (!er) {
    zeros.assign(n * d, 0.0);
    er = zeros.data();
  }
  return mix_enclosure(&M.m[j0 * d], er, alpha.m.data(), alpha.r.data(), n, d, p.m.data(), p.r.data());
}

bool DoubleEnc::add(Vec& y, const Vec& x) const {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double s = y.m[i] + x.m[i];
    const double e = two_sum_err(y.m[i], x.m[i], s);
    y.m[i] = s;
    y.r[i] = up(up(y.r[i] + x.r[i]) + std::fabs(e));
    if (!finite(s) || !finite(y.r[i])) return false;
  }
  return true;
}
bool DoubleEnc::add_exact(Vec& y, const double* b) const {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double s = y.m[i] + b[i];
    const double e = two_sum_err(y.m[i], b[i], s);
    y.m[i] = s;
    y.r[i] = up(y.r[i] + std::fabs(e));
    if (!finite(s) || !finite(y.r[i])) return false;
  }
  return true;
}

// 1 / sqrt(k) within [il, ih]: sqrt is correctly rounded, so sqrt(k) lies within [dn(sq), up(sq)].
bool DoubleEnc::scale_inv_sqrt(Vec& y, std::size_t k) const {
  const double sq = std::sqrt(static_cast<double>(k));
  const double il = dn(1.0 / up(sq)), ih = up(1.0 / dn(sq));
  for (std::size_t i = 0; i < y.size(); ++i) {
    double lo, hi;
    ends(y.m[i], y.r[i], lo, hi);
    const double nl = lo >= 0 ? dn(lo * il) : dn(lo * ih);
    const double nh = hi >= 0 ? up(hi * ih) : up(hi * il);
    if (!finite(nl) || !finite(nh)) return false;
    midrad_set(nl, nh, y.m[i], y.r[i]);
  }
  return true;
}

// alpha_j = exp(s_j - c) / sum_k exp(s_k - c) for any c (here the largest centre): the lower end of
// alpha_j from the lower end of its numerator over the upper end of the sum, and vice versa.
bool DoubleEnc::softmax(Vec& s) const {
  const std::size_t n = s.size();
  if (n == 0) return false;
  double c = s.m[0];
  for (double x : s.m) c = std::max(c, x);
  thread_local std::vector<double> el, eh;
  el.resize(n);
  eh.resize(n);
  double Sl = 0, Sh = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double lo, hi, a, b;
    ends(s.m[j], s.r[j], lo, hi);
    if (!exp_bounds(dn(lo - c), el[j], a) || !exp_bounds(up(hi - c), b, eh[j])) return false;
    Sl = dn(Sl + el[j]);
    Sh = up(Sh + eh[j]);
  }
  if (!(Sl > 0) || !finite(Sh)) return false;
  for (std::size_t j = 0; j < n; ++j) {
    const double lo = std::max(0.0, dn(el[j] / Sh)), hi = std::min(1.0, up(eh[j] / Sl));
    if (!(lo <= hi)) return false;
    midrad_set(lo, hi, s.m[j], s.r[j]);
  }
  return true;
}

bool phi_bounds(mpfr_srcptr xlo, mpfr_srcptr xhi, mpfr_ptr plo, mpfr_ptr phi);  // enclosure_mpfr.cpp

bool DoubleEnc::gelu(Vec& y) const {
  mpfr_t a, b, pl, ph;
  mpfr_inits2(64, a, b, pl, ph, static_cast<mpfr_ptr>(nullptr));
  bool ok = true;
  for (std::size_t i = 0; i < y.size() && ok; ++i) {
    double lo, hi;
    ends(y.m[i], y.r[i], lo, hi);
    mpfr_set_d(a, lo, MPFR_RNDD);
    mpfr_set_d(b, hi, MPFR_RNDU);
    ok = finite(lo) && finite(hi) && phi_bounds(a, b, pl, ph);
    if (!ok) break;
    const double l = mpfr_get_d(pl, MPFR_RNDD), h = mpfr_get_d(ph, MPFR_RNDU);  // 0 <= l <= Phi <= h <= 1
    // [lo, hi] x [l, h], the four corners rounded outward
    const double c[4] = {lo * l, lo * h, hi * l, hi * h};
    double nl = c[0], nh = c[0];
    for (double v : c) nl = std::min(nl, v), nh = std::max(nh, v);
    nl = dn(nl);
    nh = up(nh);
    ok = finite(nl) && finite(nh);
    if (ok) midrad_set(nl, nh, y.m[i], y.r[i]);
  }
  mpfr_clears(a, b, pl, ph, static_cast<mpfr_ptr>(nullptr));
  return ok;
}

bool DoubleEnc::class_margin(const double* W, const double* bias, std::size_t C, std::size_t y, const Vec& o,
                             Bounds& out) const {
  const std::size_t n = o.size();
  const DotConsts k(n);
  if (!k.ok || C < 2 || y >= C) return false;
  thread_local std::vector<double> q, b, dm, dr;
  xq(k, o.m, o.r, q, b);
  dm.resize(n);
  dr.resize(n);
  const double inf = std::numeric_limits<double>::infinity();
  double mlo = inf, mhi = inf;
  for (std::size_t c = 0; c < C; ++c) {
    if (c == y) continue;
    for (std::size_t i = 0; i < n; ++i) {  // W_y - W_c with its exact rounding error
      const double a = W[y * n + i], bb = -W[c * n + i];
      dm[i] = a + bb;
      dr[i] = std::fabs(two_sum_err(a, bb, dm[i]));
    }
    double s, R;
    dot_row(dm.data(), dr.data(), o.m.data(), q.data(), b.data(), n, s, R);
    double rad = k.radius(R);
    if (bias) {
      const double bm = bias[y] - bias[c], br = std::fabs(two_sum_err(bias[y], -bias[c], bm));
      const double s2 = s + bm, e = two_sum_err(s, bm, s2);
      rad = up(up(rad + br) + std::fabs(e));
      s = s2;
    }
    double lo, hi;
    ends(s, rad, lo, hi);
    if (!finite(lo) || !finite(hi)) return false;
    mlo = std::min(mlo, lo);
    mhi = std::min(mhi, hi);
  }
  out.lo = mlo;  // exact: every double is a rational
  out.hi = mhi;
  return true;
}

bool DoubleEnc::abs_error(const Vec& f, const std::vector<mpq_class>& target, Bounds& out) const {
  if (f.size() != target.size()) return false;
  mpfr_t t;
  mpfr_init2(t, 53);
  double elo = 0, ehi = 0;
  bool ok = true;
  for (std::size_t c = 0; c < f.size() && ok; ++c) {
    mpfr_set_q(t, target[c].get_mpq_t(), MPFR_RNDD);
    const double tl = mpfr_get_d(t, MPFR_RNDD);
    mpfr_set_q(t, target[c].get_mpq_t(), MPFR_RNDU);
    const double th = mpfr_get_d(t, MPFR_RNDU);
    double lo, hi;
    ends(f.m[c], f.r[c], lo, hi);
    const double dl = dn(lo - th), dh = up(hi - tl);
    ok = finite(dl) && finite(dh);
    const double al = dl >= 0 ? dl : dh <= 0 ? -dh : 0.0, ah = std::max(-dl, dh);
    elo = std::max(elo, al);
    ehi = std::max(ehi, ah);
  }
  mpfr_clear(t);
  if (ok) {
    out.lo = elo;
    out.hi = ehi;
  }
  return ok;
}

}  // namespace memcert_checker::model_kind

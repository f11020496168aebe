// The MHA forward pass of docs/THEORY.md section 1 (eqs. (1)-(6)): exact logits, MPFR enclosures for softmax
// and everything after it, and a double pass for estimates.
#include "memcert/model/mha.hpp"
#include "memcert/numeric/dinterval.hpp"

#include "memcert/numeric/exp_bounded.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <stdexcept>

namespace memcert {

// ---- exact ------------------------------------------------------------------------------------------

QVector mha_logits_exact(const QMatrix& E, const QMatrix& WK, const QMatrix& WQ, const QVector& e) {
  if (WQ.rows() != e.size() || WK.rows() != E.cols() || WK.cols() != WQ.cols())
    throw std::invalid_argument("mha_logits_exact: shape mismatch");
  QVector q(WQ.cols(), Rational(0));  // W_Q^T e
  for (std::size_t i = 0; i < WQ.rows(); ++i)
    if (e[i] != 0)
      for (std::size_t j = 0; j < WQ.cols(); ++j) q[j] += WQ(i, j) * e[i];
  QVector k = mat_vec(WK, q);  // W_K W_Q^T e
  return mat_vec(E, k);
}

ScaledMatrix scaled_from_qmat(const QMatrix& a) {
  ScaledMatrix s;
  s.den = rational_denominator_lcm(a.data().begin(), a.data().end());
  s.num = ZMatrix(a.rows(), a.cols());
  for (std::size_t i = 0; i < a.data().size(); ++i) {
    const Rational& q = a.data()[i];
    s.num.data()[i] = q.get_num() * (s.den / q.get_den());
  }
  return s;
}

ScaledVector scaled_from_qvec(const QVector& v) {
  ScaledVector s;
  s.den = rational_denominator_lcm(v.begin(), v.end());
  s.num.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) s.num[i] = v[i].get_num() * (s.den / v[i].get_den());
  return s;
}

ScaledVector scaled_mat_vec(const ScaledMatrix& a, const ScaledVector& x, bool transpose) {
  const std::size_t m = transpose ? a.cols() : a.rows(), k = transpose ? a.rows() : a.cols();
  if (x.num.size() != k) throw std::invalid_argument("scaled_mat_vec: shape mismatch");
  ScaledVector y;
  y.num.assign(m, Integer(0));
  y.den = a.den * x.den;
  for (std::size_t i = 0; i < m; ++i) {
    mpz_ptr acc = y.num[i].get_mpz_t();
    for (std::size_t j = 0; j < k; ++j) {
      const Integer& aij = transpose ? a.num(j, i) : a.num(i, j);
      if (mpz_sgn(aij.get_mpz_t()) == 0 || mpz_sgn(x.num[j].get_mpz_t()) == 0) continue;
      mpz_addmul(acc, aij.get_mpz_t(), x.num[j].get_mpz_t());
    }
  }
  return y;
}

QVector scaled_to_qvec(const ScaledVector& v) {
  QVector q(v.num.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i] = Rational(v.num[i], v.den);
    q[i].canonicalize();
  }
  return q;
}

QVector mha_logits_scaled(const ScaledMatrix& E, const ScaledMatrix& WK, const ScaledMatrix& WQ,
                          const ScaledVector& e) {
  ScaledVector q = scaled_mat_vec(WQ, e, /*transpose=*/true);
  ScaledVector k = scaled_mat_vec(WK, q);
  return scaled_to_qvec(scaled_mat_vec(E, k));
}

// ---- interval ---------------------------------------------------------------------------------------

namespace {
Interval interval_from_mpfr(mpfr_srcptr lo, mpfr_srcptr hi) {
  Rational l, h;
  mpfr_get_q(l.get_mpq_t(), lo);
  mpfr_get_q(h.get_mpq_t(), hi);
  return Interval(l, h);
}
}  // namespace

std::vector<Interval> softmax_enclosure(const QVector& logits) {
  const std::size_t n = logits.size();
  if (n == 0) return {};
  const mpfr_prec_t prec = Interval::default_precision();
  Rational m = logits[0];
  for (const Rational& a : logits) if (a > m) m = a;
  std::vector<__mpfr_struct> xl(n), xh(n);
  mpfr_t t, sl, sh, al, ah;
  mpfr_inits2(prec, t, sl, sh, al, ah, (mpfr_ptr)0);
  mpfr_set_zero(sl, 1);
  mpfr_set_zero(sh, 1);
  for (std::size_t k = 0; k < n; ++k) {
    mpfr_init2(&xl[k], prec);
    mpfr_init2(&xh[k], prec);
    Rational diff = logits[k] - m;  // exact, <= 0
    mpfr_set_q(t, diff.get_mpq_t(), MPFR_RNDD);
    mpfr_exp(&xl[k], t, MPFR_RNDD);  // exp is increasing: exp(lo) rounded down <= exp(diff)
    mpfr_set_q(t, diff.get_mpq_t(), MPFR_RNDU);
    mpfr_exp(&xh[k], t, MPFR_RNDU);
    mpfr_add(sl, sl, &xl[k], MPFR_RNDD);
    mpfr_add(sh, sh, &xh[k], MPFR_RNDU);
  }
  std::vector<Interval> out;
  out.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    mpfr_div(al, &xl[k], sh, MPFR_RNDD);
    mpfr_div(ah, &xh[k], sl, MPFR_RNDU);
    if (mpfr_cmp_ui(ah, 1) > 0) mpfr_set_ui(ah, 1, MPFR_RNDU);
    out.push_back(interval_from_mpfr(al, ah));
    mpfr_clear(&xl[k]);
    mpfr_clear(&xh[k]);
  }
  mpfr_clears(t, sl, sh, al, ah, (mpfr_ptr)0);
  return out;
}

std::vector<Interval> softmax_enclosure(const std::vector<Interval>& logits) {
  const std::size_t n = logits.size();
  if (n == 0) return {};
  // Shift by a point (the largest upper end) for range; exp(a_k - m) with interval arithmetic.
  Rational m = logits[0].upper();
  for (const Interval& a : logits) if (a.upper() > m) m = a.upper();
  Interval mi(m);
  std::vector<Interval> x;
  Interval s;
  for (const Interval& a : logits) {
    x.push_back(interval_exp(a - mi));
    s += x.back();
  }
  std::vector<Interval> out;
  for (std::size_t k = 0; k < n; ++k) {
    // alpha_k = x_k / (x_k + rest): the form 1 / (1 + rest/x_k) avoids double use of x_k.
    Interval rest;
    for (std::size_t j = 0; j < n; ++j) if (j != k) rest += x[j];
    Interval one(Rational(1));
    Interval a = one / (one + rest / x[k]);
    Rational lo = a.lower() < 0 ? Rational(0) : a.lower();
    Rational hi = a.upper() > 1 ? Rational(1) : a.upper();
    out.push_back(Interval(lo, hi));
  }
  return out;
}

MhaIntervalPass mha_forward_interval(const QMatrix& E, const QVector& e, const MhaWeights& w, bool skip) {
  const std::size_t n = E.rows(), d = E.cols(), H = w.H();
  MhaIntervalPass r;
  std::vector<Interval> ocat;
  for (std::size_t h = 0; h < H; ++h) {
    const MhaHead& hd = w.heads[h];
    r.alpha.push_back(softmax_enclosure(mha_logits_exact(E, hd.WK, hd.WQ, e)));
    std::vector<Interval> p(d);
    for (std::size_t k = 0; k < d; ++k)
      for (std::size_t j = 0; j < n; ++j)
        if (E(j, k) != 0) p[k] += Interval(E(j, k)) * r.alpha[h][j];
    for (std::size_t v = 0; v < hd.WV.cols(); ++v) {
      Interval s;
      for (std::size_t k = 0; k < d; ++k)
        if (hd.WV(k, v) != 0) s += Interval(hd.WV(k, v)) * p[k];
      ocat.push_back(s);
    }
    r.p.push_back(std::move(p));
  }
  if (w.WO.rows() != ocat.size() || w.WO.cols() != d) throw std::invalid_argument("mha_forward_interval: W_O shape");
  r.o.assign(d, Interval());
  for (std::size_t k = 0; k < d; ++k) {
    for (std::size_t i = 0; i < ocat.size(); ++i)
      if (w.WO(i, k) != 0) r.o[k] += Interval(w.WO(i, k)) * ocat[i];
    if (skip) r.o[k] += Interval(e[k]);
  }
  r.y.assign(w.WD.cols(), Interval());
  for (std::size_t c = 0; c < w.WD.cols(); ++c)
    for (std::size_t k = 0; k < d; ++k)
      if (w.WD(k, c) != 0) r.y[c] += Interval(w.WD(k, c)) * r.o[k];
  return r;
}

// ---- double -----------------------------------------------------------------------------------------

MhaDoublePass mha_forward_double(const QMatrix& E, const QVector& e, const MhaWeights& w, bool skip) {
  const std::size_t n = E.rows(), d = E.cols(), H = w.H();
  auto D = [](const Rational& q) { return rational_to_double(q); };
  Matrix<double> Ed = mat_map<double>(E, D);
  std::vector<double> ed(d);
  for (std::size_t k = 0; k < d; ++k) ed[k] = D(e[k]);
  MhaDoublePass r;
  std::vector<double> ocat;
  for (std::size_t h = 0; h < H; ++h) {
    const MhaHead& hd = w.heads[h];
    Matrix<double> K = mat_map<double>(hd.WK, D), Q = mat_map<double>(hd.WQ, D), V = mat_map<double>(hd.WV, D);
    std::vector<double> q(Q.cols(), 0.0), kk(d, 0.0), a(n, 0.0);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < Q.cols(); ++j) q[j] += Q(i, j) * ed[i];
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < K.cols(); ++j) kk[i] += K(i, j) * q[j];
    double mx = -INFINITY;
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t i = 0; i < d; ++i) a[j] += Ed(j, i) * kk[i];
      mx = std::max(mx, a[j]);
    }
    double s = 0;
    std::vector<double> al(n);
    for (std::size_t j = 0; j < n; ++j) s += (al[j] = std::exp(a[j] - mx));
    for (auto& x : al) x /= s;
    std::vector<double> p(d, 0.0);
    for (std::size_t k = 0; k < d; ++k)
      for (std::size_t j = 0; j < n; ++j) p[k] += Ed(j, k) * al[j];
    for (std::size_t v = 0; v < V.cols(); ++v) {
      double o = 0;
      for (std::size_t k = 0; k < d; ++k) o += V(k, v) * p[k];
      ocat.push_back(o);
    }
    r.alpha.push_back(al);
    r.p.push_back(p);
  }
  r.o.assign(d, 0.0);
  for (std::size_t k = 0; k < d; ++k) {
    for (std::size_t i = 0; i < ocat.size(); ++i) r.o[k] += D(w.WO(i, k)) * ocat[i];
    if (skip) r.o[k] += ed[k];
  }
  r.y.assign(w.WD.cols(), 0.0);
  for (std::size_t c = 0; c < w.WD.cols(); ++c)
    for (std::size_t k = 0; k < d; ++k) r.y[c] += D(w.WD(k, c)) * r.o[k];
  return r;
}

// ---- fast enclosure kernel --------------------------------------------------------------------------

namespace {
void centre_radius(mpfr_srcptr lo, mpfr_srcptr hi, mpfr_ptr mid, mpfr_ptr rad, double* c, double* r);
}

ContextEnclosure::ContextEnclosure(const QMatrix& E, mpfr_prec_t prec)
    : n_(E.rows()), d_(E.cols()), prec_(std::max<mpfr_prec_t>(prec, 53)), em_(n_ * d_), er_(n_ * d_) {
  mpfr_t lo, hi, mid, rad;
  mpfr_inits2(prec_, lo, hi, mid, rad, (mpfr_ptr)0);
  for (std::size_t i = 0; i < n_ * d_; ++i) {
    mpfr_set_q(lo, E.data()[i].get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(hi, E.data()[i].get_mpq_t(), MPFR_RNDU);
    centre_radius(lo, hi, mid, rad, &em_[i], &er_[i]);  // E_i in [em_i +- er_i] (er_i = 0 if dyadic)
  }
  if (std::all_of(er_.begin(), er_.end(), [](double r) { return r == 0; })) er_ = {};  // dyadic: radius 0
  column_bounds();
  mpfr_clears(lo, hi, mid, rad, (mpfr_ptr)0);
}

ContextEnclosure::ContextEnclosure(const double* E, std::size_t n, std::size_t d, mpfr_prec_t prec)
    : n_(n), d_(d), prec_(std::max<mpfr_prec_t>(prec, 53)), em_(E, E + n * d) {  // er_ empty: radius 0
  column_bounds();
}

ContextEnclosure::ContextEnclosure(const double* num, int k, std::size_t n, std::size_t d, mpfr_prec_t prec)
    : n_(n), d_(d), prec_(std::max<mpfr_prec_t>(prec, 53)) {
  if (k >= 0 && k <= 1074) {  // 2^-k is a double (subnormal past 2^-1022)
    ext_ = num;
    scale_ = std::ldexp(1.0, -k);
  } else {
    em_.resize(n * d);
    for (std::size_t i = 0; i < n * d; ++i) em_[i] = std::ldexp(num[i], -k);
  }
  column_bounds();
}

const double* ContextEnclosure::row(std::size_t j, double* buf) const {
  if (!ext_) return &em_[j * d_];
  const double* e = ext_ + j * d_;
  for (std::size_t c = 0; c < d_; ++c) buf[c] = e[c] * scale_;  // exact: the product is the stored value
  return buf;
}

// colabs_[c] >= sum_j |em_jc| + er_jc: summed in round-to-nearest (n + 1 roundings per chain) and inflated
// by 1 + 2 gamma_{n+3} >= 1 / (1 - gamma_{n+1}), rounded upward.
void ContextEnclosure::column_bounds() {
  using dbound::up;
  colabs_.assign(d_, 0.0);
  std::vector<double> buf(d_);
  for (std::size_t j = 0; j < n_; ++j) {
    const double* em = row(j, buf.data());
    for (std::size_t c = 0; c < d_; ++c) colabs_[c] += std::fabs(em[c]) + (er_.empty() ? 0.0 : er_[j * d_ + c]);
  }
  const double gam = dbound::gamma_up_num(double(n_ + 3));
  const double infl = up(1.0 + up(2.0 * gam));
  for (double& x : colabs_) x = up(x * infl);
}

namespace {
// Per-thread scratch space for ContextEnclosure::mix.
struct MixScratch {
  mpfr_prec_t prec = 0;
  std::vector<__mpfr_struct> al, ah, ll, lh;
  mpfr_t t, sl, sh, pl, ph, mid, rad;
  bool init = false;
  void ensure(std::size_t n, mpfr_prec_t p) {
    if (!init || prec != p) {
      if (init) {
        mpfr_clears(t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
        for (auto* v : {&al, &ah, &ll, &lh}) {
          for (auto& x : *v) mpfr_clear(&x);
          v->clear();
        }
      }
      mpfr_inits2(p, t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
      prec = p;
      init = true;
    }
    while (al.size() < n)
      for (auto* v : {&al, &ah, &ll, &lh}) {
        v->emplace_back();
        mpfr_init2(&v->back(), prec);
      }
  }
  ~MixScratch() {
    if (!init) return;
    mpfr_clears(t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
    for (auto* v : {&al, &ah, &ll, &lh})
      for (auto& x : *v) mpfr_clear(&x);
  }
};
thread_local MixScratch g_mix;

// centre = nearest double to the midpoint of [lo, hi]; radius >= max(hi - centre, centre - lo).
void centre_radius(mpfr_srcptr lo, mpfr_srcptr hi, mpfr_ptr mid, mpfr_ptr rad, double* c, double* r) {
  mpfr_add(mid, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
  double cd = mpfr_get_d(mid, MPFR_RNDN);
  mpfr_set_d(mid, cd, MPFR_RNDN);  // exact (precision >= 53)
  mpfr_sub(rad, hi, mid, MPFR_RNDU);
  double r1 = mpfr_get_d(rad, MPFR_RNDU);
  mpfr_sub(rad, mid, lo, MPFR_RNDU);
  double r2 = mpfr_get_d(rad, MPFR_RNDU);
  *c = cd;
  *r = std::max(std::max(r1, r2), 0.0);
}
}  // namespace

namespace {
// Per-thread alpha bounds handed from the softmax step to the mixing step.
thread_local std::vector<double> g_alo, g_ahi;

// alpha enclosures from logit enclosures [ll_k, lh_k] (in the scratch): x_k = exp(a_k - M) with the
// constant M = max_k lh_k (any constant gives the same softmax), then alpha = x / sum x. The shifted
// logits are rounded outward to doubles (<= 0) and exponentiated by exp_nonpositive_bounded, whose
// result r satisfies |r - exp(x)| <= rho exp(x) + tau (rho = 2^-44, tau = 2^-1020), so
//   exp(x) >= (r - tau)(1 - rho)   and   exp(x) <= (r + tau)(1 + 2 rho)   (and <= 1 since x <= 0).
// The sums of the n non-negative bounds are computed in round-to-nearest: S >= s (1 - gamma_n),
// S <= s (1 + 2 gamma_n). Every step rounds in the safe direction (nextafter after round-to-nearest).
void alpha_from_logit_bounds(MixScratch& s, std::size_t n) {
  using dbound::up;
  using dbound::dn;
  const double rho = kExpRelErr, tau = kExpAbsErr;
  mpfr_srcptr M = &s.lh[0];
  for (std::size_t k = 1; k < n; ++k) if (mpfr_greater_p(&s.lh[k], M)) M = &s.lh[k];
  g_alo.resize(n);
  g_ahi.resize(n);
  double slo = 0, shi = 0;
  for (std::size_t k = 0; k < n; ++k) {
    mpfr_sub(s.t, &s.ll[k], M, MPFR_RNDD);
    const double xlo = mpfr_get_d(s.t, MPFR_RNDD);  // may be -inf: exp bound 0
    mpfr_sub(s.t, &s.lh[k], M, MPFR_RNDU);
    const double xhi = std::min(0.0, mpfr_get_d(s.t, MPFR_RNDU));  // lh_k <= M, so already <= 0
    const double rl = exp_nonpositive_bounded(std::max(xlo, -1e300)), rh = exp_nonpositive_bounded(xhi);
    const double a = dn(rl - tau);
    g_alo[k] = a > 0 ? dn(a * (1.0 - rho)) : 0.0;
    g_ahi[k] = std::min(1.0, up(up(rh + tau) * (1.0 + 2.0 * rho)));
    slo += g_alo[k];
    shi += g_ahi[k];
  }
  const double gam = dbound::gamma_up_outward(double(n));
  slo = dn(slo * dn(1.0 - gam));
  shi = up(shi * up(1.0 + 2.0 * gam));
  for (std::size_t k = 0; k < n; ++k) {  // alpha in [x_lo / S_hi, min(1, x_hi / S_lo)], all >= 0
    g_alo[k] = dn(g_alo[k] / shi);
    g_ahi[k] = slo > 0 ? std::min(1.0, up(g_ahi[k] / slo)) : 1.0;
    if (g_alo[k] < 0) g_alo[k] = 0;
  }
}
}  // namespace

void ContextEnclosure::mix(const QVector& logits, double* centre, double* radius) const {
  if (logits.size() != n_) throw std::invalid_argument("ContextEnclosure::mix: logits size");
  MixScratch& s = g_mix;
  s.ensure(n_, std::max<mpfr_prec_t>(prec_, 53));
  for (std::size_t k = 0; k < n_; ++k) {
    mpfr_set_q(&s.ll[k], logits[k].get_mpq_t(), MPFR_RNDD);
    mpfr_set_q(&s.lh[k], logits[k].get_mpq_t(), MPFR_RNDU);
  }
  alpha_from_logit_bounds(s, n_);
  mix_alpha(centre, radius);
}

void ContextEnclosure::mix_scaled(const ScaledVector& a, const ScaledVector* sv, const Rational& c, double* centre,
                                  double* radius) const {
  if (a.num.size() != n_ || (sv && sv->num.size() != n_)) throw std::invalid_argument("ContextEnclosure::mix_scaled: size");
  MixScratch& s = g_mix;
  s.ensure(n_, std::max<mpfr_prec_t>(prec_, 53));
  const bool use_s = sv && c != 0;
  Integer q, pnum;
  if (use_s) q = c.get_den() * sv->den;
  for (std::size_t k = 0; k < n_; ++k) {  // every denominator is positive: directions are preserved
    mpfr_set_z(&s.ll[k], a.num[k].get_mpz_t(), MPFR_RNDD);
    mpfr_div_z(&s.ll[k], &s.ll[k], a.den.get_mpz_t(), MPFR_RNDD);
    mpfr_set_z(&s.lh[k], a.num[k].get_mpz_t(), MPFR_RNDU);
    mpfr_div_z(&s.lh[k], &s.lh[k], a.den.get_mpz_t(), MPFR_RNDU);
    if (use_s) {
      pnum = c.get_num() * sv->num[k];
      mpfr_set_z(s.t, pnum.get_mpz_t(), MPFR_RNDD);
      mpfr_div_z(s.t, s.t, q.get_mpz_t(), MPFR_RNDD);
      mpfr_add(&s.ll[k], &s.ll[k], s.t, MPFR_RNDD);
      mpfr_set_z(s.t, pnum.get_mpz_t(), MPFR_RNDU);
      mpfr_div_z(s.t, s.t, q.get_mpz_t(), MPFR_RNDU);
      mpfr_add(&s.lh[k], &s.lh[k], s.t, MPFR_RNDU);
    }
  }
  alpha_from_logit_bounds(s, n_);
  mix_alpha(centre, radius);
}

// ---- AffineLogits ----
namespace {
// v_k = x_k rounded in direction rnd at prec bits (x_k = num / den with den > 0: a directed rounding of num
// then of the quotient keeps the direction).
void enclose_exact(AffineLogits::Packed& v, const ScaledVector& x, mpfr_rnd_t rnd, mpfr_prec_t prec) {
  mpfr_t t;
  mpfr_init2(t, prec);
  for (std::size_t k = 0; k < x.num.size(); ++k) {
    mpfr_set_z(t, x.num[k].get_mpz_t(), rnd);
    mpfr_div_z(t, t, x.den.get_mpz_t(), rnd);
    v.push(t);
  }
  mpfr_clear(t);
}
}  // namespace

void AffineLogits::Packed::push(mpfr_srcptr x) {
  const mpfr_prec_t p = mpfr_get_prec(x);
  if (kind_.empty()) {
    prec_ = p;
    limbs_per_ = mpfr_custom_get_size(p) / sizeof(mp_limb_t);
  } else if (p != prec_) {
    throw std::logic_error("AffineLogits::Packed: mixed precisions");
  }
  const int kind = mpfr_custom_get_kind(x);
  kind_.push_back(static_cast<signed char>(kind));
  const bool regular = kind == MPFR_REGULAR_KIND || kind == -MPFR_REGULAR_KIND;
  exp_.push_back(regular ? mpfr_custom_get_exp(x) : 0);
  const auto* sig = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(x));
  if (regular) limbs_.insert(limbs_.end(), sig, sig + limbs_per_);
  else limbs_.insert(limbs_.end(), limbs_per_, mp_limb_t(0));
}

void AffineLogits::Packed::view(std::size_t i, __mpfr_struct& out) const {
  // MPFR reads the significand only (the view is never written), so the const storage is safe to lend.
  mpfr_custom_init_set(&out, kind_[i], exp_[i], prec_, const_cast<mp_limb_t*>(&limbs_[i * limbs_per_]));
}

AffineLogits::AffineLogits(const ScaledVector& a, const ScaledVector* s, mpfr_prec_t prec) {
  if (s && s->num.size() != a.num.size()) throw std::invalid_argument("AffineLogits: a and s differ in length");
  enclose_exact(alo_, a, MPFR_RNDD, prec);
  enclose_exact(ahi_, a, MPFR_RNDU, prec);
  if (s) {
    enclose_exact(slo_, *s, MPFR_RNDD, prec);
    enclose_exact(shi_, *s, MPFR_RNDU, prec);
  }
}

AffineLogits::AffineLogits(const ScaledBounds& a, const ScaledVector* s, mpfr_prec_t prec) {
  const std::size_t n = a.lo.size();
  if (a.hi.size() != n || (s && s->num.size() != n)) throw std::invalid_argument("AffineLogits: a and s differ in length");
  for (std::size_t k = 0; k < n; ++k)
    if (!std::isfinite(a.lo[k]) || !std::isfinite(a.hi[k]) || a.lo[k] > a.hi[k])
      throw std::invalid_argument("AffineLogits: bounds must be finite and ordered");
  // [lo, hi] * q: with q >= 0 the lower end is lo q rounded down; with q < 0 it is hi q (the ends swap).
  const bool neg = sgn(a.factor) < 0;
  // q in [q_lo, q_hi], enclosed once (a product by a rational is a division per value: the slow part).
  // x q for an exact x lies in [x (x >= 0 ? q_lo : q_hi), x (x >= 0 ? q_hi : q_lo)], each rounded outward.
  mpfr_t lo, hi, qlo, qhi;
  mpfr_inits2(prec, lo, hi, qlo, qhi, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_q(qlo, a.factor.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(qhi, a.factor.get_mpq_t(), MPFR_RNDU);
  for (std::size_t k = 0; k < n; ++k) {
    // Outward (exact from 53 bits on): the end that becomes the lower one after * q moves down.
    mpfr_set_d(lo, neg ? a.hi[k] : a.lo[k], neg ? MPFR_RNDU : MPFR_RNDD);
    mpfr_set_d(hi, neg ? a.lo[k] : a.hi[k], neg ? MPFR_RNDD : MPFR_RNDU);
    mpfr_mul(lo, lo, mpfr_sgn(lo) >= 0 ? qlo : qhi, MPFR_RNDD);
    mpfr_mul(hi, hi, mpfr_sgn(hi) >= 0 ? qhi : qlo, MPFR_RNDU);
    alo_.push(lo);
    ahi_.push(hi);
  }
  mpfr_clears(lo, hi, qlo, qhi, static_cast<mpfr_ptr>(nullptr));
  if (s) {
    enclose_exact(slo_, *s, MPFR_RNDD, prec);
    enclose_exact(shi_, *s, MPFR_RNDU, prec);
  }
}

bool AffineLogits::compact(const ScaledVector* s, const Integer* factor) {
  if (!dbl_.empty()) return true;
  const std::size_t n = alo_.size();
  const bool with_s = s && factor && sgn(*factor) != 0;
  if (slo_.size() > 0 && !with_s) {  // s must be zero: every numerator
    if (!s || s->num.size() != n) return false;
    for (const auto& x : s->num)
      if (sgn(x) != 0) return false;
  }
  if (with_s && s->num.size() != n) return false;
  std::vector<double> d(3 * n, 0.0);
  __mpfr_struct v;
  Integer q;
  for (std::size_t k = 0; k < n; ++k) {
    alo_.view(k, v), d[3 * k] = mpfr_get_d(&v, MPFR_RNDD);
    ahi_.view(k, v), d[3 * k + 1] = mpfr_get_d(&v, MPFR_RNDU);
    if (!std::isfinite(d[3 * k]) || !std::isfinite(d[3 * k + 1])) return false;
    if (with_s) {
      if (!mpz_divisible_p(s->num[k].get_mpz_t(), factor->get_mpz_t())) return false;
      mpz_divexact(q.get_mpz_t(), s->num[k].get_mpz_t(), factor->get_mpz_t());
      if (mpz_sizeinbase(q.get_mpz_t(), 2) > 53) return false;
      d[3 * k + 2] = q.get_d();  // exact: below 2^53
    }
  }
  Packed flo, fhi;
  if (with_s) {  // f = factor / s.den, enclosed at this object's precision
    mpfr_t t;
    mpfr_init2(t, std::max<mpfr_prec_t>(alo_.precision(), 53));
    const Rational f(*factor, s->den);
    mpfr_set_q(t, f.get_mpq_t(), MPFR_RNDD);
    flo.push(t);
    mpfr_set_q(t, f.get_mpq_t(), MPFR_RNDU);
    fhi.push(t);
    mpfr_clear(t);
  }
  dbl_ = std::move(d);
  dbl_s_ = with_s;
  alo_ = Packed();
  ahi_ = Packed();
  slo_ = std::move(flo);
  shi_ = std::move(fhi);
  return true;
}

bool AffineLogits::outward_doubles(double* alo, double* ahi, double* slo, double* shi) const {
  const std::size_t n = this->n();
  __mpfr_struct v;
  if (!dbl_.empty()) {  // compact: a's ends are stored; s_k = f v_k with f in [f_lo, f_hi] and v_k exact
    __mpfr_struct fl, fh;
    if (dbl_s_) slo_.view(0, fl), shi_.view(0, fh);
    mpfr_t t;
    mpfr_init2(t, 64);
    for (std::size_t k = 0; k < n; ++k) {
      alo[k] = dbl_[3 * k];
      ahi[k] = dbl_[3 * k + 1];
      const double x = dbl_[3 * k + 2];
      if (!dbl_s_ || x == 0) { slo[k] = shi[k] = 0; continue; }
      // x > 0: [f_lo x, f_hi x]; x < 0: [f_hi x, f_lo x] (each product rounded outward)
      mpfr_mul_d(t, x > 0 ? &fl : &fh, x, MPFR_RNDD);
      slo[k] = mpfr_get_d(t, MPFR_RNDD);
      mpfr_mul_d(t, x > 0 ? &fh : &fl, x, MPFR_RNDU);
      shi[k] = mpfr_get_d(t, MPFR_RNDU);
    }
    mpfr_clear(t);
  } else {
    const bool with_s = slo_.size() > 0;
    for (std::size_t k = 0; k < n; ++k) {
      alo_.view(k, v), alo[k] = mpfr_get_d(&v, MPFR_RNDD);
      ahi_.view(k, v), ahi[k] = mpfr_get_d(&v, MPFR_RNDU);
      if (with_s) {
        slo_.view(k, v), slo[k] = mpfr_get_d(&v, MPFR_RNDD);
        shi_.view(k, v), shi[k] = mpfr_get_d(&v, MPFR_RNDU);
      } else {
        slo[k] = shi[k] = 0;
      }
    }
  }
  for (std::size_t k = 0; k < n; ++k)
    if (!std::isfinite(alo[k]) || !std::isfinite(ahi[k]) || !std::isfinite(slo[k]) || !std::isfinite(shi[k])) return false;
  return true;
}

void AffineLogits::bounds(const Rational& c, mpfr_ptr lo, mpfr_ptr hi, std::size_t k, mpfr_ptr c_lo, mpfr_ptr c_hi,
                          mpfr_ptr tmp) const {
  if (!dbl_.empty()) {  // compact: a from outward-rounded doubles; c s = (c f) v with v_k an exact double
    mpfr_set_d(lo, dbl_[3 * k], MPFR_RNDD);  // exact (precision >= 53)
    mpfr_set_d(hi, dbl_[3 * k + 1], MPFR_RNDU);
    const double v = dbl_[3 * k + 2];
    if (!dbl_s_ || c == 0 || v == 0) return;
    __mpfr_struct fl, fh;
    slo_.view(0, fl);
    shi_.view(0, fh);
    // c f in [cf_lo, cf_hi] (c in [c_lo, c_hi], c_lo >= 0): cf_lo = f_lo (f_lo >= 0 ? c_lo : c_hi) rounded
    // down, cf_hi = f_hi (f_hi >= 0 ? c_hi : c_lo) rounded up. Times v > 0 the ends keep their roles; times
    // v < 0 they swap (the upper end of c f gives the lower end of the product).
    const bool pos = v > 0;
    if (pos) mpfr_mul(tmp, &fl, mpfr_sgn(&fl) >= 0 ? c_lo : c_hi, MPFR_RNDD);
    else mpfr_mul(tmp, &fh, mpfr_sgn(&fh) >= 0 ? c_hi : c_lo, MPFR_RNDU);
    mpfr_mul_d(tmp, tmp, v, MPFR_RNDD);
    mpfr_add(lo, lo, tmp, MPFR_RNDD);
    if (pos) mpfr_mul(tmp, &fh, mpfr_sgn(&fh) >= 0 ? c_hi : c_lo, MPFR_RNDU);
    else mpfr_mul(tmp, &fl, mpfr_sgn(&fl) >= 0 ? c_lo : c_hi, MPFR_RNDD);
    mpfr_mul_d(tmp, tmp, v, MPFR_RNDU);
    mpfr_add(hi, hi, tmp, MPFR_RNDU);
    return;
  }
  __mpfr_struct al, ah;
  alo_.view(k, al);
  ahi_.view(k, ah);
  mpfr_set(lo, &al, MPFR_RNDD);
  mpfr_set(hi, &ah, MPFR_RNDU);
  if (slo_.size() == 0 || c == 0) return;
  __mpfr_struct sl, sh;
  slo_.view(k, sl);
  shi_.view(k, sh);
  // c in [c_lo, c_hi] with c_lo >= 0 (set by the caller); s in [s_lo, s_hi]. For c >= 0:
  // min(c s) = s_lo * (s_lo >= 0 ? c_lo : c_hi), max(c s) = s_hi * (s_hi >= 0 ? c_hi : c_lo).
  mpfr_mul(tmp, &sl, mpfr_sgn(&sl) >= 0 ? c_lo : c_hi, MPFR_RNDD);
  mpfr_add(lo, lo, tmp, MPFR_RNDD);
  mpfr_mul(tmp, &sh, mpfr_sgn(&sh) >= 0 ? c_hi : c_lo, MPFR_RNDU);
  mpfr_add(hi, hi, tmp, MPFR_RNDU);
}

void ContextEnclosure::mix_affine(const AffineLogits& L, const Rational& c, double* centre, double* radius) const {
  if (L.n() != n_) throw std::invalid_argument("ContextEnclosure::mix_affine: size");
  if (c < 0) throw std::invalid_argument("ContextEnclosure::mix_affine: c must be >= 0");
  MixScratch& s = g_mix;
  s.ensure(n_, std::max<mpfr_prec_t>(prec_, 53));
  mpfr_set_q(s.pl, c.get_mpq_t(), MPFR_RNDD);  // c_lo (>= 0)
  mpfr_set_q(s.ph, c.get_mpq_t(), MPFR_RNDU);  // c_hi
  for (std::size_t k = 0; k < n_; ++k) L.bounds(c, &s.ll[k], &s.lh[k], k, s.pl, s.ph, s.t);
  alpha_from_logit_bounds(s, n_);
  mix_alpha(centre, radius);
}

// p = E^T alpha in double, midpoint-radius (docs/THEORY.md section 7's floating-point rules): alpha_j in
// [am_j +- ar_j] (from the MPFR bounds, rounded outward), E_jc in [em_jc +- er_jc]. Then
//   |p_c - sum_j em_jc am_j| <= sum_j (|em_jc| ar_j + er_jc (am_j + ar_j)),
// and the round-to-nearest sum fl(sum_j em_jc am_j) (n products, n - 1 additions, no FMA: the build
// disables contraction) is within gamma_n sum_j |em_jc| am_j + n eta of the exact sum. The two
// non-negative sums are themselves computed in round-to-nearest (at most n + 3 roundings per term chain)
// and inflated by 1/(1 - gamma_{n+3}) <= 1 + 2 gamma_{n+3}. Every bound step rounds upward (nextafter).
void ContextEnclosure::mix_alpha(double* centre, double* radius) const {
  using dbound::up;
  thread_local std::vector<double> am, ar, sa, sr, rowbuf;
  am.resize(n_);
  ar.resize(n_);
  rowbuf.resize(d_);
  for (std::size_t j = 0; j < n_; ++j) {
    const double lo = g_alo[j], hi = g_ahi[j];  // 0 <= lo <= hi <= 1
    const double m = 0.5 * lo + 0.5 * hi;  // any value in [lo, hi] will do; this one is (lo + hi) / 2 rounded
    am[j] = m;
    ar[j] = std::max(up(hi - m), up(m - lo));
  }
  std::fill(centre, centre + d_, 0.0);
  sa.assign(d_, 0.0);
  sr.assign(d_, 0.0);
  // Tokens whose weight alpha_j <= am_j + ar_j is below 2^-500 (a saturated softmax) are not mixed in:
  // their whole contribution |E_jc| alpha_j is at most wtiny * colabs_c with wtiny = max (am_j + ar_j)
  // over them and colabs_c >= sum over ALL tokens of |em_jc| + er_jc (column_bounds, once per context),
  // added to the radius below. (Multiplying by such weights would run on subnormal numbers, at a hundred
  // times the cost, and even reading those tokens is most of the work when the softmax is saturated.)
  const double kTiny = std::ldexp(1.0, -500);
  double wtiny = 0;
  bool any_tiny = false;
  for (std::size_t j = 0; j < n_; ++j) {
    const double a = am[j], r = ar[j], ar2 = up(a + r);  // >= am_j + ar_j
    if (ar2 < kTiny) {
      if (ar2 == 0) continue;  // alpha_j = 0 exactly
      any_tiny = true;
      wtiny = std::max(wtiny, ar2);
      continue;
    }
    const double* em = row(j, rowbuf.data());
    if (er_.empty()) {  // exact entries (er = 0)
      for (std::size_t c = 0; c < d_; ++c) {
        centre[c] += em[c] * a;
        sa[c] += std::fabs(em[c]) * a;
        sr[c] += std::fabs(em[c]) * r;
      }
      continue;
    }
    const double* er = &er_[j * d_];
    for (std::size_t c = 0; c < d_; ++c) {
      centre[c] += em[c] * a;
      sa[c] += std::fabs(em[c]) * a;
      sr[c] += std::fabs(em[c]) * r + er[c] * ar2;
    }
  }
  const double eta = std::ldexp(1.0, -1074);
  const double gam = dbound::gamma_up_num(double(n_ + 3));  // gamma_{n+3} >= gamma_n
  const double infl = up(1.0 + up(2.0 * gam));
  const double tiny = up(double(4 * n_ + 8) * eta);
  for (std::size_t c = 0; c < d_; ++c) {
    const double sa_up = up(sa[c] * infl), sr_up = up(sr[c] * infl);
    radius[c] = up(up(sr_up + up(gam * sa_up)) + tiny);
    if (any_tiny) radius[c] = up(radius[c] + up(up(wtiny * colabs_[c]) + eta));  // the tokens left out
  }
}

void ContextEnclosure::token(std::size_t j, double* centre, double* radius) const {
  const double* em = row(j, centre);  // into centre itself when shared
  for (std::size_t c = 0; c < d_; ++c) {
    centre[c] = em[c];
    radius[c] = er_.empty() ? 0.0 : er_[j * d_ + c];
  }
}

}  // namespace memcert

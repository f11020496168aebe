// Kind "model": the MPFR interval arithmetic (model_enclosure.hpp). Every lower end is rounded down
// (MPFR_RNDD), every upper end up (MPFR_RNDU); weights and data enter exactly (doubles, precision >= 53).
#include <algorithm>

#include "kinds/model/model_enclosure.hpp"

namespace memcert_checker::model_kind {

void MpfrVec::clear() {
  for (auto& x : lo_) mpfr_clear(&x);
  for (auto& x : hi_) mpfr_clear(&x);
  lo_.clear();
  hi_.clear();
}
void MpfrVec::resize(std::size_t n, mpfr_prec_t prec) {
  if (n != lo_.size() || prec != prec_) {
    clear();
    lo_.resize(n);
    hi_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      mpfr_init2(&lo_[i], prec);
      mpfr_init2(&hi_[i], prec);
    }
    prec_ = prec;
  }
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_set_zero(&lo_[i], 1);
    mpfr_set_zero(&hi_[i], 1);
  }
}

namespace {
// Scratch of one thread at one precision.
struct Tmp {
  mpfr_t t, u, al, ah, p;
  mpfr_prec_t prec;
  explicit Tmp(mpfr_prec_t bits) : prec(bits) { mpfr_inits2(bits, t, u, al, ah, p, static_cast<mpfr_ptr>(nullptr)); }
  ~Tmp() { mpfr_clears(t, u, al, ah, p, static_cast<mpfr_ptr>(nullptr)); }
  Tmp(const Tmp&) = delete;
  Tmp& operator=(const Tmp&) = delete;
};
// [al, ah] += [alo, ahi] x [blo, bhi]: the four corner products, the smallest rounded down, the largest up.
void mul_add(mpfr_ptr al, mpfr_ptr ah, mpfr_srcptr alo, mpfr_srcptr ahi, mpfr_srcptr blo, mpfr_srcptr bhi, Tmp& s) {
  if (mpfr_sgn(alo) >= 0 && mpfr_sgn(blo) >= 0) {  // the common case of non-negative factors
    mpfr_mul(s.t, alo, blo, MPFR_RNDD);
    mpfr_add(al, al, s.t, MPFR_RNDD);
    mpfr_mul(s.t, ahi, bhi, MPFR_RNDU);
    mpfr_add(ah, ah, s.t, MPFR_RNDU);
    return;
  }
  mpfr_srcptr xs[2] = {alo, ahi}, ys[2] = {blo, bhi};
  mpfr_set_inf(s.t, 1);
  mpfr_set_inf(s.u, -1);
  for (auto x : xs)
    for (auto y : ys) {
      mpfr_mul(s.p, x, y, MPFR_RNDD);
      mpfr_min(s.t, s.t, s.p, MPFR_RNDD);
      mpfr_mul(s.p, x, y, MPFR_RNDU);
      mpfr_max(s.u, s.u, s.p, MPFR_RNDU);
    }
  mpfr_add(al, al, s.t, MPFR_RNDD);
  mpfr_add(ah, ah, s.u, MPFR_RNDU);
}
bool all_finite(const MpfrVec& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!mpfr_number_p(v.lo(i)) || !mpfr_number_p(v.hi(i)) || mpfr_greater_p(v.lo(i), v.hi(i))) return false;
  return true;
}
}  // namespace

// Phi(x) = (1 + erf(x / sqrt 2)) / 2 is increasing: [Phi(xlo), Phi(xhi)] at the precision of plo / phi.
bool phi_bounds(mpfr_srcptr xlo, mpfr_srcptr xhi, mpfr_ptr plo, mpfr_ptr phi) {
  const mpfr_prec_t p = mpfr_get_prec(plo);
  mpfr_t s2l, s2h;
  mpfr_inits2(p, s2l, s2h, static_cast<mpfr_ptr>(nullptr));
  mpfr_sqrt_ui(s2l, 2, MPFR_RNDD);
  mpfr_sqrt_ui(s2h, 2, MPFR_RNDU);
  mpfr_div(plo, xlo, mpfr_sgn(xlo) >= 0 ? s2h : s2l, MPFR_RNDD);  // <= xlo / sqrt 2
  mpfr_div(phi, xhi, mpfr_sgn(xhi) >= 0 ? s2l : s2h, MPFR_RNDU);  // >= xhi / sqrt 2
  mpfr_erf(plo, plo, MPFR_RNDD);
  mpfr_erf(phi, phi, MPFR_RNDU);
  mpfr_add_ui(plo, plo, 1, MPFR_RNDD);
  mpfr_add_ui(phi, phi, 1, MPFR_RNDU);
  mpfr_div_2ui(plo, plo, 1, MPFR_RNDD);
  mpfr_div_2ui(phi, phi, 1, MPFR_RNDU);
  mpfr_clears(s2l, s2h, static_cast<mpfr_ptr>(nullptr));
  return mpfr_number_p(plo) && mpfr_number_p(phi);
}

void MpfrEnc::set_exact(Vec& v, const double* x, std::size_t n) const {
  v.resize(n, prec);
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_set_d(v.lo(i), x[i], MPFR_RNDD);  // exact: prec >= 53
    mpfr_set_d(v.hi(i), x[i], MPFR_RNDU);
  }
}
void MpfrEnc::resize(Mat& M, std::size_t rows, std::size_t cols) const {
  M.rows = rows;
  M.cols = cols;
  M.v.resize(rows * cols, prec);
}
bool MpfrEnc::set_row(Mat& M, std::size_t i, const Vec& v) const {
  for (std::size_t c = 0; c < M.cols; ++c) {
    mpfr_set(M.v.lo(i * M.cols + c), v.lo(c), MPFR_RNDD);
    mpfr_set(M.v.hi(i * M.cols + c), v.hi(c), MPFR_RNDU);
  }
  return true;
}
void MpfrEnc::row(const Mat& M, std::size_t i, Vec& v) const {
  v.resize(M.cols, prec);
  for (std::size_t c = 0; c < M.cols; ++c) {
    mpfr_set(v.lo(c), M.v.lo(i * M.cols + c), MPFR_RNDD);
    mpfr_set(v.hi(c), M.v.hi(i * M.cols + c), MPFR_RNDU);
  }
}

void MpfrEnc::slice(const Vec& v, std::size_t off, std::size_t len, Vec& out) const {
  out.resize(len, prec);
  for (std::size_t i = 0; i < len; ++i) {
    mpfr_set(out.lo(i), v.lo(off + i), MPFR_RNDD);
    mpfr_set(out.hi(i), v.hi(off + i), MPFR_RNDU);
  }
}
void MpfrEnc::place(Vec& dst, std::size_t off, const Vec& src) const {
  for (std::size_t i = 0; i < src.size(); ++i) {
    mpfr_set(dst.lo(off + i), src.lo(i), MPFR_RNDD);
    mpfr_set(dst.hi(off + i), src.hi(i), MPFR_RNDU);
  }
}

bool MpfrEnc::mv_exact(const double* W, std::size_t rows, std::size_t cols, const Vec& x, Vec& y) const {
  y.resize(rows, prec);
  Tmp s(prec);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k) {
      const double w = W[i * cols + k];
      if (w == 0) continue;
      mpfr_mul_d(s.t, w > 0 ? x.lo(k) : x.hi(k), w, MPFR_RNDD);
      mpfr_add(y.lo(i), y.lo(i), s.t, MPFR_RNDD);
      mpfr_mul_d(s.t, w > 0 ? x.hi(k) : x.lo(k), w, MPFR_RNDU);
      mpfr_add(y.hi(i), y.hi(i), s.t, MPFR_RNDU);
    }
  return all_finite(y);
}

bool MpfrEnc::mv(const Mat& M, std::size_t j0, std::size_t j1, const Vec& x, Vec& y) const {
  y.resize(j1 - j0, prec);
  Tmp s(prec);
  for (std::size_t j = j0; j < j1; ++j)
    for (std::size_t k = 0; k < M.cols; ++k)
      mul_add(y.lo(j - j0), y.hi(j - j0), M.v.lo(j * M.cols + k), M.v.hi(j * M.cols + k), x.lo(k), x.hi(k), s);
  return all_finite(y);
}

bool MpfrEnc::mix(const Mat& M, std::size_t j0, std::size_t j1, const Vec& alpha, Vec& p) const {
  p.resize(M.cols, prec);
  Tmp s(prec);
  for (std::size_t j = j0; j < j1; ++j)
    for (std::size_t c = 0; c < M.cols; ++c)
      mul_add(p.lo(c), p.hi(c), alpha.lo(j - j0), alpha.hi(j - j0), M.v.lo(j * M.cols + c), M.v.hi(j * M.cols + c), s);
  return all_finite(p);
}

bool MpfrEnc::add(Vec& y, const Vec& x) const {
  for (std::size_t i = 0; i < y.size(); ++i) {
    mpfr_add(y.lo(i), y.lo(i), x.lo(i), MPFR_RNDD);
    mpfr_add(y.hi(i), y.hi(i), x.hi(i), MPFR_RNDU);
  }
  return all_finite(y);
}
bool MpfrEnc::add_exact(Vec& y, const double* b) const {
  for (std::size_t i = 0; i < y.size(); ++i) {
    mpfr_add_d(y.lo(i), y.lo(i), b[i], MPFR_RNDD);
    mpfr_add_d(y.hi(i), y.hi(i), b[i], MPFR_RNDU);
  }
  return all_finite(y);
}

bool MpfrEnc::scale_inv_sqrt(Vec& y, std::size_t k) const {
  Tmp s(prec);
  mpfr_sqrt_ui(s.al, static_cast<unsigned long>(k), MPFR_RNDD);
  mpfr_sqrt_ui(s.ah, static_cast<unsigned long>(k), MPFR_RNDU);
  for (std::size_t i = 0; i < y.size(); ++i) {
    mpfr_div(y.lo(i), y.lo(i), mpfr_sgn(y.lo(i)) >= 0 ? s.ah : s.al, MPFR_RNDD);
    mpfr_div(y.hi(i), y.hi(i), mpfr_sgn(y.hi(i)) >= 0 ? s.al : s.ah, MPFR_RNDU);
  }
  return all_finite(y);
}

// alpha_j = exp(s_j - c) / sum_k exp(s_k - c), c the largest upper end (every exponent <= 0).
bool MpfrEnc::softmax(Vec& v) const {
  const std::size_t n = v.size();
  if (n == 0 || !all_finite(v)) return false;
  Tmp s(prec);
  mpfr_set(s.u, v.hi(0), MPFR_RNDU);
  for (std::size_t j = 1; j < n; ++j) mpfr_max(s.u, s.u, v.hi(j), MPFR_RNDU);
  mpfr_set_zero(s.al, 1);
  mpfr_set_zero(s.ah, 1);
  for (std::size_t j = 0; j < n; ++j) {
    mpfr_sub(v.lo(j), v.lo(j), s.u, MPFR_RNDD);
    mpfr_exp(v.lo(j), v.lo(j), MPFR_RNDD);
    mpfr_sub(v.hi(j), v.hi(j), s.u, MPFR_RNDU);
    mpfr_exp(v.hi(j), v.hi(j), MPFR_RNDU);
    mpfr_add(s.al, s.al, v.lo(j), MPFR_RNDD);
    mpfr_add(s.ah, s.ah, v.hi(j), MPFR_RNDU);
  }
  if (!(mpfr_sgn(s.al) > 0)) return false;
  for (std::size_t j = 0; j < n; ++j) {
    mpfr_div(v.lo(j), v.lo(j), s.ah, MPFR_RNDD);
    mpfr_div(v.hi(j), v.hi(j), s.al, MPFR_RNDU);
    if (mpfr_cmp_ui(v.hi(j), 1) > 0) mpfr_set_ui(v.hi(j), 1, MPFR_RNDU);
  }
  return all_finite(v);
}

bool MpfrEnc::gelu(Vec& y) const {
  Tmp s(prec);
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!phi_bounds(y.lo(i), y.hi(i), s.al, s.ah)) return false;
    mpfr_set_zero(s.t, 1);
    mpfr_set_zero(s.u, 1);
    // [lo, hi] x [Phi_lo, Phi_hi] accumulated into [t, u] (from zero), then stored
    mpfr_t lo, hi;
    mpfr_inits2(prec, lo, hi, static_cast<mpfr_ptr>(nullptr));
    mpfr_set_zero(lo, 1);
    mpfr_set_zero(hi, 1);
    mul_add(lo, hi, y.lo(i), y.hi(i), s.al, s.ah, s);
    mpfr_set(y.lo(i), lo, MPFR_RNDD);
    mpfr_set(y.hi(i), hi, MPFR_RNDU);
    mpfr_clears(lo, hi, static_cast<mpfr_ptr>(nullptr));
  }
  return all_finite(y);
}

bool MpfrEnc::class_margin(const double* W, const double* bias, std::size_t C, std::size_t y, const Vec& o,
                           Bounds& out) const {
  const std::size_t n = o.size();
  if (C < 2 || y >= C || !all_finite(o)) return false;
  Tmp s(prec);
  mpfr_t dl, dh, ml, mh;
  mpfr_inits2(prec, dl, dh, ml, mh, static_cast<mpfr_ptr>(nullptr));
  bool first = true;
  for (std::size_t c = 0; c < C; ++c) {
    if (c == y) continue;
    mpfr_set_zero(s.al, 1);
    mpfr_set_zero(s.ah, 1);
    for (std::size_t i = 0; i < n; ++i) {
      mpfr_set_d(dl, W[y * n + i], MPFR_RNDD);
      mpfr_sub_d(dl, dl, W[c * n + i], MPFR_RNDD);
      mpfr_set_d(dh, W[y * n + i], MPFR_RNDU);
      mpfr_sub_d(dh, dh, W[c * n + i], MPFR_RNDU);
      mul_add(s.al, s.ah, dl, dh, o.lo(i), o.hi(i), s);
    }
    if (bias) {
      mpfr_set_d(dl, bias[y], MPFR_RNDD);
      mpfr_sub_d(dl, dl, bias[c], MPFR_RNDD);
      mpfr_set_d(dh, bias[y], MPFR_RNDU);
      mpfr_sub_d(dh, dh, bias[c], MPFR_RNDU);
      mpfr_add(s.al, s.al, dl, MPFR_RNDD);
      mpfr_add(s.ah, s.ah, dh, MPFR_RNDU);
    }
    if (first || mpfr_less_p(s.al, ml)) mpfr_set(ml, s.al, MPFR_RNDD);
    if (first || mpfr_less_p(s.ah, mh)) mpfr_set(mh, s.ah, MPFR_RNDU);
    first = false;
  }
  const bool ok = mpfr_number_p(ml) && mpfr_number_p(mh);
  if (ok) {  // the ends exactly
    mpfr_get_q(out.lo.get_mpq_t(), ml);
    mpfr_get_q(out.hi.get_mpq_t(), mh);
  }
  mpfr_clears(dl, dh, ml, mh, static_cast<mpfr_ptr>(nullptr));
  return ok;
}

bool MpfrEnc::abs_error(const Vec& f, const std::vector<mpq_class>& target, Bounds& out) const {
  if (f.size() != target.size() || !all_finite(f)) return false;
  Tmp s(prec);
  mpfr_set_zero(s.al, 1);
  mpfr_set_zero(s.ah, 1);
  for (std::size_t c = 0; c < f.size(); ++c) {
    mpfr_sub_q(s.t, f.lo(c), target[c].get_mpq_t(), MPFR_RNDD);  // lower end of f - y
    mpfr_sub_q(s.u, f.hi(c), target[c].get_mpq_t(), MPFR_RNDU);  // upper end
    // |f - y| in [max(0, t, -u), max(-t, u)]
    if (mpfr_sgn(s.t) > 0) mpfr_max(s.al, s.al, s.t, MPFR_RNDD);
    else if (mpfr_sgn(s.u) < 0) { mpfr_neg(s.u, s.u, MPFR_RNDD); mpfr_max(s.al, s.al, s.u, MPFR_RNDD); mpfr_neg(s.u, s.u, MPFR_RNDU); }
    mpfr_neg(s.t, s.t, MPFR_RNDU);
    mpfr_max(s.ah, s.ah, s.t, MPFR_RNDU);
    mpfr_max(s.ah, s.ah, s.u, MPFR_RNDU);
  }
  if (!mpfr_number_p(s.al) || !mpfr_number_p(s.ah)) return false;
  mpfr_get_q(out.lo.get_mpq_t(), s.al);  // the ends exactly
  mpfr_get_q(out.hi.get_mpq_t(), s.ah);
  return true;
}

}  // namespace memcert_checker::model_kind

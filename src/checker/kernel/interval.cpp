// MPFR interval arithmetic with outward (directed) rounding; see interval.hpp for the invariant.
#include "kernel/interval.hpp"

#include <algorithm>

namespace memcert_checker {

Interval::Interval(mpfr_prec_t prec) {
  mpfr_init2(lo_, prec);
  mpfr_init2(hi_, prec);
  mpfr_set_zero(lo_, 1);
  mpfr_set_zero(hi_, 1);
}
Interval::Interval(const mpq_class& q, mpfr_prec_t prec) : Interval(q, q, prec) {}
Interval::Interval(const mpq_class& lo, const mpq_class& hi, mpfr_prec_t prec) {
  mpfr_init2(lo_, prec);
  mpfr_init2(hi_, prec);
  mpfr_set_q(lo_, lo.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(hi_, hi.get_mpq_t(), MPFR_RNDU);
}
Interval::Interval(const Interval& o) {
  mpfr_init2(lo_, mpfr_get_prec(o.lo_));
  mpfr_init2(hi_, mpfr_get_prec(o.hi_));
  mpfr_set(lo_, o.lo_, MPFR_RNDD);
  mpfr_set(hi_, o.hi_, MPFR_RNDU);
}
Interval& Interval::operator=(const Interval& o) {
  if (this != &o) {
    mpfr_set_prec(lo_, mpfr_get_prec(o.lo_));
    mpfr_set_prec(hi_, mpfr_get_prec(o.hi_));
    mpfr_set(lo_, o.lo_, MPFR_RNDD);
    mpfr_set(hi_, o.hi_, MPFR_RNDU);
  }
  return *this;
}
Interval& Interval::operator=(Interval&& o) noexcept {
  mpfr_swap(lo_, o.lo_);  // swaps precisions too; `o` stays a valid interval for its destructor
  mpfr_swap(hi_, o.hi_);
  return *this;
}
Interval::~Interval() {
  mpfr_clear(lo_);
  mpfr_clear(hi_);
}

void Interval::set_entire() {
  mpfr_set_inf(lo_, -1);
  mpfr_set_inf(hi_, 1);
}
void Interval::set_nan() {
  mpfr_set_nan(lo_);
  mpfr_set_nan(hi_);
}

bool Interval::is_valid() const { return !mpfr_nan_p(lo_) && !mpfr_nan_p(hi_) && mpfr_lessequal_p(lo_, hi_); }
bool Interval::contains(const mpq_class& q) const {
  return is_valid() && mpfr_cmp_q(lo_, q.get_mpq_t()) <= 0 && mpfr_cmp_q(hi_, q.get_mpq_t()) >= 0;
}
bool Interval::is_positive() const { return is_valid() && mpfr_sgn(lo_) > 0; }
bool Interval::lower_above(const mpq_class& q) const { return is_valid() && mpfr_cmp_q(lo_, q.get_mpq_t()) > 0; }
bool Interval::upper_below(const mpq_class& q) const { return is_valid() && mpfr_cmp_q(hi_, q.get_mpq_t()) < 0; }

// The result precision is the larger of the operands' precisions.
static mpfr_prec_t prec2(const Interval& a, const Interval& b) { return std::max(a.precision(), b.precision()); }

Interval operator+(const Interval& a, const Interval& b) {
  Interval r(prec2(a, b));
  mpfr_add(r.lo_, a.lo_, b.lo_, MPFR_RNDD);
  mpfr_add(r.hi_, a.hi_, b.hi_, MPFR_RNDU);
  if (!a.is_valid() || !b.is_valid() || !r.is_valid()) r.set_nan();
  return r;
}

Interval operator-(const Interval& a, const Interval& b) {
  Interval r(prec2(a, b));
  mpfr_sub(r.lo_, a.lo_, b.hi_, MPFR_RNDD);
  mpfr_sub(r.hi_, a.hi_, b.lo_, MPFR_RNDU);
  if (!a.is_valid() || !b.is_valid() || !r.is_valid()) r.set_nan();
  return r;
}

Interval operator*(const Interval& a, const Interval& b) {
  Interval r(prec2(a, b));
  if (!a.is_valid() || !b.is_valid()) { r.set_nan(); return r; }
  // The product's range is spanned by the four end-point products; each is computed twice, rounded
  // down for the minimum and up for the maximum.
  mpfr_t t;
  mpfr_init2(t, r.precision());
  mpfr_srcptr xs[2] = {a.lo_, a.hi_}, ys[2] = {b.lo_, b.hi_};
  mpfr_set_inf(r.lo_, 1);
  mpfr_set_inf(r.hi_, -1);
  bool nan = false;
  for (auto x : xs)
    for (auto y : ys) {
      mpfr_mul(t, x, y, MPFR_RNDD);
      nan |= mpfr_nan_p(t) != 0;  // 0 * inf
      mpfr_min(r.lo_, r.lo_, t, MPFR_RNDD);
      mpfr_mul(t, x, y, MPFR_RNDU);
      mpfr_max(r.hi_, r.hi_, t, MPFR_RNDU);
    }
  mpfr_clear(t);
  if (nan) r.set_entire();
  return r;
}

Interval operator/(const Interval& a, const Interval& b) {
  Interval r(prec2(a, b));
  if (!a.is_valid() || !b.is_valid()) { r.set_nan(); return r; }
  if (mpfr_sgn(b.lo_) <= 0 && mpfr_sgn(b.hi_) >= 0) { r.set_entire(); return r; }  // 0 in b
  // 1/b = [1/hi, 1/lo] for b not containing 0; rounded outward, then multiplied.
  Interval inv(b.precision());
  mpfr_ui_div(inv.lo_, 1, b.hi_, MPFR_RNDD);
  mpfr_ui_div(inv.hi_, 1, b.lo_, MPFR_RNDU);
  return a * inv;
}

Interval exp(const Interval& a) {  // increasing
  Interval r(a.precision());
  if (!a.is_valid()) { r.set_nan(); return r; }
  mpfr_exp(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_exp(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval log(const Interval& a) {  // increasing on (0, inf); undefined otherwise
  Interval r(a.precision());
  if (!a.is_valid() || mpfr_sgn(a.lo_) <= 0) { r.set_nan(); return r; }
  mpfr_log(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_log(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval sqrt(const Interval& a) {  // increasing on [0, inf); undefined for negative values
  Interval r(a.precision());
  if (!a.is_valid() || mpfr_sgn(a.lo_) < 0) { r.set_nan(); return r; }
  mpfr_sqrt(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_sqrt(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

}  // namespace memcert_checker

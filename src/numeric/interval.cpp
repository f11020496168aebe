// MPFR intervals with outward (directed) rounding: lo rounded down, hi rounded up, so the exact real
// result of every operation lies in [lo, hi].
#include "memcert/numeric/interval.hpp"

#include <stdexcept>

namespace memcert {

namespace {
thread_local mpfr_prec_t g_prec = 128;
}

void Interval::set_default_precision(mpfr_prec_t bits) { g_prec = bits; }
mpfr_prec_t Interval::default_precision() { return g_prec; }

Interval::Interval(PrecTag, mpfr_prec_t prec) {
  mpfr_init2(lo_, prec);
  mpfr_init2(hi_, prec);
}

Interval::Interval() : Interval(PrecTag{}, g_prec) {
  mpfr_set_zero(lo_, 1);
  mpfr_set_zero(hi_, 1);
}

Interval::Interval(const Rational& q) : Interval(PrecTag{}, g_prec) {
  mpfr_set_q(lo_, q.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(hi_, q.get_mpq_t(), MPFR_RNDU);
}

Interval::Interval(const Rational& lo, const Rational& hi) : Interval(PrecTag{}, g_prec) {
  if (lo > hi) throw std::invalid_argument("Interval: lo > hi");
  mpfr_set_q(lo_, lo.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(hi_, hi.get_mpq_t(), MPFR_RNDU);
}

Interval::Interval(const Interval& o) : Interval(PrecTag{}, mpfr_get_prec(o.lo_)) {
  mpfr_set(lo_, o.lo_, MPFR_RNDD);
  mpfr_set(hi_, o.hi_, MPFR_RNDU);
}

Interval::Interval(Interval&& o) noexcept : Interval(o) {}

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
  mpfr_swap(lo_, o.lo_);
  mpfr_swap(hi_, o.hi_);
  return *this;
}

Interval::~Interval() {
  mpfr_clear(lo_);
  mpfr_clear(hi_);
}

Rational Interval::lower() const {
  Rational q;
  mpfr_get_q(q.get_mpq_t(), lo_);
  return q;
}
Rational Interval::upper() const {
  Rational q;
  mpfr_get_q(q.get_mpq_t(), hi_);
  return q;
}
Rational Interval::midpoint() const { return (lower() + upper()) / 2; }
Rational Interval::radius() const { return (upper() - lower()) / 2; }
bool Interval::contains(const Rational& q) const { return lower() <= q && q <= upper(); }
double Interval::lower_double_down() const { return mpfr_get_d(lo_, MPFR_RNDD); }
double Interval::upper_double_up() const { return mpfr_get_d(hi_, MPFR_RNDU); }

std::string Interval::to_string() const {
  char buf[128];
  mpfr_snprintf(buf, sizeof buf, "[%.10RDe, %.10RUe]", lo_, hi_);
  return buf;
}

static mpfr_prec_t prec_of(const Interval& a, const Interval& b) {
  return std::max(mpfr_get_prec(a.lo()), mpfr_get_prec(b.lo()));
}

Interval operator+(const Interval& a, const Interval& b) {
  Interval r;
  mpfr_set_prec(r.lo_, prec_of(a, b));
  mpfr_set_prec(r.hi_, prec_of(a, b));
  mpfr_add(r.lo_, a.lo_, b.lo_, MPFR_RNDD);
  mpfr_add(r.hi_, a.hi_, b.hi_, MPFR_RNDU);
  return r;
}

Interval operator-(const Interval& a, const Interval& b) {
  Interval r;
  mpfr_set_prec(r.lo_, prec_of(a, b));
  mpfr_set_prec(r.hi_, prec_of(a, b));
  mpfr_sub(r.lo_, a.lo_, b.hi_, MPFR_RNDD);
  mpfr_sub(r.hi_, a.hi_, b.lo_, MPFR_RNDU);
  return r;
}

// [min, max] of op(x, y) over the endpoint pairs, each product/quotient rounded in its direction: the
// exact range of a monotone-in-each-argument operation on a box (mul everywhere, div with 0 not in b).
Interval endpoint_extremes(const Interval& a, const Interval& b,
                                  int (*op)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t)) {
  mpfr_prec_t p = prec_of(a, b);
  mpfr_t t;
  mpfr_init2(t, p);
  Interval r;
  mpfr_set_prec(r.lo_, p);
  mpfr_set_prec(r.hi_, p);
  const mpfr_srcptr xs[2] = {a.lo_, a.hi_}, ys[2] = {b.lo_, b.hi_};
  bool first = true;
  for (auto x : xs)
    for (auto y : ys) {
      op(t, x, y, MPFR_RNDD);
      if (first || mpfr_less_p(t, r.lo_)) mpfr_set(r.lo_, t, MPFR_RNDD);
      op(t, x, y, MPFR_RNDU);
      if (first || mpfr_greater_p(t, r.hi_)) mpfr_set(r.hi_, t, MPFR_RNDU);
      first = false;
    }
  mpfr_clear(t);
  return r;
}

Interval operator*(const Interval& a, const Interval& b) { return endpoint_extremes(a, b, mpfr_mul); }

Interval operator/(const Interval& a, const Interval& b) {
  if (mpfr_sgn(b.lo_) <= 0 && mpfr_sgn(b.hi_) >= 0) throw std::domain_error("Interval: division by an interval containing 0");
  return endpoint_extremes(a, b, mpfr_div);
}

Interval interval_exp(const Interval& a) {  // exp is increasing
  Interval r(Interval::PrecTag{}, mpfr_get_prec(a.lo_));
  mpfr_exp(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_exp(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval interval_erf(const Interval& a) {  // erf is increasing
  Interval r(Interval::PrecTag{}, mpfr_get_prec(a.lo_));
  mpfr_erf(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_erf(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval interval_log(const Interval& a) {  // log is increasing on (0, inf)
  if (mpfr_sgn(a.lo_) <= 0) throw std::domain_error("Interval: log of a non-positive interval");
  Interval r(Interval::PrecTag{}, mpfr_get_prec(a.lo_));
  mpfr_log(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_log(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval interval_sqrt(const Interval& a) {
  if (mpfr_sgn(a.lo_) < 0) throw std::domain_error("Interval: sqrt of a negative interval");
  Interval r(Interval::PrecTag{}, mpfr_get_prec(a.lo_));
  mpfr_sqrt(r.lo_, a.lo_, MPFR_RNDD);
  mpfr_sqrt(r.hi_, a.hi_, MPFR_RNDU);
  return r;
}

Interval interval_max(const Interval& a, const Interval& b) {
  Interval r(Interval::PrecTag{}, prec_of(a, b));
  mpfr_max(r.lo_, a.lo_, b.lo_, MPFR_RNDD);
  mpfr_max(r.hi_, a.hi_, b.hi_, MPFR_RNDU);
  return r;
}

Interval interval_hull(const Interval& a, const Interval& b) {
  Interval r(Interval::PrecTag{}, prec_of(a, b));
  mpfr_min(r.lo_, a.lo_, b.lo_, MPFR_RNDD);
  mpfr_max(r.hi_, a.hi_, b.hi_, MPFR_RNDU);
  return r;
}

}  // namespace memcert

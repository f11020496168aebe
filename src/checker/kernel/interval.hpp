#pragma once
// A minimal interval type over MPFR with directed rounding, for enclosures the checker must bound
// (softmax, exp, log, sqrt). Invariant: the true value lies in [lo, hi]. Every operation rounds the
// lower end down (MPFR_RNDD) and the upper end up (MPFR_RNDU), so the invariant is preserved.
// An operation whose result is unbounded or undefined (division by an interval containing 0, log of
// a non-positive number) yields the "entire" interval [-inf, +inf] or [NaN, NaN]; predicates on such
// an interval (is_positive, upper_below, ...) answer false, so nothing is certified from it.
#include <gmpxx.h>
#include <mpfr.h>

namespace memcert_checker {

class Interval {
 public:
  static constexpr mpfr_prec_t kDefaultPrecision = 128;

  explicit Interval(mpfr_prec_t prec = kDefaultPrecision);          // [0, 0]
  Interval(const mpq_class& q, mpfr_prec_t prec = kDefaultPrecision);  // the tightest enclosure of q
  Interval(const mpq_class& lo, const mpq_class& hi, mpfr_prec_t prec = kDefaultPrecision);
  Interval(const Interval& o);
  Interval& operator=(const Interval& o);
  Interval& operator=(Interval&& o) noexcept;  // swaps the MPFR values: no allocation
  ~Interval();

  mpfr_srcptr lo() const { return lo_; }
  mpfr_srcptr hi() const { return hi_; }
  mpfr_prec_t precision() const { return mpfr_get_prec(lo_); }

  bool is_valid() const;                       // no NaN end and lo <= hi
  bool contains(const mpq_class& q) const;     // lo <= q <= hi (exact comparison)
  bool is_positive() const;                    // lo > 0
  bool lower_above(const mpq_class& q) const;  // lo > q: every value in the interval exceeds q
  bool upper_below(const mpq_class& q) const;  // hi < q: every value in the interval is below q

  friend Interval operator+(const Interval& a, const Interval& b);
  friend Interval operator-(const Interval& a, const Interval& b);
  friend Interval operator*(const Interval& a, const Interval& b);
  friend Interval operator/(const Interval& a, const Interval& b);
  friend Interval exp(const Interval& a);
  friend Interval log(const Interval& a);
  friend Interval sqrt(const Interval& a);

 private:
  mpfr_t lo_, hi_;
  void set_entire();
  void set_nan();
};

}  // namespace memcert_checker

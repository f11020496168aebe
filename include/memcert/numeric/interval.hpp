#pragma once
// Rigorous real intervals [lo, hi] on MPFR with directed rounding (Arb's rule: every result is an
// enclosure of the exact value). Endpoints are MPFR numbers, i.e. exact dyadic rationals.
#include <mpfr.h>

#include <string>

#include "memcert/numeric/rational.hpp"

namespace memcert {

class Interval {
 public:
  // Working precision in bits for new intervals (default 128). Thread-local.
  static void set_default_precision(mpfr_prec_t bits);
  static mpfr_prec_t default_precision();
  // The working precision set for a scope and restored after it (it is thread-local: a task sets its own
  // and leaves the thread as it found it for the next).
  struct PrecisionScope {
    mpfr_prec_t saved;
    explicit PrecisionScope(mpfr_prec_t bits) : saved(default_precision()) { set_default_precision(bits); }
    ~PrecisionScope() { set_default_precision(saved); }
    PrecisionScope(const PrecisionScope&) = delete;
    PrecisionScope& operator=(const PrecisionScope&) = delete;
  };

  Interval();                                   // [0, 0]
  explicit Interval(const Rational& q);         // tightest enclosure of q at the precision
  Interval(const Rational& lo, const Rational& hi);  // outward-rounded [lo, hi]; requires lo <= hi
  Interval(const Interval&);
  Interval(Interval&&) noexcept;
  Interval& operator=(const Interval&);
  Interval& operator=(Interval&&) noexcept;
  ~Interval();

  Rational lower() const;   // exact endpoint values
  Rational upper() const;
  Rational midpoint() const;   // exact (lo+hi)/2
  Rational radius() const;     // exact (hi-lo)/2
  bool contains(const Rational& q) const;
  bool is_positive() const { return mpfr_sgn(lo_) > 0; }
  bool is_negative() const { return mpfr_sgn(hi_) < 0; }
  double lower_double_down() const;
  double upper_double_up() const;
  std::string to_string() const;

  friend Interval operator+(const Interval& a, const Interval& b);
  friend Interval operator-(const Interval& a, const Interval& b);
  friend Interval operator*(const Interval& a, const Interval& b);
  friend Interval operator/(const Interval& a, const Interval& b);  // throws if 0 in b
  Interval& operator+=(const Interval& b) { return *this = *this + b; }
  Interval& operator-=(const Interval& b) { return *this = *this - b; }
  Interval& operator*=(const Interval& b) { return *this = *this * b; }
  friend Interval interval_exp(const Interval& a);
  friend Interval interval_log(const Interval& a);   // requires a > 0
  friend Interval interval_sqrt(const Interval& a);  // requires a >= 0
  friend Interval interval_erf(const Interval& a);
  friend Interval interval_max(const Interval& a, const Interval& b);
  friend Interval interval_hull(const Interval& a, const Interval& b);
  friend Interval endpoint_extremes(const Interval&, const Interval&,
                                    int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t));

  const mpfr_t& lo() const { return lo_; }
  const mpfr_t& hi() const { return hi_; }

 private:
  struct PrecTag {};
  Interval(PrecTag, mpfr_prec_t prec);  // uninitialised endpoints at `prec` bits
  mpfr_t lo_, hi_;
};

}  // namespace memcert

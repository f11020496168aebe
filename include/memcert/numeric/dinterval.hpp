#pragma once
// Outward-rounded double arithmetic for the engine's rigorous floating-point filters (as CGAL's
// Interval_nt with Uncertain<bool>): every operation runs in round-to-nearest and steps the result one
// double outward. A round-to-nearest result r of an exact x has |x - r| <= ulp(r)/2, so
// next_down(r) <= x <= next_up(r); no FPU mode is ever changed, so the compiler's round-to-nearest
// assumption holds. The bounds are those of the standard model (u = 2^-53, eta = 2^-1074 for double):
// a dot product of length k in any order, with or without FMA, is within gamma_k sum |x_i y_i| + k eta.
//
// dbound: one-sided bounds of scalars (add_up, mul_up, gamma_up, ...; rounded_ops_up and its kin fold the
// roundings of a whole bound's evaluation into one step). DInterval: [lo, hi] with the four
// operations, exp of non-positive intervals (numeric/exp_bounded.hpp) and comparisons whose answer is
// certain or indeterminate (UncertainBool): a filter decides what is certain and escalates the rest.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "memcert/numeric/double_bits.hpp"
#include "memcert/numeric/exp_bounded.hpp"

namespace memcert {

namespace dbound {

inline constexpr double kUnitRoundoff = 0x1p-53;  // IEEE double, round to nearest
inline constexpr double kEta = 0x1p-1074;         // smallest positive subnormal double

inline double up(double r) { return next_up(r); }
inline double dn(double r) { return next_down(r); }
inline double add_up(double a, double b) { return up(a + b); }
inline double add_dn(double a, double b) { return dn(a + b); }
inline double sub_up(double a, double b) { return up(a - b); }
inline double sub_dn(double a, double b) { return dn(a - b); }
inline double mul_up(double a, double b) { return up(a * b); }  // a, b >= 0
inline double mul_dn(double a, double b) { return dn(a * b); }  // a, b >= 0
inline double div_up(double a, double b) { return up(a / b); }  // a >= 0, b > 0
inline double div_dn(double a, double b) { return dn(a / b); }  // a >= 0, b > 0

// gamma_k = k u / (1 - k u) rounded upward, for the unit roundoff u (2^-53: double; 2^-24: float);
// infinity once k u reaches 1/2 (no bound of this form is then useful).
inline double gamma_up(double k, double u = kUnitRoundoff) {
  const double ku = up(k * u);
  if (!(ku < 0.5)) return std::numeric_limits<double>::infinity();
  return up(ku / dn(1.0 - ku));
}

// Upper bound of the exact sum of k non-negative products computed in round-to-nearest as s, given
// one_minus_gamma_dn <= 1 - gamma_k: S <= (s + k eta) / (1 - gamma_k).
inline double nonneg_sum_up(double s, double k, double one_minus_gamma_dn) {
  return up(up(s + up(k * kEta)) / one_minus_gamma_dn);
}

// Upper bound of a non-negative sum of `terms` non-negative terms computed in round-to-nearest as x:
// x (1 + (terms + 2) u), stepped up.
inline double inflate_up(double x, std::size_t terms = 1) {
  return up(x * (1.0 + double(terms + 2) * kUnitRoundoff));
}

// An upper bound on the exact value of a nonnegative expression whose computed value is x after k
// correctly rounded operations on exact nonnegative inputs (relative error (1 + 2^-53)^k <= 1 + 2k 2^-53
// for k < 2^50, plus at most 2^-1074 absolute per operation from underflow). The extra terms and the
// final nextafter cover the two roundings of this formula itself.
inline double rounded_ops_up(double x, double k) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!(x >= 0)) return std::isnan(x) ? inf : x;  // a NaN bound is no bound
  return std::nextafter(x * (1 + (2 * k + 8) * 0x1p-53) + (2 * k + 8) * 0x1p-1074, inf);
}
// An upper bound on a value of either sign computed with at most two correctly rounded operations whose
// errors are each at most 2^-53 of the result's magnitude (x = a + b or a - b of exact a, b), or 2^-1074.
inline double signed_up(double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(x)) return inf;
  return std::nextafter(x + std::abs(x) * 0x1p-50 + 0x1p-1070, inf);
}
inline double signed_dn(double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(x)) return -inf;
  return std::nextafter(x - std::abs(x) * 0x1p-50 - 0x1p-1070, -inf);
}
// A lower bound on a positive value computed with k correctly rounded operations.
inline double rounded_ops_dn(double x, double k) {
  if (!(x > 0)) return 0;
  return std::nextafter(x * (1 - (2 * k + 8) * 0x1p-53), 0.0);
}
// gamma_n = n u / (1 - n u) rounded up (u a power of two); +inf when n u >= 1/2.
inline double gamma_up_exact(double n, double u) {
  const double nu = n * u;  // exact: u is a power of two and n < 2^53
  if (!(nu < 0.5)) return std::numeric_limits<double>::infinity();
  // 1 - nu exact for the n u in use; one rounding, then up
  return std::nextafter(nu / (1 - nu), std::numeric_limits<double>::infinity());
}

// sqrt(x) rounded down, x >= 0: the correctly rounded root stepped down.
inline double sqrt_dn(double x) { return dn(std::sqrt(x)); }

// Three more roundings of gamma_k = k u / (1 - k u), each an upper bound for a non-negative integer k (so
// that k u and 1 - k u are exact; u a power of two) and +inf once k u reaches 1/2; bounds in use depend on
// their every bit, so each keeps its formula.
// up(up(k u) / (1 - k u)).
inline double gamma_up_num(double k, double u = kUnitRoundoff) {
  if (!(k * u < 0.5)) return std::numeric_limits<double>::infinity();
  return up(up(k * u) / (1.0 - k * u));
}
// up(up(k u) / dn(1 - k u)).
inline double gamma_up_outward(double k, double u = kUnitRoundoff) {
  if (!(k * u < 0.5)) return std::numeric_limits<double>::infinity();
  return up(up(k * u) / dn(1.0 - k * u));
}
// fl(fl(k u / (1 - k u)) 1.01), no step: the 1% margin exceeds the quotient's and the product's roundings.
inline double gamma_margin(double k, double u = kUnitRoundoff) {
  if (!(k * u < 0.5)) return std::numeric_limits<double>::infinity();
  return k * u / (1.0 - k * u) * 1.01;
}

}  // namespace dbound

// A three-valued answer: certainly true, certainly false, or indeterminate at this precision (CGAL's
// Uncertain<bool>). A filter acts on the certain answers and escalates the indeterminate ones.
class UncertainBool {
 public:
  static constexpr UncertainBool certain(bool b) { return UncertainBool(b ? kTrue : kFalse); }
  static constexpr UncertainBool indeterminate() { return UncertainBool(kUnknown); }
  constexpr bool is_certain() const { return v_ != kUnknown; }
  constexpr bool certainly_true() const { return v_ == kTrue; }
  constexpr bool certainly_false() const { return v_ == kFalse; }
  constexpr bool operator==(const UncertainBool&) const = default;

 private:
  enum V : unsigned char { kFalse, kTrue, kUnknown };
  constexpr explicit UncertainBool(V v) : v_(v) {}
  V v_;
};

// [lo, hi] of doubles containing the exact value; every operation encloses the exact result.
struct DInterval {
  double lo = 0, hi = 0;
  static constexpr DInterval point(double x) { return {x, x}; }
  constexpr bool contains(double x) const { return lo <= x && x <= hi; }
};

inline DInterval operator+(DInterval a, DInterval b) { return {dbound::dn(a.lo + b.lo), dbound::up(a.hi + b.hi)}; }
inline DInterval operator-(DInterval a, DInterval b) { return {dbound::dn(a.lo - b.hi), dbound::up(a.hi - b.lo)}; }
inline DInterval operator*(DInterval a, DInterval b) {
  const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {dbound::dn(*std::min_element(p, p + 4)), dbound::up(*std::max_element(p, p + 4))};
}
// Requires b.lo > 0.
inline DInterval operator/(DInterval a, DInterval b) {
  const double p[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
  return {dbound::dn(*std::min_element(p, p + 4)), dbound::up(*std::max_element(p, p + 4))};
}
// w x for an exact double w.
inline DInterval scale_exact(double w, DInterval x) {
  if (w == 0) return {0, 0};
  return w > 0 ? DInterval{dbound::dn(w * x.lo), dbound::up(w * x.hi)}
               : DInterval{dbound::dn(w * x.hi), dbound::up(w * x.lo)};
}
// acc += w x (exact double w; nothing added when w = 0).
inline void fma_into(DInterval& acc, double w, DInterval x) {
  if (w != 0) acc = acc + scale_exact(w, x);
}
// exp of an interval with hi <= 0: |r - exp(x)| <= rel exp(x) + abs (numeric/exp_bounded.hpp), so
// exp(x) >= (r - abs) / (1 + rel) and exp(x) <= (r + abs) / (1 - rel).
inline DInterval exp_nonpositive(DInterval x) {
  using dbound::dn;
  using dbound::up;
  const double rl = exp_nonpositive_bounded(x.lo), rh = exp_nonpositive_bounded(std::min(x.hi, 0.0));
  const double lo = std::max(0.0, dn(dn(rl - kExpAbsErr) / up(1.0 + kExpRelErr)));
  const double hi = up(up(rh + kExpAbsErr) / dn(1.0 - kExpRelErr));
  return {lo, hi};
}

// Comparisons: certain when the intervals do not overlap (or touch only where the answer is the same).
inline UncertainBool operator<(DInterval a, DInterval b) {
  if (a.hi < b.lo) return UncertainBool::certain(true);
  if (a.lo >= b.hi) return UncertainBool::certain(false);
  return UncertainBool::indeterminate();
}
inline UncertainBool operator>(DInterval a, DInterval b) { return b < a; }
inline UncertainBool operator<=(DInterval a, DInterval b) {
  if (a.hi <= b.lo) return UncertainBool::certain(true);
  if (a.lo > b.hi) return UncertainBool::certain(false);
  return UncertainBool::indeterminate();
}
inline UncertainBool operator>=(DInterval a, DInterval b) { return b <= a; }

}  // namespace memcert

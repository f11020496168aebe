#pragma once
#include "memcert/numeric/double_bits.hpp"
// Double intervals [lo, hi] with outward rounding, for the dana24 engine's rigorous fast evaluations
// (steps 3-4 and 8 of docs/papers/dana24.md section 5). Every operation runs in round-to-nearest and steps the
// result one double outward: a round-to-nearest result r of an exact x has |x - r| <= ulp(r)/2, so
// next_down(r) <= x <= next_up(r) (rump.cpp uses the same rule). exp goes through
// exp_nonpositive_bounded, whose relative and absolute error bounds are stated in numeric/exp_bounded.hpp. No FPU mode
// is ever changed, so the compiler's round-to-nearest assumption holds.
#include <algorithm>
#include <cmath>
#include <limits>

#include "memcert/numeric/exp_bounded.hpp"

namespace memcert::dana24 {

inline double dn(double r) { return next_down(r); }
inline double up(double r) { return next_up(r); }

struct DI {
  double lo = 0, hi = 0;
};
inline DI di_point(double x) { return {x, x}; }
inline DI di_add(DI a, DI b) { return {dn(a.lo + b.lo), up(a.hi + b.hi)}; }
inline DI di_sub(DI a, DI b) { return {dn(a.lo - b.hi), up(a.hi - b.lo)}; }
// w * x for an exact double w.
inline DI di_scale(double w, DI x) {
  if (w == 0) return {0, 0};
  return w > 0 ? DI{dn(w * x.lo), up(w * x.hi)} : DI{dn(w * x.hi), up(w * x.lo)};
}
inline DI di_mul(DI a, DI b) {
  const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {dn(*std::min_element(p, p + 4)), up(*std::max_element(p, p + 4))};
}
// acc += w * x (exact double w).
inline void di_fma(DI& acc, double w, DI x) {
  if (w != 0) acc = di_add(acc, di_scale(w, x));
}
inline DI di_div(DI a, DI b) {  // requires b.lo > 0
  const double p[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
  return {dn(*std::min_element(p, p + 4)), up(*std::max_element(p, p + 4))};
}
// exp of an interval with hi <= 0: |r - exp(x)| <= rel exp(x) + abs (exp_bounded.hpp), so
// exp(x) >= (r - abs) / (1 + rel) and exp(x) <= (r + abs) / (1 - rel).
inline DI di_exp_nonpositive(DI x) {
  const double rl = exp_nonpositive_bounded(x.lo), rh = exp_nonpositive_bounded(std::min(x.hi, 0.0));
  const double lo = std::max(0.0, dn(dn(rl - kExpAbsErr) / up(1.0 + kExpRelErr)));
  const double hi = up(up(rh + kExpAbsErr) / dn(1.0 - kExpRelErr));
  return {lo, hi};
}

}  // namespace memcert::dana24

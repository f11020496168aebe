#pragma once
// mahdavi24's quantities as the paper defines them (docs/THEORY.md sections 3-4), for callers that report
// them without running the construction: the CLI's summaries and the sweep's size formulas.
#include <algorithm>
#include <concepts>

namespace memcert::mahdavi24 {

// r = min(n, d_h): the rank a head's block of Z can reach (n context tokens, head dimension d_h).
template <std::integral I>
constexpr I theorem1_r(I n, I dh) {
  return std::min(n, dh);
}
// T* = H (r - 1) + 1: the examples H heads of rank r memorize (Theorem 1), in the caller's integer type
// (as that type computes it: r = 0 wraps for unsigned types).
template <std::integral I>
constexpr I t_star(I H, I r) {
  return H * (r - 1) + 1;
}
// The examples the construction uses on a data set of T examples: min(T, T*) with r = min(n, d_h).
template <std::integral I>
constexpr I t_star(I T, I H, I n, I dh) {
  return std::min(T, t_star(H, theorem1_r(n, dh)));
}
// H d: the columns of Z (T x H d), so a bound on rank(Z) for any weights ("beyond T*").
template <std::integral I>
constexpr I rank_z_bound(I H, I d) {
  return H * d;
}

}  // namespace memcert::mahdavi24

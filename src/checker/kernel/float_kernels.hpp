#pragma once
// IEEE-double kernels with rigorous error bounds, and the small thread pool they (and check_theorem1)
// run on. Trusted: IEEE 754 binary64 round-to-nearest +, -, *, /, sqrt and fused multiply-add (x86-64
// SSE2 / AVX-512; the build has -ffp-contract=off -fno-fast-math, so nothing is fused or reassociated
// behind our back; the dot-product kernel's AVX-512 form fuses explicitly, one rounding where a product
// and a sum take two, which every gamma bound below allows). Notation:
// u = 2^-53, eta = 2^-1074 (smallest subnormal), gamma_k = k u / (1 - k u). A bound is rounded upward
// by taking the next double after its round-to-nearest value (up(x) >= x for every result x of one
// operation, subnormal or not); the FPU rounding mode is never changed.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <functional>
#include <vector>

namespace memcert_checker {

// ---- threads -----------------------------------------------------------------------------------------
// Worker threads of the checker: set_checker_threads(k) with k >= 1 fixes the number (tests compare
// 1 and 2); 0 restores the default, the hardware concurrency capped at 8. Verdicts never depend on it:
// every kernel below computes each number by the same sequence of operations whatever the split.
unsigned checker_threads();
void set_checker_threads(unsigned k);

// Calls fn(i, w) for i = 0 .. count-1 on `threads` threads (the caller's included; w < threads numbers
// the thread, for per-thread scratch). Indices are handed out in increasing order from one shared
// counter. The first exception thrown by fn is rethrown after all threads have joined. Each helper
// thread frees its MPFR caches before it ends.
void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t, unsigned)>& fn);

// ---- bounds ----------------------------------------------------------------------------------------
// The next double above x (x itself if +inf or NaN; +-0 to the smallest subnormal): std::nextafter(x, +inf)
// read from the bits, inline (the libm call was 1-2% of a Theorem 1 check).
inline double up(double x) {
  if (x != x || x == std::numeric_limits<double>::infinity()) return x;
  if (x == 0) return 0x1p-1074;
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  b = x > 0 ? b + 1 : b - 1;
  std::memcpy(&x, &b, sizeof b);
  return x;
}
inline double dn(double x) { return -up(-x); }  // the next double below x
double gamma_up(std::size_t k);      // an upper bound on gamma_k (+inf if k u >= 1/2)

// [lo, hi] (doubles, lo <= hi) as a midpoint m and radius r with [lo, hi] within [m - r, m + r].
void midrad(double lo, double hi, double& m, double& r);

// p = E^T alpha enclosed entrywise for EVERY E in [em +- er] (n x d, row-major, er >= 0) and alpha in
// [am +- ar] (n, ar >= 0): |p_c - centre_c| <= radius_c for c < d. Returns false if a value is not
// finite (nothing is certified then). See float_kernels.cpp for the bound.
// colabs (optional, d values): upper bounds on sum_j |em_jc| + er_jc (column_abs_bounds), so that rows of
// negligible weight need not be read at all.
bool mix_enclosure(const double* em, const double* er, const double* am, const double* ar, std::size_t n,
                   std::size_t d, double* centre, double* radius, const double* colabs = nullptr);
// out[c] >= sum_j |em_jc| + er_jc (n x d), rounded upward (false if a value is not finite).
bool column_abs_bounds(const double* em, const double* er, std::size_t n, std::size_t d, std::vector<double>& out);

// g[i * ldg + j] += (or -=, `subtract`) sum_{t < w} x[i * ldx + t] x[j * ldx + t] for j <= i < m: the lower
// triangle of X X^T added to G. Each entry's sum is accumulated from 0 in one fixed order whatever
// `threads` (in passes of at most 256 terms, each pass added to the entry), so it is one evaluation of
// g_ij +- (X X^T)_ij in round-to-nearest: |error| <= gamma_{w+1} (|g_ij| + sum_t |x_it x_jt|) + w eta.
void syrk_lower(const double* x, std::size_t ldx, std::size_t m, std::size_t w, double* g, std::size_t ldg,
                bool subtract, unsigned threads);

// The lower triangle of G = fl(C C^T) for C (rows x cols, row-major): g[a * rows + b] for b <= a.
// Each entry is a dot product of length cols evaluated in round-to-nearest in some fixed order, so
// |g_ab - (C C^T)_ab| <= gamma_cols sum_j |c_aj c_bj| + cols eta (any summation order: Higham (3.5),
// each product adding at most eta/2 on underflow, additions being exact there).
void gram_lower(const std::vector<double>& c, std::size_t rows, std::size_t cols, std::vector<double>& g,
                unsigned threads);

// Rump's test (BIT 2006; docs/THEORY.md section 7, INTLAB isspd) that every symmetric matrix within spectral
// distance `rad_norm` of the k x k matrix whose lower triangle is in `a` (row-major; the upper triangle
// is ignored and overwritten) is positive definite. Shift c >= 2 sum_j (j+2) u a_jj + rad_norm +
// 6 k (k + max a_jj) eta (the first term doubled as a margin), A - cI formed rounding downward, then a
// right-looking blocked Cholesky in round-to-nearest (gram_cholesky.cpp) must complete with positive pivots. Rump's theorem
// holds for any evaluation order of the inner products (Higham, Lemma 8.4), so blocking changes nothing.
bool rump_pd(std::vector<double>& a, std::size_t k, double rad_norm, unsigned threads);

// Cholesky A = L L^T in round-to-nearest, L overwriting the lower triangle of `a` (k x k, row-major; the
// upper triangle is left as it was). False when a pivot is not positive. Every l_ij is (a_ij - sum_t l_it
// l_jt) / l_jj (or a square root) with the sum in one fixed order whatever `threads`, so |A - L L^T| <=
// gamma_{k+1} |L| |L^T| entrywise (Higham, Lemma 8.4). Rump's test behind rump_pd.
bool cholesky_lower(std::vector<double>& a, std::size_t k, unsigned threads);

}  // namespace memcert_checker

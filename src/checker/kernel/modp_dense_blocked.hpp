#pragma once
// Blocked Gaussian elimination over F_p, p < 2^26, on integer-valued doubles (the checker's own; it shares
// nothing with the engine's kernels): its kernels and its driver, for modp_dense.cpp. They sit in an
// unnamed namespace so that a translation unit that includes this file compiles its own copy, each
// kernel with the attribute MODP_DENSE_TARGETS (defined before the include): modp_dense.cpp's copy is
// target_clones of AVX-512, AVX2 + FMA (x86-64-v3) and the build's baseline, chosen at run time, and a
// test compiles one copy per instruction set to compare them (tests/checker/clones/).
//
// Why blocked: the plain right-looking elimination streams the whole trailing matrix through memory once
// per pivot; here pivots are found a panel of kPanelCols columns at a time and their updates reach the
// rest of each row together, so the trailing matrix passes through memory once per panel, and each row
// update is a short sum of products that vectorizes.
//
// Exactness: every value is an integer held exactly in a double. Residues lie in [0, p); an entry that
// receives t updates x += g u (g, u in [0, p)) without reduction stays below (p - 1) + t (p - 1)^2, which
// is at most 2^52 while t <= lazy_max, so every product and sum is exact (the build has -ffp-contract=off;
// the kernels of the updates may fuse, which changes no exact value: see DENSE_MAY_FUSE). Before an entry
// could pass that bound, or before it is read as a residue (pivot search, multiplier, pivot row), it is
// reduced exactly by dense_reduce. Each pivot step therefore computes exactly the residues of the textbook
// elimination (same pivots: the first non-zero entry of the column at or below the current row), so rank
// and determinant are the textbook's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernel/float_kernels.hpp"
#include "kernel/modp.hpp"

#ifndef MODP_DENSE_TARGETS
#error "define MODP_DENSE_TARGETS (the kernels' target attribute) before including kernel/modp_dense_blocked.hpp"
#endif

namespace memcert_checker {

namespace {

// The bound every update kernel below rests on: a product of two residues is an integer below 2^52.
static_assert((kDensePrimeLimit - 1) * (kDensePrimeLimit - 1) < (std::uint64_t{1} << 52));

constexpr std::size_t kPanelCols = 16;   // pivots per panel: 16 rows of U (x 256 columns) stay in L1
constexpr std::size_t kTileCols = 256;   // columns of the trailing update handled together
constexpr std::size_t kRowBlock = 16;    // rows of the trailing update per task
constexpr int kTileRows = 8;             // rows of a register tile (dense_tile)

// x mod p for an integer-valued double |x| <= 2^52, 2 <= p < 2^26, in round-to-nearest (the checker never
// changes the rounding mode). y = x * pinv is within (x / p) 2.0001 u < 1.0001 / p of x / p, and q =
// (y + 1.5 2^52) - 1.5 2^52 is y rounded to an integer (|y| <= 2^51), so |q - x / p| < 1 and r = x - q p
// lies in (-p, p); q p and x - q p are integers below 2^53, hence exact; one correction lands in [0, p).
// The correction adds p or 0 unconditionally: a conditional addition vectorizes only with AVX-512's
// masked adds (the compiler may not add speculatively under IEEE exception semantics), and the scalar
// branch on a random sign costs a misprediction every other entry.
inline double dense_reduce(double x, double p, double pinv) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
  const double q = (x * pinv + kRound) - kRound;
  const double r = x - q * p;
  return r + (r < 0 ? p : 0.0);
}

// The update kernels let the compiler fuse a * b + c where the target has an FMA instruction (GCC: this
// attribute; clang: DENSE_FUSE_HERE at the top of the body). Their sums of products are exact either way,
// and the reduction's quotient q stays within 1 of x / p whether x * pinv + 1.5 2^52 is rounded once or
// twice, so every value is the same. Without FMA (the baseline clone) a * b + c stays a product and a
// sum, where a call of fma would be libm's software fma, many times slower.
#if defined(__clang__)
#define DENSE_MAY_FUSE
#define DENSE_FUSE_HERE _Pragma("clang fp contract(fast)")
#else
#define DENSE_MAY_FUSE __attribute__((optimize("fp-contract=fast")))
#define DENSE_FUSE_HERE
#endif

// dense_reduce on x[0 .. len), vectorized.
MODP_DENSE_TARGETS
void dense_reduce_span(double* __restrict x, std::size_t len, double p, double pinv) {
  for (std::size_t j = 0; j < len; ++j) x[j] = dense_reduce(x[j], p, pinv);
}

// x[j] = (x[j] c) mod p in [0, p), for integer-valued doubles with |x[j] c| <= 2^52 (the products are then
// exact, and dense_reduce takes them to their residues), vectorized.
MODP_DENSE_TARGETS
void dense_scale_reduce_span(double* __restrict x, std::size_t len, double c, double p, double pinv) {
  for (std::size_t j = 0; j < len; ++j) x[j] = dense_reduce(x[j] * c, p, pinv);
}

// dst[j] = src[j] mod p in [0, p) for integer-valued doubles |src[j]| <= 2^52, vectorized.
MODP_DENSE_TARGETS
void dense_reduce_copy(double* __restrict dst, const double* __restrict src, std::size_t len, double p, double pinv) {
  for (std::size_t j = 0; j < len; ++j) dst[j] = dense_reduce(src[j], p, pinv);
}

// a^-1 mod p for 0 < a < p < 2^26, p prime: the extended Euclidean algorithm on 32-bit integers (a few
// word divisions where Fermat's a^(p-2) takes some forty 64-bit ones). Invariant: r_i = t_i a mod p. The
// t_i alternate in sign, so |t_(i+1)| = |t_(i-1)| + q |t_i|, and every |t_i| <= p / r_(i-1) <= p < 2^31:
// no step overflows. It stops at r = gcd(a, p) = 1, so t = a^-1 mod p.
std::uint64_t dense_inverse(std::uint64_t a, std::uint64_t p) {
  std::uint32_t r = static_cast<std::uint32_t>(p), nr = static_cast<std::uint32_t>(a);
  std::int32_t t = 0, nt = 1;
  while (nr != 0) {
    const std::uint32_t q = r / nr;
    const std::int32_t tt = t - static_cast<std::int32_t>(q) * nt;
    t = nt, nt = tt;
    const std::uint32_t rr = r - q * nr;
    r = nr, nr = rr;
  }
  return static_cast<std::uint64_t>(t < 0 ? t + static_cast<std::int32_t>(p) : t);
}

// row[j] += sum_i g[i] u[i][j], i < 8, j < len, in order of i, each term a product and a sum (fused where
// the clone has FMA). Every g[i] and u[i][j] is a residue in [0, p), p < 2^26, so each product is an integer
// at most (p - 1)^2 < 2^52, and the caller keeps every partial sum at most (p - 1) + t (p - 1)^2 <= 2^52
// (t <= lazy_max updates since the last reduction): every operand, product and sum is an integer below
// 2^53, so a * b + c and fma(a, b, c) are both exact and equal. Eight rows of U per pass: the row segment
// is loaded and stored once per eight updates.
DENSE_MAY_FUSE MODP_DENSE_TARGETS
void dense_axpy8(double* __restrict row, const double* const* __restrict u, const double* __restrict g, std::size_t len) {
  DENSE_FUSE_HERE
  const double *u0 = u[0], *u1 = u[1], *u2 = u[2], *u3 = u[3], *u4 = u[4], *u5 = u[5], *u6 = u[6], *u7 = u[7];
  const double g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4], g5 = g[5], g6 = g[6], g7 = g[7];
  for (std::size_t j = 0; j < len; ++j) {
    double x = g0 * u0[j] + row[j];
    x = g1 * u1[j] + x;
    x = g2 * u2[j] + x;
    x = g3 * u3[j] + x;
    x = g4 * u4[j] + x;
    x = g5 * u5[j] + x;
    x = g6 * u6[j] + x;
    row[j] = g7 * u7[j] + x;
  }
}

// dense_axpy8 on two rows at once (multipliers g[0..8) for row0, h[0..8) for row1, residues too; the same
// bound): each row of U is loaded once for both, which is what bounds the speed of the single-row form.
DENSE_MAY_FUSE MODP_DENSE_TARGETS
void dense_axpy8x2(double* __restrict row0, double* __restrict row1, const double* const* __restrict u,
                   const double* __restrict g, const double* __restrict h, std::size_t len) {
  DENSE_FUSE_HERE
  const double *u0 = u[0], *u1 = u[1], *u2 = u[2], *u3 = u[3], *u4 = u[4], *u5 = u[5], *u6 = u[6], *u7 = u[7];
  for (std::size_t j = 0; j < len; ++j) {
    double x = row0[j], y = row1[j];
    x = g[0] * u0[j] + x, y = h[0] * u0[j] + y;
    x = g[1] * u1[j] + x, y = h[1] * u1[j] + y;
    x = g[2] * u2[j] + x, y = h[2] * u2[j] + y;
    x = g[3] * u3[j] + x, y = h[3] * u3[j] + y;
    x = g[4] * u4[j] + x, y = h[4] * u4[j] + y;
    x = g[5] * u5[j] + x, y = h[5] * u5[j] + y;
    x = g[6] * u6[j] + x, y = h[6] * u6[j] + y;
    row0[j] = g[7] * u7[j] + x, row1[j] = h[7] * u7[j] + y;
  }
}

// row[j] += g u[j], j < len: one update, the same bound (g and u[j] residues, row[j] kept at most 2^52).
DENSE_MAY_FUSE MODP_DENSE_TARGETS
void dense_axpy1(double* __restrict row, const double* __restrict u, double g, std::size_t len) {
  DENSE_FUSE_HERE
  for (std::size_t j = 0; j < len; ++j) row[j] = g * u[j] + row[j];
}

// Rows row[0..R) of the trailing matrix, columns [0, len), take all k pivot updates of a panel:
// row[r][j] += sum_i g[r * kPanelCols + i] u[i][j], as a register tile of R rows x W vectors V that stays in
// registers through the k updates (each u[i] segment is loaded once for all R rows; GEMM's micro-kernel,
// where the row-pair form above streams every row through memory once per eight pivots). Needs
// k <= lazy_max and reduced entries on entry: every sum stays below (p - 1) + k (p - 1)^2 <= 2^52, so
// every product and sum is exact. The entries leave reduced (dense_reduce's steps on whole vectors).
typedef double DenseV8 __attribute__((vector_size(64)));
typedef double DenseV4 __attribute__((vector_size(32)));
template <class V, int R, int W>
__attribute__((always_inline)) inline void dense_tile(double* const* __restrict row, const double* const* __restrict u,
                                                      const double* __restrict g, std::size_t k, std::size_t len, double p,
                                                      double pinv) {
  DENSE_FUSE_HERE
  constexpr std::size_t L = sizeof(V) / sizeof(double);  // lanes
  constexpr double kRound = 6755399441055744.0;          // 1.5 * 2^52, as in dense_reduce
  const V pv = V{} + p;
  std::size_t j = 0;
  for (; j + L * W <= len; j += L * W) {
    V a[R][W];
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < W; ++w) __builtin_memcpy(&a[r][w], row[r] + j + L * w, sizeof(V));
    for (std::size_t i = 0; i < k; ++i) {
      V uv[W];
      for (int w = 0; w < W; ++w) __builtin_memcpy(&uv[w], u[i] + j + L * w, sizeof(V));
      for (int r = 0; r < R; ++r) {
        const double gi = g[r * kPanelCols + i];
        for (int w = 0; w < W; ++w) a[r][w] += gi * uv[w];
      }
    }
    // Reduced in registers, lane by lane as dense_reduce does.
    for (int r = 0; r < R; ++r)
      for (int w = 0; w < W; ++w) {
        const V q = (a[r][w] * pinv + kRound) - kRound;
        V x = a[r][w] - q * p;
        x += x < 0 ? pv : V{};  // + p or + 0, as in dense_reduce
        __builtin_memcpy(row[r] + j + L * w, &x, sizeof(V));
      }
  }
  // The last len mod LW columns: the same sums, one row and one pivot at a time along the columns.
  for (int r = 0; r < R; ++r) {
    double* x = row[r];
    for (std::size_t i = 0; i < k; ++i) {
      const double gi = g[r * kPanelCols + i];
      const double* ui = u[i];
      for (std::size_t t = j; t < len; ++t) x[t] = gi * ui[t] + x[t];
    }
    for (std::size_t t = j; t < len; ++t) x[t] = dense_reduce(x[t], p, pinv);
  }
}

// kTileRows rows by register tiles: 8 rows x 2 vectors of 8 doubles on CPUs with AVX-512 (16 of its 32
// registers of 512 bits), else two tiles of 4 rows x 2 vectors of 4 doubles (8 of AVX2's 16 registers of
// 256 bits: the 512-bit tile would live on the stack there, 30 times slower). The same sums either way.
DENSE_MAY_FUSE
MODP_DENSE_TARGETS
void dense_tileR(double* const* row, const double* const* u, const double* g, std::size_t k, std::size_t len,
                 double p, double pinv, bool wide) {
  static_assert(kTileRows == 8);
  if (wide) {
    dense_tile<DenseV8, 8, 2>(row, u, g, k, len, p, pinv);
  } else {
    dense_tile<DenseV4, 4, 2>(row, u, g, k, len, p, pinv);
    dense_tile<DenseV4, 4, 2>(row + 4, u, g + 4 * kPanelCols, k, len, p, pinv);
  }
}

DENSE_MAY_FUSE
MODP_DENSE_TARGETS
void dense_tile1(double* const* row, const double* const* u, const double* g, std::size_t k, std::size_t len,
                 double p, double pinv) {
  dense_tile<DenseV4, 1, 2>(row, u, g, k, len, p, pinv);
}

struct DenseField {
  double p, pinv;
  std::uint64_t lazy_max;  // updates an entry in [0, p) can take before it must be reduced
};

// Columns [j0, j1) of row `r` (row-major, row stride n) receive the updates of the pivot rows `urows[i]`
// with multipliers g[i] (residues), i < k: at most lazy_max between reductions; the segment ends reduced.
void dense_update_segment(double* w, std::size_t n, std::size_t r, const std::size_t* urows, const double* g,
                          std::size_t k, std::size_t j0, std::size_t j1, const DenseField& F) {
  double* row = w + r * n + j0;
  const std::size_t len = j1 - j0;
  std::uint64_t pending = 0;
  const double* u[8];
  double gs[8];
  std::size_t have = 0;  // non-zero multipliers gathered for the next pass
  auto flush8 = [&] {
    if (pending + 8 > F.lazy_max) { dense_reduce_span(row, len, F.p, F.pinv); pending = 0; }
    dense_axpy8(row, u, gs, len);
    pending += 8;
    have = 0;
  };
  for (std::size_t i = 0; i < k; ++i) {
    if (g[i] == 0) continue;
    if (F.lazy_max < 8) {  // primes near 2^26: one update at a time, reduced as often as needed
      if (pending == F.lazy_max) { dense_reduce_span(row, len, F.p, F.pinv); pending = 0; }
      dense_axpy1(row, w + urows[i] * n + j0, g[i], len);
      ++pending;
      continue;
    }
    u[have] = w + urows[i] * n + j0;
    gs[have++] = g[i];
    if (have == 8) flush8();
  }
  for (std::size_t i = 0; i < have; ++i) {
    if (pending == F.lazy_max) { dense_reduce_span(row, len, F.p, F.pinv); pending = 0; }
    dense_axpy1(row, u[i], gs[i], len);
    ++pending;
  }
  if (pending) dense_reduce_span(row, len, F.p, F.pinv);
}

// dense_update_segment for rows r and r + 1 together (multipliers g and h), for lazy_max >= 8: every
// multiplier is applied, zeros included, so both rows take the same number of updates between reductions.
void dense_update_pair(double* w, std::size_t n, std::size_t r, const std::size_t* urows, const double* g,
                       const double* h, std::size_t k, std::size_t j0, std::size_t j1, const DenseField& F) {
  double* row0 = w + r * n + j0;
  double* row1 = row0 + n;
  const std::size_t len = j1 - j0;
  std::uint64_t pending = 0;
  auto reduce = [&] {
    dense_reduce_span(row0, len, F.p, F.pinv);
    dense_reduce_span(row1, len, F.p, F.pinv);
    pending = 0;
  };
  const double* u[8];
  std::size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    if (pending + 8 > F.lazy_max) reduce();
    for (std::size_t t = 0; t < 8; ++t) u[t] = w + urows[i + t] * n + j0;
    dense_axpy8x2(row0, row1, u, g + i, h + i, len);
    pending += 8;
  }
  for (; i < k; ++i) {
    if (pending == F.lazy_max) reduce();
    dense_axpy1(row0, w + urows[i] * n + j0, g[i], len);
    dense_axpy1(row1, w + urows[i] * n + j0, h[i], len);
    ++pending;
  }
  if (pending) reduce();
}

// rank_mod_p_dense (modp.hpp) by the blocked elimination above: the rank of the m x n residues at w (row
// stride ld, columns [n, ld) zero), w destroyed; det as there. wide: dense_tileR's 512-bit tiles (for
// CPUs with AVX-512; the caller decides, so tests can run both shapes on one machine).
std::size_t dense_rank_blocked(double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p,
                               std::uint64_t* det, unsigned threads, bool wide) {
  const ModP f{p};
  const std::uint64_t pm1 = p - 1;
  const DenseField F{static_cast<double>(p), 1.0 / static_cast<double>(p),
                     pm1 == 0 ? ~std::uint64_t{0} : ((std::uint64_t{1} << 52) - pm1) / (pm1 * pm1)};
  std::size_t rank = 0;
  std::uint64_t dv = 1 % p;
  std::vector<std::size_t> urows;  // the current panel's pivot rows
  std::vector<std::size_t> pl;     // their columns, local to the panel
  std::vector<double> panel;       // columns [c0, c1) of rows [first, m), column-major
  std::vector<double> mult;        // scratch multipliers
  for (std::size_t c0 = 0; c0 < n && rank < m; c0 += kPanelCols) {
    const std::size_t c1 = std::min(n, c0 + kPanelCols), cw = c1 - c0;
    const std::size_t first = rank, M = m - first;
    // Panel: the textbook elimination restricted to columns [c0, c1), on a column-major copy so that the
    // pivot search and the updates run down contiguous columns. The multiplier of local row i for the
    // pivot in local column j is stored in panel[j][i], which the elimination no longer needs. Row swaps
    // exchange the copy's rows and the rows' parts right of the panel (columns left of it are dead).
    panel.resize(M * cw);
    for (std::size_t i = 0; i < M; ++i) {
      const double* src = w + (first + i) * ld + c0;
      for (std::size_t j = 0; j < cw; ++j) panel[j * M + i] = src[j];
    }
    pl.clear();
    std::uint64_t pending = 0;  // unreduced updates the panel entries below the pivots may hold
    for (std::size_t j = 0; j < cw && rank < m; ++j) {
      double* col = &panel[j * M];
      const std::size_t top = rank - first;  // local index of the next pivot row
      if (pending) dense_reduce_span(col + top, M - top, F.p, F.pinv);
      std::size_t piv = top;
      while (piv < M && col[piv] == 0) ++piv;
      if (piv == M) { dv = 0; continue; }
      if (piv != top) {
        for (std::size_t jj = 0; jj < cw; ++jj) std::swap(panel[jj * M + piv], panel[jj * M + top]);
        std::swap_ranges(w + (first + piv) * ld + c1, w + (first + piv + 1) * ld, w + rank * ld + c1);
        dv = f.sub(0, dv);
      }
      if (pending)
        for (std::size_t jj = j + 1; jj < cw; ++jj) panel[jj * M + top] = dense_reduce(panel[jj * M + top], F.p, F.pinv);
      const std::uint64_t pivot = static_cast<std::uint64_t>(col[top]);
      dv = f.mul(dv, pivot);
      const double invd = static_cast<double>(dense_inverse(pivot, p));
      if (pending == F.lazy_max) {  // one more update could pass 2^52: reduce the panel below first
        for (std::size_t jj = j + 1; jj < cw; ++jj) dense_reduce_span(&panel[jj * M + top + 1], M - top - 1, F.p, F.pinv);
        pending = 0;
      }
      // row_i += g_i * pivot row with g_i = -x_i / pivot mod p (|x_i * inv| < 2^52: exact, so is its residue).
      dense_scale_reduce_span(col + top + 1, M - top - 1, -invd, F.p, F.pinv);
      for (std::size_t jj = j + 1; jj < cw; ++jj) {
        const double u = panel[jj * M + top];
        if (u != 0) dense_axpy1(&panel[jj * M + top + 1], col + top + 1, u, M - top - 1);
      }
      ++pending;
      pl.push_back(j);
      ++rank;
    }
    const std::size_t k = rank - first;
    if (k == 0 || c1 >= n) continue;
    urows.resize(k);
    for (std::size_t i = 0; i < k; ++i) urows[i] = first + i;
    // The pivot rows' own trailing parts, in order: pivot row j takes the updates of pivots i < j (its
    // multipliers sit in the panel), which makes it the row U_j the rows below are updated with. The
    // columns [n, ld) are 0 and stay 0 (0 + g 0 = 0): updating them saves the tiles a ragged end.
    mult.resize(k);
    for (std::size_t j = 1; j < k; ++j) {
      for (std::size_t i = 0; i < j; ++i) mult[i] = panel[pl[i] * M + j];
      dense_update_segment(w, ld, first + j, urows.data(), mult.data(), j, c1, ld, F);
    }
    // Every row below: all k updates at once, a block of rows per task, column tiles inside.
    const std::size_t below = m - rank, blocks = (below + kRowBlock - 1) / kRowBlock;
    parallel_for(blocks, blocks > 1 ? threads : 1, [&](std::size_t b, unsigned) {
      double g[kPanelCols], h[kPanelCols];
      const std::size_t r0 = rank + b * kRowBlock, r1 = std::min(m, r0 + kRowBlock);
      if (k <= F.lazy_max) {  // every panel update fits one lazy window: register tiles (dense_tile)
        double gt[kRowBlock * kPanelCols];
        for (std::size_t r = r0; r < r1; ++r)
          for (std::size_t i = 0; i < k; ++i) gt[(r - r0) * kPanelCols + i] = panel[pl[i] * M + (r - first)];
        const double* u[kPanelCols];
        double* rows[kTileRows];
        for (std::size_t j0 = c1; j0 < ld; j0 += kTileCols) {
          const std::size_t j1 = std::min(ld, j0 + kTileCols);
          for (std::size_t i = 0; i < k; ++i) u[i] = w + urows[i] * ld + j0;
          std::size_t r = r0;
          for (; r + kTileRows <= r1; r += kTileRows) {
            for (std::size_t t = 0; t < kTileRows; ++t) rows[t] = w + (r + t) * ld + j0;
            dense_tileR(rows, u, gt + (r - r0) * kPanelCols, k, j1 - j0, F.p, F.pinv, wide);
          }
          for (; r < r1; ++r) {
            rows[0] = w + r * ld + j0;
            dense_tile1(rows, u, gt + (r - r0) * kPanelCols, k, j1 - j0, F.p, F.pinv);
          }
        }
        return;
      }
      for (std::size_t j0 = c1; j0 < ld; j0 += kTileCols) {
        const std::size_t j1 = std::min(ld, j0 + kTileCols);
        std::size_t r = r0;
        for (; F.lazy_max >= 8 && r + 2 <= r1; r += 2) {
          for (std::size_t i = 0; i < k; ++i) {
            g[i] = panel[pl[i] * M + (r - first)];
            h[i] = panel[pl[i] * M + (r + 1 - first)];
          }
          dense_update_pair(w, ld, r, urows.data(), g, h, k, j0, j1, F);
        }
        for (; r < r1; ++r) {
          for (std::size_t i = 0; i < k; ++i) g[i] = panel[pl[i] * M + (r - first)];
          dense_update_segment(w, ld, r, urows.data(), g, k, j0, j1, F);
        }
      }
    });
  }
  if (det) *det = (rank == m && m == n) ? dv : 0;
  return rank;
}

}  // namespace

}  // namespace memcert_checker

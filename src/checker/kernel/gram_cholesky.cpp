// The checker's symmetric products: syrk_lower (G +-= X X^T, lower triangle), the Gram matrices built on it,
// the blocked Cholesky whose trailing update it is, and Rump's positive-definiteness test behind them
// (float_kernels.hpp has the contracts).
//
// Why its own kernel: the per-head sigma certificates of a Theorem 1 certificate accumulate and factor Gram
// matrices of up to T* rows at every head (H = 128: 8065 rows), nearly all of verify's time outside the
// forward pass. The product runs packed (the operand copied once, 8 x 16 register tiles), the way BLAS
// kernels do. The checker does not link the engine's kernels (it must not depend on the code it checks);
// this file is self-contained.
//
// Soundness does not depend on any of this. Every entry of syrk_lower is one dot product accumulated from 0
// with fused multiply-adds (t ascending) and then added to (or subtracted from) the entry: one evaluation
// order, the same whatever the threads. Rump's theorem needs only that every computed l_ij is
// (a_ij - sum_t l_it l_jt) / l_jj (or the square root of such a difference), the sum evaluated in round-to-
// nearest in SOME order (Higham, Lemma 8.4: |A + dA = L L^T|, |dA| <= gamma_{k+1} |L| |L^T| for any order).
// Here each entry's sum is split into one partial sum per block column (its products accumulated with
// fused multiply-adds, which round once where a product and an addition round twice), each subtracted
// from the entry in block order: one such order.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernel/float_kernels.hpp"
#include "memcert/checker/checker.hpp"

namespace memcert_checker {

namespace {

constexpr double kUnitRoundoff = 0x1p-53;
constexpr double kMinSubnormal = 0x1p-1074;
constexpr std::size_t kNb = 64;    // block column width
constexpr std::size_t kMr = 8;     // rows of a register tile
constexpr std::size_t kNr = 16;    // columns of a register tile
constexpr std::size_t kPanel = 64; // rows of a thread's task (8 tiles sharing each packed column strip)

// out[p][q] = sum_{t < w} a[t][p] b[t][q] (p < 8, q < 16), a and b packed t-major (8 and 16 per t).
__attribute__((target("avx512f"))) void tile_avx512(const double* a, const double* b, std::size_t w,
                                                    double out[kMr][kNr]) {
  __m512d c[kMr][2];
  for (std::size_t p = 0; p < kMr; ++p) c[p][0] = c[p][1] = _mm512_setzero_pd();
  for (std::size_t t = 0; t < w; ++t) {
    const __m512d b0 = _mm512_loadu_pd(b + t * kNr), b1 = _mm512_loadu_pd(b + t * kNr + 8);
    for (std::size_t p = 0; p < kMr; ++p) {
      const __m512d ap = _mm512_set1_pd(a[t * kMr + p]);
      c[p][0] = _mm512_fmadd_pd(ap, b0, c[p][0]);
      c[p][1] = _mm512_fmadd_pd(ap, b1, c[p][1]);
    }
  }
  for (std::size_t p = 0; p < kMr; ++p) {
    _mm512_storeu_pd(out[p], c[p][0]);
    _mm512_storeu_pd(out[p] + 8, c[p][1]);
  }
}

// The same sums on any x86-64 (four rows at a time, 4-wide vectors, one product and one addition per term).
__attribute__((target_clones("avx2", "default"))) void tile_generic(const double* a, const double* b, std::size_t w,
                                                                    double out[kMr][kNr]) {
  typedef double v4 __attribute__((vector_size(32)));
  for (std::size_t p0 = 0; p0 < kMr; p0 += 4) {
    v4 c[4][4];
    for (auto& row : c)
      for (auto& x : row) x = v4{0, 0, 0, 0};
    for (std::size_t t = 0; t < w; ++t) {
      v4 bv[4];
      std::memcpy(bv, b + t * kNr, sizeof bv);
      for (std::size_t p = 0; p < 4; ++p) {
        const double s = a[t * kMr + p0 + p];
        const v4 ap = {s, s, s, s};
        for (std::size_t q = 0; q < 4; ++q) c[p][q] += ap * bv[q];
      }
    }
    for (std::size_t p = 0; p < 4; ++p) std::memcpy(out[p0 + p], c[p], sizeof c[p]);
  }
}

// The portable twin (checker_portable()): the same sums, one product and one addition per term, in
// plain scalar code with no CPU-specific instruction.
void tile_scalar(const double* a, const double* b, std::size_t w, double out[kMr][kNr]) {
  for (std::size_t p = 0; p < kMr; ++p)
    for (std::size_t q = 0; q < kNr; ++q) out[p][q] = 0;
  for (std::size_t t = 0; t < w; ++t)
    for (std::size_t p = 0; p < kMr; ++p) {
      const double s = a[t * kMr + p];
      for (std::size_t q = 0; q < kNr; ++q) out[p][q] += s * b[t * kNr + q];
    }
}

const bool kAvx512 = __builtin_cpu_supports("avx512f");

// sum_{t < len} x[t] y[t] in eight interleaved partial sums (one order of the terms).
double dot(const double* x, const double* y, std::size_t len) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t t = 0;
  for (; t + 8 <= len; t += 8)
    for (std::size_t l = 0; l < 8; ++l) s[l] += x[t + l] * y[t + l];
  double r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; t < len; ++t) r += x[t] * y[t];
  return r;
}

constexpr std::size_t kDepth = 256;  // terms per packed pass (a 16-column strip of them is 32 KB)

void tile(const double* a, const double* b, std::size_t w, double out[kMr][kNr]) {
  if (checker_portable()) tile_scalar(a, b, w, out);
  else if (kAvx512) tile_avx512(a, b, w, out);
  else tile_generic(a, b, w, out);
}

}  // namespace

void syrk_lower(const double* x, std::size_t ldx, std::size_t m, std::size_t w, double* g, std::size_t ldg,
                bool subtract, unsigned threads) {
  if (m == 0 || w == 0) return;
  const std::size_t mp = (m + kPanel - 1) / kPanel * kPanel;
  std::vector<double> pa, pb;  // x packed for the tiles: 8-row blocks and 16-row strips, t-major
  for (std::size_t t0 = 0; t0 < w; t0 += kDepth) {
    const std::size_t wd = std::min(kDepth, w - t0);
    pa.assign(mp * wd, 0.0);
    pb.assign(mp * wd, 0.0);
    parallel_for((m + kNr - 1) / kNr, threads, [&](std::size_t sb, unsigned) {
      for (std::size_t r = sb * kNr; r < std::min(m, (sb + 1) * kNr); ++r)
        for (std::size_t t = 0; t < wd; ++t) {
          const double v = x[r * ldx + t0 + t];
          pa[((r / kMr) * wd + t) * kMr + r % kMr] = v;
          pb[(sb * wd + t) * kNr + r % kNr] = v;
        }
    });
    // Rows [p0, p0 + 64) against every strip of 16 columns at or left of them: a strip stays in cache
    // while the panel's eight tiles use it.
    parallel_for(mp / kPanel, threads, [&](std::size_t panel, unsigned) {
      const std::size_t p0 = panel * kPanel, p1 = std::min(m, p0 + kPanel);
      double out[kMr][kNr];
      for (std::size_t s0 = 0; s0 < p1; s0 += kNr) {
        const double* b = &pb[(s0 / kNr) * wd * kNr];
        for (std::size_t r0 = std::max(p0, s0); r0 < p1; r0 += kMr) {
          tile(&pa[(r0 / kMr) * wd * kMr], b, wd, out);
          for (std::size_t p = 0; p < kMr && r0 + p < m; ++p) {
            double* gi = g + (r0 + p) * ldg + s0;
            const std::size_t qn = std::min(kNr, r0 + p - s0 + 1);
            if (subtract)
              for (std::size_t q = 0; q < qn; ++q) gi[q] -= out[p][q];
            else
              for (std::size_t q = 0; q < qn; ++q) gi[q] += out[p][q];
          }
        }
      }
    });
  }
}

void gram_lower(const std::vector<double>& c, std::size_t rows, std::size_t cols, std::vector<double>& g,
                unsigned threads) {
  g.assign(rows * rows, 0.0);
  syrk_lower(c.data(), cols, rows, cols, g.data(), rows, false, threads);
}

bool rump_pd(std::vector<double>& a, std::size_t k, double rad_norm, unsigned threads) {
  // The shift, with exactly the constants (and the order of roundings) of docs/THEORY.md section 7.
  double s = 0, maxd = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double ajj = a[j * k + j];
    if (!(ajj > 0) || !std::isfinite(ajj)) return false;
    s = up(s + up(up(static_cast<double>(j + 3) * kUnitRoundoff) * ajj));
    maxd = std::max(maxd, ajj);
  }
  double c = up(up(2.0 * s) + rad_norm);
  c = up(c + up(up(6.0 * static_cast<double>(k)) * up(up(static_cast<double>(k) + maxd) * kMinSubnormal)));
  if (!std::isfinite(c)) return false;
  for (std::size_t j = 0; j < k; ++j) a[j * k + j] = dn(a[j * k + j] - c);
  return cholesky_lower(a, k, threads);
}

bool cholesky_lower(std::vector<double>& a, std::size_t k, unsigned threads) {
  // Right-looking blocked Cholesky A = L L^T, L overwriting the lower triangle. For each block column
  // [j0, j1): (1) factor the diagonal block, (2) solve for the panel below it, (3) subtract the panel's
  // contribution from the trailing lower triangle. The order of every entry's terms is fixed whatever
  // the number of threads (rows and tiles are split between threads, never the terms of one entry).
  auto L = [&](std::size_t i, std::size_t j) -> double& { return a[i * k + j]; };
  for (std::size_t j0 = 0; j0 < k; j0 += kNb) {
    const std::size_t j1 = std::min(k, j0 + kNb), w = j1 - j0;
    for (std::size_t j = j0; j < j1; ++j) {  // (1)
      const double d = L(j, j) - dot(&L(j, j0), &L(j, j0), j - j0);
      if (!(d > 0)) return false;
      L(j, j) = std::sqrt(d);
      for (std::size_t i = j + 1; i < j1; ++i) L(i, j) = (L(i, j) - dot(&L(i, j0), &L(j, j0), j - j0)) / L(j, j);
    }
    if (j1 == k) break;
    const std::size_t m = k - j1;
    parallel_for((m + kMr - 1) / kMr, threads, [&](std::size_t rb, unsigned) {  // (2)
      for (std::size_t r = rb * kMr; r < std::min(m, (rb + 1) * kMr); ++r) {
        const std::size_t i = j1 + r;
        for (std::size_t j = j0; j < j1; ++j) L(i, j) = (L(i, j) - dot(&L(i, j0), &L(j, j0), j - j0)) / L(j, j);
      }
    });
    syrk_lower(&L(j1, j0), k, m, w, &L(j1, j1), k, /*subtract=*/true, threads);  // (3)
  }
  return true;
}

}  // namespace memcert_checker

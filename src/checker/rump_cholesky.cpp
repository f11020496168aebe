// Rump's positive-definiteness test (float_kernels.hpp) and the checker's own blocked Cholesky behind it.
//
// Why its own kernel: the per-head sigma certificates of a Theorem 1 certificate factor Gram matrices of
// up to T* rows at every head (H = 128: 8065 rows), so the trailing update is nearly all of verify's time.
// It runs as a packed matrix product (the panel copied once per block column, 8 x 16 register tiles), the
// way BLAS kernels do. The checker does not link the engine's kernels (it must not depend on the code it
// checks); this file is self-contained.
//
// Soundness does not depend on any of this: Rump's theorem needs only that every computed l_ij is
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

#include "float_kernels.hpp"

namespace memcert_checker {

namespace {

constexpr double kU = 0x1p-53;
constexpr double kEta = 0x1p-1074;
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

}  // namespace

bool rump_pd(std::vector<double>& a, std::size_t k, double rad_norm, unsigned threads) {
  // The shift, with exactly the constants (and the order of roundings) of docs/THEORY.md section 7.
  double s = 0, maxd = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double ajj = a[j * k + j];
    if (!(ajj > 0) || !std::isfinite(ajj)) return false;
    s = up(s + up(up(static_cast<double>(j + 3) * kU) * ajj));
    maxd = std::max(maxd, ajj);
  }
  double c = up(up(2.0 * s) + rad_norm);
  c = up(c + up(up(6.0 * static_cast<double>(k)) * up(up(static_cast<double>(k) + maxd) * kEta)));
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
  std::vector<double> pa, pb;  // the panel packed for the tiles: 8-row blocks and 16-row strips, t-major
  for (std::size_t j0 = 0; j0 < k; j0 += kNb) {
    const std::size_t j1 = std::min(k, j0 + kNb), w = j1 - j0;
    for (std::size_t j = j0; j < j1; ++j) {  // (1)
      const double d = L(j, j) - dot(&L(j, j0), &L(j, j0), j - j0);
      if (!(d > 0)) return false;
      L(j, j) = std::sqrt(d);
      for (std::size_t i = j + 1; i < j1; ++i) L(i, j) = (L(i, j) - dot(&L(i, j0), &L(j, j0), j - j0)) / L(j, j);
    }
    if (j1 == k) break;
    const std::size_t m = k - j1, mp = (m + kPanel - 1) / kPanel * kPanel;
    pa.assign(mp * w, 0.0);
    pb.assign(mp * w, 0.0);
    parallel_for((m + kMr - 1) / kMr, threads, [&](std::size_t rb, unsigned) {  // (2), then pack
      for (std::size_t r = rb * kMr; r < std::min(m, (rb + 1) * kMr); ++r) {
        const std::size_t i = j1 + r;
        for (std::size_t j = j0; j < j1; ++j) L(i, j) = (L(i, j) - dot(&L(i, j0), &L(j, j0), j - j0)) / L(j, j);
        for (std::size_t t = 0; t < w; ++t) {
          pa[(rb * w + t) * kMr + r % kMr] = L(i, j0 + t);
          pb[((r / kNr) * w + t) * kNr + r % kNr] = L(i, j0 + t);
        }
      }
    });
    // (3): rows [p0, p0 + 64) of the trailing block against every strip of 16 columns at or left of them.
    parallel_for(mp / kPanel, threads, [&](std::size_t panel, unsigned) {
      const std::size_t p0 = panel * kPanel, p1 = std::min(m, p0 + kPanel);
      double out[kMr][kNr];
      for (std::size_t s0 = 0; s0 < p1; s0 += kNr) {
        const double* b = &pb[(s0 / kNr) * w * kNr];
        for (std::size_t r0 = std::max(p0, s0 / kMr * kMr); r0 < p1; r0 += kMr) {
          if (kAvx512) tile_avx512(&pa[(r0 / kMr) * w * kMr], b, w, out);
          else tile_generic(&pa[(r0 / kMr) * w * kMr], b, w, out);
          for (std::size_t p = 0; p < kMr && r0 + p < m; ++p)
            for (std::size_t q = 0; q < kNr && s0 + q <= r0 + p; ++q) L(j1 + r0 + p, j1 + s0 + q) -= out[p][q];
        }
      }
    });
  }
  return true;
}

}  // namespace memcert_checker

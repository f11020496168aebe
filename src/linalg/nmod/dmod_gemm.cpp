// Blocked modular matrix product in double with delayed reduction.
//
// EXACTNESS ARGUMENT. Let h = (p-1)/2 with p < 2^26 prime. Every operand is an integer with |x| <= h
// (centred residues). The micro-kernel accumulates acc = sum_{k<kc} a_k b_k with kc <= kmax(p), where
// kmax(p) = floor((2^53 - p - h) / h^2). Every partial sum is an integer of magnitude <= kc h^2 < 2^53,
// so it is exactly representable; an FMA (or a multiply followed by an add) whose exact result is
// representable returns it exactly, so whether the compiler or the intrinsics fuse or not, the
// accumulators hold the exact integer sums. Then x = c - acc is exact (|x| <= h + kc h^2 <= 2^53 - p) and
// the reduction q = round(x * (1/p)), r = x - q p (vector kernels: one FMA) is exact too: |q p| <= |x| + p
// <= 2^53 is an exactly representable integer, and r is the integer x - q p with |r| <= p/2 + 1 (the
// rounded quotient is off by < 2^-20), so one conditional +-p lands it in [-h, h].
// Hence the kernel computes EXACTLY centred(C - A B mod p), independent of ISA, blocking and threads.
// (The project compiles with -ffp-contract=off; we only use FMA explicitly through intrinsics.)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on _mm512_undefined_pd (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "memcert/linalg/nmod/dmod.hpp"
#include "dmod_internal.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert {
namespace fast_detail {

ModCtx::ModCtx(std::uint64_t prime) {
  if (prime < 3 || prime >= kDmodPrimeBound) throw std::invalid_argument("dmod: prime must be in [3, 2^26)");
  p = static_cast<double>(prime);
  pinv = 1.0 / p;
  h = static_cast<double>((prime - 1) / 2);
  const double two53 = 9007199254740992.0;
  // Margin p (not 1) so that |x| <= 2^53 - p and the quotient product q p in reduce_one stays exact.
  double km = std::floor((two53 - p - h) / (h * h));
  kmax = km > 1e6 ? 1000000 : static_cast<std::size_t>(km);
  if (kmax < 1) kmax = 1;
}

namespace {

// ---------------------------------------------------------------------------------------------------
// Micro-kernels: C[0:mv, 0:nv] = reduce(C - Ap * Bp) for packed Ap (kc x MR, MR contiguous per k) and
// Bp (kc x NR, NR contiguous per k).

inline double reduce_scalar(double x, const ModCtx& M) { return reduce_one(x, M); }

// C[i][j] = reduce(C[i][j] - acc[i][j]), or plain C - acc in the floating-point mode (M.p == 0).
inline void writeback_scalar(const double* acc, int lda, double* C, std::size_t ldc, int mv, int nv,
                             const ModCtx& M) {
  if (M.p == 0) {
    for (int i = 0; i < mv; ++i)
      for (int j = 0; j < nv; ++j) C[i * ldc + j] -= acc[i * lda + j];
    return;
  }
  for (int i = 0; i < mv; ++i)
    for (int j = 0; j < nv; ++j) C[i * ldc + j] = reduce_scalar(C[i * ldc + j] - acc[i * lda + j], M);
}

constexpr int kGenMR = 4, kGenNR = 8;
void kernel_generic(std::size_t kc, const double* A, const double* B, double* C, std::size_t ldc, int mv,
                    int nv, const ModCtx& M) {
  double acc[kGenMR][kGenNR] = {};
  for (std::size_t k = 0; k < kc; ++k) {
    for (int i = 0; i < kGenMR; ++i) {
      const double ai = A[i];
      for (int j = 0; j < kGenNR; ++j) acc[i][j] += ai * B[j];  // exact: integer sums < 2^53
    }
    A += kGenMR;
    B += kGenNR;
  }
  writeback_scalar(&acc[0][0], kGenNR, C, ldc, mv, nv, M);
}

constexpr int k2MR = 6, k2NR = 8;
__attribute__((target("avx2,fma"))) inline __m256d reduce_avx2(__m256d x, __m256d p, __m256d pinv,
                                                                  __m256d h, __m256d mh) {
  __m256d q = _mm256_round_pd(_mm256_mul_pd(x, pinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(q, p, x);
  r = _mm256_sub_pd(r, _mm256_and_pd(_mm256_cmp_pd(r, h, _CMP_GT_OQ), p));
  r = _mm256_add_pd(r, _mm256_and_pd(_mm256_cmp_pd(r, mh, _CMP_LT_OQ), p));
  return r;
}

__attribute__((target("avx2,fma"))) void kernel_avx2(std::size_t kc, const double* A, const double* B,
                                                     double* C, std::size_t ldc, int mv, int nv,
                                                     const ModCtx& M) {
  __m256d c00 = _mm256_setzero_pd(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (std::size_t k = 0; k < kc; ++k) {
    __m256d b0 = _mm256_loadu_pd(B), b1 = _mm256_loadu_pd(B + 4);
    __m256d a;
    a = _mm256_broadcast_sd(A + 0); c00 = _mm256_fmadd_pd(a, b0, c00); c01 = _mm256_fmadd_pd(a, b1, c01);
    a = _mm256_broadcast_sd(A + 1); c10 = _mm256_fmadd_pd(a, b0, c10); c11 = _mm256_fmadd_pd(a, b1, c11);
    a = _mm256_broadcast_sd(A + 2); c20 = _mm256_fmadd_pd(a, b0, c20); c21 = _mm256_fmadd_pd(a, b1, c21);
    a = _mm256_broadcast_sd(A + 3); c30 = _mm256_fmadd_pd(a, b0, c30); c31 = _mm256_fmadd_pd(a, b1, c31);
    a = _mm256_broadcast_sd(A + 4); c40 = _mm256_fmadd_pd(a, b0, c40); c41 = _mm256_fmadd_pd(a, b1, c41);
    a = _mm256_broadcast_sd(A + 5); c50 = _mm256_fmadd_pd(a, b0, c50); c51 = _mm256_fmadd_pd(a, b1, c51);
    A += k2MR;
    B += k2NR;
  }
  alignas(32) double acc[k2MR][k2NR];
  _mm256_store_pd(acc[0], c00); _mm256_store_pd(acc[0] + 4, c01);
  _mm256_store_pd(acc[1], c10); _mm256_store_pd(acc[1] + 4, c11);
  _mm256_store_pd(acc[2], c20); _mm256_store_pd(acc[2] + 4, c21);
  _mm256_store_pd(acc[3], c30); _mm256_store_pd(acc[3] + 4, c31);
  _mm256_store_pd(acc[4], c40); _mm256_store_pd(acc[4] + 4, c41);
  _mm256_store_pd(acc[5], c50); _mm256_store_pd(acc[5] + 4, c51);
  if (mv == k2MR && nv == k2NR && M.p == 0) {
    for (int i = 0; i < k2MR; ++i)
      for (int j = 0; j < k2NR; j += 4) {
        double* cp = C + i * ldc + j;
        _mm256_storeu_pd(cp, _mm256_sub_pd(_mm256_loadu_pd(cp), _mm256_load_pd(acc[i] + j)));
      }
  } else if (mv == k2MR && nv == k2NR) {
    const __m256d p = _mm256_set1_pd(M.p), pinv = _mm256_set1_pd(M.pinv), h = _mm256_set1_pd(M.h),
                  mh = _mm256_set1_pd(-M.h);
    for (int i = 0; i < k2MR; ++i)
      for (int j = 0; j < k2NR; j += 4) {
        double* cp = C + i * ldc + j;
        __m256d x = _mm256_sub_pd(_mm256_loadu_pd(cp), _mm256_load_pd(acc[i] + j));
        _mm256_storeu_pd(cp, reduce_avx2(x, p, pinv, h, mh));
      }
  } else {
    writeback_scalar(&acc[0][0], k2NR, C, ldc, mv, nv, M);
  }
}

constexpr int k5MR = 8, k5NR = 24;
__attribute__((target("avx512f,avx512dq,fma"))) void kernel_avx512(std::size_t kc, const double* A,
                                                                   const double* B, double* C,
                                                                   std::size_t ldc, int mv, int nv,
                                                                   const ModCtx& M) {
  __m512d c[k5MR][3];
  for (int i = 0; i < k5MR; ++i) c[i][0] = c[i][1] = c[i][2] = _mm512_setzero_pd();
  for (std::size_t k = 0; k < kc; ++k) {
    const __m512d b0 = _mm512_loadu_pd(B), b1 = _mm512_loadu_pd(B + 8), b2 = _mm512_loadu_pd(B + 16);
#pragma GCC unroll 8
    for (int i = 0; i < k5MR; ++i) {
      const __m512d a = _mm512_set1_pd(A[i]);
      c[i][0] = _mm512_fmadd_pd(a, b0, c[i][0]);
      c[i][1] = _mm512_fmadd_pd(a, b1, c[i][1]);
      c[i][2] = _mm512_fmadd_pd(a, b2, c[i][2]);
    }
    A += k5MR;
    B += k5NR;
  }
  const __m512d p = _mm512_set1_pd(M.p), pinv = _mm512_set1_pd(M.pinv), h = _mm512_set1_pd(M.h),
                mh = _mm512_set1_pd(-M.h);
  if (mv == k5MR && nv == k5NR && M.p == 0) {
#pragma GCC unroll 8
    for (int i = 0; i < k5MR; ++i)
#pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) {
        double* cp = C + i * ldc + 8 * j;
        _mm512_storeu_pd(cp, _mm512_sub_pd(_mm512_loadu_pd(cp), c[i][j]));
      }
  } else if (mv == k5MR && nv == k5NR) {
#pragma GCC unroll 8
    for (int i = 0; i < k5MR; ++i)
#pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) {
        double* cp = C + i * ldc + 8 * j;
        __m512d x = _mm512_sub_pd(_mm512_loadu_pd(cp), c[i][j]);
        __m512d q = _mm512_roundscale_pd(_mm512_mul_pd(x, pinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512d r = _mm512_fnmadd_pd(q, p, x);
        r = _mm512_mask_sub_pd(r, _mm512_cmp_pd_mask(r, h, _CMP_GT_OQ), r, p);
        r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask(r, mh, _CMP_LT_OQ), r, p);
        _mm512_storeu_pd(cp, r);
      }
  } else {
    alignas(64) double acc[k5MR][k5NR];
    for (int i = 0; i < k5MR; ++i)
      for (int j = 0; j < 3; ++j) _mm512_store_pd(acc[i] + 8 * j, c[i][j]);
    writeback_scalar(&acc[0][0], k5NR, C, ldc, mv, nv, M);
  }
}

using KernelFn = void (*)(std::size_t, const double*, const double*, double*, std::size_t, int, int,
                          const ModCtx&);
struct KernelInfo {
  int mr, nr;
  KernelFn fn;
  const char* name;
};

KernelInfo select_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
    return {k5MR, k5NR, kernel_avx512, "avx512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {k2MR, k2NR, kernel_avx2, "avx2"};
  return {kGenMR, kGenNR, kernel_generic, "generic"};
}
const KernelInfo& kernel_info() {
  static const KernelInfo k = select_kernel();
  return k;
}

constexpr std::size_t kMC = 96, kKC = 192, kNC = 3072;

// Single-threaded blocked product on columns [j0, j1). `b_rows`: b holds B^T (row j of b is column j of
// B), so that A A^T needs no transposed copy; only the packing of B differs.
void gemm_range(std::size_t m, std::size_t j0, std::size_t j1, std::size_t k, const double* a,
                std::size_t lda, const std::size_t* acol, const double* b, std::size_t ldb, double* c,
                std::size_t ldc, const ModCtx& M, bool b_rows = false) {
  const KernelInfo& K = kernel_info();
  const std::size_t MR = K.mr, NR = K.nr;
  const std::size_t kcmax = std::min<std::size_t>(kKC, M.kmax);
  std::vector<double> bp, ap;
  for (std::size_t jc = j0; jc < j1; jc += kNC) {
    const std::size_t nc = std::min(kNC, j1 - jc);
    const std::size_t nslivers = (nc + NR - 1) / NR;
    for (std::size_t pc = 0; pc < k; pc += kcmax) {
      const std::size_t kc = std::min(kcmax, k - pc);
      // Packed buffers are reused without zeroing: only a partial sliver's padding must read as zero.
      if (bp.size() < nslivers * NR * kc) bp.resize(nslivers * NR * kc);
      for (std::size_t s = 0; s < nslivers; ++s) {
        double* dst = bp.data() + s * NR * kc;
        const std::size_t cs = jc + s * NR, w = std::min(NR, jc + nc - cs);
        if (w < NR) std::fill(dst, dst + NR * kc, 0.0);
        if (b_rows) {
          for (std::size_t jj = 0; jj < w; ++jj) {
            const double* src = b + (cs + jj) * ldb + pc;
            for (std::size_t kk = 0; kk < kc; ++kk) dst[kk * NR + jj] = src[kk];
          }
        } else {
          for (std::size_t kk = 0; kk < kc; ++kk) {
            const double* src = b + (pc + kk) * ldb + cs;
            std::memcpy(dst + kk * NR, src, w * sizeof(double));
          }
        }
      }
      for (std::size_t ic = 0; ic < m; ic += kMC) {
        const std::size_t mc = std::min(kMC, m - ic);
        const std::size_t mslivers = (mc + MR - 1) / MR;
        if (ap.size() < mslivers * MR * kc) ap.resize(mslivers * MR * kc);
        for (std::size_t s = 0; s < mslivers; ++s) {
          double* dst = ap.data() + s * MR * kc;
          const std::size_t rs = ic + s * MR, h = std::min(MR, ic + mc - rs);
          if (h < MR) std::fill(dst, dst + MR * kc, 0.0);
          for (std::size_t ii = 0; ii < h; ++ii) {
            const double* src = a + (rs + ii) * lda;
            if (acol)
              for (std::size_t kk = 0; kk < kc; ++kk) dst[kk * MR + ii] = src[acol[pc + kk]];
            else
              for (std::size_t kk = 0; kk < kc; ++kk) dst[kk * MR + ii] = src[pc + kk];
          }
        }
        for (std::size_t sj = 0; sj < nslivers; ++sj) {
          const std::size_t cs = jc + sj * NR, w = std::min(NR, jc + nc - cs);
          for (std::size_t si = 0; si < mslivers; ++si) {
            const std::size_t rs = ic + si * MR, h = std::min(MR, ic + mc - rs);
            K.fn(kc, ap.data() + si * MR * kc, bp.data() + sj * NR * kc, c + rs * ldc + cs, ldc,
                 static_cast<int>(h), static_cast<int>(w), M);
          }
        }
      }
    }
  }
}

}  // namespace

const char* dmod_kernel_isa() { return kernel_info().name; }

namespace {
// C -= A B (or A B^T with b_rows), the columns split among the threads.
void gemm_split(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
                const ModCtx& M, int threads, bool b_rows) {
  if (m == 0 || n == 0 || k == 0) return;
  const std::size_t NR = kernel_info().nr;
  if (threads > 1 && static_cast<double>(m) * n * k > 4.0e6 && n >= 2 * NR) {
    // Split the columns (NR-aligned) into about four chunks per thread, handed out one at a time: a
    // thread slowed by another process on its core then takes fewer chunks instead of holding the
    // others at the join. Each chunk packs its own panels; the partition changes nothing in the result
    // (each entry is one dot product in the same blocked order, and modular entries are exact).
    const std::size_t t = static_cast<std::size_t>(threads);
    const std::size_t chunks = std::max<std::size_t>(t, std::min<std::size_t>(4 * t, n / (8 * NR)));
    std::size_t per = (n + chunks - 1) / chunks;
    per = (per + NR - 1) / NR * NR;
    const std::size_t count = (n + per - 1) / per;
    parallel_for(count, threads, [&](std::size_t i) {
      const std::size_t j0 = i * per, j1 = std::min(n, (i + 1) * per);
      gemm_range(m, j0, j1, k, a, lda, acol, b, ldb, c, ldc, M, b_rows);
    });
    return;
  }
  gemm_range(m, 0, n, k, a, lda, acol, b, ldb, c, ldc, M, b_rows);
}
}  // namespace

void gemm_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
              const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
              const ModCtx& M, int threads) {
  gemm_split(m, n, k, a, lda, acol, b, ldb, c, ldc, M, threads, false);
}

void dmod_gemm_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                   const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
                   std::uint64_t p, int threads) {
  ModCtx M(p);
  gemm_sub(m, n, k, a, lda, acol, b, ldb, c, ldc, M, threads <= 0 ? fast_threads() : threads);
}


ModCtx ModCtx::floating() {
  ModCtx M;
  M.p = 0;
  M.kmax = 1000000;
  return M;
}

void gemm_plain_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                    const double* b, std::size_t ldb, double* c, std::size_t ldc, int threads) {
  static const ModCtx F = ModCtx::floating();
  gemm_sub(m, n, k, a, lda, nullptr, b, ldb, c, ldc, F, threads <= 0 ? fast_threads() : threads);
}

void gemm_plain_sub_bt(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                       const double* bt, std::size_t ldbt, double* c, std::size_t ldc, int threads) {
  static const ModCtx F = ModCtx::floating();
  gemm_split(m, n, k, a, lda, nullptr, bt, ldbt, c, ldc, F, threads <= 0 ? fast_threads() : threads, true);
}

}  // namespace fast_detail
}  // namespace memcert

// Single-precision matrix product C := A B for the Gram filter of nearest_pair.cpp (sgemm_internal.hpp).
// Float data (as models store them) need no more than float products for a FILTER whose error bound is
// proved: each entry is a sum of k float products accumulated in float in some order, with or without FMA,
// so |computed - exact| <= gamma_k^(24) sum |a_l b_l| + k eta_f (u = 2^-24, eta_f = 2^-149), the bound
// the caller uses. Twice the lanes of the double kernel per instruction, half the memory traffic.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's avx512fintrin.h false positive
#endif
#include <immintrin.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "sgemm_internal.hpp"

namespace memcert::fast_detail {

namespace {

// Rows [i0, i1) of C, columns [j0, j1) (j1 - j0 a multiple of 32 unless it is the generic kernel).
void sgemm_generic(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1, std::size_t k, const float* a,
                   const float* b, std::size_t ldb, float* c) {
  for (std::size_t i = i0; i < i1; ++i) {
    float* ci = c + i * ldb;
    std::fill(ci + j0, ci + j1, 0.0f);
    for (std::size_t l = 0; l < k; ++l) {
      const float ail = a[i * k + l];
      const float* bl = b + l * ldb;
      for (std::size_t j = j0; j < j1; ++j) ci[j] += ail * bl[j];
    }
  }
}

// R rows x 32 columns over kc values of k: A rows at stride lda, the B panel packed (kc x 32 contiguous);
// C gets the sum (first chunk) or adds it (later chunks).
template <int R>
__attribute__((target("avx512f,fma"))) inline void sgemm_tile_avx512(std::size_t kc, const float* a, std::size_t lda,
                                                                     const float* panel, float* c, std::size_t ldc,
                                                                     bool first) {
  __m512 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) {
    acc0[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc1[r] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  for (std::size_t l = 0; l < kc; ++l) {
    const __m512 b0 = _mm512_loadu_ps(panel + l * 32), b1 = _mm512_loadu_ps(panel + l * 32 + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + l]);
      acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc0[r]);
    _mm512_storeu_ps(c + r * ldc + 16, acc1[r]);
  }
}

// Column panels of 32 packed per chunk of 192 values of k (24 KB: stays in L1 across the row tiles).
__attribute__((target("avx512f,fma"))) void sgemm_avx512(std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1,
                                                         std::size_t k, const float* a, const float* b, std::size_t ldb,
                                                         float* c) {
  constexpr std::size_t kKC = 192;
  std::vector<float> panel(kKC * 32);
  for (std::size_t j = j0; j < j1; j += 32)
    for (std::size_t pc = 0; pc < k; pc += kKC) {
      const std::size_t kc = std::min(kKC, k - pc);
      for (std::size_t l = 0; l < kc; ++l) std::copy(b + (pc + l) * ldb + j, b + (pc + l) * ldb + j + 32, panel.data() + l * 32);
      std::size_t i = i0;
      for (; i + 6 <= i1; i += 6) sgemm_tile_avx512<6>(kc, a + i * k + pc, k, panel.data(), c + i * ldb + j, ldb, pc == 0);
      for (; i < i1; ++i) sgemm_tile_avx512<1>(kc, a + i * k + pc, k, panel.data(), c + i * ldb + j, ldb, pc == 0);
    }
}

bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}

}  // namespace

void sgemm_plain(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c, int threads) {
  if (m == 0 || n == 0) return;
  const bool vec = has_avx512() && n % 32 == 0;
  auto run = [&](std::size_t j0, std::size_t j1) {
    if (vec) sgemm_avx512(0, m, j0, j1, k, a, b, n, c);
    else sgemm_generic(0, m, j0, j1, k, a, b, n, c);
  };
  // Column panels split among the threads (32-aligned); the split changes no entry's summation order.
  const std::size_t t = static_cast<std::size_t>(std::max(1, threads));
  std::size_t per = (n + t - 1) / t;
  per = (per + 31) / 32 * 32;
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < t && w * per < n; ++w)
    pool.emplace_back([&, w] { run(w * per, std::min(n, (w + 1) * per)); });
  run(0, std::min(n, per));
  for (auto& th : pool) th.join();
}

}  // namespace memcert::fast_detail

// Exact Gram matrices of small-integer matrices by 16-bit integer dot products (gram_int16.hpp).
//
// Layout: C is packed once into 64-row panels of 32-bit words, word (p, q, jj) holding the pair
// (C[64p + jj][2q], C[64p + jj][2q + 1]) as two int16. A panel's 64 words at pair index q are one 512-bit
// (or four 256-bit) vector for the column side; a single word, broadcast, is the row side's pair. So one
// packed copy (a quarter of the int64 input's bytes) serves both operands of C C^T, and each
// vpdpwssd adds C[i][2q] C[j][2q] + C[i][2q+1] C[j][2q+1] into the 32-bit lane of (i, j).
#include "memcert/linalg/zmat/gram_int16.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string_view>
#include <vector>

#include "memcert/util/parallel.hpp"
#include "memcert/util/threads.hpp"

namespace memcert {

namespace {

__extension__ typedef unsigned __int128 u128;  // exact sums of squares

constexpr std::size_t kPanel = 64;       // columns j of C C^T per packed panel
constexpr std::size_t kMR = 6;           // rows i per tile (6 x 4 accumulators + 4 operands: 28 of 32 registers)
constexpr std::size_t kChunkMax = 2048;  // pair indices per pass: a panel's 2048 x 256 bytes stay in L2
constexpr std::size_t kChunkMin = 128;   // fewest pair indices between flushes (see gram_lower_exact_i16)
constexpr std::int64_t kMax16 = 32767;   // -32768 excluded: its square pair, 2^31, would not fit a lane

struct Packed {
  std::size_t k = 0, n2 = 0, panels = 0;
  std::unique_ptr<std::uint32_t[]> w;
  const std::uint32_t* panel(std::size_t p) const { return w.get() + p * n2 * kPanel; }
  // Row i's pair words, one every kPanel words.
  const std::uint32_t* row(std::size_t i) const { return panel(i / kPanel) + i % kPanel; }
};

// floor(sqrt(x)).
std::uint64_t isqrt(std::uint64_t x) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(x)));
  while (r > 0 && r * r > x) --r;
  while ((r + 1) * (r + 1) <= x) ++r;
  return r;
}

std::uint32_t pair_word(std::int64_t lo, std::int64_t hi) {
  return static_cast<std::uint32_t>(static_cast<std::uint16_t>(lo)) |
         (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16);
}

// Packs C (see the header) and returns max |c_il| (or -1, early, when some entry exceeds `bound`, at most
// 32767) and sum c_il^2 (exact in 128 bits).
struct PackStats {
  std::int64_t max_abs = 0;  // -1: out of range
  u128 sum_sq = 0;
};
PackStats pack(const std::int64_t* a, std::size_t rows, std::size_t cols, bool transposed, std::uint64_t bound,
               Packed& P, int threads) {
  const std::size_t k = transposed ? cols : rows, n = transposed ? rows : cols;
  P.k = k;
  P.n2 = (n + 1) / 2;
  P.panels = (k + kPanel - 1) / kPanel;
  P.w = std::make_unique_for_overwrite<std::uint32_t[]>(P.panels * P.n2 * kPanel);
  std::vector<PackStats> stats(P.panels);
  std::atomic<bool> out_of_range{false};
  auto at = [&](std::size_t j, std::size_t l) -> std::int64_t {
    if (l >= n) return 0;
    return transposed ? a[l * cols + j] : a[j * cols + l];
  };
  parallel_for(P.panels, threads, [&](std::size_t p) {
    if (out_of_range.load(std::memory_order_relaxed)) return;
    std::uint32_t* w = P.w.get() + p * P.n2 * kPanel;
    std::uint64_t mx = 0;  // unsigned magnitudes: INT64_MIN and huge squares are no undefined behaviour
    u128 ss = 0;
    auto mag = [](std::int64_t x) { return x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x); };
    const std::size_t j0 = p * kPanel;
    const std::size_t live = std::min(kPanel, k - j0);
    if (transposed) {  // C[j][l] = a[l][j]: a panel's 64 entries of one l are contiguous in a
      for (std::size_t q = 0; q < P.n2; ++q) {
        std::uint32_t* wq = w + q * kPanel;
        for (std::size_t jj = 0; jj < live; ++jj) {
          const std::int64_t lo = at(j0 + jj, 2 * q), hi = at(j0 + jj, 2 * q + 1);
          const std::uint64_t ml = mag(lo), mh = mag(hi);
          mx = std::max({mx, ml, mh});
          ss += static_cast<u128>(ml * ml + mh * mh);
          wq[jj] = pair_word(lo, hi);
        }
        std::fill(wq + live, wq + kPanel, 0u);
        if (mx > bound) break;
      }
    } else {  // C[j][l] = a[j][l]: one row at a time, scattered into the panel (256 KB at n = 2000)
      for (std::size_t jj = 0; jj < kPanel; ++jj) {
        if (jj >= live) {
          for (std::size_t q = 0; q < P.n2; ++q) w[q * kPanel + jj] = 0;
          continue;
        }
        const std::int64_t* r = a + (j0 + jj) * cols;
        std::uint64_t row_ss = 0;  // n (2^15)^2 < 2^64 for n < 2^34
        for (std::size_t q = 0; q < P.n2; ++q) {
          const std::int64_t lo = r[2 * q], hi = 2 * q + 1 < n ? r[2 * q + 1] : 0;
          const std::uint64_t ml = mag(lo), mh = mag(hi);
          mx = std::max({mx, ml, mh});
          row_ss += ml * ml + mh * mh;  // wraps only for out-of-range entries, whose result is discarded
          w[q * kPanel + jj] = pair_word(lo, hi);
        }
        ss += row_ss;
        if (mx > bound) break;
      }
    }
    if (mx > bound) out_of_range.store(true, std::memory_order_relaxed);
    stats[p] = {static_cast<std::int64_t>(std::min<std::uint64_t>(mx, bound)), ss};
  });
  PackStats total;
  if (out_of_range.load()) {
    total.max_abs = -1;
    return total;
  }
  for (const PackStats& s : stats) {
    total.max_abs = std::max(total.max_abs, s.max_abs);
    total.sum_sq += s.sum_sq;
  }
  return total;
}

// Adds (or stores, when `first`) the tile's 32-bit sums acc[r][jj] into g rows i0 + r, columns 64 jp + jj.
template <std::size_t MR>
void flush_tile(const std::int32_t (&acc)[MR][kPanel], std::size_t i0, std::size_t jp, std::size_t k, double* g, bool first) {
  const std::size_t c0 = jp * kPanel, live = std::min(kPanel, k - c0);
  for (std::size_t r = 0; r < MR; ++r) {
    double* gi = g + (i0 + r) * k + c0;
    if (first)
      for (std::size_t jj = 0; jj < live; ++jj) gi[jj] = static_cast<double>(acc[r][jj]);
    else
      for (std::size_t jj = 0; jj < live; ++jj) gi[jj] += static_cast<double>(acc[r][jj]);
  }
}

// Rows i0 .. i0 + MR - 1 against panel jp, pair indices [q0, q1).
template <std::size_t MR>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tile_vnni(const Packed& P, std::size_t i0, std::size_t jp,
                                                                       std::size_t q0, std::size_t q1, double* g,
                                                                       bool first) {
  __m512i acc[MR][4];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (std::size_t c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_si512();
  const std::uint32_t* rp[MR];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < MR; ++r) rp[r] = P.row(i0 + r);
  const std::uint32_t* bp = P.panel(jp);
  for (std::size_t q = q0; q < q1; ++q) {
    const std::uint32_t* b = bp + q * kPanel;
    const __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 16), b2 = _mm512_loadu_si512(b + 32),
                  b3 = _mm512_loadu_si512(b + 48);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < MR; ++r) {
      const __m512i x = _mm512_set1_epi32(static_cast<int>(rp[r][q * kPanel]));
      acc[r][0] = _mm512_dpwssd_epi32(acc[r][0], x, b0);
      acc[r][1] = _mm512_dpwssd_epi32(acc[r][1], x, b1);
      acc[r][2] = _mm512_dpwssd_epi32(acc[r][2], x, b2);
      acc[r][3] = _mm512_dpwssd_epi32(acc[r][3], x, b3);
    }
  }
  alignas(64) std::int32_t out[MR][kPanel];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (std::size_t c = 0; c < 4; ++c) _mm512_store_si512(out[r] + 16 * c, acc[r][c]);
  flush_tile<MR>(out, i0, jp, P.k, g, first);
}

template <std::size_t MR>
__attribute__((target("avx2"))) void tile_avx2(const Packed& P, std::size_t i0, std::size_t jp, std::size_t q0,
                                               std::size_t q1, double* g, bool first) {
  alignas(64) std::int32_t out[MR][kPanel];
  const std::uint32_t* rp[MR];
  for (std::size_t r = 0; r < MR; ++r) rp[r] = P.row(i0 + r);
  const std::uint32_t* bp = P.panel(jp);
  // Sixteen columns at a time: 6 x 2 accumulators, 2 operands, a broadcast and a product (16 registers).
  for (std::size_t cg = 0; cg < kPanel; cg += 16) {
    __m256i acc[MR][2];
#pragma GCC unroll 8
    for (std::size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (std::size_t q = q0; q < q1; ++q) {
      const std::uint32_t* b = bp + q * kPanel + cg;
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)),
                    b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
#pragma GCC unroll 8
      for (std::size_t r = 0; r < MR; ++r) {
        const __m256i x = _mm256_set1_epi32(static_cast<int>(rp[r][q * kPanel]));
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, b0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, b1));
      }
    }
#pragma GCC unroll 8
    for (std::size_t r = 0; r < MR; ++r) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out[r] + cg), acc[r][0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(out[r] + cg + 8), acc[r][1]);
    }
  }
  flush_tile<MR>(out, i0, jp, P.k, g, first);
}

using TileFn = void (*)(const Packed&, std::size_t, std::size_t, std::size_t, std::size_t, double*, bool);

struct Kernel {
  TileFn tile[kMR + 1] = {};
  const char* name = "none";
};

Kernel avx2_kernel() {
  Kernel k;
  k.tile[1] = tile_avx2<1>, k.tile[2] = tile_avx2<2>, k.tile[3] = tile_avx2<3>;
  k.tile[4] = tile_avx2<4>, k.tile[5] = tile_avx2<5>, k.tile[6] = tile_avx2<6>;
  k.name = "avx2";
  return k;
}

Kernel choose_kernel() {
  Kernel k;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni")) {
    k.tile[1] = tile_vnni<1>, k.tile[2] = tile_vnni<2>, k.tile[3] = tile_vnni<3>;
    k.tile[4] = tile_vnni<4>, k.tile[5] = tile_vnni<5>, k.tile[6] = tile_vnni<6>;
    k.name = "avx512vnni";
  } else if (__builtin_cpu_supports("avx2")) {
    k = avx2_kernel();
  }
  return k;
}

const Kernel& kernel() {
  static const Kernel k = choose_kernel();
  return k;
}

// The exact Gram matrix with kernel K (gram_lower_exact_i16's contract; nullopt when K is "none").
std::optional<double> run(const Kernel& K, const std::int64_t* a, std::size_t rows, std::size_t cols,
                          bool transposed, double* g, int threads) {
  if (!K.tile[1]) return std::nullopt;
  const std::size_t k = transposed ? cols : rows, n = transposed ? rows : cols;
  if (k == 0) return 0.0;
  const int t = threads <= 0 ? fast_threads() : threads;
  Packed P;
  // The largest magnitude worth packing: 16 bits, a flush length of min(n/2, 128) pairs at least (checked
  // again below on the actual maximum), and n max^2 <= 2^53. Packing stops at the first entry above it.
  const std::size_t n2 = (n + 1) / 2, want = std::clamp<std::size_t>(n2, 1, kChunkMin);
  const std::uint64_t bound = std::min({static_cast<std::uint64_t>(kMax16), isqrt(2147483647u / (2 * want)),
                                        isqrt((std::uint64_t(1) << 53) / std::max<std::size_t>(n, 1))});
  const PackStats s = pack(a, rows, cols, transposed, bound, P, t);
  if (s.max_abs < 0) return std::nullopt;
  const double m2 = static_cast<double>(s.max_abs) * static_cast<double>(s.max_abs);  // exact (< 2^30)
  // Every partial sum of a Gram entry is at most n max^2: exact as a double when <= 2^53.
  if (static_cast<double>(n) * m2 > 0x1p53) return std::nullopt;
  // A lane gains at most 2 max^2 per pair index: flush before 2^31 - 1 could be passed.
  const std::size_t q_overflow = s.max_abs == 0 ? P.n2 : static_cast<std::size_t>(2147483647.0 / (2 * m2));
  const std::size_t chunk = std::max<std::size_t>(1, std::min({q_overflow, kChunkMax, P.n2}));
  // Each flush reads and writes the whole triangle: worth it only after enough products (entries up to
  // about 2900 in magnitude); wider entries are left to the double Gram product.
  if (chunk < std::min<std::size_t>(P.n2, kChunkMin)) return std::nullopt;
  // Panels of columns handed out largest first (panel jp has the k - 64 jp rows at and below it).
  parallel_for(P.panels, t, [&](std::size_t jp) {
    for (std::size_t q0 = 0; q0 < P.n2; q0 += chunk) {
      const std::size_t q1 = std::min(P.n2, q0 + chunk);
      for (std::size_t i0 = jp * kPanel; i0 < k; i0 += kMR) {
        const std::size_t mr = std::min(kMR, k - i0);
        K.tile[mr](P, i0, jp, q0, q1, g, q0 == 0);
      }
    }
    if (P.n2 == 0)  // n = 0: C C^T is zero
      for (std::size_t i = jp * kPanel; i < k; ++i)
        std::fill(g + i * k + jp * kPanel, g + i * k + std::min(k, jp * kPanel + kPanel), 0.0);
  });
  return static_cast<double>(s.sum_sq);
}

}  // namespace

const char* gram_int16_kernel_name() { return kernel().name; }

std::optional<double> gram_lower_exact_i16(const std::int64_t* a, std::size_t rows, std::size_t cols,
                                           bool transposed, double* g, int threads) {
  return run(kernel(), a, rows, cols, transposed, g, threads);
}

std::optional<double> gram_lower_exact_i16_kernel(const char* name, const std::int64_t* a, std::size_t rows,
                                                  std::size_t cols, bool transposed, double* g, int threads) {
  const Kernel& best = kernel();
  Kernel k;
  if (std::string_view(name) == "avx2" && __builtin_cpu_supports("avx2")) k = avx2_kernel();
  else if (std::string_view(name) == best.name) k = best;
  return run(k, a, rows, cols, transposed, g, threads);
}

}  // namespace memcert

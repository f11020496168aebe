// w = G v for a symmetric matrix stored as the lower triangle of a row-major buffer: the product behind
// the Lanczos estimate of sigma_max in the numerical rank (numerical_rank.cpp). Each product reads the
// whole triangle (16 MB at k = 2000), so it is spread over threads and vectorized; the Lanczos steps
// around it are sequential, and before this they were the numerical rank's largest serial stage.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert {

namespace {

// Rows [r0, r1) of the triangle: w[i] += sum_{j<=i} g_ij v_j and w[j] += g_ij v_i for j < i.
__attribute__((target_clones("avx512f", "avx2", "default"))) void symmetric_lower_rows_mul_vec(
    const double* g, std::size_t k, std::size_t r0, std::size_t r1, const double* v, double* w) {
  for (std::size_t i = r0; i < r1; ++i) {
    const double* gi = g + i * k;
    const double vi = v[i];
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;  // independent sums, so the loop vectorizes
    std::size_t j = 0;
    for (; j + 4 <= i; j += 4) {
      a0 += gi[j] * v[j], a1 += gi[j + 1] * v[j + 1], a2 += gi[j + 2] * v[j + 2], a3 += gi[j + 3] * v[j + 3];
      w[j] += gi[j] * vi, w[j + 1] += gi[j + 1] * vi, w[j + 2] += gi[j + 2] * vi, w[j + 3] += gi[j + 3] * vi;
    }
    for (; j < i; ++j) a0 += gi[j] * v[j], w[j] += gi[j] * vi;
    w[i] += (a0 + a1) + (a2 + a3) + gi[i] * vi;
  }
}

}  // namespace

void symmetric_lower_mul_vec(const double* g, std::size_t k, const double* v, double* w, int threads) {
  std::fill(w, w + k, 0.0);
  const int t = static_cast<int>(std::min<std::size_t>(threads <= 0 ? fast_threads() : threads, k / 256 + 1));
  if (t <= 1) {
    symmetric_lower_rows_mul_vec(g, k, 0, k, v, w);
    return;
  }
  // Part p takes rows [k sqrt(p/t), k sqrt((p+1)/t)): equal areas of the triangle. Each part sums into its
  // own vector (its transposed updates reach every earlier row), added up at the end.
  std::vector<std::size_t> cut(static_cast<std::size_t>(t) + 1);
  for (int p = 0; p <= t; ++p)
    cut[static_cast<std::size_t>(p)] = std::min(k, static_cast<std::size_t>(std::llround(static_cast<double>(k) * std::sqrt(static_cast<double>(p) / t))));
  std::vector<double> part(static_cast<std::size_t>(t - 1) * k, 0.0);
  parallel_for(static_cast<std::size_t>(t), t, [&](std::size_t p) {
    double* out = p == 0 ? w : part.data() + (p - 1) * k;
    symmetric_lower_rows_mul_vec(g, k, cut[p], cut[p + 1], v, out);
  });
  for (int p = 1; p < t; ++p) {
    const double* src = part.data() + static_cast<std::size_t>(p - 1) * k;
    for (std::size_t i = 0; i < k; ++i) w[i] += src[i];
  }
}

}  // namespace memcert

// Rank profile modulo a word-size prime (Gaussian elimination over F_p).
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/numeric/modp.hpp"

#include <algorithm>
#include <numeric>

namespace memcert {

using modp::u64;

ModpRankProfile zmat_rank_profile_modp(const ZMatrix& a, std::uint64_t p) {
  const std::size_t m = a.rows(), n = a.cols();
  std::vector<u64> w(m * n);
  for (std::size_t i = 0; i < m * n; ++i) w[i] = modp::reduce(a.data()[i], p);
  std::vector<std::size_t> order(m);  // order[r] = original index of the row now at position r
  std::iota(order.begin(), order.end(), 0);
  ModpRankProfile prof;
  prof.prime = p;
  std::size_t r = 0;
  for (std::size_t j = 0; j < n && r < m; ++j) {
    std::size_t piv = r;
    while (piv < m && w[piv * n + j] == 0) ++piv;
    if (piv == m) continue;
    if (piv != r) {
      std::swap_ranges(w.begin() + piv * n, w.begin() + piv * n + n, w.begin() + r * n);
      std::swap(order[piv], order[r]);
    }
    // Normalise the pivot row, then eliminate below. Only earlier pivot rows are ever subtracted from a
    // pivot row, so A[pivot_rows, pivot_cols] = L * U with U's diagonal non-zero: det != 0 mod p.
    const u64 inv = modp::nmod_inv(w[r * n + j], p);
    u64* pr = &w[r * n];
    for (std::size_t c = j; c < n; ++c) pr[c] = modp::nmod_mul(pr[c], inv, p);
    for (std::size_t i = r + 1; i < m; ++i) {
      u64* ri = &w[i * n];
      const u64 f = ri[j];
      if (f == 0) continue;
      const u64 nf = p - f;
      for (std::size_t c = j; c < n; ++c) ri[c] = (ri[c] + nf * pr[c]) % p;
    }
    prof.pivot_rows.push_back(order[r]);
    prof.pivot_cols.push_back(j);
    ++r;
  }
  prof.rank = r;
  std::sort(prof.pivot_rows.begin(), prof.pivot_rows.end());
  return prof;
}

}  // namespace memcert

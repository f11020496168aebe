// Filtered exact minimum token distance (separation_filter.hpp): a double pass over all pairs with a
// proved error bound (blocked Gram matrix, or a sweep window for the points the Gram route declines), then
// exact big-integer arithmetic only on the pairs the bound cannot rule out.
#include "separation_filter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "memcert/linalg/fmat/nearest_pair.hpp"
#include "memcert/numeric/filter.hpp"

namespace memcert::mahdavi24::detail {

namespace {

Integer exact_sq_distance(const std::vector<Integer>& a, const std::vector<Integer>& b) {
  Integer s = 0, df;
  for (std::size_t c = 0; c < a.size(); ++c) {
    mpz_sub(df.get_mpz_t(), a[c].get_mpz_t(), b[c].get_mpz_t());
    mpz_addmul(s.get_mpz_t(), df.get_mpz_t(), df.get_mpz_t());
  }
  return s;
}

// The tokens as doubles when every value is exactly one.
bool tokens_as_doubles(const std::vector<QVector>& toks, std::vector<double>& out) {
  std::size_t d = toks.empty() ? 0 : toks[0].size();
  out.resize(toks.size() * d);
  for (std::size_t i = 0; i < toks.size(); ++i)
    for (std::size_t c = 0; c < d; ++c) {
      double x = toks[i][c].get_d();
      if (!std::isfinite(x) || rational_from_double(x) != toks[i][c]) return false;
      out[i * d + c] = x;
    }
  return true;
}

// The sweep-line filter: the fallback for points the Gram route declines (values that do not scale
// exactly by one power of two, non-finite values).
std::vector<std::pair<std::size_t, std::size_t>> nearest_pair_candidates_sweep(const std::vector<const double*>& pts,
                                                                               std::size_t d) {
  const std::size_t m = pts.size();
  std::vector<std::pair<std::size_t, std::size_t>> candidates;
  if (m < 2) return candidates;
  // fl(x - y) = (x - y)(1 + e1) (subtraction is exact when it underflows), fl(t^2) = t^2 (1 + e2) + a with
  // |a| <= eta / 2, recursive sum of d non-negative terms: |s - S| <= gamma_{d+2} S + d eta. Doubling the
  // relative and absolute terms covers the roundings of lo and hi themselves (each <= u relative, and
  // gamma_{d+2} >= 3u).
  const double u = 0x1p-53, eta = 0x1p-1074;
  const double nu = static_cast<double>(d + 2) * u;
  const double rel = 2 * nu / (1 - nu);
  const double abs_err = 2 * static_cast<double>(d) * eta;
  // Sweep along the coordinate with the widest range: |x_c - y_c| <= ||x - y|| for every coordinate c,
  // so once the sweep coordinates of two tokens differ by more than the current best upper bound, no
  // later token in sorted order can be nearer. O(m) memory (the former all-pairs table needed m^2/2
  // doubles: 10^11 at 394k tokens); time O(m log m + pairs inside the sweep window), which is m^2/2 only
  // when the tokens are concentrated along every coordinate relative to their nearest distance.
  std::size_t sweep = 0;
  double widest = -1;
  for (std::size_t c = 0; c < d; ++c) {
    double mn = pts[0][c], mx = pts[0][c];
    for (std::size_t i = 1; i < m; ++i) mn = std::min(mn, pts[i][c]), mx = std::max(mx, pts[i][c]);
    if (mx - mn > widest) widest = mx - mn, sweep = c;  // a heuristic only: any coordinate is sound
  }
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pts[a][sweep] < pts[b][sweep]; });
  double best_hi = std::numeric_limits<double>::infinity();
  std::vector<double> cand_lo;
  std::size_t prune_at = 4096;
  auto prune = [&] { nearest_pair_candidates_prune(candidates, cand_lo, best_hi); };
  for (std::size_t p = 0; p < m; ++p) {
    const std::size_t i = order[p];
    for (std::size_t q = p + 1; q < m; ++q) {
      const std::size_t j = order[q];
      // Lower bound of the exact (x_j - x_i)^2 >= 0 at the sweep coordinate: fl(t) = delta (1 + e),
      // fl(t^2) <= fl(t)^2 (1 + u) + eta / 2, so delta^2 >= (fl(t^2) - eta / 2) / (1 + u)^3; subtracting
      // 2 eta and scaling by 1 - 2^-50 (both rounded, (1 + u)^5 (1 - 2^-50) < 1) stays below it.
      const double t = pts[j][sweep] - pts[i][sweep];
      if ((t * t - 0x1p-1073) * (1 - 0x1p-50) > best_hi) break;
      const double* a = pts[i];
      const double* b = pts[j];
      double s = 0;
      for (std::size_t c = 0; c < d; ++c) {
        double w = a[c] - b[c];
        s += w * w;
      }
      const double lo = (s - abs_err) * (1 - rel);
      const double hi = (s + abs_err) * (1 + rel);
      if (hi < best_hi) best_hi = hi;
      if (!(lo > best_hi)) candidates.emplace_back(std::min(i, j), std::max(i, j)), cand_lo.push_back(lo);  // NaN/inf keep the pair
    }
    if (candidates.size() > prune_at) prune(), prune_at = std::max<std::size_t>(4096, 2 * candidates.size());
  }
  prune();
  return candidates;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> nearest_pair_candidates(const std::vector<const double*>& pts,
                                                                         std::size_t d) {
  // The blocked Gram first: m^2 d flops at matrix-product speed, where the sweep degenerates to scalar
  // m^2 d work on data concentrated along every coordinate (Gaussian tokens in high dimension).
  return *filtered<std::vector<std::pair<std::size_t, std::size_t>>>(
      [&] { return nearest_pair_candidates_gram(pts, d); },
      [&] { return std::optional(nearest_pair_candidates_sweep(pts, d)); });
}

Integer min_sq_distance_filtered(const std::vector<QVector>& toks, const std::vector<std::vector<Integer>>& z) {
  const std::size_t m = z.size();
  if (m < 2) return -1;
  const std::size_t d = z[0].size();
  // The pairs the double filter cannot rule out (when every value is exactly a double), else all pairs;
  // then the exact minimum over them.
  using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;
  const Pairs candidates = *filtered<Pairs>(
      [&]() -> std::optional<Pairs> {
        std::vector<double> x;
        if (!tokens_as_doubles(toks, x)) return std::nullopt;
        std::vector<const double*> pts(m);
        for (std::size_t i = 0; i < m; ++i) pts[i] = x.data() + i * d;
        return nearest_pair_candidates(pts, d);
      },
      [&] {
        Pairs all;
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = i + 1; j < m; ++j) all.emplace_back(i, j);
        return std::optional(std::move(all));
      });
  Integer best = -1;
  for (auto [i, j] : candidates) {
    Integer s = exact_sq_distance(z[i], z[j]);
    if (best < 0 || s < best) best = s;
  }
  return best;
}

}  // namespace memcert::mahdavi24::detail

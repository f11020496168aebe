// Filtered exact minimum token distance (separation_filter.hpp): a double pass over all pairs with a
// proved error bound, then exact big-integer arithmetic only on the pairs the bound cannot rule out.
#include "separation_filter.hpp"

#include <cmath>
#include <limits>

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

}  // namespace

Integer min_sq_distance_filtered(const std::vector<QVector>& toks, const std::vector<std::vector<Integer>>& z) {
  const std::size_t m = z.size();
  if (m < 2) return -1;
  const std::size_t d = z[0].size();
  std::vector<double> x;
  std::vector<std::pair<std::size_t, std::size_t>> candidates;
  if (tokens_as_doubles(toks, x)) {
    // fl(x - y) = (x - y)(1 + e1) (subtraction is exact when it underflows), fl(t^2) = t^2 (1 + e2) + a with
    // |a| <= eta / 2, recursive sum of d non-negative terms: |s - S| <= gamma_{d+2} S + d eta. Doubling the
    // relative and absolute terms covers the roundings of lo and hi themselves (each <= u relative, and
    // gamma_{d+2} >= 3u).
    const double u = 0x1p-53, eta = 0x1p-1074;
    const double nu = static_cast<double>(d + 2) * u;
    const double rel = 2 * nu / (1 - nu);
    const double abs_err = 2 * static_cast<double>(d) * eta;
    std::vector<double> lo(m * (m - 1) / 2);
    double best_hi = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0, k = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j, ++k) {
        const double* a = x.data() + i * d;
        const double* b = x.data() + j * d;
        double s = 0;
        for (std::size_t c = 0; c < d; ++c) {
          double t = a[c] - b[c];
          s += t * t;
        }
        lo[k] = (s - abs_err) * (1 - rel);
        double hi = (s + abs_err) * (1 + rel);
        if (hi < best_hi) best_hi = hi;
      }
    for (std::size_t i = 0, k = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j, ++k)
        if (!(lo[k] > best_hi)) candidates.emplace_back(i, j);  // NaN/inf keep the pair
  } else {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j) candidates.emplace_back(i, j);
  }
  Integer best = -1;
  for (auto [i, j] : candidates) {
    Integer s = exact_sq_distance(z[i], z[j]);
    if (best < 0 || s < best) best = s;
  }
  return best;
}

}  // namespace memcert::mahdavi24::detail

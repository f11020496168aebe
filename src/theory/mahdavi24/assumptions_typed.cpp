// mahdavi24's hypotheses on typed storage (assumptions.hpp, assumptions_report_typed): the same decisions
// as assumptions.cpp, routed through the engine's certified kernels so float data never become one GMP
// rational per entry (2000 ViT-B examples are 300M entries).
#include <algorithm>
#include <cmath>
#include <limits>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/dispatch.hpp"
#include "memcert/util/progress.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"
#include "kruskal_json.hpp"
#include "separation_filter.hpp"

namespace memcert::mahdavi24 {

using nlohmann::json;

namespace {

// The values of `a` as exact doubles: f64 itself for float64 storage (no copy), else converted into
// `buf`; nullptr when some value is not a double (rationals, int64 beyond 2^53).
const double* typed_doubles(const TypedMatrix& a, Matrix<double>& buf) {
  if (a.storage == Storage::float64) return a.f64.data();
  if (!typed_matrix_to_double(a, buf)) return nullptr;
  return buf.data().data();
}

bool has_zero_row(const TypedMatrix& a) {
  for (std::size_t i = 0; i < a.rows; ++i) {
    bool zero = true;
    for (std::size_t j = 0; j < a.cols && zero; ++j) {
      const std::size_t k = i * a.cols + j;
      zero = a.storage == Storage::int64 ? a.i64[k] == 0 : a.storage == Storage::float64 ? a.f64[k] == 0 : a.q(i, j) == 0;
    }
    if (zero) return true;
  }
  return false;
}

// Exact sum of squares / squared distance of doubles, in rationals (only for the few candidates).
Rational exact_sq_norm(const double* a, std::size_t d) {
  Rational s = 0;
  for (std::size_t c = 0; c < d; ++c) {
    Rational x = rational_from_double(a[c]);
    s += x * x;
  }
  return s;
}
Rational exact_sq_distance(const double* a, const double* b, std::size_t d) {
  Rational s = 0;
  for (std::size_t c = 0; c < d; ++c) {
    Rational x = rational_from_double(a[c]) - rational_from_double(b[c]);
    s += x * x;
  }
  return s;
}

// Rows n e_t + sum_j x_j^(t) (n times e_t + xbar_t: the same Kruskal rank, and a dependency among these
// rows is one among the e_t + xbar_t). Doubles when every sum is exact (TwoSum / FMA error terms all
// zero), else the exact rationals.
TypedMatrix assumption3_rows(const double* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d) {
  std::vector<double> out(T * d);
  bool exact = true;
  const double nn = static_cast<double>(n);
  for (std::size_t t = 0; t < T && exact; ++t)
    for (std::size_t c = 0; c < d && exact; ++c) {
      double s = nn * qry[t * d + c];
      exact = std::fma(nn, qry[t * d + c], -s) == 0 && std::isfinite(s);
      for (std::size_t j = 0; j < n && exact; ++j) {
        const double x = ctx[(t * n + j) * d + c], r = s + x;
        const double bv = r - s, err = (s - (r - bv)) + (x - bv);  // TwoSum: s + x = r + err exactly
        exact = err == 0 && std::isfinite(r);
        s = r;
      }
      out[t * d + c] = s;
    }
  if (exact) return typed_matrix_from_f64(T, d, std::move(out));
  QMatrix q(T, d);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) {
      Rational s = Rational(static_cast<long>(n)) * rational_from_double(qry[t * d + c]);
      for (std::size_t j = 0; j < n; ++j) s += rational_from_double(ctx[(t * n + j) * d + c]);
      q(t, c) = s;
    }
  return typed_matrix_from_qmat(std::move(q));
}

// Assumption 2 per context through rank_certified (the rows copied into typed storage of their own);
// the first failing context's dependency comes from the exact route.
json assumption2_typed(const TypedAttentionDataset& ds, int threads) {
  std::vector<std::size_t> failing;
  const std::size_t n = ds.n, d = ds.d, block = n * d;
  for (std::size_t t = 0; t < ds.T; ++t) {
    TypedMatrix e = typed_matrix_rows(ds.contexts, t * n, n);
    if (rank_certified(e, threads).rank < n) failing.push_back(t);
    progress_tick("assumption 2: context ranks", t + 1, ds.T);
  }
  json j{{"holds", failing.empty()}, {"failing", failing}};
  if (!failing.empty()) {
    const std::size_t t = failing[0];
    AttentionDataset one;
    QMatrix all = typed_matrix_to_qmat(ds.contexts);
    QMatrix e(n, d);
    std::copy(all.data().begin() + t * block, all.data().begin() + (t + 1) * block, e.data().begin());
    one.contexts.push_back(std::move(e));
    j["witness"] = qvec_to_json(assumption2_check(one, {0}).witness);
  }
  return j;
}

}  // namespace

KruskalCheck kruskal_at_least_typed(const TypedMatrix& vectors, std::size_t k, std::uint64_t budget, int threads) {
  const std::size_t rows = vectors.rows, trivial = std::min(vectors.rows, vectors.cols);
  KruskalCheck c;
  if (k == 0 || k > rows || binomial_saturating(rows, k) <= budget) {
    if (k == 0 || k > rows) return kruskal_at_least(typed_matrix_to_qmat(vectors), k, budget);
    // Linearly independent vectors have every subset independent: one certified rank decides level k
    // without enumerating C(rows, k) subsets (C(200, 197) = 1.3M eliminations at T = 200). The result is
    // the enumeration's own (at-least: lower k, upper min(rows, cols)).
    if (rows <= vectors.cols && rank_certified(vectors, threads).rank == rows) {
      c.lower = k, c.upper = trivial, c.method = "at-least", c.holds = true;
      return c;
    }
    KruskalOptions opt;
    opt.at_least = k;
    opt.max_subsets = budget;
    KruskalResult r = kruskal_rank_certified(vectors, opt);
    c.lower = r.lower, c.upper = r.upper, c.method = r.method;
    c.dependent_subset = r.dependent_subset;
    c.coefficients = r.dependent_coefficients;
    if (r.lower >= k) c.holds = true;
    else if (r.upper < k) c.holds = false;
    return c;
  }
  // kruskal_at_least's sampled protocol (same trials and seed) on the certified batched kernels.
  KruskalSample smp = kruskal_sample_certified(vectors, k, 2000, 20261121, threads);
  c.lower = has_zero_row(vectors) ? 0 : 1;
  c.upper = trivial;
  c.method = "sampled (" + std::to_string(smp.trials) + " random " + std::to_string(k) + "-subsets, " +
             std::to_string(smp.independent) + " certified independent)";
  if (smp.dependent > 0) {
    c.holds = false;
    c.upper = k - 1;
    c.dependent_subset = smp.first_dependent_subset;
    c.coefficients = smp.first_dependent_coefficients;
  }
  return c;
}

Separation token_separation_doubles(const std::vector<const double*>& points, std::size_t d) {
  // Distinct tokens (the minimum is over distinct ones): lexicographic sort on exact double comparisons.
  std::vector<const double*> p = points;
  auto less = [d](const double* a, const double* b) { return std::lexicographical_compare(a, a + d, b, b + d); };
  auto same = [d](const double* a, const double* b) { return std::equal(a, a + d, b); };
  std::sort(p.begin(), p.end(), less);
  p.erase(std::unique(p.begin(), p.end(), same), p.end());
  Separation s;
  s.r2 = 0;
  s.delta2 = 0;
  // r^2: each norm enclosed like a distance to the origin (separation_filter.hpp's bound); exact only
  // for the norms whose upper end reaches the largest lower end.
  const double u = 0x1p-53, eta = 0x1p-1074;
  const double nu = static_cast<double>(d + 2) * u, rel = 2 * nu / (1 - nu), abs_err = 2 * static_cast<double>(d) * eta;
  std::vector<double> hi(p.size());
  double best_lo = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double q = 0;
    for (std::size_t c = 0; c < d; ++c) q += p[i][c] * p[i][c];
    best_lo = std::max(best_lo, (q - abs_err) * (1 - rel));
    hi[i] = (q + abs_err) * (1 + rel);
  }
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!(hi[i] < best_lo)) s.r2 = std::max(s.r2, exact_sq_norm(p[i], d));
  Rational best = -1;
  for (auto [i, j] : detail::nearest_pair_candidates(p, d)) {
    Rational q = exact_sq_distance(p[i], p[j], d);
    if (best < 0 || q < best) best = q;
  }
  if (best > 0) s.delta2 = best;
  return s;
}

json assumptions_report_typed(const TypedAttentionDataset& ds, std::uint64_t budget, int threads) {
  Matrix<double> cbuf, qbuf;
  const double* ctx = typed_doubles(ds.contexts, cbuf);
  const double* qry = ctx ? typed_doubles(ds.queries, qbuf) : nullptr;
  if (!ctx || !qry) return assumptions_report(attention_dataset_from_typed(ds), budget);
  const std::size_t T = ds.T, n = ds.n, d = ds.d;
  json out;
  out["T"] = T;
  out["n"] = n;
  out["d"] = d;
  const auto kjson = detail::kruskal_check_json;
  const std::size_t k1 = std::min(n, T);
  KruskalCheck a1 = kruskal_at_least_typed(ds.queries, k1, budget, threads);
  json j1 = kjson(a1, k1);
  j1["remark1"] = "capacity >= H(min(k, d_h) - 1) + 1 with k = kruskal_lower = " + std::to_string(a1.lower);
  out["assumption1"] = j1;
  out["assumption2"] = assumption2_typed(ds, threads);
  out["assumption3"] = kjson(kruskal_at_least_typed(assumption3_rows(ctx, qry, T, n, d), k1, budget, threads), k1);
  const std::size_t kg = std::min(T, d);
  out["general_position"] = kjson(kruskal_at_least_typed(ds.queries, kg, budget, threads), kg);
  std::vector<const double*> pts;
  pts.reserve(T * n + T);
  for (std::size_t i = 0; i < T * n; ++i) pts.push_back(ctx + i * d);
  for (std::size_t t = 0; t < T; ++t) pts.push_back(qry + t * d);
  Separation s = token_separation_doubles(pts, d);
  out["separation"] = {{"r2", rational_to_string(s.r2)}, {"delta2", rational_to_string(s.delta2)}};
  return out;
}

}  // namespace memcert::mahdavi24

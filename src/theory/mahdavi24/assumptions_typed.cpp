// mahdavi24's hypotheses on typed storage (assumptions.hpp, assumptions_report_typed): the same decisions
// as assumptions.cpp, routed through the engine's certified kernels so float data never become one GMP
// rational per entry (2000 ViT-B examples are 300M entries).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
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

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// Exponent of the lowest set bit of the non-zero finite double x (x = odd * 2^result).
int low_bit_exponent(double x) {
  int e = 0;
  const double f = std::frexp(std::fabs(x), &e);  // |x| = f 2^e, f in [1/2, 1)
  const auto mant = static_cast<std::uint64_t>(std::ldexp(f, 53));  // exact: 53-bit integer
  return e - 53 + std::countr_zero(mant);
}

// x 2^E as an integer (exact: E >= -low_bit_exponent(x), |x| 2^E < 2^126 checked by the caller).
i128 scaled_to_i128(double x, int E) {
  if (x == 0) return 0;
  int e = 0;
  const double f = std::frexp(std::fabs(x), &e);
  i128 m = static_cast<i128>(static_cast<std::uint64_t>(std::ldexp(f, 53)));
  const int sh = e - 53 + E;
  m = sh >= 0 ? m << sh : m >> -sh;  // a right shift drops only zero bits (E covers the lowest set bit)
  return x < 0 ? -m : m;
}

Rational rational_from_i128(i128 v, int E) {
  const bool neg = v < 0;
  const u128 a = neg ? -static_cast<u128>(v) : static_cast<u128>(v);
  Integer z = static_cast<unsigned long>(static_cast<std::uint64_t>(a >> 64));
  z <<= 64;
  z += static_cast<unsigned long>(static_cast<std::uint64_t>(a));
  if (neg) z = -z;
  Rational q(z);
  if (E > 0) mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(E));
  else if (E < 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-E));
  return q;
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

// Rows n e_t + sum_j x_j^(t) (n times e_t + xbar_t: the same Kruskal rank, and a dependency among these
// rows is one among the e_t + xbar_t), summed exactly: in 128-bit fixed point with the common scale 2^E
// that makes every value an integer when the range allows (|value| 2^E (2n + 1) < 2^126), else in GMP
// rationals. Doubles when every row value is exactly one, else the exact rationals (converted once per
// row value, not per term: float32 tokens as small as 10^-9 make such sums need more than 53 bits).
TypedMatrix assumption3_rows_typed(const double* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d) {
  const std::size_t total_ctx = T * n * d, total_qry = T * d;
  int low = std::numeric_limits<int>::max(), high = std::numeric_limits<int>::min();
  bool finite = true;
  auto scan = [&](const double* v, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      if (!std::isfinite(v[k])) finite = false;
      else if (v[k] != 0) {
        int e = 0;
        std::frexp(v[k], &e);
        high = std::max(high, e);
        low = std::min(low, low_bit_exponent(v[k]));
      }
    }
  };
  scan(ctx, total_ctx);
  scan(qry, total_qry);
  const double nn = static_cast<double>(n);
  const int growth = static_cast<int>(std::ceil(std::log2(2 * nn + 1)));
  if (finite && (high == std::numeric_limits<int>::min() || high - low + growth < 126)) {
    const int E = high == std::numeric_limits<int>::min() ? 0 : -low;  // every value times 2^E is an integer
    std::vector<i128> sums(T * d);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < d; ++c) {
        i128 s = static_cast<i128>(n) * scaled_to_i128(qry[t * d + c], E);
        for (std::size_t j = 0; j < n; ++j) s += scaled_to_i128(ctx[(t * n + j) * d + c], E);
        sums[t * d + c] = s;
      }
    // As doubles when each sum has at most 53 significant bits (then ldexp is exact unless it underflows,
    // which the round trip catches).
    std::vector<double> out(T * d);
    bool doubles = true;
    for (std::size_t k = 0; k < sums.size() && doubles; ++k) {
      const i128 v = sums[k];
      const double hi = static_cast<double>(v);  // may round; checked exactly below
      doubles = std::isfinite(hi) && static_cast<i128>(hi) == v;
      if (doubles) {
        out[k] = std::ldexp(hi, -E);
        doubles = std::ldexp(out[k], E) == hi;
      }
    }
    if (doubles) return typed_matrix_from_f64(T, d, std::move(out));
    QMatrix q(T, d);
    for (std::size_t k = 0; k < sums.size(); ++k) q.data()[k] = rational_from_i128(sums[k], E);
    return typed_matrix_from_qmat(std::move(q));
  }
  QMatrix q(T, d);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) {
      Rational s = Rational(static_cast<long>(n)) * rational_from_double(qry[t * d + c]);
      for (std::size_t j = 0; j < n; ++j) s += rational_from_double(ctx[(t * n + j) * d + c]);
      q(t, c) = s;
    }
  return typed_matrix_from_qmat(std::move(q));
}

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
  out["assumption3"] = kjson(kruskal_at_least_typed(assumption3_rows_typed(ctx, qry, T, n, d), k1, budget, threads), k1);
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

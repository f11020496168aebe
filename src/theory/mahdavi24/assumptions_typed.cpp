// mahdavi24's hypotheses on typed storage (assumptions.hpp, assumptions_report_typed): the same decisions
// as assumptions.cpp, routed through the engine's certified kernels so float data never become one GMP
// rational per entry (2000 ViT-B examples are 300M entries).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/kruskal_sample.hpp"
#include "memcert/linalg/fmat/numerical_rank.hpp"
#include "memcert/util/parallel.hpp"
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
template <class F>
Rational exact_sq_norm(const F* a, std::size_t d) {
  Rational s = 0;
  for (std::size_t c = 0; c < d; ++c) {
    Rational x = rational_from_double(static_cast<double>(a[c]));
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

// A finite double x as mant * 2^exp with an integer mantissa (bit arithmetic: this runs once per value
// of the data, 3 * 10^8 times at 2000 ViT-B examples, where frexp/ldexp cost several times more).
struct DoubleParts {
  std::uint64_t mant;
  int exp;
};
DoubleParts double_parts(double x) {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t(1) << 52) - 1);
  if (biased == 0) return {frac, -1074};  // subnormal (or zero)
  return {frac | (std::uint64_t(1) << 52), biased - 1075};
}

// Exponent of the lowest set bit of the non-zero finite double x (x = odd * 2^result).
int low_bit_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.exp + std::countr_zero(p.mant);
}
// frexp's exponent of the non-zero finite double x (|x| = f 2^result, f in [1/2, 1)).
int high_exponent(double x) {
  const DoubleParts p = double_parts(x);
  return p.exp + static_cast<int>(std::bit_width(p.mant));
}

// x 2^E as an integer (exact: E >= -low_bit_exponent(x), |x| 2^E < 2^126 checked by the caller).
i128 scaled_to_i128(double x, int E) {
  if (x == 0) return 0;
  const DoubleParts p = double_parts(x);
  i128 m = static_cast<i128>(p.mant);
  const int sh = p.exp + E;
  m = sh >= 0 ? m << sh : m >> -sh;  // a right shift drops only zero bits (E covers the lowest set bit)
  return std::signbit(x) ? -m : m;
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

// The n columns of a context whose square minor Assumption 2 tries first: spread evenly over the d
// columns (column floor(i d / n) for i < n), so that no block of leading or trailing columns decides alone.
std::vector<std::size_t> assumption2_minor_columns(std::size_t n, std::size_t d) {
  std::vector<std::size_t> cols(n);
  for (std::size_t i = 0; i < n; ++i) cols[i] = i * d / n;
  return cols;
}

// Assumption 2 per context, contexts in parallel, each from its exact values (float32 read as stored,
// widened per context, never the whole data). A context in `proved_full` (numerical_rank_full_proved held
// for it: a proof of rank n) needs nothing more; otherwise first the n x n minor on assumption2_minor_columns, row-
// scaled to integers and eliminated mod p (a non-zero minor mod p is non-zero over Q: rank n certified, at
// n^3 instead of n^2 d work); when it is zero mod p, the whole n x d context mod p (dmat_batch_rank's
// filter); a context short of rank n mod p escalates to rank_certified (exact, two-sided). The first
// failing context's dependency comes from the exact route.
Assumption2Result assumption2_typed_result(const TypedAttentionDataset& ds, std::size_t T, const double* c64,
                                           const Float32Le* c32, int threads, const std::vector<char>* proved_full = nullptr) {
  const std::size_t n = ds.n, d = ds.d, block = n * d;
  const std::uint64_t p = prime_fast(0);
  const std::vector<std::size_t> mcols = assumption2_minor_columns(n, d);
  std::vector<char> full(T, 0);
  std::atomic<std::size_t> finished{0};
  parallel_for(T, threads <= 0 ? fast_threads() : threads, [&](std::size_t t) {
    thread_local std::vector<double> wide, minor;
    thread_local DModMatrix m;
    auto value = [&](std::size_t i, std::size_t c) {
      return c32 ? static_cast<double>(c32[t * block + i * d + c]) : c64[t * block + i * d + c];
    };
    if (n == 0 || (proved_full && (*proved_full)[t] && n <= d)) full[t] = 1;
    else if (n <= d) {
      minor.resize(n * n);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) minor[i * n + j] = value(i, mcols[j]);
      dmod_from_double_rows_into(minor.data(), n, n, p, m);
      full[t] = dmod_rank_profile(m, {.threads = 1, .in_place = true}).rank == n;
      if (!full[t]) {
        const double* e = c64 ? c64 + t * block : nullptr;
        if (c32) wide.assign(c32 + t * block, c32 + (t + 1) * block), e = wide.data();
        dmod_from_double_rows_into(e, n, d, p, m);
        full[t] = dmod_rank_profile(m, {.threads = 1, .in_place = true}).rank == n;
      }
    }
    progress_tick("assumption 2: context ranks", ++finished, T);
  });
  Assumption2Result r;
  for (std::size_t t = 0; t < T; ++t)
    if (!full[t] && rank_certified(typed_dataset_context(ds, t), threads).rank < n) r.failing.push_back(t);
  r.holds = r.failing.empty();
  if (!r.holds) {
    AttentionDataset one;
    one.contexts.push_back(typed_matrix_to_qmat(typed_dataset_context(ds, r.failing[0])));
    r.witness = assumption2_check(one, {0}).witness;
  }
  return r;
}

json assumption2_typed(const TypedAttentionDataset& ds, const double* c64, const Float32Le* c32, int threads,
                       const std::vector<char>* proved_full) {
  const Assumption2Result r = assumption2_typed_result(ds, ds.T, c64, c32, threads, proved_full);
  json j{{"holds", r.holds}, {"failing", r.failing}};
  if (!r.holds) j["witness"] = qvec_to_json(r.witness);
  return j;
}

}  // namespace

// Rows n e_t + sum_j x_j^(t) (n times e_t + xbar_t: the same Kruskal rank, and a dependency among these
// rows is one among the e_t + xbar_t), summed exactly: in 128-bit fixed point with the common scale 2^E
// that makes every value an integer when the range allows (|value| 2^E (2n + 1) < 2^126), else in GMP
// rationals. Doubles when every row value is exactly one, else the exact rationals (converted once per
// row value, not per term: float32 tokens as small as 10^-9 make such sums need more than 53 bits).
namespace {

// The rows summed in double with every rounding error measured (Knuth's TwoSum, exact in round-to-nearest
// without contraction: the build has -ffp-contract=off; n q_t checked by an FMA residual): where every
// error of example t is zero, every partial sum, hence every value of row t, is exact, and exact[t] = 1
// (the common case for float data: about 200 values of similar size per sum); rows with a non-zero or
// not-a-number error are left to the exact sums. Vectorises over the d columns, examples in parallel.
template <class F>
void assumption3_rows_twosum(const F* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d, int th,
                             std::vector<double>& out, std::vector<char>& exact) {
  out.assign(T * d, 0.0);
  exact.assign(T, 1);
  const double nn = static_cast<double>(n);
  parallel_for(T, th, [&](std::size_t t) {
    thread_local std::vector<double> err;
    err.assign(d, 0.0);
    double* row = out.data() + t * d;
    for (std::size_t c = 0; c < d; ++c) {
      const double q = qry[t * d + c];
      row[c] = nn * q;
      // The FMA residual is the product's exact error only away from underflow: tiny queries fail here.
      err[c] = q != 0 && std::abs(q) < 0x1p-900 ? 1.0 : std::abs(std::fma(nn, q, -row[c]));
    }
    for (std::size_t j = 0; j < n; ++j) {
      const F* x = ctx + (t * n + j) * d;
      for (std::size_t c = 0; c < d; ++c) {
        const double a = row[c], b = static_cast<double>(x[c]), s = a + b, bb = s - a;
        err[c] += std::abs((a - (s - bb)) + (b - bb));
        row[c] = s;
      }
    }
    for (std::size_t c = 0; c < d; ++c)
      if (!(err[c] == 0) || !std::isfinite(row[c])) exact[t] = 0;  // a NaN error fails too
  });
}

// `scaled`: the rows may come back multiplied by one common power of two 2^E (int64 storage, when the
// sums are not all doubles but all fit): the same Kruskal rank and the same dependency coefficients as
// the rows themselves, without a GMP rational per value (the report's route; assumption3_rows_typed's
// contract is the rows as they are).
template <class F>
TypedMatrix assumption3_rows_of(const F* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d,
                                int threads, bool scaled = false) {
  const int th = threads <= 0 ? fast_threads() : threads;
  std::vector<double> fast;
  std::vector<char> exact;
  assumption3_rows_twosum(ctx, qry, T, n, d, th, fast, exact);
  std::vector<std::size_t> slow;  // the examples whose rows need the exact sums below
  for (std::size_t t = 0; t < T; ++t)
    if (!exact[t]) slow.push_back(t);
  if (slow.empty()) return typed_matrix_from_f64(T, d, std::move(fast));
  // Rationals: the double rows as they are, the slow rows from `exact_row(i, c)`.
  auto rational_rows = [&](auto exact_row) {
    QMatrix q(T, d);
    for (std::size_t t = 0; t < T; ++t)
      if (exact[t])
        for (std::size_t c = 0; c < d; ++c) q(t, c) = rational_from_double(fast[t * d + c]);
    for (std::size_t i = 0; i < slow.size(); ++i)
      for (std::size_t c = 0; c < d; ++c) q(slow[i], c) = exact_row(i, c);
    return typed_matrix_from_qmat(std::move(q));
  };
  int low = std::numeric_limits<int>::max(), high = std::numeric_limits<int>::min();
  bool finite = true;
  // The exponent range of the slow examples (context and query), example by example, then reduced.
  const std::size_t S = slow.size();
  std::vector<int> lows(S, low), highs(S, high);
  std::vector<char> finites(S, 1);
  auto scan = [&](const auto* v, std::size_t count, std::size_t i) {
    for (std::size_t k = 0; k < count; ++k) {
      const double x = static_cast<double>(v[k]);
      if (!std::isfinite(x)) finites[i] = 0;
      else if (x != 0) {
        highs[i] = std::max(highs[i], high_exponent(x));
        lows[i] = std::min(lows[i], low_bit_exponent(x));
      }
    }
  };
  parallel_for(S, th, [&](std::size_t i) {
    scan(ctx + slow[i] * n * d, n * d, i);
    scan(qry + slow[i] * d, d, i);
  });
  for (std::size_t i = 0; i < S; ++i) {
    low = std::min(low, lows[i]);
    high = std::max(high, highs[i]);
    finite = finite && finites[i];
  }
  const double nn = static_cast<double>(n);
  const int growth = static_cast<int>(std::ceil(std::log2(2 * nn + 1)));
  if (finite && (high == std::numeric_limits<int>::min() || high - low + growth < 126)) {
    const int E = high == std::numeric_limits<int>::min() ? 0 : -low;  // every value times 2^E is an integer
    std::vector<i128> sums(S * d);
    parallel_for(S, th, [&](std::size_t i) {  // row by row through each context (sequential memory)
      const std::size_t t = slow[i];
      i128* row = sums.data() + i * d;
      for (std::size_t c = 0; c < d; ++c) row[c] = static_cast<i128>(n) * scaled_to_i128(qry[t * d + c], E);
      for (std::size_t j = 0; j < n; ++j) {
        const F* x = ctx + (t * n + j) * d;
        for (std::size_t c = 0; c < d; ++c) row[c] += scaled_to_i128(x[c], E);
      }
    });
    // As doubles when each sum has at most 53 significant bits (then ldexp is exact unless it underflows,
    // which the round trip catches).
    std::vector<double> out(S * d);
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
    if (doubles) {
      for (std::size_t i = 0; i < S; ++i) std::copy(out.begin() + i * d, out.begin() + (i + 1) * d, fast.begin() + slow[i] * d);
      return typed_matrix_from_f64(T, d, std::move(fast));
    }
    if (scaled) {
      // One scale 2^E2 for all rows: E for the slow sums, and at least every fast value's lowest set bit.
      int E2 = E;
      for (std::size_t t = 0; t < T; ++t)
        if (exact[t])
          for (std::size_t c = 0; c < d; ++c)
            if (const double x = fast[t * d + c]; x != 0) E2 = std::max(E2, -low_bit_exponent(x));
      constexpr i128 kLimit = i128(1) << 62;
      std::vector<std::int64_t> ints(T * d);
      bool fits = E2 - E < 62;
      for (std::size_t t = 0; t < T && fits; ++t) {
        if (!exact[t]) continue;
        for (std::size_t c = 0; c < d && fits; ++c) {
          const double x = fast[t * d + c];
          fits = x == 0 || high_exponent(x) + E2 < 62;
          if (fits) ints[t * d + c] = static_cast<std::int64_t>(scaled_to_i128(x, E2));
        }
      }
      for (std::size_t i = 0; i < S && fits; ++i)
        for (std::size_t c = 0; c < d && fits; ++c) {
          const i128 v = sums[i * d + c];
          fits = (v < 0 ? -v : v) < (kLimit >> (E2 - E));
          if (fits) ints[slow[i] * d + c] = static_cast<std::int64_t>(v * (i128(1) << (E2 - E)));
        }
      if (fits) return typed_matrix_from_i64(T, d, std::move(ints));
    }
    return rational_rows([&](std::size_t i, std::size_t c) { return rational_from_i128(sums[i * d + c], E); });
  }
  return rational_rows([&](std::size_t i, std::size_t c) {
    const std::size_t t = slow[i];
    Rational s = Rational(static_cast<long>(n)) * rational_from_double(qry[t * d + c]);
    for (std::size_t j = 0; j < n; ++j) s += rational_from_double(ctx[(t * n + j) * d + c]);
    return s;
  });
}

// kruskal_sample_certified's result (same subsets, same verdicts) by dmod_kruskal_sample_basis: the
// row-scaled residues of the exact values once (doubles, or rationals), exact rows only for escalations.
KruskalSample kruskal_sample_shared(const TypedMatrix& vectors, std::size_t size, std::size_t trials,
                                    std::uint64_t seed, int threads) {
  const std::uint64_t p = prime_fast(0);
  Matrix<double> dv;
  if (typed_matrix_to_double(vectors, dv))
    return dmod_kruskal_sample_basis(
        dmod_from_double_rows(dv.data().data(), dv.rows(), dv.cols(), p), size, trials, seed,
        [&](const std::vector<std::size_t>& sub) {
          return mat_map<Rational>(mat_select_rows(dv, sub), [](double x) { return rational_from_double(x); });
        },
        threads);
  if (vectors.storage == Storage::int64)  // beyond 2^53: residues of the integers themselves
    return dmod_kruskal_sample_basis(
        dmod_from_i64(vectors.i64.data(), vectors.rows, vectors.cols, p), size, trials, seed,
        [&](const std::vector<std::size_t>& sub) {
          QMatrix q(sub.size(), vectors.cols);
          for (std::size_t i = 0; i < sub.size(); ++i)
            for (std::size_t c = 0; c < vectors.cols; ++c) q(i, c) = Rational(static_cast<long>(vectors.i64[sub[i] * vectors.cols + c]));
          return q;
        },
        threads);
  const QMatrix q = typed_matrix_to_qmat(vectors);
  return dmod_kruskal_sample_basis(dmod_from_qmat(q, p), size, trials, seed,
                                   [&](const std::vector<std::size_t>& sub) { return mat_select_rows(q, sub); }, threads);
}

}  // namespace

TypedMatrix assumption3_rows_typed(const double* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d,
                                   int threads) {
  return assumption3_rows_of(ctx, qry, T, n, d, threads);
}
TypedMatrix assumption3_rows_typed(const Float32Le* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d,
                                   int threads) {
  return assumption3_rows_of(ctx, qry, T, n, d, threads);
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
  // kruskal_at_least's sampled protocol (same trials and seed) on the certified batched kernels, the
  // trials sharing one basis change (dmod_kruskal_sample_basis).
  KruskalSample smp = kruskal_sample_shared(vectors, k, 2000, 20261121, threads);
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

namespace {

// ||x||^2 of d exact values in double (products of floats are exact in double, so the enclosure below,
// proved for doubles, covers float data too).
template <class F>
double sq_norm_double(const F* x, std::size_t d) {
  double q = 0;
  for (std::size_t c = 0; c < d; ++c) q += static_cast<double>(x[c]) * static_cast<double>(x[c]);
  return q;
}

// Each norm enclosed like a distance to the origin (separation_filter.hpp's bound: relative error
// gamma_{d+2}, d half-units of underflow, doubled for the roundings of the ends themselves).
struct SqNormEnclosure {
  double rel, abs_err;
  explicit SqNormEnclosure(std::size_t d) {
    const double u = 0x1p-53, eta = 0x1p-1074, nu = static_cast<double>(d + 2) * u;
    rel = 2 * nu / (1 - nu);
    abs_err = 2 * static_cast<double>(d) * eta;
  }
  double lo(double q) const { return (q - abs_err) * (1 - rel); }
  double hi(double q) const { return (q + abs_err) * (1 + rel); }
};

// r^2 = max ||x||^2 over the ra rows of a and the rb rows of b (d values each): every norm enclosed in
// double, exact only for the norms whose upper end reaches the largest lower end. Linear cost.
template <class F, class G>
Rational max_sq_norm_rows(const F* a, std::size_t ra, const G* b, std::size_t rb, std::size_t d) {
  const SqNormEnclosure enc(d);
  std::vector<double> hi(ra + rb);
  double best_lo = 0;
  for (std::size_t i = 0; i < ra + rb; ++i) {
    const double q = i < ra ? sq_norm_double(a + i * d, d) : sq_norm_double(b + (i - ra) * d, d);
    best_lo = std::max(best_lo, enc.lo(q));
    hi[i] = enc.hi(q);
  }
  Rational r2 = 0;
  for (std::size_t i = 0; i < ra + rb; ++i)
    if (!(hi[i] < best_lo)) r2 = std::max(r2, i < ra ? exact_sq_norm(a + i * d, d) : exact_sq_norm(b + (i - ra) * d, d));
  return r2;
}

}  // namespace

Separation token_separation_doubles(const std::vector<const double*>& points, std::size_t d, bool min_distance) {
  Separation s;
  s.r2 = 0;
  s.delta2 = 0;
  // r^2 (repeated points change no maximum).
  {
    const SqNormEnclosure enc(d);
    std::vector<double> hi(points.size());
    double best_lo = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double q = sq_norm_double(points[i], d);
      best_lo = std::max(best_lo, enc.lo(q));
      hi[i] = enc.hi(q);
    }
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!(hi[i] < best_lo)) s.r2 = std::max(s.r2, exact_sq_norm(points[i], d));
  }
  if (!min_distance) return s;
  // Distinct tokens (the minimum is over distinct ones): lexicographic sort on exact double comparisons.
  std::vector<const double*> p = points;
  auto less = [d](const double* a, const double* b) { return std::lexicographical_compare(a, a + d, b, b + d); };
  auto same = [d](const double* a, const double* b) { return std::equal(a, a + d, b); };
  std::sort(p.begin(), p.end(), less);
  p.erase(std::unique(p.begin(), p.end(), same), p.end());
  Rational best = -1;
  for (auto [i, j] : detail::nearest_pair_candidates(p, d)) {
    Rational q = exact_sq_distance(p[i], p[j], d);
    if (best < 0 || q < best) best = q;
  }
  if (best > 0) s.delta2 = best;
  return s;
}

Assumption2Result assumption2_check_typed(const TypedAttentionDataset& ds, std::size_t count, int threads) {
  if (count > ds.T) throw std::out_of_range("assumption2_check_typed: count past T");
  Matrix<double> cbuf;
  const Float32Le* c32 = ds.contexts_f32.empty() ? nullptr : ds.contexts_f32.data();
  const double* ctx = c32 ? nullptr : typed_doubles(ds.contexts, cbuf);
  if (!c32 && !ctx) {  // values that are not doubles: the rational check on the first `count` contexts
    AttentionDataset q;
    std::vector<std::size_t> which(count);
    for (std::size_t t = 0; t < count; ++t) { q.contexts.push_back(typed_matrix_to_qmat(typed_dataset_context(ds, t))); which[t] = t; }
    return assumption2_check(q, which);
  }
  return assumption2_typed_result(ds, count, ctx, c32, threads);
}

namespace {

// numpy's numerical rank of every context (below n or not, contexts in parallel): first the SVD-free proof
// of full rank on the stored values (proved[t] = 1: also a proof of exact rank min(n, d)), else
// numerical_rank itself.
void contexts_numerical_ranks(const TypedAttentionDataset& ds, const double* c64, const Float32Le* c32,
                              std::optional<double> tol, int threads, std::vector<char>& proved,
                              std::vector<char>& below) {
  const std::size_t T = ds.T, n = ds.n, d = ds.d, block = n * d;
  proved.assign(T, 0);
  below.assign(T, 0);
  std::atomic<std::size_t> finished{0};
  const unsigned eps_bytes = ds.contexts.storage == Storage::float64 ? ds.contexts.stored_float_bytes : 8;
  parallel_for(T, threads <= 0 ? fast_threads() : threads, [&](std::size_t t) {
    // numpy's eps is the stored dtype's: float32 kept as stored, else the typed contexts' own.
    if (c32) proved[t] = numerical_rank_full_proved(c32 + t * block, n, d, numerical_rank_eps(4), tol);
    else proved[t] = numerical_rank_full_proved(c64 + t * block, n, d, numerical_rank_eps(eps_bytes), tol);
    below[t] = proved[t] ? std::min(n, d) < n : numerical_rank(typed_dataset_context(ds, t), tol).rank < n;
    progress_tick("numerical ranks of the contexts", ++finished, T);
  });
}

}  // namespace

json assumptions_report(const AttentionDataset& ds, std::uint64_t budget, int threads, SeparationMode separation,
                        const NumericalRanksOption* numerical) {
  if (ds.typed && ds.typed_T == ds.typed->T && ds.typed_n == ds.typed->n)
    return assumptions_report_typed(*ds.typed, budget, threads, separation, numerical);
  if (ds.typed) {  // the first typed_T examples of a larger typed storage: as rationals
    AttentionDataset q = ds;
    attention_dataset_materialize(q);
    return assumptions_report(q, budget, threads, separation, numerical);
  }
  json out = assumptions_report(ds, budget, separation);
  if (numerical) {  // rational values: numpy's ranks of their double roundings
    json below = json::array();
    for (std::size_t t = 0; t < ds.T(); ++t)
      if (numerical_rank(ds.contexts[t], numerical->tol).rank < ds.n()) below.push_back(t);
    out["numerical"] = {{"queries_rank", numerical_rank(ds.queries, numerical->tol).rank}, {"contexts_rank_below_n", below}};
  }
  return out;
}

json assumptions_report_typed(const TypedAttentionDataset& ds, std::uint64_t budget, int threads,
                              SeparationMode separation, const NumericalRanksOption* numerical) {
  // The contexts' exact values, without a copy of the whole data: float32 kept as stored (c32), float64
  // storage itself, int64 up to 2^53 converted once; anything else takes the rational report.
  Matrix<double> cbuf, qbuf;
  const Float32Le* c32 = ds.contexts_f32.empty() ? nullptr : ds.contexts_f32.data();
  const double* ctx = c32 ? nullptr : typed_doubles(ds.contexts, cbuf);
  const double* qry = c32 || ctx ? typed_doubles(ds.queries, qbuf) : nullptr;
  if ((!c32 && !ctx) || !qry)  // values that are not all doubles: the rational route
    return assumptions_report(attention_dataset_from_typed(ds), budget, threads, separation, numerical);
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
  std::vector<char> proved, below;
  if (numerical) {
    contexts_numerical_ranks(ds, ctx, c32, numerical->tol, threads, proved, below);
    json list = json::array();
    for (std::size_t t = 0; t < T; ++t)
      if (below[t]) list.push_back(t);
    out["numerical"] = {{"queries_rank", numerical_rank(ds.queries, numerical->tol).rank}, {"contexts_rank_below_n", list}};
  }
  out["assumption2"] = assumption2_typed(ds, ctx, c32, threads, numerical ? &proved : nullptr);
  {
    // Scaled by a common power of two where that avoids rationals: Assumption 3 asks only for the rank.
    TypedMatrix rows3 = c32 ? assumption3_rows_of(c32, qry, T, n, d, threads, true)
                            : assumption3_rows_of(ctx, qry, T, n, d, threads, true);
    out["assumption3"] = kjson(kruskal_at_least_typed(rows3, k1, budget, threads), k1);
  }
  const std::size_t kg = std::min(T, d);
  out["general_position"] = kjson(kruskal_at_least_typed(ds.queries, kg, budget, threads), kg);
  // The token separation: decided from the count before any work (separation_decide); r^2 always.
  const std::size_t m = T * n + T;
  if (!separation_decide(separation, m, d)) {
    const Rational r2 = c32 ? max_sq_norm_rows(c32, T * n, qry, T, d) : max_sq_norm_rows(ctx, T * n, qry, T, d);
    out["separation"] = separation_json(r2, nullptr, m, separation);
    return out;
  }
  // The all-pairs filter works on doubles: float32 contexts are widened here (only when the minimum
  // distance is computed: a few examples under `auto`, or forced by `on`).
  std::vector<double> wide;
  if (c32) wide.assign(c32, c32 + T * n * d), ctx = wide.data();
  std::vector<const double*> pts;
  pts.reserve(m);
  for (std::size_t i = 0; i < T * n; ++i) pts.push_back(ctx + i * d);
  for (std::size_t t = 0; t < T; ++t) pts.push_back(qry + t * d);
  Separation s = token_separation_doubles(pts, d, true);
  out["separation"] = separation_json(s.r2, &s.delta2, m, separation);
  return out;
}

}  // namespace memcert::mahdavi24

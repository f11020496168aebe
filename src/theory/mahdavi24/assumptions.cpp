// mahdavi24's hypotheses decided exactly (docs/THEORY.md sections 2 and 4, "Weaker, checkable hypotheses").
#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/theory/mahdavi24/assumptions_typed.hpp"

#include <algorithm>
#include <set>

#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/numeric/modp.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/util/threads.hpp"
#include "format.hpp"
#include "kruskal_json.hpp"
#include "separation_filter.hpp"

namespace memcert::mahdavi24 {

using nlohmann::json;
__extension__ typedef __int128 i128;

namespace {

using detail::fmt;
using detail::fmtq;
QMatrix rows_of(const QMatrix& a, const std::vector<std::size_t>& idx) { return mat_select_rows(a, idx); }
// y != 0 with y^T A = 0 (a dependency among the rows of A), or empty when the rows are independent.
QVector row_dependency(const QMatrix& a) {
  QMatrix k = qmat_kernel(mat_transpose(a));
  if (k.cols() == 0) return {};
  QVector y(a.rows());
  for (std::size_t i = 0; i < a.rows(); ++i) y[i] = k(i, 0);
  return y;
}
}  // namespace

bool qmat_rows_independent(const QMatrix& a) {
  if (a.rows() == 0) return true;
  if (a.rows() > a.cols()) return false;
  ZMatrix z = qmat_row_scaled_integer(a);
  // rank mod p <= rank over Q: full rank mod p certifies independence.
  for (std::size_t i = 0; i < 2; ++i)
    if (zmat_rank_profile_modp(z, modp::prime_31(i)).rank == a.rows()) return true;
  return qmat_rank(a) == a.rows();
}

std::uint64_t binomial_saturating(std::size_t T, std::size_t k) {
  if (k > T) return 0;
  k = std::min(k, T - k);
  long double b = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    b = b * (long double)(T - k + i) / (long double)i;
    if (b > 4.0e18L) return std::uint64_t(1) << 62;
  }
  return (std::uint64_t)(b + 0.5L);
}

KruskalCheck kruskal_at_least(const QMatrix& vectors, std::size_t k, std::uint64_t budget) {
  KruskalCheck c;
  const std::size_t trivial = std::min(vectors.rows(), vectors.cols());
  if (k == 0) { c.holds = true; c.lower = 0; c.upper = trivial; c.method = "trivial"; return c; }
  if (k > vectors.rows()) { c.holds = false; c.lower = 0; c.upper = vectors.rows(); c.method = "count"; return c; }
  if (binomial_saturating(vectors.rows(), k) > budget) {
    // Exhaustive enumeration is out of budget: the paper's Table 1 protocol instead, every sampled
    // k-subset certified (independent mod p, or dependent with an exact kernel vector). A dependent
    // subset decides "fails"; otherwise the property stays undecided (holds = null).
    KruskalSample smp = qmat_kruskal_sample(vectors, k, 2000, 20261121);
    c.lower = 1;
    for (std::size_t i = 0; i < vectors.rows() && c.lower == 1; ++i) {
      bool zero = true;
      for (std::size_t j = 0; j < vectors.cols(); ++j) zero = zero && vectors(i, j) == 0;
      if (zero) c.lower = 0;
    }
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
  KruskalOptions opt;
  opt.at_least = k;
  opt.max_subsets = budget;
  KruskalResult r = qmat_kruskal_rank(vectors, opt);
  c.lower = r.lower;
  c.upper = r.upper;
  c.method = r.method;
  c.dependent_subset = r.dependent_subset;
  c.coefficients = r.dependent_coefficients;
  if (r.lower >= k) c.holds = true;
  else if (r.upper < k) c.holds = false;
  return c;
}

Assumption2Result assumption2_check(const AttentionDataset& ds, const std::vector<std::size_t>& which) {
  if (ds.typed) {  // typed storage: its filtered route on examples 0 .. k-1, else context by context
    bool prefix = which.size() <= ds.T();
    for (std::size_t i = 0; i < which.size() && prefix; ++i) prefix = which[i] == i;
    if (prefix) return assumption2_check_typed(*ds.typed, which.size());
  }
  Assumption2Result r;
  for (std::size_t t : which) {
    const QMatrix copy = ds.typed ? attention_context(ds, t) : QMatrix();
    const QMatrix& ctx = ds.typed ? copy : ds.contexts.at(t);
    if (qmat_rows_independent(ctx)) continue;
    r.holds = false;
    if (r.failing.empty()) r.witness = row_dependency(ctx);
    r.failing.push_back(t);
  }
  return r;
}

GroupingFacts grouping_facts_check(const AttentionDataset& ds, const std::vector<std::vector<std::size_t>>& groups) {
  GroupingFacts f;
  // Residues mod a prime below 2^32 (products of two residues fit in 64 bits) of the query numerators.
  constexpr std::uint64_t kP = 4294967291ull;
  auto residue = [](const Integer& x) { return std::uint64_t(mpz_fdiv_ui(x.get_mpz_t(), kP)); };
  const std::size_t d = ds.d();
  std::vector<std::uint64_t> eq(ds.T() * d);
  for (std::size_t t = 0; t < ds.T(); ++t) {
    const ScaledVector e = scaled_from_qvec(QVector(ds.queries.row(t), ds.queries.row(t) + d));
    for (std::size_t c = 0; c < d; ++c) eq[t * d + c] = residue(e.num[c]);
  }
  std::vector<std::size_t> old;
  for (std::size_t h = 0; h < groups.size(); ++h) {
    const auto& g = groups[h];
    if (!g.empty()) {
      QMatrix q = rows_of(ds.queries, g);
      if (!qmat_rows_independent(q)) {
        f.holds = false;
        QVector y = row_dependency(q);
        f.failure = "the queries of group R_" + std::to_string(h + 1) + " are linearly dependent";
        f.witness = {{"fact", "Q_R_h full column rank"}, {"head", h + 1}, {"examples", g},
                     {"coefficients", qvec_to_json(y)}};
        return f;
      }
      if (h > 0) {
        // e_t lies outside span(rows of Q_R) iff [Q_R; e_t] has rank |R_h| + 1. Mod p (the rows' integer
        // numerators): Q_R in row echelon form, e_t reduced against it; a non-zero remainder is a non-zero
        // (|R_h|+1)-minor mod p, hence over Q: outside, certified. Only a zero remainder (or Q_R short of
        // rank mod p) takes the exact rank test. Costs |R_h| d per old example, not a kernel over Q.
        const std::size_t k = g.size();
        std::vector<std::uint64_t> ech(k * d);
        for (std::size_t i = 0; i < k; ++i) std::copy(&eq[g[i] * d], &eq[g[i] * d] + d, &ech[i * d]);
        auto inv = [](std::uint64_t a) {  // a^(p-2) mod p
          std::uint64_t r = 1, e = kP - 2;
          for (; e; e >>= 1, a = a * a % kP) if (e & 1) r = r * a % kP;
          return r;
        };
        std::vector<std::size_t> piv;
        for (std::size_t c = 0, r = 0; c < d && r < k; ++c) {
          std::size_t sel = r;
          while (sel < k && ech[sel * d + c] == 0) ++sel;
          if (sel == k) continue;
          if (sel != r) std::swap_ranges(&ech[sel * d], &ech[sel * d] + d, &ech[r * d]);
          const std::uint64_t f = inv(ech[r * d + c]);
          for (std::size_t x = c; x < d; ++x) ech[r * d + x] = ech[r * d + x] * f % kP;  // pivot 1
          for (std::size_t i = r + 1; i < k; ++i) {
            const std::uint64_t m = ech[i * d + c];
            if (m == 0) continue;
            for (std::size_t x = c; x < d; ++x) ech[i * d + x] = (ech[i * d + x] + (kP - m) * ech[r * d + x]) % kP;
          }
          piv.push_back(c);
          ++r;
        }
        std::vector<char> outside_p(old.size(), 0);
        if (piv.size() == k)
          parallel_for(old.size(), fast_threads(), [&](std::size_t o) {
            thread_local std::vector<std::uint64_t> v;
            v.assign(&eq[old[o] * d], &eq[old[o] * d] + d);
            for (std::size_t i = 0; i < k; ++i) {
              const std::uint64_t m = v[piv[i]];
              if (m == 0) continue;
              for (std::size_t x = piv[i]; x < d; ++x) v[x] = (v[x] + (kP - m) * ech[i * d + x]) % kP;
            }
            outside_p[o] = std::any_of(v.begin(), v.end(), [](std::uint64_t x) { return x != 0; });
          });
        std::vector<std::size_t> idx = g;
        idx.push_back(0);
        for (std::size_t o = 0; o < old.size(); ++o) {
          const std::size_t t = old[o];
          if (outside_p[o]) continue;
          idx.back() = t;
          QMatrix q2 = rows_of(ds.queries, idx);
          if (qmat_rows_independent(q2)) continue;
          f.holds = false;
          QVector y = row_dependency(q2);
          f.failure = "query of example " + std::to_string(t) + " lies in the span of the queries of group R_" +
                      std::to_string(h + 1);
          f.witness = {{"fact", "[Q_R_h, e_t] full column rank"}, {"head", h + 1}, {"examples", idx},
                       {"coefficients", qvec_to_json(y)}};
          return f;
        }
      }
    }
    old.insert(old.end(), g.begin(), g.end());
  }
  return f;
}

Separation token_separation(const AttentionDataset& ds) {
  std::vector<QVector> toks;
  const std::size_t d = ds.d();
  for (const QMatrix& E : ds.contexts)
    for (std::size_t j = 0; j < E.rows(); ++j) toks.emplace_back(E.row(j), E.row(j) + d);
  for (std::size_t t = 0; t < ds.queries.rows(); ++t) toks.emplace_back(ds.queries.row(t), ds.queries.row(t) + d);
  std::sort(toks.begin(), toks.end(), [](const QVector& a, const QVector& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] < b[i]) return true;
      if (b[i] < a[i]) return false;
    }
    return false;
  });
  toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
  Separation s;
  s.r2 = 0;
  s.delta2 = 0;
  // Integer scaling: one common denominator for every token.
  Integer L = 1;
  for (const auto& v : toks) {
    Integer l = rational_denominator_lcm(v.begin(), v.end());
    mpz_lcm(L.get_mpz_t(), L.get_mpz_t(), l.get_mpz_t());
  }
  std::vector<std::vector<Integer>> z(toks.size(), std::vector<Integer>(d));
  bool small = true;
  for (std::size_t i = 0; i < toks.size(); ++i)
    for (std::size_t c = 0; c < d; ++c) {
      Integer v = toks[i][c].get_num() * (L / toks[i][c].get_den());
      z[i][c] = v;
      if (mpz_sizeinbase(v.get_mpz_t(), 2) > 28) small = false;
    }
  Integer best_r = 0, best_d = -1;
  for (const auto& v : z) {
    Integer s2 = 0;
    for (const auto& x : v) s2 += x * x;
    if (s2 > best_r) best_r = s2;
  }
  if (small) {  // |x_i - y_i| < 2^29, squares < 2^58, sums over d < 2^31 terms fit in __int128
    std::vector<long long> zz(toks.size() * d);
    for (std::size_t i = 0; i < toks.size(); ++i)
      for (std::size_t c = 0; c < d; ++c) zz[i * d + c] = z[i][c].get_si();
    i128 bd = -1;
    for (std::size_t i = 0; i < toks.size(); ++i)
      for (std::size_t j = i + 1; j < toks.size(); ++j) {
        i128 s2 = 0;
        for (std::size_t c = 0; c < d; ++c) {
          long long df = zz[i * d + c] - zz[j * d + c];
          s2 += (i128)df * df;
        }
        if (bd < 0 || s2 < bd) bd = s2;
      }
    if (bd >= 0) {
      // __int128 -> Integer via two 64-bit halves
      unsigned long long hi = (unsigned long long)(bd >> 64), lo = (unsigned long long)bd;
      Integer v = Integer(std::to_string(hi)) * (Integer(1) << 64) + Integer(std::to_string(lo));
      best_d = v;
    }
  } else {  // big integers: a double filter picks the candidate pairs, computed exactly
    best_d = detail::min_sq_distance_filtered(toks, z);
  }
  Rational L2 = Rational(L * L);
  s.r2 = Rational(best_r) / L2;
  s.delta2 = best_d < 0 ? Rational(0) : Rational(best_d) / L2;
  return s;
}

bool separation_decide(SeparationMode mode, std::size_t m, std::size_t d) {
  if (mode != SeparationMode::automatic) return mode == SeparationMode::on;
  const double pairs = static_cast<double>(m) * (static_cast<double>(m) - 1) / 2;
  return pairs * static_cast<double>(d) <= kSeparationAutoBudget;
}

const char* separation_mode_name(SeparationMode mode) {
  return mode == SeparationMode::on ? "on" : mode == SeparationMode::off ? "off" : "auto";
}

bool separation_mode_parse(const std::string& text, SeparationMode& mode) {
  for (SeparationMode m : {SeparationMode::automatic, SeparationMode::on, SeparationMode::off})
    if (text == separation_mode_name(m)) return mode = m, true;
  return false;
}

Rational token_max_sq_norm(const AttentionDataset& ds) {
  Rational best = 0;
  auto visit = [&](const QMatrix& a) {
    for (std::size_t i = 0; i < a.rows(); ++i) {
      Rational s = 0;
      for (std::size_t c = 0; c < a.cols(); ++c) s += a(i, c) * a(i, c);
      if (s > best) best = s;
    }
  };
  for (const QMatrix& E : ds.contexts) visit(E);
  visit(ds.queries);
  return best;
}

json separation_json(const Rational& r2, const Rational* delta2, std::size_t m, SeparationMode mode) {
  const std::uint64_t pairs = m < 2 ? 0 : static_cast<std::uint64_t>(m) * (m - 1) / 2;
  return {{"r2", rational_to_string(r2)},
          {"delta2", delta2 ? json(rational_to_string(*delta2)) : json(nullptr)},
          {"computed", delta2 != nullptr},
          {"pairs", pairs},
          {"mode", separation_mode_name(mode)}};
}

json detail::kruskal_check_json(const KruskalCheck& k, std::size_t target) {
  json j;
  j["holds"] = k.holds ? json(*k.holds) : json(nullptr);
  j["kruskal_lower"] = k.lower;
  j["kruskal_upper"] = k.upper;
  j["method"] = k.method;
  j["required"] = target;
  if (!k.dependent_subset.empty()) {
    j["dependent_subset"] = k.dependent_subset;
    json c = json::array();
    for (const auto& q : k.coefficients) c.push_back(rational_to_string(q));
    j["coefficients"] = c;
  }
  return j;
}

json assumptions_report(const AttentionDataset& ds, std::uint64_t budget, SeparationMode separation) {
  const std::size_t T = ds.T(), n = ds.n(), d = ds.d();
  json out;
  out["T"] = T;
  out["n"] = n;
  out["d"] = d;
  const auto kjson = detail::kruskal_check_json;
  // Assumption 1 (>= n, read as >= T when T < n).
  const std::size_t k1 = std::min(n, T);
  KruskalCheck a1 = kruskal_at_least(ds.queries, k1, budget);
  json j1 = kjson(a1, k1);
  j1["remark1"] = "capacity >= H(min(k, d_h) - 1) + 1 with k = kruskal_lower = " + std::to_string(a1.lower);
  out["assumption1"] = j1;
  // Assumption 2.
  std::vector<std::size_t> all(T);
  for (std::size_t t = 0; t < T; ++t) all[t] = t;
  Assumption2Result a2 = assumption2_check(ds, all);
  json j2{{"holds", a2.holds}, {"failing", a2.failing}};
  if (!a2.holds) j2["witness"] = qvec_to_json(a2.witness);
  out["assumption2"] = j2;
  // Assumption 3: e + xbar.
  QMatrix shifted = ds.queries;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < d; ++c) {
      Rational s = 0;
      for (std::size_t j = 0; j < n; ++j) s += ds.contexts[t](j, c);
      shifted(t, c) += s / Rational(static_cast<long>(n));
    }
  out["assumption3"] = kjson(kruskal_at_least(shifted, k1, budget), k1);
  // General position of the queries: Kruskal rank = min(T, d).
  const std::size_t kg = std::min(T, d);
  out["general_position"] = kjson(kruskal_at_least(ds.queries, kg, budget), kg);
  const std::size_t m = T * n + T;
  if (separation_decide(separation, m, d)) {
    Separation s = token_separation(ds);
    out["separation"] = separation_json(s.r2, &s.delta2, m, separation);
  } else {
    out["separation"] = separation_json(token_max_sq_norm(ds), nullptr, m, separation);
  }
  return out;
}

}  // namespace memcert::mahdavi24

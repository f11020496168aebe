// kind "kruskal": bounds kruskal_lower <= krank(V) <= kruskal_upper for the rows of an exact matrix V
// (krank = the largest k such that EVERY k-subset of rows is linearly independent).
#include <algorithm>

#include "kernel/context.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

namespace {

// Upper limit on C(count, k) for the exhaustive check, so a certificate cannot make the checker run
// for days; memcert's own producer enumerates far fewer subsets than this.
constexpr unsigned long kMaxSubsets = 1'000'000'000ul;

// Depth-first enumeration of all k-subsets of the rows of `r` (residues mod p). A node holds the
// chosen prefix in semi-echelon form (row t has a 1 at pivot[t] and 0 at every earlier pivot), so
// extending a prefix costs one reduction of the new vector instead of a fresh rank computation. A
// vector that reduces to 0 makes prefix + {i} dependent; the prefix is only extended by indices that
// leave enough rows to complete a k-subset, so this exhibits a dependent k-subset.
struct Enumerator {
  const ModMat& r;
  const ModP& f;
  std::size_t k, dim;
  ModMat basis;                    // basis[t]: reduced vector at depth t
  std::vector<std::size_t> pivot;  // pivot column of basis[t]
  std::vector<std::size_t> chosen;

  bool run(std::size_t start) {
    const std::size_t depth = chosen.size();
    if (depth == k) return true;
    for (std::size_t i = start; i + (k - depth) <= r.size(); ++i) {
      std::vector<std::uint64_t>& v = basis[depth];
      v = r[i];
      for (std::size_t t = 0; t < depth; ++t) {
        const std::uint64_t c = v[pivot[t]];
        if (c == 0) continue;
        const std::uint64_t neg = f.sub(0, c);
        for (std::size_t j = 0; j < dim; ++j)
          if (basis[t][j]) v[j] = f.add(v[j], f.mul(neg, basis[t][j]));
      }
      std::size_t pc = 0;
      while (pc < dim && v[pc] == 0) ++pc;
      chosen.push_back(i);
      if (pc == dim) return false;  // `chosen` is a dependent set (mod p)
      const std::uint64_t inv = f.inv(v[pc]);
      for (std::size_t j = pc; j < dim; ++j) v[j] = f.mul(v[j], inv);
      pivot[depth] = pc;
      if (!run(i + 1)) return false;
      chosen.pop_back();
    }
    return true;
  }
};

bool check_lower(const Value& lower, const ZMat& v, std::size_t count, std::size_t dim, std::size_t k,
                 std::string& why) {
  std::string method;
  if (!read_string(lower, "lower", "method", method, why)) return false;
  if (method == "trivial") {
    if (k != 0) { why = "lower: method \"trivial\" proves only kruskal_lower = 0"; return false; }
    return true;
  }
  if (method != "exhaustive-mod-p") { why = "lower.method: unknown \"" + method + "\""; return false; }
  const Value* pv = member(lower, "lower", "prime", json::Type::String, why);
  ModP f{2};
  if (!pv || !read_prime(*pv, "lower.prime", f, why)) return false;
  mpz_class subsets;
  mpz_bin_uiui(subsets.get_mpz_t(), count, k);
  if (subsets > kMaxSubsets) {
    why = "over budget: lower: C(" + std::to_string(count) + ", " + std::to_string(k) +
          ") subsets exceed the checker's budget of " + std::to_string(kMaxSubsets);
    check_context().over_budget = true;  // undecided, not a verdict on the certificate
    return false;
  }
  // Cost before the enumeration: each leaf is one reduction of a dim-vector against k pivots.
  if (!within_budget(subsets.get_d() * double(dim) * double(std::max<std::size_t>(k, 1)) + double(count) * double(dim),
                     double(count) * double(dim) * 8, "the exhaustive Kruskal check (C(" + std::to_string(count) + ", " +
                     std::to_string(k) + ") subsets)", why))
    return false;
  const ModMat r = reduce_mod(v, f);
  Enumerator e{r, f, k, dim, ModMat(k), std::vector<std::size_t>(k), {}};
  if (e.run(0)) return true;
  why = "lower: rows {";
  for (std::size_t t = 0; t < e.chosen.size(); ++t) {
    if (t) why += ',';
    why += std::to_string(e.chosen[t]);
  }
  why += "} are dependent modulo " + pv->text + " (not every " + std::to_string(k) + "-subset shown independent)";
  return false;
}

// krank <= u: an exact non-trivial dependency among u+1 distinct rows.
bool check_dependent_subset(const Value& upper, const QMat& a, std::size_t count, std::size_t dim,
                            std::size_t u, std::string& why) {
  const Value* sv = member(upper, "upper", "subset", json::Type::Array, why);
  std::vector<std::size_t> subset;
  if (!sv || !read_index_set(*sv, "upper.subset", u + 1, count, subset, why)) return false;
  const Value* cv = member(upper, "upper", "coefficients", json::Type::Array, why);
  QRow c;
  if (!cv || !read_rational_vector(*cv, "upper.coefficients", u + 1, c, why)) return false;
  if (std::all_of(c.begin(), c.end(), [](const mpq_class& x) { return x == 0; })) {
    why = "upper.coefficients: all zero";
    return false;
  }
  for (std::size_t j = 0; j < dim; ++j) {
    mpq_class s = 0;
    for (std::size_t t = 0; t <= u; ++t) s += c[t] * a[subset[t]][j];
    if (s != 0) { why = "upper: sum of coefficients times rows is not 0 (coordinate " + std::to_string(j) + ")"; return false; }
  }
  return true;
}

}  // namespace

bool check_kruskal(const Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "kruskal-rank") { why = "claim: kind \"kruskal\" proves \"kruskal-rank\", not \"" + claim + "\""; return false; }
  QMat a;
  std::size_t count = 0, dim = 0;
  const Value* mv = member(cert, "", "vectors", json::Type::Object, why);
  if (!mv || !read_matrix(*mv, "vectors", a, count, dim, why)) return false;
  const std::size_t full = std::min(count, dim);
  std::size_t k = 0, u = 0;
  // k <= min(count, dim): a larger "every k-subset is independent" is false or vacuous.
  const Value* kv = member(cert, "", "kruskal_lower", json::Type::Number, why);
  if (!kv || !read_size(*kv, "kruskal_lower", full, k, why)) return false;
  const Value* uv = member(cert, "", "kruskal_upper", json::Type::Number, why);
  if (!uv || !read_size(*uv, "kruskal_upper", full, u, why)) return false;
  if (k > u) { why = "kruskal_lower > kruskal_upper"; return false; }
  if (const Value* rv = cert.find("kruskal_rank")) {  // optional: only when both bounds meet
    std::size_t r;
    if (!read_size(*rv, "kruskal_rank", full, r, why)) return false;
    if (r != k || r != u) { why = "kruskal_rank: " + std::to_string(r) + " is not what the bounds prove"; return false; }
  }
  const Value* lower = member(cert, "", "lower", json::Type::Object, why);
  if (!lower || !check_lower(*lower, scale_rows_to_integers(a), count, dim, k, why)) return false;
  const Value* upper = member(cert, "", "upper", json::Type::Object, why);
  if (!upper) return false;
  std::string method;
  if (!read_string(*upper, "upper", "method", method, why)) return false;
  if (method == "trivial") {
    if (u != full) { why = "upper: method \"trivial\" proves only kruskal_upper = min(count, dim)"; return false; }
    return true;
  }
  if (method == "dependent-subset") return check_dependent_subset(*upper, a, count, dim, u, why);
  why = "upper.method: unknown \"" + method + "\"";
  return false;
}

}  // namespace memcert_checker

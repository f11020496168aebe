// Property test (fixed seed): Kruskal-rank certificates from brute-force enumeration over Q are
// accepted; alterations that must break them are rejected.
#include "catch.hpp"

#include "brute_q.hpp"
#include "cert_text.hpp"

using namespace cert_text;
using brute_q::QMat;

namespace {

// All k-subsets of {0..t-1} in lexicographic order.
void subsets(std::size_t t, std::size_t k, std::vector<std::vector<std::size_t>>& out) {
  std::vector<std::size_t> s(k);
  for (std::size_t i = 0; i < k; ++i) s[i] = i;
  while (true) {
    out.push_back(s);
    std::size_t i = k;
    while (i > 0 && s[i - 1] == t - k + i - 1) --i;
    if (i == 0) return;
    ++s[i - 1];
    for (std::size_t j = i; j < k; ++j) s[j] = s[j - 1] + 1;
  }
}

std::string cert(const QMat& v, std::size_t d, std::size_t lo, const std::string& lower, std::size_t up,
                 const std::string& upper) {
  return R"({"kind":"kruskal","claim":"kruskal-rank","vectors":)" + matrix(to_strings(v), d) + ",\"kruskal_lower\":" +
         std::to_string(lo) + ",\"lower\":" + lower + ",\"kruskal_upper\":" + std::to_string(up) +
         ",\"upper\":" + upper + "}";
}
std::string dep_json(const std::vector<std::size_t>& s, const std::vector<mpq_class>& c) {
  return R"({"method":"dependent-subset","subset":)" + ints(s) + ",\"coefficients\":" + strings(to_strings({c})[0]) + "}";
}

}  // namespace

TEST_CASE("kruskal property: brute-force certificates accepted, alterations rejected", "[checker][kruskal][random]") {
  std::mt19937_64 rng(777);
  const std::string lower_p = R"({"method":"exhaustive-mod-p","prime":"2305843009213693951"})";
  const std::string trivial = R"({"method":"trivial"})";
  int deficient = 0, full = 0;
  for (int trial = 0; trial < 120; ++trial) {
    std::size_t t = 2 + rng() % 7, d = 1 + rng() % 4;
    QMat v(t, std::vector<mpq_class>(d));
    for (auto& row : v)
      for (auto& x : row) x = mpq_class(static_cast<long>(rng() % 7) - 3, 1 + rng() % 3);
    if (rng() % 2) {  // plant a dependency: a combination of two other vectors
      std::size_t i = rng() % t, a = rng() % t, b = rng() % t;
      for (std::size_t j = 0; j < d; ++j) v[i][j] = 2 * v[a][j] - v[b][j];
    }
    const std::size_t top = std::min(t, d);
    // Brute force: krank = largest k with every k-subset of rank k; a dependent (krank+1)-subset.
    std::size_t krank = 0;
    std::vector<std::size_t> dep;
    for (std::size_t k = 1; k <= top && dep.empty(); ++k) {
      std::vector<std::vector<std::size_t>> all;
      subsets(t, k, all);
      for (const auto& s : all)
        if (brute_q::rank(brute_q::select_rows(v, s)) < k) { dep = s; break; }
      if (dep.empty()) krank = k;
    }
    INFO("trial " << trial << ": " << t << " vectors in Q^" << d << ", krank " << krank);
    const std::string lower = krank ? lower_p : trivial;
    if (dep.empty()) {
      ++full;
      auto r = check(cert(v, d, krank, lower, top, trivial));
      INFO(r.reason);
      REQUIRE(r.valid);
      continue;
    }
    ++deficient;
    // Coefficients: a kernel vector of S^T (c^T S = 0).
    QMat st(d, std::vector<mpq_class>(dep.size()));
    for (std::size_t a = 0; a < dep.size(); ++a)
      for (std::size_t j = 0; j < d; ++j) st[j][a] = v[dep[a]][j];
    std::vector<std::size_t> free_cols;
    std::vector<mpq_class> c = brute_q::kernel(st, dep.size(), free_cols).at(0);
    auto r = check(cert(v, d, krank, lower, krank, dep_json(dep, c)));
    INFO(r.reason);
    REQUIRE(r.valid);
    // Lower bound krank + 1 on a set with a dependent (krank+1)-subset.
    REQUIRE_FALSE(check(cert(v, d, krank + 1, lower_p, top, trivial)).valid);
    // An altered coefficient (on a non-zero vector) breaks the dependency.
    std::size_t a = 0;
    while (a < dep.size() && brute_q::rank({v[dep[a]]}) == 0) ++a;
    if (a < dep.size()) {  // (when krank = 0 the subset may be a single zero vector)
      auto c2 = c;
      c2[a] += 1;
      REQUIRE_FALSE(check(cert(v, d, krank, lower, krank, dep_json(dep, c2))).valid);
    }
    // An altered vector entry where the coefficient is non-zero.
    std::size_t b = 0;
    while (c[b] == 0) ++b;
    QMat w = v;
    w[dep[b]][rng() % d] += mpq_class(1, 7);
    REQUIRE_FALSE(check(cert(w, d, krank, lower, krank, dep_json(dep, c))).valid);
    // Upper bound krank - 1 is false: dropping an element of the subset leaves it independent.
    if (krank > 0) {
      auto s = dep;
      auto cc = c;
      s.pop_back();
      cc.pop_back();
      REQUIRE_FALSE(check(cert(v, d, 0, trivial, krank - 1, dep_json(s, cc))).valid);
    }
  }
  CHECK(deficient > 20);
  CHECK(full > 20);
}

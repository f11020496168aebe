// kind "enclosure-rank": rank(A) >= k for EVERY A with |A - C| <= R entrywise (Lemma 5 / Weyl).
// With S the given k rows and G = C_S C_S^T exact: G - mu I positive definite gives
// sigma_k(C_S) > sqrt(mu); any admissible perturbation E has ||E_S||_2 <= ||E_S||_F <= ||R_S||_F, and
// ||R_S||_F^2 < mu means sigma_k(A_S) >= sigma_k(C_S) - ||E_S||_2 > 0, so A_S has full row rank k.
#include <algorithm>

#include "definite.hpp"
#include "read.hpp"

namespace memcert_checker {

bool check_enclosure_rank(const Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "rank-lower-enclosure") {
    why = "claim: kind \"enclosure-rank\" proves \"rank-lower-enclosure\", not \"" + claim + "\"";
    return false;
  }
  QMat c, r;
  std::size_t m = 0, n = 0, rm = 0, rn = 0;
  const Value* cv = member(cert, "", "centre", json::Type::Object, why);
  if (!cv || !read_matrix(*cv, "centre", c, m, n, why)) return false;
  const Value* rv = member(cert, "", "radius", json::Type::Object, why);
  if (!rv || !read_matrix(*rv, "radius", r, rm, rn, why)) return false;
  if (rm != m || rn != n) { why = "radius: shape differs from centre"; return false; }
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (sgn(r[i][j]) < 0) {
        why = "radius.data[" + std::to_string(i) + "][" + std::to_string(j) + "]: negative radius";
        return false;
      }
  std::size_t k = 0;
  const Value* kv = member(cert, "", "rank_lower", json::Type::Number, why);
  if (!kv || !read_size(*kv, "rank_lower", std::min(m, n), k, why)) return false;
  const Value* sv = member(cert, "", "rows", json::Type::Array, why);
  std::vector<std::size_t> s;
  if (!sv || !read_index_set(*sv, "rows", k, m, s, why)) return false;
  mpq_class mu;
  const Value* muv = cert.find("mu");
  if (!muv) { why = "mu: missing"; return false; }
  if (!read_rational(*muv, "mu", mu, why)) return false;
  if (sgn(mu) <= 0) { why = "mu: must be > 0"; return false; }

  // ||R_S||_F^2 < mu, exactly (stronger than the upward-rounded comparison THEORY allows).
  mpq_class frob = 0;
  for (std::size_t i : s)
    for (std::size_t j = 0; j < n; ++j) frob += r[i][j] * r[i][j];
  if (frob >= mu) { why = "radius: sum of squares over the rows S is not below mu"; return false; }

  // G = C_S C_S^T exactly: integer dot products of the row-scaled rows, divided by the two scales.
  std::vector<ZRow> z(k);
  std::vector<mpz_class> scale(k);
  for (std::size_t a = 0; a < k; ++a) z[a] = scale_row_to_integers(c[s[a]], &scale[a]);
  QMat g(k, QRow(k));
  mpz_class dot;
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = 0; b <= a; ++b) {
      dot = 0;
      for (std::size_t j = 0; j < n; ++j) mpz_addmul(dot.get_mpz_t(), z[a][j].get_mpz_t(), z[b][j].get_mpz_t());
      g[a][b] = mpq_class(dot, scale[a] * scale[b]);
      g[a][b].canonicalize();
      g[b][a] = g[a][b];
    }
  for (std::size_t a = 0; a < k; ++a) g[a][a] -= mu;
  if (!positive_definite(g)) { why = "G - mu I is not positive definite (mu too large or rows S dependent)"; return false; }
  return true;
}

}  // namespace memcert_checker

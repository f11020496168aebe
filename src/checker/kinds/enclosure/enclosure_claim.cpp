#include "kinds/enclosure/enclosure_claim.hpp"

#include <algorithm>

namespace memcert_checker {

bool read_enclosure_claim(const Value& cert, const std::string& kind, EnclosureClaim& e, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "rank-lower-enclosure") {
    why = "claim: kind \"" + kind + "\" proves \"rank-lower-enclosure\", not \"" + claim + "\"";
    return false;
  }
  std::size_t rm = 0, rn = 0;
  const Value* cv = member(cert, "", "centre", json::Type::Object, why);
  if (!cv || !read_matrix(*cv, "centre", e.c, e.m, e.n, why)) return false;
  const Value* rv = member(cert, "", "radius", json::Type::Object, why);
  if (!rv || !read_matrix(*rv, "radius", e.r, rm, rn, why)) return false;
  if (rm != e.m || rn != e.n) { why = "radius: shape differs from centre"; return false; }
  for (std::size_t i = 0; i < e.m; ++i)
    for (std::size_t j = 0; j < e.n; ++j)
      if (sgn(e.r[i][j]) < 0) {
        why = "radius.data[" + std::to_string(i) + "][" + std::to_string(j) + "]: negative radius";
        return false;
      }
  const Value* kv = member(cert, "", "rank_lower", json::Type::Number, why);
  if (!kv || !read_size(*kv, "rank_lower", std::min(e.m, e.n), e.k, why)) return false;
  const Value* sv = member(cert, "", "rows", json::Type::Array, why);
  if (!sv || !read_index_set(*sv, "rows", e.k, e.m, e.s, why)) return false;
  const Value* muv = cert.find("mu");
  if (!muv) { why = "mu: missing"; return false; }
  if (!read_rational(*muv, "mu", e.mu, why)) return false;
  if (sgn(e.mu) <= 0) { why = "mu: must be > 0"; return false; }
  // ||R_S||_F^2 < mu, exactly (stronger than the upward-rounded comparison THEORY allows).
  mpq_class frob = 0;
  for (std::size_t i : e.s)
    for (std::size_t j = 0; j < e.n; ++j) frob += e.r[i][j] * e.r[i][j];
  if (frob >= e.mu) { why = "radius: sum of squares over the rows S is not below mu"; return false; }
  return true;
}

}  // namespace memcert_checker

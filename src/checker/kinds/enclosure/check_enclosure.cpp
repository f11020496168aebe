// kind "enclosure-rank": rank(A) >= k for EVERY A with |A - C| <= R entrywise (Lemma 5 / Weyl).
// With S the given k rows and G = C_S C_S^T exact: G - mu I positive definite gives
// sigma_k(C_S) > sqrt(mu); any admissible perturbation E has ||E_S||_2 <= ||E_S||_F <= ||R_S||_F, and
// ||R_S||_F^2 < mu means sigma_k(A_S) >= sigma_k(C_S) - ||E_S||_2 > 0, so A_S has full row rank k.
#include <algorithm>

#include "kernel/definite.hpp"
#include "kinds/enclosure/enclosure_claim.hpp"

namespace memcert_checker {

bool check_enclosure_rank(const Value& cert, std::string& why) {
  EnclosureClaim e;
  if (!read_enclosure_claim(cert, "enclosure-rank", e, why)) return false;
  const QMat& c = e.c;
  const std::size_t k = e.k, n = e.n;
  const std::vector<std::size_t>& s = e.s;
  const mpq_class& mu = e.mu;

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

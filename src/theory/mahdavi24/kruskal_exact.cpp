// Queries of Kruskal rank EXACTLY k (THEORY.md section 2): data at the boundary of Assumption 1, for the
// claims and the generators. Every k-subset is independent, one (k+1)-subset is dependent.
#include <algorithm>
#include <stdexcept>

#include "memcert/theory/mahdavi24/assumptions.hpp"
#include "memcert/util/error.hpp"

namespace memcert::mahdavi24 {

QMatrix queries_with_kruskal_rank(std::size_t T, std::size_t d, std::size_t k, std::mt19937_64& rng, int den) {
  if (k == 0 || k > d || k + 1 > T)
    throw InputError("--kruskal: expected 1 <= K <= min(T-1, d), got K = " + std::to_string(k) + " with T = " +
                     std::to_string(T) + ", d = " + std::to_string(d));
  std::uniform_int_distribution<int> u(-den, den), coef(1, 3), sign(0, 1);
  for (int attempt = 0; attempt < 200; ++attempt) {
    QMatrix Q(T, d);
    for (auto& x : Q.data()) { x = Rational(u(rng), den); x.canonicalize(); }
    // One row becomes a combination of k others with every coefficient non-zero: that (k+1)-subset is
    // dependent, while a k-subset containing it misses one of the k rows and stays independent
    // generically. The position of the dependent row and of its k partners are random.
    std::vector<std::size_t> perm(T);
    for (std::size_t i = 0; i < T; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    const std::size_t last = perm[k];
    for (std::size_t j = 0; j < d; ++j) Q(last, j) = 0;
    for (std::size_t i = 0; i < k; ++i) {
      Rational c(coef(rng) * (sign(rng) ? 1 : -1));
      for (std::size_t j = 0; j < d; ++j) Q(last, j) += c * Q(perm[i], j);
    }
    KruskalCheck at_k = kruskal_at_least(Q, k, ~std::uint64_t{0});
    if (!at_k.holds || !*at_k.holds) continue;  // an accidental dependency: draw again
    return Q;  // Kruskal rank >= k certified; < k+1 by construction (checked by the callers that claim it)
  }
  throw std::runtime_error("queries_with_kruskal_rank: no draw certified Kruskal rank >= k");
}

}  // namespace memcert::mahdavi24

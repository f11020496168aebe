// The Kruskal-rank-exactly-k query generator (Assumption 1's boundary), against brute force.
#include "catch.hpp"

#include <random>
#include <tuple>
#include <vector>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;

TEST_CASE("queries of Kruskal rank exactly k, checked by brute force", "[kruskal-exact]") {
  // Second method: every k-subset's rank by exact elimination (qmat_rank), and a dependent (k+1)-subset
  // found by enumeration, independent of kruskal_at_least.
  for (auto [T, d, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{6, 4, 2}, {7, 4, 3}, {6, 5, 4}, {5, 3, 3}, {4, 4, 1}}) {
    std::mt19937_64 rng(T * 100 + d * 10 + k);
    QMatrix Q = queries_with_kruskal_rank(T, d, k, rng, 8);
    INFO(T << " " << d << " " << k);
    auto subsets = [&](std::size_t size, auto&& f) {
      std::vector<std::size_t> idx(size);
      for (std::size_t i = 0; i < size; ++i) idx[i] = i;
      while (true) {
        f(idx);
        std::size_t i = size;
        while (i > 0 && idx[i - 1] == T - size + i - 1) --i;
        if (i == 0) return;
        ++idx[i - 1];
        for (std::size_t j = i; j < size; ++j) idx[j] = idx[j - 1] + 1;
      }
    };
    bool all_independent = true, some_dependent = false;
    subsets(k, [&](const std::vector<std::size_t>& s) { all_independent &= qmat_rank(mat_select_rows(Q, s)) == k; });
    subsets(k + 1, [&](const std::vector<std::size_t>& s) { some_dependent |= qmat_rank(mat_select_rows(Q, s)) < k + 1; });
    CHECK(all_independent);
    CHECK(some_dependent);
  }
  std::mt19937_64 rng(1);
  CHECK_THROWS(queries_with_kruskal_rank(4, 3, 4, rng, 8));  // k > d
  CHECK_THROWS(queries_with_kruskal_rank(3, 5, 3, rng, 8));  // k + 1 > T
}

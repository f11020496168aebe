// Kruskal rank against brute force (every subset, exact Gauss-Jordan).
#include "catch.hpp"

#include <random>

#include "memcert/linalg/kruskal.hpp"
#include "support/reference_linalg.hpp"

using namespace memcert;
using namespace memcert::testref;

namespace {
std::size_t brute_kruskal(const QMatrix& v) {
  const std::size_t T = v.rows();
  std::size_t best = 0;
  for (std::size_t k = 1; k <= T; ++k) {
    bool all = true;
    for (std::uint64_t mask = 0; mask < (1ull << T) && all; ++mask) {
      if (static_cast<std::size_t>(__builtin_popcountll(mask)) != k) continue;
      std::vector<std::size_t> s;
      for (std::size_t i = 0; i < T; ++i)
        if (mask >> i & 1) s.push_back(i);
      if (rref_rank(mat_select_rows(v, s)) < k) all = false;
    }
    if (!all) break;
    best = k;
  }
  return best;
}

void require_dependency_sound(const QMatrix& v, const KruskalResult& r) {
  REQUIRE(r.dependent_subset.size() == r.upper + 1);
  REQUIRE(r.dependent_coefficients.size() == r.dependent_subset.size());
  bool nonzero = false;
  for (auto& c : r.dependent_coefficients) nonzero |= c != 0;
  REQUIRE(nonzero);
  for (std::size_t j = 0; j < v.cols(); ++j) {
    Rational s = 0;
    for (std::size_t i = 0; i < r.dependent_subset.size(); ++i) s += r.dependent_coefficients[i] * v(r.dependent_subset[i], j);
    REQUIRE(s == 0);
  }
}
}  // namespace

TEST_CASE("qmat_kruskal_rank equals brute force on random small sets", "[linalg][kruskal]") {
  std::mt19937_64 rng(21);
  for (int it = 0; it < 150; ++it) {
    std::size_t T = 1 + rng() % 8, d = 1 + rng() % 5;
    QMatrix v;
    switch (it % 4) {
      case 0: v = random_qmatrix(rng, T, d, 2); break;                       // general position-ish
      case 1: v = random_low_rank(rng, T, d, 1 + rng() % d, 2); break;       // low rank
      case 2: v = random_qmatrix(rng, T, d, 1); break;                       // many coincidences
      default: {
        v = random_qmatrix(rng, T, d, 3);
        if (T >= 2) for (std::size_t j = 0; j < d; ++j) v(T - 1, j) = 2 * v(0, j);  // parallel pair
      }
    }
    KruskalResult r = qmat_kruskal_rank(v);
    REQUIRE(r.exact());
    REQUIRE(r.lower == brute_kruskal(v));
    if (r.upper < std::min(T, d)) require_dependency_sound(v, r);
  }
}

TEST_CASE("--at-least K decides exactly the threshold", "[linalg][kruskal]") {
  std::mt19937_64 rng(22);
  for (int it = 0; it < 60; ++it) {
    std::size_t T = 2 + rng() % 6, d = 2 + rng() % 4;
    QMatrix v = it % 2 ? random_low_rank(rng, T, d, 1 + rng() % d, 2) : random_qmatrix(rng, T, d, 2);
    std::size_t truth = brute_kruskal(v);
    for (std::size_t K = 1; K <= std::min(T, d); ++K) {
      KruskalOptions o;
      o.at_least = K;
      KruskalResult r = qmat_kruskal_rank(v, o);
      if (truth >= K) REQUIRE(r.lower >= K);
      else {
        REQUIRE(r.upper < K);
        require_dependency_sound(v, r);
      }
    }
  }
}

TEST_CASE("Kruskal edge cases: zero vector, duplicates, budget", "[linalg][kruskal]") {
  QMatrix z(3, 2, Rational(1));
  z(1, 0) = 0; z(1, 1) = 0;
  KruskalResult r = qmat_kruskal_rank(z);
  CHECK(r.lower == 0);
  CHECK(r.upper == 0);
  CHECK(r.dependent_subset == std::vector<std::size_t>{1});
  std::mt19937_64 rng(23);
  QMatrix big = random_qmatrix(rng, 40, 20, 8);
  KruskalOptions o;
  o.max_subsets = 1000;
  KruskalResult b = qmat_kruskal_rank(big, o);
  CHECK(b.method == "bounded");
  CHECK(b.lower < b.upper);
}

TEST_CASE("qmat_kruskal_sample certifies each trial", "[linalg][kruskal]") {
  std::mt19937_64 rng(24);
  QMatrix v = random_qmatrix(rng, 30, 6, 8);
  for (std::size_t j = 0; j < 6; ++j) v(29, j) = v(0, j) + v(1, j);  // one dependent triple exists
  KruskalSample s = qmat_kruskal_sample(v, 3, 2000, 7);
  CHECK(s.trials == 2000);
  CHECK(s.independent + s.dependent == 2000);
  CHECK(s.dependent > 0);  // {0,1,29} has probability 1/4060 per trial; many 3-subsets in 6-dim are fine
  std::vector<std::size_t> expect{0, 1, 29};
  CHECK(s.first_dependent_subset == expect);
  CHECK(rref_rank(mat_select_rows(v, s.first_dependent_subset)) < 3);
}

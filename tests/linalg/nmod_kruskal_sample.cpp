// The shared-basis Kruskal sample against the per-subset kernel (dmod_kruskal_sample) and the exact
// rational route (qmat_kruskal_sample): random, near-singular, planted-dependent, unlucky-prime and
// low-rank inputs, projected (size < cols) and not (size = cols).
#include "catch.hpp"

#include <random>

#include "memcert/linalg/kruskal_sample.hpp"
#include "memcert/linalg/qmat/qmat.hpp"

using namespace memcert;

namespace {

QMatrix kb_to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}

struct KbRun {
  KruskalSample s;
  KruskalBasisStats st;
};

KbRun kb_run(const DMatrix& v, std::size_t size, std::size_t trials, std::uint64_t seed, int threads = 2) {
  KbRun r;
  const DModMatrix all = dmod_from_double_rows(v.data().data(), v.rows(), v.cols(), prime_fast(0));
  r.s = dmod_kruskal_sample_basis(
      all, size, trials, seed, [&](const std::vector<std::size_t>& sub) { return kb_to_q(mat_select_rows(v, sub)); },
      threads, &r.st);
  return r;
}

// The three routes agree trial for trial in their counts and on the first dependent subset; a reported
// dependency is checked exactly: non-zero coefficients combining the subset's rows to zero over Q.
void kb_require_agree(const DMatrix& v, std::size_t size, std::size_t trials, std::uint64_t seed, const KbRun& r) {
  const QMatrix q = kb_to_q(v);
  KruskalSample exact = qmat_kruskal_sample(q, size, trials, seed);
  const DModMatrix all = dmod_from_double_rows(v.data().data(), v.rows(), v.cols(), prime_fast(0));
  KruskalSample per = dmod_kruskal_sample(
      all, size, trials, seed, [&](const std::vector<std::size_t>& sub) { return mat_select_rows(q, sub); }, 2);
  for (const KruskalSample* o : {&exact, &per}) {
    REQUIRE(r.s.trials == o->trials);
    REQUIRE(r.s.independent == o->independent);
    REQUIRE(r.s.dependent == o->dependent);
    REQUIRE(r.s.first_dependent_subset == o->first_dependent_subset);
  }
  REQUIRE(r.s.independent + r.s.dependent == trials);
  if (r.s.dependent > 0) {
    const auto& sub = r.s.first_dependent_subset;
    const auto& c = r.s.first_dependent_coefficients;
    REQUIRE(c.size() == sub.size());
    bool nonzero = false;
    for (const auto& x : c) nonzero = nonzero || x != 0;
    REQUIRE(nonzero);
    for (std::size_t j = 0; j < q.cols(); ++j) {
      Rational sum = 0;
      for (std::size_t i = 0; i < sub.size(); ++i) sum += c[i] * q(sub[i], j);
      REQUIRE(sum == 0);
    }
  }
}

DMatrix kb_gaussian(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  DMatrix m(rows, cols);
  for (auto& x : m.data()) x = nd(g);
  return m;
}

}  // namespace

TEST_CASE("kruskal_sample_subsets: the draws of qmat_kruskal_sample (uniform, sorted, distinct)", "[linalg][fast]") {
  auto subs = kruskal_sample_subsets(30, 7, 200, 5);
  REQUIRE(subs.size() == 200);
  std::vector<std::size_t> hits(30, 0);
  for (const auto& s : subs) {
    REQUIRE(s.size() == 7);
    REQUIRE(std::is_sorted(s.begin(), s.end()));
    REQUIRE(std::adjacent_find(s.begin(), s.end()) == s.end());
    for (auto i : s) ++hits[i];
  }
  for (auto h : hits) REQUIRE(h > 0);  // every vector is drawn (expected 200 * 7 / 30 = 47 times each)
  REQUIRE_THROWS(kruskal_sample_subsets(3, 4, 1, 1));
}

TEST_CASE("dmod_kruskal_sample_basis: random vectors, size = cols and size < cols (projected)", "[linalg][fast]") {
  const DMatrix v = kb_gaussian(40, 12, 7);
  for (std::size_t size : {12u, 7u, 1u}) {
    KbRun r = kb_run(v, size, 150, 11);
    kb_require_agree(v, size, 150, 11, r);
    REQUIRE(r.s.independent == 150);
    REQUIRE(r.st.basis_size == size);
    REQUIRE(r.st.projected == (size < 12));
    REQUIRE(r.st.by_basis == 150);  // generic data: every residual minor is non-zero
  }
  // Thread count changes nothing.
  KbRun one = kb_run(v, 12, 150, 11, 1), two = kb_run(v, 12, 150, 11, 2);
  REQUIRE(one.s.independent == two.s.independent);
  REQUIRE(one.st.by_basis == two.st.by_basis);
}

TEST_CASE("dmod_kruskal_sample_basis: a planted dependent subset is found with exact coefficients", "[linalg][fast]") {
  // Integer vectors (exact in double); row 25 = row 3 - 2 row 17, so every subset holding {3, 17, 25} is
  // dependent and no other is (generic otherwise).
  std::mt19937_64 g(3);
  std::uniform_int_distribution<int> u(-50, 50);
  for (std::size_t cols : {10u, 16u}) {
    DMatrix v(30, cols);
    for (auto& x : v.data()) x = u(g);
    for (std::size_t j = 0; j < cols; ++j) v(25, j) = v(3, j) - 2 * v(17, j);
    KbRun r = kb_run(v, 10, 400, 21);
    kb_require_agree(v, 10, 400, 21, r);
    REQUIRE(r.s.dependent > 0);  // C(27, 7) / C(30, 10) = 3.3% of the trials: about 13 of 400
    for (auto t : {3u, 17u, 25u})
      REQUIRE(std::count(r.s.first_dependent_subset.begin(), r.s.first_dependent_subset.end(), t) == 1);
    REQUIRE(r.st.exact == r.s.dependent);
    // The recorded coefficients are a non-trivial exact dependency of the recorded subset's rows.
    const auto& sub = r.s.first_dependent_subset;
    REQUIRE(r.s.first_dependent_coefficients.size() == sub.size());
    bool nonzero = false;
    for (std::size_t j = 0; j < cols; ++j) {
      Rational sum = 0;
      for (std::size_t i = 0; i < sub.size(); ++i) sum += r.s.first_dependent_coefficients[i] * rational_from_double(v(sub[i], j));
      REQUIRE(sum == 0);
    }
    for (const Rational& c : r.s.first_dependent_coefficients) nonzero = nonzero || c != 0;
    REQUIRE(nonzero);
  }
}

TEST_CASE("dmod_kruskal_sample_basis: near-singular vectors stay certified independent", "[linalg][fast]") {
  // Row i + 20 = row i + 2^-40 row (i + 1): numerically dependent on row i, exactly independent.
  DMatrix v = kb_gaussian(40, 12, 13);
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t j = 0; j < 12; ++j) v(i + 20, j) = v(i, j) + std::ldexp(v(i + 1, j), -40);
  for (std::size_t size : {12u, 8u}) {
    KbRun r = kb_run(v, size, 120, 17);
    kb_require_agree(v, size, 120, 17, r);
    REQUIRE(r.s.dependent == 0);
  }
}

TEST_CASE("dmod_kruskal_sample_basis: dependent mod p but independent over Q escalates, never guesses", "[linalg][fast]") {
  // Row 2 = row 0 + row 1 + p e_0: dependent mod p, independent over Q; every subset holding {0, 1, 2}
  // must go to the exact route and come back independent.
  const double p = static_cast<double>(prime_fast(0));
  std::mt19937_64 g(5);
  std::uniform_int_distribution<int> u(-9, 9);
  DMatrix v(12, 6);
  for (auto& x : v.data()) x = u(g);
  for (std::size_t j = 0; j < 6; ++j) v(2, j) = v(0, j) + v(1, j);
  v(2, 0) += p;
  for (std::size_t size : {6u, 4u}) {
    KbRun r = kb_run(v, size, 200, 9);
    kb_require_agree(v, size, 200, 9, r);
    REQUIRE(r.st.exact > 0);
    REQUIRE(r.s.dependent == 0);
  }
}

TEST_CASE("dmod_kruskal_sample_basis: vectors of rank < size take the per-subset route", "[linalg][fast]") {
  // 20 vectors in a 4-dimensional subspace of Q^8: every 6-subset is dependent.
  DMatrix a = kb_gaussian(20, 4, 19), b = kb_gaussian(4, 8, 23);
  DMatrix v(20, 8, 0.0);
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < 4; ++k) s += std::ldexp(std::round(std::ldexp(a(i, k), 4)), -4) * std::round(b(k, j) * 8);
      v(i, j) = s;  // sums of few-bit dyadics: exact in double
    }
  KbRun r = kb_run(v, 6, 30, 29);
  kb_require_agree(v, 6, 30, 29, r);
  REQUIRE(r.s.dependent == 30);
  REQUIRE(r.st.basis_size == 0);
}

TEST_CASE("dmat_kruskal_sample_fast: independent trials certified, dependent ones with exact coefficients",
          "[linalg][fast]") {
  std::mt19937_64 g(82);
  std::normal_distribution<double> nd;
  DMatrix v(40, 6);
  for (auto& x : v.data()) x = nd(g);
  for (std::size_t j = 0; j < 6; ++j) v(7, j) = v(3, j) * 0.5;  // a dependent pair
  auto s = dmat_kruskal_sample_fast(v, 2, 3000, 5);
  REQUIRE(s.trials == 3000);
  REQUIRE(s.independent + s.dependent == 3000);
  REQUIRE(s.dependent >= 1);
  QMatrix q = kb_to_q(v);
  QVector comb(6, Rational(0));
  for (std::size_t i = 0; i < s.first_dependent_subset.size(); ++i)
    for (std::size_t j = 0; j < 6; ++j) comb[j] += s.first_dependent_coefficients[i] * q(s.first_dependent_subset[i], j);
  for (auto& c : comb) REQUIRE(c == 0);
  auto s2 = dmat_kruskal_sample_fast(v, 6, 200, 9);
  REQUIRE(s2.independent + s2.dependent == 200);
}

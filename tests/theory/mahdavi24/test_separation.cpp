// token_separation's filtered path (double enclosure of every pair, exact integers for the candidates)
// against a direct O(N^2) computation in rationals: float data with large common denominators, near ties
// (pairs whose distances differ in the 80th bit), exponent ranges near underflow, and non-dyadic data
// (the unfiltered path).
#include "catch.hpp"

#include <cmath>
#include <random>

#include "memcert/theory/mahdavi24/assumptions.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;

namespace {

Rational brute_delta2(const AttentionDataset& ds) {
  std::vector<QVector> toks;
  for (auto& E : ds.contexts)
    for (std::size_t j = 0; j < E.rows(); ++j) toks.emplace_back(E.row(j), E.row(j) + E.cols());
  for (std::size_t t = 0; t < ds.T(); ++t) toks.emplace_back(ds.queries.row(t), ds.queries.row(t) + ds.d());
  Rational best = -1;
  for (std::size_t i = 0; i < toks.size(); ++i)
    for (std::size_t j = i + 1; j < toks.size(); ++j) {
      Rational q = 0;
      for (std::size_t c = 0; c < toks[i].size(); ++c) q += (toks[i][c] - toks[j][c]) * (toks[i][c] - toks[j][c]);
      if (q != 0 && (best < 0 || q < best)) best = q;
    }
  return best < 0 ? Rational(0) : best;
}

AttentionDataset float_dataset(std::mt19937_64& g, std::size_t T, std::size_t n, std::size_t d, double scale) {
  std::normal_distribution<float> gauss;
  AttentionDataset ds;
  for (std::size_t t = 0; t < T; ++t) {
    QMatrix E(n, d);
    for (auto& x : E.data()) x = rational_from_double(static_cast<double>(gauss(g)) * scale);
    ds.contexts.push_back(E);
  }
  ds.queries = QMatrix(T, d);
  for (auto& x : ds.queries.data()) x = rational_from_double(static_cast<double>(gauss(g)) * scale);
  return ds;
}

}  // namespace

TEST_CASE("token_separation: filtered minimum distance equals the brute-force rational one", "[mahdavi24][separation]") {
  std::mt19937_64 g(20261123);
  for (double scale : {1.0, 0x1p-500, 0x1p-1000}) {
    AttentionDataset ds = float_dataset(g, 3, 6, 9, scale);
    INFO("scale " << scale);
    REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
  }
  // Near ties: tokens a, a + h e_0 and a - (h + 2^-80) e_0 ... the two smallest distances differ only far
  // below the double filter's resolution, so both pairs reach the exact stage.
  AttentionDataset ds = float_dataset(g, 2, 5, 7, 1.0);
  const double h = 0x1p-20;
  for (std::size_t c = 0; c < 7; ++c) {
    double a = ds.contexts[0](0, c).get_d();
    ds.contexts[0](1, c) = rational_from_double(a + (c == 0 ? h : 0.0));
    ds.contexts[0](2, c) = rational_from_double(c == 0 ? a - h - 0x1p-60 : a);
  }
  REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
  REQUIRE(token_separation(ds).delta2 == Rational(rational_from_double(h) * rational_from_double(h)));
  // Non-dyadic tokens: no filter, every pair exact.
  ds.contexts[1](3, 4) = Rational(1, 3);
  REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
}

TEST_CASE("token_separation: the sweep window keeps every nearest pair", "[mahdavi24][separation]") {
  // More tokens than the small cases above, so the sweep prunes: spread data (long sweep coordinate), data
  // concentrated along every coordinate (the window holds almost every pair), and planted near pairs whose
  // sweep coordinates are equal or far from the rest, at several scales.
  std::mt19937_64 g(20261124);
  for (double scale : {1.0, 0x1p-520, 0x1p300}) {
    INFO("scale " << scale);
    AttentionDataset ds = float_dataset(g, 6, 40, 5, scale);  // 246 tokens
    for (std::size_t j = 0; j < 40; ++j)  // stretch coordinate 2: the sweep coordinate
      ds.contexts[j % 6](j % 40, 2) *= Rational(1 << 20);
    REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
    // Two tokens identical on the sweep coordinate and close elsewhere, plus a tie with another pair.
    for (std::size_t c = 0; c < 5; ++c) {
      ds.contexts[3](7, c) = ds.contexts[1](9, c) + (c == 4 ? Rational(rational_from_double(0x1p-30 * scale)) : Rational(0));
      ds.contexts[5](1, c) = ds.contexts[0](0, c) - (c == 0 ? Rational(rational_from_double(0x1p-30 * scale)) : Rational(0));
    }
    REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
    REQUIRE(token_separation(ds).delta2 == Rational(rational_from_double(0x1p-30 * scale)) * Rational(rational_from_double(0x1p-30 * scale)));
  }
  // Concentrated data: every token within a tiny ball, no pruning possible; still exact.
  // (1 + k 2^-30 with k < 64: every token within 2^-24 of (1, ..., 1), exactly doubles.)
  std::uniform_int_distribution<int> small(0, 63);
  AttentionDataset ds = float_dataset(g, 4, 30, 6, 1.0);
  for (auto& E : ds.contexts)
    for (auto& x : E.data()) x = 1 + Rational(small(g)) * rational_from_double(0x1p-30);
  for (auto& x : ds.queries.data()) x = 1 + Rational(small(g)) * rational_from_double(0x1p-30);
  REQUIRE(token_separation(ds).delta2 == brute_delta2(ds));
}

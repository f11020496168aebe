// nearest_pair_candidates_gram against brute force in exact rationals: on every input, every pair that
// achieves the exact minimum squared distance must be among the candidates (that is the filter's whole
// contract; the candidates are decided exactly afterwards). Inputs: Gaussian points over several block
// sizes (diagonal and off-diagonal blocks, ragged last block), planted ties at the minimum next to pairs
// one unit in the last place farther, a large common offset (the Gram route cancels to nothing and the
// direct refinement must decide), integer grids full of ties, duplicates, scales from subnormal to
// 2^1000, and the inputs the route must decline (no exact common scaling, non-finite values).
#include "catch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>

#include "memcert/linalg/fmat/nearest_pair.hpp"
#include "memcert/numeric/rational.hpp"

using namespace memcert;

namespace {

using Points = std::vector<std::vector<double>>;

std::vector<const double*> ptrs(const Points& p) {
  std::vector<const double*> out;
  for (const auto& r : p) out.push_back(r.data());
  return out;
}

Rational exact_sq_distance(const std::vector<double>& a, const std::vector<double>& b) {
  Rational s = 0;
  for (std::size_t c = 0; c < a.size(); ++c) {
    Rational x = rational_from_double(a[c]) - rational_from_double(b[c]);
    s += x * x;
  }
  return s;
}

// Brute force: every pair achieving the exact minimum.
std::set<std::pair<std::size_t, std::size_t>> exact_nearest_pairs(const Points& p) {
  std::set<std::pair<std::size_t, std::size_t>> best;
  Rational m = -1;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      Rational s = exact_sq_distance(p[i], p[j]);
      if (m < 0 || s < m) m = s, best.clear();
      if (s == m) best.emplace(i, j);
    }
  return best;
}

// The contract, checked for each block size: pairs ordered i < j, no repeats, every exact nearest pair kept;
// `route` ("float" or "double"): the product route the input must take.
void require_contract(const Points& p, std::vector<std::size_t> blocks, const std::string& route) {
  const auto nearest = exact_nearest_pairs(p);
  for (std::size_t block : blocks) {
    const char* took = nullptr;
    auto got = nearest_pair_candidates_gram(ptrs(p), p.empty() ? 0 : p[0].size(), 2, block, &took);
    REQUIRE(got.has_value());
    REQUIRE(took == route);
    std::set<std::pair<std::size_t, std::size_t>> cand(got->begin(), got->end());
    REQUIRE(cand.size() == got->size());
    for (auto [i, j] : cand) REQUIRE((i < j && j < p.size()));
    for (auto pr : nearest) {
      INFO("block " << block << ", nearest pair " << pr.first << "," << pr.second << " of " << p.size());
      REQUIRE(cand.count(pr) == 1);
    }
  }
}

void require_contract_all_blocks(const Points& p, const std::string& route) { require_contract(p, {1, 7, 16, 1024}, route); }

// Gaussian points: float values (the float route) or double values (53 bits: the double route), times scale.
Points gaussian(std::mt19937_64& g, std::size_t m, std::size_t d, double scale = 1, bool floats = true) {
  std::normal_distribution<double> z;
  Points p(m, std::vector<double>(d));
  for (auto& r : p)
    for (auto& x : r) x = (floats ? static_cast<double>(static_cast<float>(z(g))) : z(g)) * scale;
  return p;
}

}  // namespace

TEST_CASE("Gram nearest pairs: Gaussian points, every block size", "[linalg][fast][nearest_pair]") {
  std::mt19937_64 g(20261123);
  for (std::size_t d : {1, 2, 37, 96}) {
    require_contract_all_blocks(gaussian(g, 70, d), "float");
    require_contract_all_blocks(gaussian(g, 70, d, 1, false), "double");
  }
  // Candidates stay few on Gaussian data (the filter prunes; otherwise it would be useless at scale).
  Points p = gaussian(g, 300, 32);
  auto got = nearest_pair_candidates_gram(ptrs(p), 32, 2, 64);
  REQUIRE(got.has_value());
  REQUIRE(got->size() <= 10);
  require_contract(p, {64, 1024}, "float");
}

TEST_CASE("Gram nearest pairs: planted ties at the threshold and pairs one ulp beyond", "[linalg][fast][nearest_pair]") {
  std::mt19937_64 g(20261124);
  for (bool floats : {true, false}) {
    Points p = gaussian(g, 60, 24, 1, floats);
    // One unit in the last place of the route's own format (float data must stay floats).
    auto next = [floats](double x, double to) {
      return floats ? static_cast<double>(std::nextafter(static_cast<float>(x), static_cast<float>(to))) : std::nextafter(x, to);
    };
    // Three pairs at exactly the same distance h (one coordinate apart), one pair at h + ulp(h) and one
    // whose distance differs from h^2 by moving another coordinate one ulp.
    const double h = 0x1p-12;
    for (std::size_t k : {3, 17, 41}) {
      p.push_back(p[k]);
      p.back()[5] = p[k][5] + h;
    }
    p.push_back(p[8]);
    p.back()[0] = p[8][0] + next(h, 1.0);
    p.push_back(p[9]);
    p.back()[1] = p[9][1] + h;
    p.back()[2] = next(p.back()[2], 10.0);
    if (floats)  // planted values stay floats when the sums are exact in float (checked, not assumed)
      for (auto& r : p)
        for (double& x : r) x = static_cast<double>(static_cast<float>(x));
    require_contract_all_blocks(p, floats ? "float" : "double");
    REQUIRE(exact_nearest_pairs(p).size() >= 3);
  }
}

TEST_CASE("Gram nearest pairs: a large common offset cancels the Gram route", "[linalg][fast][nearest_pair]") {
  std::mt19937_64 g(20261125);
  Points p = gaussian(g, 70, 20, 0x1p-20);
  std::normal_distribution<double> z;
  std::vector<double> offset(20);
  for (auto& x : offset) x = std::ldexp(std::round(z(g) * 1024), 10);  // 2^20-sized, exact sums
  for (auto& r : p)
    for (std::size_t c = 0; c < 20; ++c) r[c] += offset[c];
  require_contract_all_blocks(p, "double");
}

TEST_CASE("Gram nearest pairs: integer grids, duplicates, scales", "[linalg][fast][nearest_pair]") {
  SECTION("a grid: every neighbour pair ties") {
    Points p;
    for (int x = 0; x < 6; ++x)
      for (int y = 0; y < 5; ++y)
        for (int z = 0; z < 3; ++z) p.push_back({double(x), double(y), double(z)});
    require_contract_all_blocks(p, "float");
    REQUIRE(exact_nearest_pairs(p).size() > 100);
  }
  SECTION("duplicates make the zero minimum") {
    std::mt19937_64 g(20261126);
    Points p = gaussian(g, 50, 9);
    p.push_back(p[13]);
    p.push_back(p[30]);
    require_contract_all_blocks(p, "float");
  }
  SECTION("scales from subnormal to 2^1000") {
    for (double s : {0x1p-1060, 0x1p-520, 0x1p300, 0x1p1000}) {
      std::mt19937_64 g(20261127);
      Points p = gaussian(g, 40, 12, s);
      p.push_back(p[4]);
      p.back()[3] += 0x1p-14 * s;
      INFO("scale " << s);
      require_contract_all_blocks(p, "float");
    }
  }
  SECTION("all points zero, fewer than two points") {
    Points p(5, std::vector<double>(4, 0.0));
    require_contract(p, {2}, "float");
    REQUIRE(nearest_pair_candidates_gram(ptrs(p), 4, 1, 2)->size() == 10);
    Points one(1, std::vector<double>(4, 1.0));
    REQUIRE(nearest_pair_candidates_gram(ptrs(one), 4)->empty());
  }
}

TEST_CASE("Gram nearest pairs: declines what one exact scaling cannot serve", "[linalg][fast][nearest_pair]") {
  Points p{{0x1p1000, 1}, {0x1p-1070, 0}, {1, 1}};
  REQUIRE_FALSE(nearest_pair_candidates_gram(ptrs(p), 2).has_value());
  Points q{{std::numeric_limits<double>::infinity(), 1}, {0, 0}};
  REQUIRE_FALSE(nearest_pair_candidates_gram(ptrs(q), 2).has_value());
  Points r{{std::nan(""), 1}, {0, 0}};
  REQUIRE_FALSE(nearest_pair_candidates_gram(ptrs(r), 2).has_value());
}

// Test-side: a "next double above / below" pair must equal std::nextafter toward +-inf on every kind of
// double (random bit patterns over all exponents and both signs, then zeros, infinities, NaN, the extremes).
// Shared by the engine's next_up/next_down test and the checker's up/dn test (two implementations, one rule).
#pragma once
#include "catch.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace memcert_test {

template <class Up, class Down>
void check_next_double_pair(Up up, Down down, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity();
  auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); };
  auto check = [&](double x) {
    INFO(x);
    CHECK(same(up(x), std::nextafter(x, inf)));
    CHECK(same(down(x), std::nextafter(x, -inf)));
  };
  for (int i = 0; i < 200000; ++i) {  // every bit pattern is a double
    const std::uint64_t b = rng();
    double x;
    std::memcpy(&x, &b, sizeof x);
    check(x);
  }
  for (double x : {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::max(),
                   -std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                   -std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(), 1.0, -1.0})
    check(x);
}

}  // namespace memcert_test

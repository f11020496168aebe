#pragma once
// Doubles read from their bits (no libm call per value): the binary exponents the scaled forms of typed
// data need for every one of their ~10^8 entries, and the neighbouring doubles every outward-rounded bound
// takes (std::nextafter is an out-of-line libm call: 5% of a Theorem 1 construction when it was used).
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

namespace memcert {

// For a finite non-zero x: `low` is the exponent of its lowest set bit (x = m 2^low, m odd) and `top` is
// frexp's exponent (|x| in [2^(top-1), 2^top)). Subnormals included.
inline void double_exponents(double x, int& low, int& top) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  const int eb = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t man = b & ((std::uint64_t{1} << 52) - 1);
  if (eb == 0) {  // subnormal: x = man 2^-1074
    low = -1074 + __builtin_ctzll(man);
    top = -1074 + (64 - __builtin_clzll(man));
  } else {  // x = (2^52 + man) 2^(eb - 1075)
    low = eb - 1075 + __builtin_ctzll(man | (std::uint64_t{1} << 52));
    top = eb - 1022;
  }
}

// The next double above x: std::nextafter(x, +inf) exactly (NaN and +inf unchanged, -0 and +0 go to the
// smallest subnormal, -inf to the most negative finite double).
inline double next_up(double x) {
  if (x != x || x == std::numeric_limits<double>::infinity()) return x;
  if (x == 0) return 0x1p-1074;
  std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  b = x > 0 ? b + 1 : b - 1;
  return std::bit_cast<double>(b);
}
// The next double below x: std::nextafter(x, -inf) exactly.
inline double next_down(double x) { return -next_up(-x); }

}  // namespace memcert

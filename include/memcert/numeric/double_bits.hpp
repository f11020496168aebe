#pragma once
// The binary exponents of a double read from its bits (no libm call per value): what the scaled forms of
// typed data need for every one of their ~10^8 entries.
#include <cstdint>
#include <cstring>

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

}  // namespace memcert

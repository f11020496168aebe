#pragma once
// Private to src/theory/mahdavi24: 128-bit integer helpers for the exact small-integer products of the
// construction (sums that provably stay below 2^126 run in __int128 instead of GMP).
#include <cstdint>

#include "memcert/numeric/rational.hpp"

namespace memcert::mahdavi24::int128 {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// x as an int64 when |x| < 2^62 (sets ok = false otherwise).
inline std::int64_t small_int64(const Integer& x, bool& ok) {
  if (mpz_sizeinbase(x.get_mpz_t(), 2) > 62) { ok = false; return 0; }
  return mpz_get_si(x.get_mpz_t());
}

// Bits of |x| (0 for x = 0).
inline int bits(i128 x) {
  const u128 u = x < 0 ? static_cast<u128>(-x) : static_cast<u128>(x);
  const auto hi = static_cast<std::uint64_t>(u >> 64), lo = static_cast<std::uint64_t>(u);
  if (hi) return 128 - __builtin_clzll(hi);
  return lo ? 64 - __builtin_clzll(lo) : 0;
}

// Integer from a 128-bit value through two 64-bit halves (exact).
inline Integer to_integer(u128 u) {
  Integer hi(static_cast<unsigned long>(u >> 64)), lo(static_cast<unsigned long>(u & ~0UL));
  return (hi << 64) + lo;
}
inline Integer to_integer(i128 x) {
  const bool neg = x < 0;
  Integer r = to_integer(neg ? static_cast<u128>(-x) : static_cast<u128>(x));
  return neg ? Integer(-r) : r;
}

}  // namespace memcert::mahdavi24::int128

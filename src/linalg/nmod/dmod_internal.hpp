#pragma once
// Internal helpers shared by the word-size modular kernels (not installed).
#include "memcert/linalg/nmod/gemm_plain.hpp"
#include "memcert/numeric/double_bits.hpp"
#include <cstddef>
#include <cstdint>
#include <bit>
#include <cmath>
#include <limits>

namespace memcert::fast_detail {

// nextafter(x, +inf) / nextafter(x, -inf) without the libm call (IEEE binary64 bit patterns): the next
// representable double above / below x; used to round bounds upward after a round-to-nearest operation.
using memcert::next_down;  // numeric/double_bits.hpp
using memcert::next_up;

struct ModCtx {
  ModCtx() = default;
  explicit ModCtx(std::uint64_t prime);
  static ModCtx floating();  // p = 0: plain floating-point C -= A B (no reduction)
  double p = 0, pinv = 0, h = 0;  // h = (p-1)/2
  std::size_t kmax = 1;           // products of centred residues accumulable exactly (see dmod_gemm.cpp)
};

// C[0:m,0:n] := centred(C - A B mod p) exactly (see dmod_gemm.cpp for the exactness argument).
void gemm_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
              const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
              const ModCtx& M, int threads);
// Centred residue of an integer-valued double with |x| <= 2^53 - p (every caller's bound: see kmax).
// q = round(x/p) by the 1.5*2^52 trick (exact rounding for |y| < 2^51; libm beyond); q p is an integer
// of magnitude <= |x| + p <= 2^53, hence exact, and so is x - q p (|r| <= p/2 + 1 before the fix-up).
inline double reduce_one(double x, const ModCtx& M) {
  const double y = x * M.pinv;
  constexpr double kMagic = 0x1.8p52;
  const double q = std::fabs(y) < 0x1p51 ? (y + kMagic) - kMagic : std::nearbyint(y);
  double r = x - q * M.p;
  if (r > M.h) r -= M.p;
  if (r < -M.h) r += M.p;
  return r;
}

}  // namespace memcert::fast_detail

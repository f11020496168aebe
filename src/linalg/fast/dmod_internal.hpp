#pragma once
// Internal helpers shared by the fast-path sources (not installed).
#include <cstddef>
#include <cstdint>

namespace memcert::fast_detail {

struct ModCtx {
  explicit ModCtx(std::uint64_t prime);
  double p = 0, pinv = 0, h = 0;  // h = (p-1)/2
  std::size_t kmax = 1;           // products of centred residues accumulable exactly (see dmod_gemm.cpp)
};

// C[0:m,0:n] := centred(C - A B mod p) exactly (see dmod_gemm.cpp for the exactness argument).
void gemm_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
              const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
              const ModCtx& M, int threads);
// Centred residue of an integer-valued double |x| < 2^53.
double reduce_one(double x, const ModCtx& M);

}  // namespace memcert::fast_detail

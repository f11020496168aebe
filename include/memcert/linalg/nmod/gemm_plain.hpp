#pragma once
// Plain double matrix products (round-to-nearest, FMA, blocked and threaded) for the floating-point
// filters whose callers bound the rounding error themselves. They share the blocked kernel of the modular
// product (nmod/dmod.hpp's dmod_gemm_sub) with the reduction turned off.
#include <cstddef>

namespace memcert::fast_detail {

// Plain double C -= A B, round-to-nearest with FMA; each entry is sum_k of products accumulated in some
// order, so |computed - exact| <= gamma_{k+1} sum_k |a_ik b_kj| (+ underflow) in the usual model.
void gemm_plain_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                    const double* b, std::size_t ldb, double* c, std::size_t ldc, int threads);
// The same with B given by its transpose: C -= A Bt^T for the n x k row-major bt (a Gram matrix A A^T
// without a transposed copy of A).
void gemm_plain_sub_bt(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                       const double* bt, std::size_t ldbt, double* c, std::size_t ldc, int threads);

}  // namespace memcert::fast_detail

#pragma once
// Single-precision matrix product for the fast path's floating-point filters (not installed).
#include <cstddef>

namespace memcert::fast_detail {

// C := A B for row-major A (m x k), B (k x n) and C (m x n), in float: each entry is a sum of k products
// accumulated in float in some order (FMA on AVX-512, separate roundings otherwise), so
// |computed - exact| <= gamma_k sum_l |a_il b_lj| + k eta with u = 2^-24, eta = 2^-149 (the usual model).
// `threads` >= 1 split the columns; no entry's order depends on it.
void sgemm_plain(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c, int threads);

}  // namespace memcert::fast_detail

#pragma once
// The Gram matrix of a small-integer matrix, EXACTLY, by 16-bit integer products (AVX-512 VNNI's
// vpdpwssd, or AVX2's vpmaddwd): two 16 x 16 -> 32-bit products summed per instruction lane, 32 of them
// per 512-bit instruction against 8 double multiply-adds. For integer data of small magnitude (counts,
// quantised weights, the [-1000, 1000] matrices of the rank benchmark) this is both about four times
// faster than the double Gram product and free of rounding: the numerical rank's Rump test then needs
// no Gram error bound at all.
#include <cstddef>
#include <cstdint>
#include <optional>

namespace memcert {

// C is the k x n integer matrix `a` (rows x cols, row-major) itself when `transposed` is false
// (k = rows, n = cols), or its transpose (k = cols, n = rows). When every entry lies in [-32767, 32767],
// the 32-bit lanes can take min(n/2, 128) pair products between flushes (2 * 128 max|a_ij|^2 < 2^31,
// i.e. max|a_ij| <= 2896, or fewer columns), and the CPU has AVX2 (or AVX-512 VNNI): writes the lower triangle of C C^T,
// exactly, into the row-major k x k buffer g (entries (i, j), j <= i; some entries above the diagonal
// within 64-column blocks of the diagonal are overwritten, the rest left as they were) and returns
// ||C||_F^2 rounded to nearest (exact when below 2^53). Otherwise returns nullopt; g may then have been
// partly written. Every accumulation is exact: 32-bit lane sums are flushed into g (as doubles, exact
// below 2^53) before they could reach 2^31. Packing stops at the first entry too wide for these conditions.
// Memory: a packed copy of ceil(k / 64) 64 n 2 bytes (a quarter of the int64 input when 64 divides k; meant
// for k of a few dozen and more). `threads` <= 0: fast_threads().
std::optional<double> gram_lower_exact_i16(const std::int64_t* a, std::size_t rows, std::size_t cols,
                                           bool transposed, double* g, int threads = 0);

// Which kernel gram_lower_exact_i16 uses on this CPU: "avx512vnni", "avx2" or "none".
const char* gram_int16_kernel_name();
// gram_lower_exact_i16 with the kernel `name` ("avx2", or the CPU's best): nullopt as well when this CPU
// cannot run it. For tests, so that both kernels are checked on a CPU that has both.
std::optional<double> gram_lower_exact_i16_kernel(const char* name, const std::int64_t* a, std::size_t rows,
                                                  std::size_t cols, bool transposed, double* g, int threads = 0);

}  // namespace memcert

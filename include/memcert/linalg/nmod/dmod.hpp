#pragma once
// The double-precision modular fast path: Gaussian elimination modulo primes p < 2^26 with
// entries stored as doubles in the centred range [-(p-1)/2, (p-1)/2]. The bulk of the work is a blocked
// matrix product C -= A*B whose inner products run as vectorised double FMAs with DELAYED reduction (the
// FFLAS-FFPACK technique): every partial sum is an integer of magnitude < 2^53, so every FMA is exact
// and the result is bit-for-bit the same as exact integer arithmetic, on any ISA and any thread count.
// Results are exact statements about F_p; they certify over Q exactly as the u64 path does
// (rank mod p <= rank over Q; a non-zero minor mod p is non-zero over Z).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/util/threads.hpp"

namespace memcert {

// Rank profile modulo a prime p < 2^31 of an integer matrix (Gaussian elimination over F_p):
// `rank` = rank mod p; pivot_rows/pivot_cols (sorted ascending) index a k x k submatrix whose
// determinant is non-zero mod p, hence non-zero over Z (rank mod p <= rank over Q).
struct ModpRankProfile {
  std::uint64_t prime = 0;
  std::size_t rank = 0;
  std::vector<std::size_t> pivot_rows, pivot_cols;
};
ModpRankProfile zmat_rank_profile_modp(const ZMatrix& a, std::uint64_t p);

// fast_set_threads / fast_threads: memcert/util/threads.hpp (the kernels' thread count).

// The i-th prime below 2^23 counting down from 2^23 (deterministic). Primes this size let the
// product kernel accumulate ~500 products between reductions; any prime < 2^26 is accepted.
std::uint64_t prime_fast(std::size_t i);

// Largest prime accepted by the double kernels (exclusive bound 2^26).
inline constexpr std::uint64_t kDmodPrimeBound = std::uint64_t(1) << 26;

// A dense matrix of residues mod p in the centred double representation.
struct DModMatrix {
  std::uint64_t p = 0;
  std::size_t rows = 0, cols = 0;
  std::vector<double> a;  // row-major, |a_ij| <= (p-1)/2, integral
  double& operator()(std::size_t i, std::size_t j) { return a[i * cols + j]; }
  double operator()(std::size_t i, std::size_t j) const { return a[i * cols + j]; }
};

DModMatrix dmod_from_zmat(const ZMatrix& z, std::uint64_t p);
// Row-scaled (qmat_row_scaled_integer) residues of a rational matrix, without building big integers
// when the row's denominators are coprime to p (else falls back to the exact row scaling).
DModMatrix dmod_from_qmat(const QMatrix& q, std::uint64_t p);
// Residues of an int64 matrix (row-major); the _into form reuses `out`'s storage.
DModMatrix dmod_from_i64(const std::int64_t* a, std::size_t rows, std::size_t cols, std::uint64_t p);
void dmod_from_i64_into(const std::int64_t* a, std::size_t rows, std::size_t cols, std::uint64_t p, DModMatrix& out);
// Residues of the exact values of finite doubles, row-scaled to integers (row i times 2^-e_i where e_i is
// the smallest exponent of the row): same rank as the real matrix. Throws on NaN/inf.
DModMatrix dmod_from_double_rows(const double* a, std::size_t rows, std::size_t cols, std::uint64_t p);
void dmod_from_double_rows_into(const double* a, std::size_t rows, std::size_t cols, std::uint64_t p, DModMatrix& out);

// Rank profile of `a` mod a.p (p prime, p < 2^26): the same contract as zmat_rank_profile_modp
// (pivot_rows / pivot_cols sorted, the minor is non-zero mod p). An integer or rational matrix goes
// through dmod_from_zmat / dmod_from_qmat first.
struct DModRankOptions {
  int threads = 0;        // <= 0: fast_threads()
  bool in_place = false;  // eliminate in a's storage (destroys `a`; saves the copy), else `a` is unchanged
};
ModpRankProfile dmod_rank_profile(DModMatrix& a, const DModRankOptions& opt = {});

// Right kernel mod p: cols x (cols - rank) in reduced form (identity on the free columns), entries in
// [0, p). `free_cols` receives the free columns (ascending).
Matrix<std::uint32_t> dmod_kernel(const DModMatrix& a, std::vector<std::size_t>* free_cols = nullptr,
                                  int threads = 0);

// X with A X = B mod p for square A; nullopt when A is singular mod p. Entries in [0, p).
std::optional<Matrix<std::uint32_t>> dmod_solve(const DModMatrix& a, const DModMatrix& b, int threads = 0);

namespace fast_detail {
// C[0:m, 0:n] := centred( C - A B ) mod p with A(i,k) = a[i*lda + (acol ? acol[k] : k)],
// B(k,j) = b[k*ldb + j]; all inputs centred residues. Exposed for the tests and the batched kernels.
void dmod_gemm_sub(std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                   const std::size_t* acol, const double* b, std::size_t ldb, double* c, std::size_t ldc,
                   std::uint64_t p, int threads);
// Name of the micro-kernel in use ("avx512", "avx2", "generic").
const char* dmod_kernel_isa();
}  // namespace fast_detail

}  // namespace memcert

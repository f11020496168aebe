#pragma once
// Arithmetic modulo a prime p < 2^63 for the checker: deterministic primality, rank and determinant
// over F_p. Independence mod p implies independence over Z (a minor that is non-zero mod p is
// non-zero), which is the only direction the checker relies on for lower bounds.
#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memcert_checker {

// Deterministic Miller-Rabin for every 64-bit n (bases 2..37 suffice below 3.3e24).
bool is_prime_u64(std::uint64_t n);

// Largest modulus the F_p routines accept: sums of two residues must not overflow 64 bits.
inline constexpr std::uint64_t kMaxPrime = (std::uint64_t{1} << 63) - 1;

// __extension__ silences -Wpedantic: the 128-bit type is a GCC/Clang extension the checker relies on.
__extension__ typedef unsigned __int128 u128;

struct ModP {
  std::uint64_t p;  // 2 <= p <= kMaxPrime
  std::uint64_t add(std::uint64_t a, std::uint64_t b) const { std::uint64_t s = a + b; return s >= p ? s - p : s; }
  std::uint64_t sub(std::uint64_t a, std::uint64_t b) const { return a >= b ? a - b : a + (p - b); }
  std::uint64_t mul(std::uint64_t a, std::uint64_t b) const {
    if (p <= 0xFFFFFFFFu) return a * b % p;  // fast path: the product fits in 64 bits
    return static_cast<std::uint64_t>(static_cast<u128>(a) * b % p);
  }
  std::uint64_t pow(std::uint64_t a, std::uint64_t e) const;
  std::uint64_t inv(std::uint64_t a) const { return pow(a, p - 2); }  // a != 0, p prime (Fermat)
  std::uint64_t reduce(const mpz_class& z) const;                       // the residue in [0, p)
};

using ModMat = std::vector<std::vector<std::uint64_t>>;

// Entrywise residues of an integer matrix.
ModMat reduce_mod(const std::vector<std::vector<mpz_class>>& a, const ModP& f);

// Rank over F_p by Gaussian elimination (the matrix is taken by value and destroyed).
std::size_t rank_mod_p(ModMat a, const ModP& f);

// Determinant over F_p of a square matrix.
std::uint64_t det_mod_p(ModMat a, const ModP& f);

// Primes below this take the blocked route on doubles (rank_mod_p_dense).
inline constexpr std::uint64_t kDensePrimeLimit = std::uint64_t{1} << 26;

// Rank over F_p, 2 <= p < kDensePrimeLimit, of the m x n matrix whose residues (integer-valued doubles in
// [0, p)) are in `w`, row-major; `w` is destroyed. `det` (if given) receives the determinant when m == n
// and the matrix is non-singular, 0 otherwise. Blocked elimination with delayed reduction (modp_dense.cpp);
// the trailing updates run on `threads` threads. Same rank and determinant as the textbook elimination.
std::size_t rank_mod_p_dense(std::vector<double>& w, std::size_t m, std::size_t n, std::uint64_t p,
                             std::uint64_t* det, unsigned threads);
// The same with row stride ld >= n (row i at w + i ld) whose columns [n, ld) are 0: a stride that is a
// multiple of kDenseStride (dense_stride) keeps every column tile of the trailing updates whole.
std::size_t rank_mod_p_dense(double* w, std::size_t m, std::size_t n, std::size_t ld, std::uint64_t p,
                             std::uint64_t* det, unsigned threads);
inline constexpr std::size_t kDenseStride = 16;
inline std::size_t dense_stride(std::size_t n) { return (n + kDenseStride - 1) / kDenseStride * kDenseStride; }

// x[i] mod p in [0, p), in place, for integer-valued doubles |x[i]| <= 2^52 and 2 <= p < kDensePrimeLimit.
void residues_dense(double* x, std::size_t len, std::uint64_t p);
// The same from src into dst (not overlapping).
void residues_dense(double* dst, const double* src, std::size_t len, std::uint64_t p);

// rank_mod_p and det_mod_p take the blocked route on doubles for p < 2^26 (modp_dense.cpp). These
// run the plain u64 elimination for every p, so tests can compare the two routes.
std::size_t rank_mod_p_reference(ModMat a, const ModP& f);
std::uint64_t det_mod_p_reference(ModMat a, const ModP& f);

}  // namespace memcert_checker

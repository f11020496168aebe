#pragma once
// The one public rank entry, behind every command, the claims and the public API. The route is chosen
// from the data's exact storage (typed_matrix.hpp), filtered in the CGAL way: a cheap method whose answer
// is a proof runs first, and only what it cannot decide escalates to a costlier exact method. No route converts the data
// to GMP rationals unless the data are rationals.
//
// rank_certified, by storage:
//   int64    the lower side is one elimination mod p of the int64 values (double modular kernels: a
//            non-zero r x r minor mod p is non-zero over Z); when it is short of min(rows, cols) the upper
//            side is the multi-prime Hadamard argument (zmat/zmat.hpp): rank <= r modulo primes whose product
//            exceeds the Hadamard bound of the (r+1)-minors. Both sides are exact statements.
//   float64  the same on the exact dyadic values, each row scaled by a power of two to integers (same
//            rank). A full-rank float matrix (the common case) is decided by the single elimination; when
//            the multi-prime upper side would need more than kMaxUpperPrimes primes (long mantissas or
//            wide exponent ranges make the Hadamard bound huge), it escalates to the exact kernel route
//            (CRT kernel + exact check Z K = 0, output-sensitive).
//   rational each row scaled by its common denominator to integers (qmat_row_scaled_integer); int64
//            route when those fit, else the same two sides on big integers, kernel route past the limit.
// Every result is a certificate the independent checker re-verifies (docs/CERTIFICATES.md "rank").
#include <cstddef>
#include <cstdint>

#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/linalg/rank_certificate.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert {

// Beyond this many primes on the multi-prime upper side, non-integer data take the kernel route.
inline constexpr std::size_t kMaxUpperPrimes = 1024;

// Exact rank of `a` with its two-sided certificate (rank_certificate.hpp), by the route above; `storage`
// is a.storage. `threads` <= 0: fast_threads().
RankCertificate rank_certified(const TypedMatrix& a, int threads = 0);

// Kruskal rank of the rows (qmat_kruskal_rank's contract; the enumeration runs on small subsets).
KruskalResult kruskal_rank_certified(const TypedMatrix& vectors, const KruskalOptions& opt = {});

// The paper's Table 1 protocol (qmat_kruskal_sample's contract): batched double modular eliminations on
// the exact values when they are doubles (int64 up to 2^53, float64), the rational route otherwise.
KruskalSample kruskal_sample_certified(const TypedMatrix& vectors, std::size_t size, std::size_t trials,
                                       std::uint64_t seed, int threads = 0);

}  // namespace memcert

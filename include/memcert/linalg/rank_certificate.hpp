#pragma once
// The two-sided certificate of rank(A) = r (docs/THEORY.md section 7) that every rank producer returns:
// rank_certified (rank.hpp, the public entry), the exact rational and integer routes (qmat/qmat.hpp,
// zmat/zmat.hpp) and the multi-prime argument they share. The independent checker re-verifies it from
// the matrix (docs/CERTIFICATES.md "rank").
//  lower: det A[minor_rows, minor_cols] != 0 mod `prime`                           => rank >= r
//  upper, by `upper`:
//    trivial      r = min(rows, cols): nothing to prove;
//    multi_prime  rank(A mod q) <= r for every q in `upper_primes` (distinct primes), and their product
//                 exceeds the Hadamard bound of the (r+1) x (r+1) minors of the row-scaled integer matrix
//                 (product of the r+1 largest squared row norms; compared as squares);
//    kernel       the columns of `kernel` (cols x (cols - r)) satisfy A * kernel = 0 exactly and its rows
//                 `kernel_free_rows` form the identity (independent columns)                => rank <= r.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert {

enum class RankUpper { trivial, multi_prime, kernel };

// "trivial", "multi-prime", "kernel" (the names of the CLI's "method" and of the certificates' "upper").
const char* rank_upper_name(RankUpper u);

struct RankCertificate {
  std::size_t rows = 0, cols = 0, rank = 0;
  Storage storage = Storage::rational;  // the storage the matrix was read in (rank_certified sets it)
  std::uint64_t prime = 0;
  std::vector<std::size_t> minor_rows, minor_cols;
  RankUpper upper = RankUpper::trivial;
  std::vector<std::uint64_t> upper_primes;     // upper == multi_prime
  QMatrix kernel;                              // upper == kernel
  std::vector<std::size_t> kernel_free_rows;   // upper == kernel
  // "minor-mod-p+trivial", "minor-mod-p+multi-prime" or "minor-mod-p+kernel" (the CLI's "method").
  std::string method() const { return std::string("minor-mod-p+") + rank_upper_name(upper); }
};

}  // namespace memcert

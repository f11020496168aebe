#pragma once
// Integer matrices (FLINT's fmpz_mat): fraction-free (Bareiss) elimination, whose every intermediate
// entry is a minor of the input (sizes stay polynomial, every division is exact), and the exact, certified
// results computed through the word-size modular kernels (nmod/dmod.hpp): multi-prime rank certificates,
// CRT kernels and solves.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/rank_certificate.hpp"

namespace memcert {

// Exact rank of an integer matrix with the multi-prime certificate (rank_certificate.hpp: upper side
// trivial or multi_prime): one elimination mod p for the lower side, then the Hadamard argument.
RankCertificate zmat_rank_certified_fast(const ZMatrix& a);

// The same certificate for any storage: `residues(q, buf)` fills buf with the residues mod q of an
// integer matrix Z (rows x cols) whose rank is the matrix's (e.g. a row scaling by non-zero integers),
// `row_norms_sq()` returns ||Z_i||^2 exactly for every row (the Hadamard bound's ingredients; called only
// when the matrix is not of full rank mod the first prime). Eliminations of the upper
// side run one prime per thread on `threads` threads (<= 0: fast_threads()), each with one reused
// buffer. nullopt when the upper side would need more than `max_primes` primes (the caller then takes
// another route, e.g. an exact kernel).
using ResiduesInto = std::function<void(std::uint64_t q, DModMatrix& buf)>;
std::optional<RankCertificate> rank_certified_multimodular(
    std::size_t rows, std::size_t cols, const ResiduesInto& residues,
    const std::function<std::vector<Integer>()>& row_norms_sq, std::size_t max_primes, int threads = 0);

// Exact re-check of a multi-prime certificate (recomputes every residue rank with the reference u64
// elimination and the Hadamard bound with GMP). For the tests; the independent checker does the same.
bool zmat_rank_certificate_check(const ZMatrix& a, const RankCertificate& c);

// Squared Hadamard bound for (k x k) minors of an integer matrix: product of the k largest squared row
// norms (the checker's multi-prime rule).
Integer zmat_minor_bound_sq(const ZMatrix& a, std::size_t k);

// The exact right kernel of the integer matrix z from a rank profile (pivot rows S, pivot cols P): solves
// Z[S,P] X = -Z[S,F] by CRT over double-modular solves + rational reconstruction (output-sensitive, up to
// the Cramer/Hadamard bound) and returns K (identity on the free columns F, X on P). *verified is set iff
// the exact integer check Z K = 0 passed (it fails only for an unlucky profile prime).
QMatrix zmat_kernel_from_profile_crt(const ZMatrix& z, const ModpRankProfile& prof,
                                     std::vector<std::size_t>& free_cols, bool* verified = nullptr);

// The exact elimination of an integer matrix, computed once (as Eigen's FullPivLU): a rank profile mod
// prime_fast(0), settled on demand by the trivial bound (independent rows, fewer than the columns) or by
// the CRT kernel of zmat_kernel_from_profile_crt passing the exact check Z K = 0; an unlucky prime (rank
// mod p < rank) fails that check and the next prime is eliminated. Every answer is exact and they all come
// from the same settled profile: rank, the non-singular minor (profile: pivot rows and columns mod
// `prime`), the right kernel (identity on kernel_free_rows) and the two-sided certificate.
class ZmatElimination {
 public:
  explicit ZmatElimination(ZMatrix z);
  std::size_t rank();
  const ModpRankProfile& profile();
  // A basis of {x : Z x = 0}: cols x (cols - rank), identity on the rows kernel_free_rows().
  const QMatrix& kernel();
  const std::vector<std::size_t>& kernel_free_rows();
  // Upper side trivial when the rows are independent and fewer than the columns (unless `with_kernel`),
  // else the kernel.
  RankCertificate certificate(bool with_kernel = false);
  const ZMatrix& matrix() const { return z_; }

 private:
  void settle(bool need_kernel);
  ZMatrix z_;
  ModpRankProfile prof_;
  std::size_t attempt_ = 0;
  bool trivial_ = false, kernel_verified_ = false;
  QMatrix kernel_;
  std::vector<std::size_t> free_rows_;
};

// Exact solution of A X = B for square integer A (nullopt iff A is singular, decided by the certified
// rank): CRT over double-modular solves + rational reconstruction, returned only after the exact check
// A X == B.
std::optional<QMatrix> zmat_solve_crt(const ZMatrix& a, const ZMatrix& b);

namespace detail {
// Determinant of a square integer matrix (Bareiss, row pivoting).
Integer zmat_det_bareiss(ZMatrix a);

// Solves A X = B for square non-singular integer A; nullopt when A is singular. Exact.
std::optional<QMatrix> zmat_solve_bareiss(ZMatrix a, ZMatrix b);

// Leading principal minors' signs: true iff all Bareiss pivots without pivoting are > 0 (then the
// k-th pivot IS the k-th leading principal minor). `minors` receives them (up to the first <= 0).
bool zmat_leading_minors_positive(ZMatrix a, std::vector<Integer>* minors);
}  // namespace detail

}  // namespace memcert

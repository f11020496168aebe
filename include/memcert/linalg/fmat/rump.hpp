#pragma once
// Certified positive definiteness in floating point: Rump, "Verification of
// positive definiteness", BIT 46 (2006), as INTLAB's isspd implements it, with docs/THEORY.md section 7's
// constants verbatim:
//   alpha_j = (j+2) u (j = 1..n, u = 2^-53),
//   c >= sum_j alpha_j a_jj + ||rad||_2 + 6 n (n + max_j a_jj) eta   (eta = 2^-1074),
//   form A - c I rounding downward, Cholesky in round-to-nearest; completion => A (and every symmetric
//   matrix within 2-norm distance ||rad||_2 of it) is positive definite.
// All bound arithmetic is rounded upward (next representable double after a round-to-nearest result);
// the Cholesky runs in round-to-nearest (the rounding mode is never changed).
//
// On top of it: a Gram matrix G = fl(C C^T) with a rigorous bound on ||fl(C C^T) - C C^T||_2, certified
// lower bounds on sigma_min, and enclosure rank lower bounds (Lemma 5) that escalate double -> MPFR ->
// exact rational LDL^T and say which tier answered.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert {

struct RumpOutcome {
  bool certified = false;
  double shift = 0;    // the c used (upper-rounded)
  std::string reason;  // why it declined (empty when certified)
};

// Rump's test for the symmetric matrix `a` (only the lower triangle is read) enlarged by any symmetric
// perturbation of 2-norm <= rad_norm2 (0 for a point matrix). `u_exp`: the unit roundoff is 2^-u_exp
// (53 for IEEE double; the only value the double kernel supports).
RumpOutcome rump_isspd(const DMatrix& a, double rad_norm2 = 0.0, int threads = 0);
// The same test on the n x n row-major buffer `a` whose lower triangle holds the matrix; the buffer is
// consumed (overwritten by the Cholesky factor of A - cI): no copy of a large Gram matrix is made.
RumpOutcome rump_isspd_lower_inplace(double* a, std::size_t n, double rad_norm2 = 0.0, int threads = 0);
// Entrywise radius version: ||rad||_2 <= ||rad||_F (computed rounding upward).
RumpOutcome rump_isspd(const DMatrix& a, const DMatrix& rad, int threads = 0);

// G = fl(C C^T) for the k x n matrix C (doubles, exact values) and err2 >= ||G - C C^T||_2 rigorously:
// |G_ij - (C C^T)_ij| <= gamma_n sum_l |c_il||c_jl| + n eta <= gamma_n ||c_i|| ||c_j|| + n eta, so
// ||G - C C^T||_2 <= gamma_n sum_i ||c_i||^2 + k n eta (all upper-rounded).
struct GramDouble {
  DMatrix g;
  double err2 = 0;
};
GramDouble gram_double(const DMatrix& c, int threads = 0);
// The lower triangle of fl(C C^T) into the row-major k x k buffer g (entries (i, j), j <= i; some entries
// above the diagonal are overwritten, the rest left as they were) for the row-major k x n matrix c; returns
// err2 as gram_double does (infinity when the bound overflows). Half the products of the full Gram
// matrix, and no transposed copy of c.
double gram_lower_double(const double* c, std::size_t k, std::size_t n, double* g, int threads = 0);

// w = G v (round to nearest; an estimate, no error bound) for the symmetric k x k matrix G whose lower
// triangle is in the row-major buffer g (entries above the diagonal are not read); `threads` <= 0:
// fast_threads(). w must not alias v.
void symmetric_lower_mul_vec(const double* g, std::size_t k, const double* v, double* w, int threads = 0);

// g += fl(C C^T) for the k x n matrix C, on g's lower triangle (g is k x k; entries above the diagonal
// are left unspecified, as gram_lower_double's, so readers take the lower triangle): one blocked product, so
// every entry gains one dot product of length n in some order and |computed - exact| <= gamma_{n+1}
// sum_l |c_il||c_jl| (+ underflow) per call. For accumulating a Gram matrix over column blocks; the
// caller owns the error bound (gamma over the total length plus one per block).
void gram_accumulate(DMatrix& g, const DMatrix& c, int threads = 0);

// An estimate (not a bound) of lambda_min of the symmetric positive definite g (lower triangle read):
// Cholesky, then `iterations` steps of inverse iteration; nullopt when the Cholesky breaks down. The
// Rayleigh quotient of g^{-1} tends to overestimate lambda_min: callers certify a fraction of it.
std::optional<double> lambda_min_estimate(const DMatrix& g, int threads = 0, int iterations = 12);
// The same estimate from a Cholesky factor L of g (row-major n x n, lower triangle): inverse iteration
// only, no factorization.
std::optional<double> lambda_min_from_factor(const double* l, std::size_t n, int iterations = 12);

// Certified mu with C C^T - mu I positive definite (so sigma_min(C) >= sqrt(mu)) for a k x n matrix C,
// k <= n, trying the largest mu first; `floor`: only mu > floor are of interest. `tier` names the tier that
// answered: "double-rump", "mpfr-<bits>", "exact-ldl"; nullopt if none could certify.
struct SigmaLower {
  Rational mu;
  std::string tier;
};
std::optional<SigmaLower> sigma_min_sq_lower_fast(const DMatrix& c, const Rational& floor = Rational(0),
                                                  bool escalate = true);

struct EnclosureFastOptions {
  bool allow_double = true;
  bool allow_mpfr = true;
  bool allow_exact = true;
  std::size_t mpfr_max_rows = 400;   // the MPFR tier is cubic with big constants
  std::size_t exact_max_rows = 200;  // the exact tier is cubic in rationals
  int threads = 0;
};

// Same contract as enclosure_rank_lower (rows S, exact mu and ||R_S||_F^2 with mu > ||R_S||_F^2), with
// `method` set to the tier that answered. Centre and radius are doubles (their exact values).
std::optional<EnclosureRankCertificate> enclosure_rank_lower_fast(const DMatrix& centre, const DMatrix& radius,
                                                                  const std::vector<std::size_t>& rows,
                                                                  const EnclosureFastOptions& opt = {});
// Rational enclosure: centre rounded to nearest double, radius enlarged by the rounding error (upward).
std::optional<EnclosureRankCertificate> enclosure_rank_lower_fast(const QMatrix& centre, const QMatrix& radius,
                                                                  const std::vector<std::size_t>& rows,
                                                                  const EnclosureFastOptions& opt = {});

// Exact sum of squares of the given rows of a double matrix (as a rational).
Rational dmat_rows_frobenius_sq(const DMatrix& a, const std::vector<std::size_t>& rows);

namespace fast_detail {
// Round-to-nearest blocked Cholesky of the lower triangle in place; false if a pivot is not > 0.
bool cholesky_rn(double* a, std::size_t n, int threads);
}  // namespace fast_detail

}  // namespace memcert

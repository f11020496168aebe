#pragma once
// Exact linear algebra over Q with certificates (docs/THEORY.md section 7). Names follow FLINT's
// <type>_<operation> convention. Every function is exact; floating point is never used to decide.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/rank_certificate.hpp"

namespace memcert {

// Row i multiplied by the lcm of its denominators: an integer matrix with the same rank, kernel
// and row-independence structure as `a`.
ZMatrix qmat_row_scaled_integer(const QMatrix& a);

// Exact rank with its two-sided certificate (rank_certificate.hpp): upper side trivial when the rows are
// independent and fewer than the columns, else kernel. One ZmatElimination of the row-scaled integer
// matrix (zmat/zmat.hpp). The storage-dispatched entry is rank_certified (rank.hpp).
RankCertificate qmat_rank_certified(const QMatrix& a);
std::size_t qmat_rank(const QMatrix& a);

// A basis of the right kernel {x : A x = 0} as the columns of a cols x (cols - rank) matrix in reduced
// form (identity on the free coordinates). Exact.
QMatrix qmat_kernel(const QMatrix& a);

// Exact determinant of a square matrix (fraction-free Bareiss on the row-scaled integer matrix).
Rational qmat_det(const QMatrix& a);

// The unique solution X of A X = B for square non-singular A; nullopt if A is singular.
std::optional<QMatrix> qmat_solve(const QMatrix& a, const QMatrix& b);

// Some solution X of A X = B for any A (nullopt when inconsistent).
std::optional<QMatrix> qmat_solve_any(const QMatrix& a, const QMatrix& b);

// Inverse of a square non-singular matrix.
std::optional<QMatrix> qmat_inverse(const QMatrix& a);

// Right inverse A^T (A A^T)^{-1} of a full-row-rank A (A * R = I); nullopt otherwise.
std::optional<QMatrix> qmat_right_inverse(const QMatrix& a);
// Left inverse (A^T A)^{-1} A^T of a full-column-rank A (L * A = I); nullopt otherwise.
std::optional<QMatrix> qmat_left_inverse(const QMatrix& a);

// Exact rational LDL^T of a symmetric matrix without pivoting. Returns true iff every pivot d_i > 0,
// i.e. A is positive definite (Sylvester). `pivots` receives the computed d_i (up to the first <= 0).
bool qmat_is_positive_definite(const QMatrix& a, std::vector<Rational>* pivots = nullptr);

// A = B * C with B (rows x k), C (k x cols), k = rank(A): B = A[:, pivot cols], C = reduced rows.
// Used to factor W = W_K W_Q^T exactly.
void qmat_rank_factor(const QMatrix& a, QMatrix& b, QMatrix& c);

}  // namespace memcert

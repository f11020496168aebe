#pragma once
// The numerical rank of a matrix, as numpy.linalg.matrix_rank computes it, to report NEXT TO the exact
// rank: float32/float64 data are taken exactly, so rounding noise in the stored values gives a full
// exact rank although the matrix is, numerically, of low rank. This is an estimate in double (no
// certificate, never used to decide a verdict); the exact rank is the certified answer.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/numeric/float32_le.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert {

struct NumericalRank {
  std::size_t rank = 0;   // number of singular values > tol
  double tol = 0;         // the threshold used
  double sigma_max = 0;   // largest singular value (of the double rounding of the matrix)
  double eps = 0;         // the machine epsilon of the default threshold (float32's or float64's)
  std::vector<double> singular_values;  // descending (empty when method is "gram-rump")
  // "svd": numpy's computation. "gram-rump": a large well-conditioned matrix, whose full numerical rank
  // was shown without an SVD (every singular value certified above tol; sigma_max then estimated from
  // below, so tol may differ from numpy's in its low digits).
  std::string method = "svd";
};

// numpy's default threshold for an m x n matrix with largest singular value sigma_max:
// sigma_max * max(m, n) * eps, eps = numpy.finfo(dtype).eps of the array's dtype.
double numerical_rank_default_tol(double sigma_max, std::size_t m, std::size_t n, double eps);
// The eps numpy uses for an array of the stored dtype (numpy.finfo(dtype).eps): float32's (2^-23) for
// 4-byte floats, float64's (2^-52) for 8-byte floats and for everything numpy computes in float64
// (integer dtypes, text, JSON); float16's own (2^-10) for 2-byte floats, which numpy's linalg refuses.
// The stored dtype decides, never the values: float64 data whose values all fit in float32 get float64's.
double numerical_rank_eps(unsigned stored_float_bytes);

// Singular values of the entrywise nearest-double rounding of `a` (Eigen's divide-and-conquer SVD),
// counted above `tol`, or above numerical_rank_default_tol(..., eps) when `tol` is nullopt (eps: float64's
// unless the caller knows the values were stored in another dtype). A matrix of at least 48 rows and
// columns first tries the "gram-rump" shortcut (full rank without an SVD). A 0 x n or m x 0 matrix has
// numerical rank 0.
NumericalRank numerical_rank(const QMatrix& a, std::optional<double> tol = std::nullopt,
                             double eps = numerical_rank_eps(8));
// A proof, without an SVD, that numpy's rank of the rows x cols row-major matrix `m` (exact values) is
// min(rows, cols) at `tol`, or at numpy's default threshold with `eps` (numerical_rank_eps): true when
// Rump's test certifies every singular value of the short side against 2 min(rows, cols) evenly spread
// lines of the long side above ||M||_F max(rows, cols) eps (>= numpy's threshold; or above tol) -- M M^T
// dominates that sub-matrix's Gram, so its singular values are no smaller. false means NOT PROVED (ill
// conditioned, or unlucky lines), not "deficient": the caller then computes numerical_rank. Single-threaded
// (for callers that run many matrices in parallel); sigma_max is not estimated.
bool numerical_rank_full_proved(const Float32Le* m, std::size_t rows, std::size_t cols, double eps,
                                std::optional<double> tol = std::nullopt);
bool numerical_rank_full_proved(const double* m, std::size_t rows, std::size_t cols, double eps,
                                std::optional<double> tol = std::nullopt);
// The same for a matrix in the engine's typed storage (int64 / float64 / rational), without a rational
// detour; eps from the matrix's stored dtype (TypedMatrix::stored_float_bytes).
NumericalRank numerical_rank(const TypedMatrix& a, std::optional<double> tol = std::nullopt);

}  // namespace memcert

// Exact rank (with two-sided certificate), kernel, solve, determinant, inverses, PD test over Q.
#include "memcert/linalg/qmat/qmat.hpp"

#include <algorithm>
#include <stdexcept>

#include "memcert/linalg/zmat/zmat.hpp"
#include "memcert/numeric/modp.hpp"

namespace memcert {

ZMatrix qmat_row_scaled_integer(const QMatrix& a) {
  ZMatrix z(a.rows(), a.cols());
  for (std::size_t i = 0; i < a.rows(); ++i) {
    Integer l = rational_denominator_lcm(a.row(i), a.row(i) + a.cols());
    for (std::size_t j = 0; j < a.cols(); ++j) {
      const Rational& q = a(i, j);
      Integer f = l / q.get_den();
      z(i, j) = q.get_num() * f;
    }
  }
  return z;
}

RankCertificate qmat_rank_certified(const QMatrix& a) {
  return ZmatElimination(qmat_row_scaled_integer(a)).certificate();
}

std::size_t qmat_rank(const QMatrix& a) { return ZmatElimination(qmat_row_scaled_integer(a)).rank(); }

QMatrix qmat_kernel(const QMatrix& a) { return ZmatElimination(qmat_row_scaled_integer(a)).kernel(); }

Rational qmat_det(const QMatrix& a) {
  if (a.rows() != a.cols()) throw std::invalid_argument("qmat_det: matrix not square");
  ZMatrix z = qmat_row_scaled_integer(a);
  Integer scale = 1;
  for (std::size_t i = 0; i < a.rows(); ++i) scale *= rational_denominator_lcm(a.row(i), a.row(i) + a.cols());
  Rational det(detail::zmat_det_bareiss(std::move(z)), scale);
  det.canonicalize();  // mpq_class(num, den) does not reduce
  return det;
}

namespace {
// Row i of [A | B] scaled by the lcm of its denominators: same solutions, integer data.
void scale_system(const QMatrix& a, const QMatrix& b, ZMatrix& za, ZMatrix& zb) {
  za = ZMatrix(a.rows(), a.cols());
  zb = ZMatrix(b.rows(), b.cols());
  for (std::size_t i = 0; i < a.rows(); ++i) {
    Integer l = rational_denominator_lcm(a.row(i), a.row(i) + a.cols());
    Integer lb = rational_denominator_lcm(b.row(i), b.row(i) + b.cols());
    mpz_lcm(l.get_mpz_t(), l.get_mpz_t(), lb.get_mpz_t());
    for (std::size_t j = 0; j < a.cols(); ++j) za(i, j) = a(i, j).get_num() * (l / a(i, j).get_den());
    for (std::size_t j = 0; j < b.cols(); ++j) zb(i, j) = b(i, j).get_num() * (l / b(i, j).get_den());
  }
}
}  // namespace

std::optional<QMatrix> qmat_solve(const QMatrix& a, const QMatrix& b) {
  if (a.rows() != a.cols() || b.rows() != a.rows()) throw std::invalid_argument("qmat_solve: shape mismatch");
  ZMatrix za, zb;
  scale_system(a, b, za, zb);
  if (a.rows() >= 8) return zmat_solve_crt(za, zb);  // fast path: CRT + exact check A X == B
  return detail::zmat_solve_bareiss(std::move(za), std::move(zb));
}

std::optional<QMatrix> qmat_solve_any(const QMatrix& a, const QMatrix& b) {
  if (b.rows() != a.rows()) throw std::invalid_argument("qmat_solve_any: shape mismatch");
  RankCertificate rc = qmat_rank_certified(a);  // exact rank => pivot rows span the row space
  QMatrix x(a.cols(), b.cols(), Rational(0));
  if (rc.rank > 0) {
    QMatrix as = mat_submatrix(a, rc.minor_rows, rc.minor_cols);
    QMatrix bs = mat_select_rows(b, rc.minor_rows);
    auto xs = qmat_solve(as, bs);
    if (!xs) throw std::logic_error("qmat_solve_any: certified minor singular");
    for (std::size_t i = 0; i < rc.rank; ++i)
      for (std::size_t j = 0; j < b.cols(); ++j) x(rc.minor_cols[i], j) = (*xs)(i, j);
  }
  if (!(mat_mul(a, x) == b)) return std::nullopt;  // consistent iff the pivot-row solution fits all rows
  return x;
}

std::optional<QMatrix> qmat_inverse(const QMatrix& a) {
  return qmat_solve(a, QMatrix::identity(a.rows()));
}

// Both one-sided inverses as one solve with the Gram matrix (symmetric): no explicit inverse and no
// product of big rationals afterwards.
std::optional<QMatrix> qmat_right_inverse(const QMatrix& a) {
  auto y = qmat_solve(mat_mul(a, mat_transpose(a)), a);  // (A A^T)^{-1} A; A A^T invertible iff full row rank
  if (!y) return std::nullopt;
  return mat_transpose(*y);                             // A^T (A A^T)^{-1}
}

std::optional<QMatrix> qmat_left_inverse(const QMatrix& a) {
  QMatrix at = mat_transpose(a);
  return qmat_solve(mat_mul(at, a), at);  // (A^T A)^{-1} A^T
}

bool qmat_is_positive_definite(const QMatrix& a, std::vector<Rational>* pivots) {
  if (a.rows() != a.cols()) throw std::invalid_argument("qmat_is_positive_definite: not square");
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (a(i, j) != a(j, i)) throw std::invalid_argument("qmat_is_positive_definite: not symmetric");
  // Scaling row i by a positive integer multiplies the i-th and later leading minors by positive
  // factors, so Sylvester's criterion can run fraction-free on the row-scaled integer matrix.
  ZMatrix z = qmat_row_scaled_integer(a);
  std::vector<Integer> minors;
  bool pd = detail::zmat_leading_minors_positive(std::move(z), &minors);
  if (pivots) {
    pivots->clear();
    Rational prev = 1;
    Integer scale = 1;
    for (std::size_t k = 0; k < minors.size(); ++k) {
      scale *= rational_denominator_lcm(a.row(k), a.row(k) + a.cols());
      Rational minor = Rational(minors[k]) / Rational(scale);  // the k-th leading minor of a
      pivots->push_back(k == 0 ? minor : minor / prev);
      prev = minor;
    }
  }
  return pd;
}

void qmat_rank_factor(const QMatrix& a, QMatrix& b, QMatrix& c) {
  RankCertificate rc = qmat_rank_certified(a);
  const std::size_t k = rc.rank;
  // Columns of A at the pivot columns span its column space: A = A[:, P] * C with C solving
  // A[P_rows, P] C = A[P_rows, :] (unique because that minor is non-singular).
  b = mat_submatrix(a, [&] { std::vector<std::size_t> r(a.rows()); for (std::size_t i = 0; i < r.size(); ++i) r[i] = i; return r; }(), rc.minor_cols);
  if (k == 0) {
    c = QMatrix(0, a.cols());
    return;
  }
  QMatrix as = mat_submatrix(a, rc.minor_rows, rc.minor_cols);
  QMatrix ar = mat_select_rows(a, rc.minor_rows);
  auto x = qmat_solve(as, ar);
  if (!x) throw std::logic_error("qmat_rank_factor: certified minor singular");
  c = std::move(*x);
}

}  // namespace memcert

// numpy.linalg.matrix_rank's numerical rank (SVD of the double rounding, threshold sigma_max max(m,n) eps),
// reported beside the certified exact rank so that rounding noise in stored float data is visible.
#include "memcert/linalg/numerical_rank.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace memcert {

double numerical_rank_default_tol(double sigma_max, std::size_t m, std::size_t n, double eps) {
  return sigma_max * static_cast<double>(std::max(m, n)) * eps;
}

double numerical_rank_eps(const QMatrix& a) {
  bool fractional = false;
  for (const Rational& q : a.data()) {
    double x = rational_to_double(q);
    if (!std::isfinite(x) || static_cast<double>(static_cast<float>(x)) != x || rational_from_double(x) != q)
      return std::numeric_limits<double>::epsilon();
    if (q.get_den() != 1) fractional = true;
  }
  return fractional ? static_cast<double>(std::numeric_limits<float>::epsilon()) : std::numeric_limits<double>::epsilon();
}

namespace {

// Singular values of `m` counted above `tol` (or numpy's default with `eps`).
NumericalRank numerical_rank_of_doubles(const Eigen::MatrixXd& m, double eps, std::optional<double> tol) {
  NumericalRank out;
  out.eps = eps;
  if (m.rows() == 0 || m.cols() == 0) {
    out.tol = tol.value_or(0);
    return out;
  }
  Eigen::BDCSVD<Eigen::MatrixXd> svd(m);  // singular values only: no U, V
  const Eigen::VectorXd& s = svd.singularValues();  // descending, non-negative
  out.singular_values.assign(s.data(), s.data() + s.size());
  out.sigma_max = s.size() ? s(0) : 0;
  out.tol = tol ? *tol : numerical_rank_default_tol(out.sigma_max, m.rows(), m.cols(), eps);
  out.rank = static_cast<std::size_t>(std::count_if(out.singular_values.begin(), out.singular_values.end(),
                                                    [&](double x) { return x > out.tol; }));
  return out;
}

}  // namespace

NumericalRank numerical_rank(const QMatrix& a, std::optional<double> tol) {
  // Exact entries beyond double range (e.g. "1e999" in a text file) would round to infinity: the whole
  // matrix is then scaled by one power of two first, which leaves the rank and numpy's relative threshold
  // unchanged (an explicit --tol is taken for the matrix as given, so it is scaled alike).
  long top = LONG_MIN;
  for (const Rational& q : a.data())
    if (sgn(q) != 0)
      top = std::max(top, static_cast<long>(mpz_sizeinbase(q.get_num_mpz_t(), 2)) - static_cast<long>(mpz_sizeinbase(q.get_den_mpz_t(), 2)));
  const long shift = top > 1000 ? top - 1000 : 0;
  Rational scale(1);
  if (shift > 0) mpz_mul_2exp(scale.get_den_mpz_t(), scale.get_den_mpz_t(), static_cast<mp_bitcnt_t>(shift));
  Eigen::MatrixXd m(a.rows(), a.cols());
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) m(i, j) = rational_to_double(shift > 0 ? Rational(a(i, j) * scale) : a(i, j));
  if (shift > 0) {
    NumericalRank nr = numerical_rank_of_doubles(m, numerical_rank_eps(a), tol ? std::optional<double>(std::ldexp(*tol, -static_cast<int>(std::min(shift, 100000L)))) : std::nullopt);
    nr.tol = std::ldexp(nr.tol, static_cast<int>(std::min(shift, 100000L)));
    nr.sigma_max = std::ldexp(nr.sigma_max, static_cast<int>(std::min(shift, 100000L)));
    for (double& sv : nr.singular_values) sv = std::ldexp(sv, static_cast<int>(std::min(shift, 100000L)));
    return nr;
  }
  return numerical_rank_of_doubles(m, numerical_rank_eps(a), tol);
}

NumericalRank numerical_rank(const TypedMatrix& a, std::optional<double> tol) {
  if (a.storage == Storage::rational) return numerical_rank(a.q, tol);
  Eigen::MatrixXd m(a.rows, a.cols);
  double eps = std::numeric_limits<double>::epsilon();
  if (a.storage == Storage::int64) {
    for (std::size_t k = 0; k < a.i64.size(); ++k) m(k / a.cols, k % a.cols) = static_cast<double>(a.i64[k]);
  } else {
    bool all_float32 = true, fractional = false;  // as numerical_rank_eps, on the doubles directly
    for (std::size_t k = 0; k < a.f64.size(); ++k) {
      double x = a.f64[k];
      m(k / a.cols, k % a.cols) = x;
      if (static_cast<double>(static_cast<float>(x)) != x) all_float32 = false;
      if (x != std::floor(x)) fractional = true;
    }
    if (all_float32 && fractional) eps = std::numeric_limits<float>::epsilon();
  }
  return numerical_rank_of_doubles(m, eps, tol);
}

}  // namespace memcert

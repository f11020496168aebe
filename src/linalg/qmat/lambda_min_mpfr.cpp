// lambda_min_mpfr.hpp: Eigen's Cholesky and triangular solves over boost::multiprecision::mpfr_float.
#include "lambda_min_mpfr.hpp"

#include <mpfr.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/mpfr.hpp>

namespace memcert::detail {

Rational lambda_min_estimate_mpfr(const QMatrix& g) {
  using Real = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<kLambdaMinMpfrDigits10>,
                                             boost::multiprecision::et_off>;
  using MatrixR = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;
  using VectorR = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
  const auto n = static_cast<Eigen::Index>(g.rows());
  MatrixR m(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j <= i; ++j)
      mpfr_set_q(m(i, j).backend().data(), g(std::size_t(i), std::size_t(j)).get_mpq_t(), MPFR_RNDN);
  const Eigen::LLT<MatrixR, Eigen::Lower> llt(m);
  if (llt.info() != Eigen::Success) return Rational(0);
  VectorR x = VectorR::Ones(n);
  Real ratio = 0;
  for (int it = 0; it < 60; ++it) {
    const VectorR y = llt.solve(x);  // G^-1 x
    const Real norm = y.norm();
    ratio = norm / x.norm();  // ||G^-1 x|| / ||x|| -> lambda_max(G^-1)
    x = y / norm;
  }
  const Real lambda = 1 / ratio;
  Rational r;
  mpfr_get_q(r.get_mpq_t(), lambda.backend().data());
  return r;
}

}  // namespace memcert::detail

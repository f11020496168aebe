// memcert/eigen.hpp: Eigen matrices of Boost.Multiprecision rationals, doubles and floats into memcert's
// exact types, and the certified engine on them.
#include "memcert/eigen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/QR>

#include "memcert/cert/linalg_cert.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/qmat/qmat.hpp"

namespace memcert::eigen {

namespace {

using boost::multiprecision::cpp_int;

Integer eigen_integer_from_cpp_int(const cpp_int& v) {
  const cpp_int magnitude = v < 0 ? cpp_int(-v) : v;
  std::vector<std::uint32_t> words;
  boost::multiprecision::export_bits(magnitude, std::back_inserter(words), 32);  // most significant first
  Integer z;
  mpz_import(z.get_mpz_t(), words.size(), 1, sizeof(std::uint32_t), 0, 0, words.data());
  if (v < 0) z = -z;
  return z;
}

cpp_int eigen_cpp_int_from_integer(const Integer& z) {
  std::vector<std::uint32_t> words((mpz_sizeinbase(z.get_mpz_t(), 2) + 31) / 32 + 1, 0);
  std::size_t count = 0;
  mpz_export(words.data(), &count, 1, sizeof(std::uint32_t), 0, 0, z.get_mpz_t());
  cpp_int v = 0;
  if (count > 0) boost::multiprecision::import_bits(v, words.begin(), words.begin() + std::ptrdiff_t(count), 32);
  return sgn(z) < 0 ? cpp_int(-v) : v;
}

double eigen_finite(double x) {
  if (!std::isfinite(x)) throw std::invalid_argument("memcert::eigen: expected finite matrix entries, got NaN or infinity");
  return x;
}

template <class Scalar, class Convert>
QMatrix eigen_to_qmatrix(const Eigen::Ref<const MatrixX<Scalar>>& a, Convert convert) {
  QMatrix q(std::size_t(a.rows()), std::size_t(a.cols()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) q(std::size_t(i), std::size_t(j)) = convert(a(i, j));
  return q;
}

template <class Scalar>
TypedMatrix eigen_to_typed_float(const Eigen::Ref<const MatrixX<Scalar>>& a, unsigned stored_bytes) {
  std::vector<double> v;
  v.reserve(std::size_t(a.rows() * a.cols()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) v.push_back(eigen_finite(static_cast<double>(a(i, j))));
  TypedMatrix t = typed_matrix_from_f64(std::size_t(a.rows()), std::size_t(a.cols()), std::move(v));
  t.stored_float_bytes = stored_bytes;
  return t;
}

DMatrix eigen_to_dmatrix(const Eigen::Ref<const MatrixX<double>>& a) {
  DMatrix d(std::size_t(a.rows()), std::size_t(a.cols()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) d(std::size_t(i), std::size_t(j)) = eigen_finite(a(i, j));
  return d;
}

RankResult eigen_rank_result(const TypedMatrix& t, int threads) {
  RankResult r;
  r.certified = memcert::rank_certified(t, threads);
  r.rank = r.certified.rank;
  r.certificate = rank_certificate_text(t, r.certified);
  if (!r.certificate.empty() && r.certificate.back() == '\n') r.certificate.pop_back();
  return r;
}

void eigen_check_rows(std::size_t rows, const std::vector<std::size_t>& selected) {
  for (std::size_t i : selected)
    if (i >= rows)
      throw std::invalid_argument("memcert::eigen::enclosure_rank_lower: row " + std::to_string(i) + " of a matrix with " +
                                  std::to_string(rows) + " rows");
}

EnclosureRankResult eigen_enclosure_result(const QMatrix& centre, const QMatrix& radius, EnclosureRankCertificate c) {
  EnclosureRankResult r;
  r.rank_lower = c.rows.size();
  r.certificate = enclosure_rank_certificate_to_json(centre, radius, c).dump();
  r.certified = std::move(c);
  return r;
}

}  // namespace

Rational to_rational(const mpq_rational& x) {
  Rational r;
  mpq_set(r.get_mpq_t(), x.backend().data());
  return r;  // mpq_rational is canonical
}

Rational to_rational(const cpp_rational& x) {
  return Rational(eigen_integer_from_cpp_int(boost::multiprecision::numerator(x)),
                  eigen_integer_from_cpp_int(boost::multiprecision::denominator(x)));
}

mpq_rational to_mpq_rational(const Rational& x) {
  mpq_rational r;
  mpq_set(r.backend().data(), x.get_mpq_t());
  return r;
}

cpp_rational to_cpp_rational(const Rational& x) {
  return cpp_rational(eigen_cpp_int_from_integer(x.get_num()), eigen_cpp_int_from_integer(x.get_den()));
}

QMatrix to_qmatrix(In<mpq_rational> a) {
  return eigen_to_qmatrix<mpq_rational>(a, [](const mpq_rational& x) { return to_rational(x); });
}
QMatrix to_qmatrix(In<cpp_rational> a) {
  return eigen_to_qmatrix<cpp_rational>(a, [](const cpp_rational& x) { return to_rational(x); });
}
QMatrix to_qmatrix(In<double> a) {
  return eigen_to_qmatrix<double>(a, [](double x) { return rational_from_double(eigen_finite(x)); });
}
QMatrix to_qmatrix(In<float> a) {
  return eigen_to_qmatrix<float>(a, [](float x) { return rational_from_double(eigen_finite(static_cast<double>(x))); });
}

TypedMatrix to_typed_matrix(In<mpq_rational> a) { return typed_matrix_from_qmat(to_qmatrix(a)); }
TypedMatrix to_typed_matrix(In<cpp_rational> a) { return typed_matrix_from_qmat(to_qmatrix(a)); }
TypedMatrix to_typed_matrix(In<double> a) { return eigen_to_typed_float<double>(a, 8); }
TypedMatrix to_typed_matrix(In<float> a) { return eigen_to_typed_float<float>(a, 4); }

MatrixX<mpq_rational> to_eigen_mpq(const QMatrix& a) {
  MatrixX<mpq_rational> m(Eigen::Index(a.rows()), Eigen::Index(a.cols()));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) m(Eigen::Index(i), Eigen::Index(j)) = to_mpq_rational(a(i, j));
  return m;
}

MatrixX<cpp_rational> to_eigen_cpp(const QMatrix& a) {
  MatrixX<cpp_rational> m(Eigen::Index(a.rows()), Eigen::Index(a.cols()));
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) m(Eigen::Index(i), Eigen::Index(j)) = to_cpp_rational(a(i, j));
  return m;
}

RankResult rank_certified(In<mpq_rational> a, int threads) { return eigen_rank_result(to_typed_matrix(a), threads); }
RankResult rank_certified(In<cpp_rational> a, int threads) { return eigen_rank_result(to_typed_matrix(a), threads); }
RankResult rank_certified(In<double> a, int threads) { return eigen_rank_result(to_typed_matrix(a), threads); }
RankResult rank_certified(In<float> a, int threads) { return eigen_rank_result(to_typed_matrix(a), threads); }

std::size_t rank_exact(In<mpq_rational> a) { return qmat_rank(to_qmatrix(a)); }
std::size_t rank_exact(In<cpp_rational> a) { return qmat_rank(to_qmatrix(a)); }
std::size_t rank_exact(In<double> a) { return qmat_rank(to_qmatrix(a)); }
std::size_t rank_exact(In<float> a) { return qmat_rank(to_qmatrix(a)); }

MatrixX<mpq_rational> kernel(In<mpq_rational> a) { return to_eigen_mpq(qmat_kernel(to_qmatrix(a))); }
MatrixX<cpp_rational> kernel(In<cpp_rational> a) { return to_eigen_cpp(qmat_kernel(to_qmatrix(a))); }
MatrixX<mpq_rational> kernel(In<double> a) { return to_eigen_mpq(qmat_kernel(to_qmatrix(a))); }
MatrixX<mpq_rational> kernel(In<float> a) { return to_eigen_mpq(qmat_kernel(to_qmatrix(a))); }

std::optional<EnclosureRankResult> enclosure_rank_lower(In<double> centre, In<double> radius,
                                                        const std::vector<std::size_t>& rows) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("memcert::eigen::enclosure_rank_lower: centre and radius shapes differ");
  eigen_check_rows(std::size_t(centre.rows()), rows);
  const DMatrix c = eigen_to_dmatrix(centre), r = eigen_to_dmatrix(radius);
  auto cert = enclosure_rank_lower_fast(c, r, rows);
  if (!cert) return std::nullopt;
  return eigen_enclosure_result(to_qmatrix(centre), to_qmatrix(radius), std::move(*cert));
}

std::optional<EnclosureRankResult> enclosure_rank_lower(In<mpq_rational> centre, In<mpq_rational> radius,
                                                        const std::vector<std::size_t>& rows) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("memcert::eigen::enclosure_rank_lower: centre and radius shapes differ");
  eigen_check_rows(std::size_t(centre.rows()), rows);
  const QMatrix c = to_qmatrix(centre), r = to_qmatrix(radius);
  auto cert = memcert::enclosure_rank_lower(c, r, rows);
  if (!cert) return std::nullopt;
  return eigen_enclosure_result(c, r, std::move(*cert));
}

EnclosureRankResult enclosure_rank_lower(In<double> centre, In<double> radius) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("memcert::eigen::enclosure_rank_lower: centre and radius shapes differ");
  const DMatrix c = eigen_to_dmatrix(centre), r = eigen_to_dmatrix(radius);
  // The proposal: rows in the order a column-pivoted QR of centre^T picks them, as many as its numerical rank.
  std::vector<std::size_t> order;
  std::size_t k_max = 0;
  if (centre.rows() > 0 && centre.cols() > 0) {
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(centre.transpose());
    k_max = std::min<std::size_t>(std::size_t(qr.rank()), std::size_t(centre.cols()));
    for (Eigen::Index i = 0; i < qr.colsPermutation().indices().size(); ++i)
      order.push_back(std::size_t(qr.colsPermutation().indices()(i)));
  }
  auto prefix = [&](std::size_t k) { return std::vector<std::size_t>(order.begin(), order.begin() + std::ptrdiff_t(k)); };
  // The longest certified prefix: the full proposal first (the common case), then a binary search.
  std::optional<EnclosureRankCertificate> best = enclosure_rank_lower_fast(c, r, {});
  std::size_t lo = 0, hi = k_max;
  if (hi > 0) {
    if (auto cert = enclosure_rank_lower_fast(c, r, prefix(hi))) {
      best = std::move(cert);
      lo = hi;
    } else {
      --hi;
    }
  }
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    if (auto cert = enclosure_rank_lower_fast(c, r, prefix(mid))) {
      best = std::move(cert);
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  if (!best) throw std::logic_error("memcert::eigen::enclosure_rank_lower: the empty row set was not certified");
  return eigen_enclosure_result(to_qmatrix(centre), to_qmatrix(radius), std::move(*best));
}

EnclosureRankResult enclosure_rank_lower(In<float> centre, In<float> radius) {
  const Eigen::MatrixXd c = centre.cast<double>(), r = radius.cast<double>();
  return enclosure_rank_lower(c, r);
}

}  // namespace memcert::eigen

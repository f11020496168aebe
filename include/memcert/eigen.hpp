#pragma once
// memcert for Eigen and Boost.Multiprecision users (library memcert::eigen; not part of memcert.hpp, since
// it needs Eigen and Boost's headers). Every function takes an Eigen matrix of
//   boost::multiprecision::mpq_rational, boost::multiprecision::cpp_rational, double or float
// (any Eigen expression of that scalar: it is evaluated first), converts it EXACTLY into memcert's types
// (a double or float is the dyadic rational it stores; NaN and infinities are std::invalid_argument) and
// calls the certified engine. Results that are matrices come back as Eigen matrices of exact rationals.
//
//   Eigen::Matrix<boost::multiprecision::mpq_rational, Eigen::Dynamic, Eigen::Dynamic> a(3, 3);
//   ...
//   memcert::eigen::RankResult r = memcert::eigen::rank_certified(a);
//   r.rank;          // exact rank
//   r.certificate;   // JSON text (kind "rank"); memcert_checker::verify_certificate_text re-verifies it
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <boost/multiprecision/cpp_int.hpp>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/gmp.hpp>

#include "memcert/linalg/rank.hpp"
#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/matrix.hpp"
#include "memcert/linalg/typed_matrix.hpp"

namespace memcert::eigen {

using mpq_rational = boost::multiprecision::mpq_rational;
using cpp_rational = boost::multiprecision::cpp_rational;
template <class Scalar>
using MatrixX = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
// The matrices the compiled functions take: any Eigen matrix, block or map of these scalars binds to them
// without a copy when its storage allows (an Eigen::Ref), other expressions through one evaluation.
template <class Scalar>
using In = const Eigen::Ref<const MatrixX<Scalar>>&;

// ---- exact conversions ----------------------------------------------------------------------------
Rational to_rational(const mpq_rational& x);
Rational to_rational(const cpp_rational& x);
mpq_rational to_mpq_rational(const Rational& x);
cpp_rational to_cpp_rational(const Rational& x);

QMatrix to_qmatrix(In<mpq_rational> a);
QMatrix to_qmatrix(In<cpp_rational> a);
QMatrix to_qmatrix(In<double> a);
QMatrix to_qmatrix(In<float> a);
// The narrowest exact storage (typed_matrix.hpp): doubles and floats as float64 (floats widened exactly),
// rationals as int64 when every entry is a 64-bit integer, float64 when every one is a double, else
// rational. This is what rank_certified below hands to the engine.
TypedMatrix to_typed_matrix(In<mpq_rational> a);
TypedMatrix to_typed_matrix(In<cpp_rational> a);
TypedMatrix to_typed_matrix(In<double> a);
TypedMatrix to_typed_matrix(In<float> a);

MatrixX<mpq_rational> to_eigen_mpq(const QMatrix& a);
MatrixX<cpp_rational> to_eigen_cpp(const QMatrix& a);

// ---- exact rank -----------------------------------------------------------------------------------
// The certified rank (the engine of linalg/rank.hpp: the route chosen from the exact storage) with its
// two-sided certificate as JSON text, kind "rank" (docs/CERTIFICATES.md), which the independent checker
// (memcert_checker::verify_certificate_text) re-verifies. `threads` <= 0: the engine's default.
struct RankResult {
  std::size_t rank = 0;
  RankCertificate certified;  // how both sides were proved
  std::string certificate;  // JSON text, one line
};
RankResult rank_certified(In<mpq_rational> a, int threads = 0);
RankResult rank_certified(In<cpp_rational> a, int threads = 0);
RankResult rank_certified(In<double> a, int threads = 0);
RankResult rank_certified(In<float> a, int threads = 0);

// The exact rank by the exact rational route alone (qmat_rank: elimination modulo primes with an exact
// kernel check), without a certificate.
std::size_t rank_exact(In<mpq_rational> a);
std::size_t rank_exact(In<cpp_rational> a);
std::size_t rank_exact(In<double> a);
std::size_t rank_exact(In<float> a);

// A basis of the right kernel {x : A x = 0}, exact: cols x (cols - rank), identity on the free coordinates
// (qmat_kernel). Doubles and floats are taken exactly, so their kernel is rational too.
MatrixX<mpq_rational> kernel(In<mpq_rational> a);
MatrixX<cpp_rational> kernel(In<cpp_rational> a);
MatrixX<mpq_rational> kernel(In<double> a);
MatrixX<mpq_rational> kernel(In<float> a);

// ---- rank of a matrix known only up to an enclosure (Lemma 5) ----------------------------------------
// rank A >= k for EVERY A with |A - centre| <= radius entrywise, certified on k rows of the centre (the
// Gram matrix of those rows minus mu I positive definite, and the radius's Frobenius norm squared on them
// below mu; docs/THEORY.md section 7). The certificate (JSON text, kind "enclosure-rank") is re-verified by
// the independent checker.
struct EnclosureRankResult {
  std::size_t rank_lower = 0;  // = rows.size()
  EnclosureRankCertificate certified;
  std::string certificate;  // JSON text, one line
};
// On the given rows (nullopt when they cannot be certified).
std::optional<EnclosureRankResult> enclosure_rank_lower(In<double> centre, In<double> radius,
                                                        const std::vector<std::size_t>& rows);
std::optional<EnclosureRankResult> enclosure_rank_lower(In<mpq_rational> centre, In<mpq_rational> radius,
                                                        const std::vector<std::size_t>& rows);
// The largest k found: the centre's rows ordered by a column-pivoted QR of its transpose (double, a
// proposal), then the longest certified prefix of that order (binary search over k). Always succeeds:
// rank_lower = 0 (no rows) when nothing can be certified.
EnclosureRankResult enclosure_rank_lower(In<double> centre, In<double> radius);
EnclosureRankResult enclosure_rank_lower(In<float> centre, In<float> radius);

}  // namespace memcert::eigen

// memcert/eigen.hpp against independent methods: Eigen's own FullPivLU over exact cpp_rational for ranks
// and kernels (random and rank-deficient matrices), exact products for A K = 0, the independent checker for
// every certificate; and the multiprecision lambda_min estimate (Eigen over mpfr_float) against a direct
// MPFR evaluation of the same inverse iteration.
#include "catch.hpp"

#include <mpfr.h>

#include <Eigen/Dense>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/qmat/lambda_min_mpfr.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/eigen.hpp"
#include "memcert/linalg/qmat/enclosure.hpp"
#include "memcert/linalg/qmat/qmat.hpp"

using namespace memcert;
using boost::multiprecision::cpp_int;
using eigen::cpp_rational;
using eigen::mpq_rational;
using MatC = eigen::MatrixX<cpp_rational>;
using MatM = eigen::MatrixX<mpq_rational>;

namespace {

// Eigen's exact rank: full pivoting LU over cpp_rational with threshold 0 (a pivot counts iff non-zero).
// Eigen's decompositions hold Boost's expression templates past their operands' lifetime, so the LU runs
// on the same rationals without them (et_off).
using RationalNoEt = boost::multiprecision::number<boost::multiprecision::cpp_rational_backend, boost::multiprecision::et_off>;
std::size_t eigen_lu_rank(const MatC& a) {
  if (a.size() == 0) return 0;  // (Eigen's LU does not take an empty matrix)
  eigen::MatrixX<RationalNoEt> m(a.rows(), a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) m(i, j) = RationalNoEt(a(i, j));
  Eigen::FullPivLU<eigen::MatrixX<RationalNoEt>> lu(m);
  lu.setThreshold(RationalNoEt(0));
  return std::size_t(lu.rank());
}

cpp_rational random_rational(std::mt19937_64& rng, int num_max, int den_max) {
  std::uniform_int_distribution<int> num(-num_max, num_max), den(1, den_max);
  return cpp_rational(num(rng), den(rng));
}

// An m x n matrix of rank <= r (B C, B m x r, C r x n, random small rationals), exactly.
MatC random_of_rank(std::mt19937_64& rng, Eigen::Index m, Eigen::Index n, Eigen::Index r) {
  MatC b(m, r), c(r, n);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < r; ++j) b(i, j) = random_rational(rng, 9, 7);
  for (Eigen::Index i = 0; i < r; ++i)
    for (Eigen::Index j = 0; j < n; ++j) c(i, j) = random_rational(rng, 9, 7);
  MatC a = MatC::Zero(m, n);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index k = 0; k < r; ++k) a(i, j) += b(i, k) * c(k, j);
  return a;
}

MatM to_mpq(const MatC& a) {
  MatM m(a.rows(), a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) m(i, j) = eigen::to_mpq_rational(eigen::to_rational(a(i, j)));
  return m;
}

MatC exact_of(const Eigen::MatrixXd& a) {
  MatC m(a.rows(), a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) m(i, j) = eigen::to_cpp_rational(rational_from_double(a(i, j)));
  return m;
}

bool product_is_zero(const MatC& a, const MatC& k) {
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < k.cols(); ++j) {
      cpp_rational s = 0;
      for (Eigen::Index l = 0; l < a.cols(); ++l) s += a(i, l) * k(l, j);
      if (s != 0) return false;
    }
  return true;
}

bool checker_accepts(const std::string& certificate) {
  return memcert_checker::verify_certificate_text(certificate).valid;
}

}  // namespace

TEST_CASE("eigen: exact conversions of mpq_rational and cpp_rational round-trip", "[api][eigen]") {
  const cpp_int big = (cpp_int(1) << 200) + 12345;
  for (const cpp_rational& x : {cpp_rational(0), cpp_rational(-7, 12), cpp_rational(big, 3), cpp_rational(-big, big + 2),
                                cpp_rational(cpp_int(1), cpp_int(1) << 130)}) {
    const Rational q = eigen::to_rational(x);
    CHECK(rational_to_string(q) == x.str());
    CHECK(eigen::to_cpp_rational(q) == x);
    CHECK(eigen::to_rational(eigen::to_mpq_rational(q)) == q);
  }
  MatM m(1, 2);
  m << mpq_rational(1, 8), mpq_rational(-3);
  const QMatrix q = eigen::to_qmatrix(m);
  CHECK(q(0, 0) == Rational(1, 8));
  CHECK(q(0, 1) == Rational(-3));
  // Doubles and floats exactly: 0.1 is the double nearest 1/10, not 1/10.
  Eigen::MatrixXd d(1, 2);
  d << 0.1, -2.5;
  CHECK(eigen::to_qmatrix(d)(0, 0) == rational_from_double(0.1));
  CHECK(eigen::to_qmatrix(d)(0, 0) != Rational(1, 10));
  Eigen::MatrixXf f(1, 1);
  f << 0.1f;
  CHECK(eigen::to_qmatrix(f)(0, 0) == rational_from_double(double(0.1f)));
  CHECK(eigen::to_typed_matrix(f).stored_float_bytes == 4);
  // Integral rationals take the int64 route, dyadic ones float64.
  CHECK(eigen::to_typed_matrix(MatM::Identity(2, 2)).storage == Storage::int64);
  CHECK(eigen::to_typed_matrix(m).storage == Storage::float64);
}

TEST_CASE("eigen: NaN and infinities are refused", "[api][eigen]") {
  Eigen::MatrixXd d = Eigen::MatrixXd::Ones(2, 2);
  d(1, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(eigen::rank_certified(d), std::invalid_argument);
  CHECK_THROWS_AS(eigen::rank_exact(d), std::invalid_argument);
  Eigen::MatrixXf f = Eigen::MatrixXf::Ones(2, 2);
  f(0, 1) = std::numeric_limits<float>::infinity();
  CHECK_THROWS_AS(eigen::rank_certified(f), std::invalid_argument);
  CHECK_THROWS_AS(eigen::enclosure_rank_lower(f, Eigen::MatrixXf::Zero(2, 2)), std::invalid_argument);
}

TEST_CASE("eigen: certified rank, exact rank and kernel agree with Eigen's FullPivLU over cpp_rational", "[api][eigen]") {
  std::mt19937_64 rng(20261127);
  for (int trial = 0; trial < 24; ++trial) {
    std::uniform_int_distribution<int> dim(1, 7);
    const Eigen::Index m = dim(rng), n = dim(rng), r = std::uniform_int_distribution<int>(0, int(std::min(m, n)))(rng);
    const MatC a = trial % 3 == 0 ? random_of_rank(rng, m, n, std::min(m, n)) : random_of_rank(rng, m, n, r);
    const std::size_t expected = eigen_lu_rank(a);
    INFO("trial " << trial << ": " << m << " x " << n);
    const eigen::RankResult rc = eigen::rank_certified(a);
    CHECK(rc.rank == expected);
    CHECK(checker_accepts(rc.certificate));
    const eigen::RankResult rq = eigen::rank_certified(to_mpq(a));
    CHECK(rq.rank == expected);
    CHECK(rq.certificate == rc.certificate);
    CHECK(eigen::rank_exact(a) == expected);
    CHECK(eigen::rank_exact(to_mpq(a)) == expected);
    const MatC k = eigen::kernel(a);
    CHECK(std::size_t(k.rows()) == std::size_t(n));
    CHECK(std::size_t(k.cols()) == std::size_t(n) - expected);
    CHECK(eigen_lu_rank(k) == std::size_t(k.cols()));  // independent
    CHECK(product_is_zero(a, k));
    const MatM km = eigen::kernel(to_mpq(a));
    CHECK(km.cols() == k.cols());
  }
}

TEST_CASE("eigen: double and float matrices are ranked by their exact values", "[api][eigen]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int trial = 0; trial < 12; ++trial) {
    Eigen::MatrixXd b(6, 3), c(3, 5);
    for (Eigen::Index i = 0; i < b.size(); ++i) b(i) = g(rng);
    for (Eigen::Index i = 0; i < c.size(); ++i) c(i) = g(rng);
    // A rounded product has full exact rank almost surely; a dyadic product with short entries is exact.
    Eigen::MatrixXd a = trial % 2 ? Eigen::MatrixXd(b * c) : Eigen::MatrixXd((b * 8).array().round().matrix() * (c * 8).array().round().matrix());
    if (trial % 4 == 0) a.row(5) = a.row(0) + a.row(1);  // exact: small integers
    const std::size_t expected = eigen_lu_rank(exact_of(a));
    const eigen::RankResult r = eigen::rank_certified(a);
    CHECK(r.rank == expected);
    CHECK(checker_accepts(r.certificate));
    CHECK(eigen::rank_exact(a) == expected);
    const MatM k = eigen::kernel(a);
    CHECK(std::size_t(k.cols()) == 5 - expected);
    const Eigen::MatrixXf af = a.cast<float>();
    const std::size_t expected_f = eigen_lu_rank(exact_of(af.cast<double>()));
    CHECK(eigen::rank_certified(af).rank == expected_f);
    CHECK(eigen::rank_exact(af) == expected_f);
  }
}

TEST_CASE("eigen: enclosure rank lower bounds are certified and never exceed the rank", "[api][eigen]") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::Index m = 3 + trial % 4, n = 6, r = 1 + trial % 3;
    Eigen::MatrixXd b(m, r), c(r, n);
    for (Eigen::Index i = 0; i < b.size(); ++i) b(i) = std::round(g(rng) * 16);
    for (Eigen::Index i = 0; i < c.size(); ++i) c(i) = std::round(g(rng) * 16);
    Eigen::MatrixXd centre = b * c;  // exact: small integers, rank <= r
    if (trial % 2) centre += Eigen::MatrixXd::Identity(m, n) * 0.5;  // full row rank (m <= n)
    const std::size_t rank = eigen_lu_rank(exact_of(centre));
    const Eigen::MatrixXd radius = Eigen::MatrixXd::Constant(m, n, 1e-9);
    const eigen::EnclosureRankResult e = eigen::enclosure_rank_lower(centre, radius);
    INFO("trial " << trial << " rank " << rank);
    CHECK(e.rank_lower <= rank);
    CHECK(e.rank_lower == rank);  // well separated from the radius: the whole rank is certified
    CHECK(e.certified.rows.size() == e.rank_lower);
    CHECK(checker_accepts(e.certificate));
    // The same rows again, through the exact rational route.
    const auto q = eigen::enclosure_rank_lower(to_mpq(exact_of(centre)), to_mpq(exact_of(radius)), e.certified.rows);
    REQUIRE(q);
    CHECK(checker_accepts(q->certificate));
  }
  // A radius as large as the entries certifies nothing, and says so (rank_lower 0, still a valid certificate).
  const Eigen::MatrixXd centre = Eigen::MatrixXd::Identity(3, 3);
  const eigen::EnclosureRankResult none = eigen::enclosure_rank_lower(centre, Eigen::MatrixXd::Constant(3, 3, 2.0));
  CHECK(none.rank_lower == 0);
  CHECK_THROWS_AS(eigen::enclosure_rank_lower(centre, Eigen::MatrixXd::Zero(2, 3)), std::invalid_argument);
  CHECK_THROWS_AS(eigen::enclosure_rank_lower(centre, centre, {3}), std::invalid_argument);
}

namespace {

// The estimate computed directly on mpfr_t at the same precision: Cholesky G = L L^T by the textbook loop,
// then the same 60 steps of inverse power iteration (an independent evaluation of what Eigen computes).
Rational reference_lambda_min(const QMatrix& g) {
  const mpfr_prec_t bits = mpfr_prec_t(boost::multiprecision::detail::digits10_2_2(detail::kLambdaMinMpfrDigits10));
  const std::size_t n = g.rows();
  std::vector<mpfr_t> l(n * n), x(n), y(n);
  mpfr_t s, p, norm, xn;
  for (auto* v : {&l, &x, &y})
    for (auto& e : *v) mpfr_init2(e, bits), mpfr_set_zero(e, 1);
  for (auto* e : {&s, &p, &norm, &xn}) mpfr_init2(*e, bits);
  auto clear = [&] {
    for (auto* v : {&l, &x, &y})
      for (auto& e : *v) mpfr_clear(e);
    for (auto* e : {&s, &p, &norm, &xn}) mpfr_clear(*e);
  };
  const mpfr_rnd_t rn = MPFR_RNDN;
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j; i < n; ++i) {
      mpfr_set_q(s, g(i, j).get_mpq_t(), rn);
      for (std::size_t k = 0; k < j; ++k) {
        mpfr_mul(p, l[i * n + k], l[j * n + k], rn);
        mpfr_sub(s, s, p, rn);
      }
      if (i == j) {
        if (mpfr_sgn(s) <= 0) {
          clear();
          return Rational(0);
        }
        mpfr_sqrt(l[j * n + j], s, rn);
      } else {
        mpfr_div(l[i * n + j], s, l[j * n + j], rn);
      }
    }
  for (auto& e : x) mpfr_set_ui(e, 1, rn);
  for (int it = 0; it < 60; ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      mpfr_set(s, x[i], rn);
      for (std::size_t k = 0; k < i; ++k) {
        mpfr_mul(p, l[i * n + k], y[k], rn);
        mpfr_sub(s, s, p, rn);
      }
      mpfr_div(y[i], s, l[i * n + i], rn);
    }
    for (std::size_t i = n; i-- > 0;) {
      mpfr_set(s, y[i], rn);
      for (std::size_t k = i + 1; k < n; ++k) {
        mpfr_mul(p, l[k * n + i], y[k], rn);
        mpfr_sub(s, s, p, rn);
      }
      mpfr_div(y[i], s, l[i * n + i], rn);
    }
    mpfr_set_zero(norm, 1);
    for (auto& v : y) mpfr_fma(norm, v, v, norm, rn);
    mpfr_sqrt(norm, norm, rn);
    mpfr_set_zero(xn, 1);
    for (auto& v : x) mpfr_fma(xn, v, v, xn, rn);
    mpfr_sqrt(xn, xn, rn);
    mpfr_div(s, norm, xn, rn);
    for (std::size_t i = 0; i < n; ++i) mpfr_div(x[i], y[i], norm, rn);
  }
  mpfr_ui_div(p, 1, s, rn);
  Rational r;
  mpfr_get_q(r.get_mpq_t(), p);
  clear();
  return r;
}

QMatrix gram_of_rows(const QMatrix& c) {
  QMatrix g(c.rows(), c.rows());
  for (std::size_t i = 0; i < c.rows(); ++i)
    for (std::size_t j = 0; j < c.rows(); ++j)
      for (std::size_t k = 0; k < c.cols(); ++k) g(i, j) += c(i, k) * c(j, k);
  return g;
}

}  // namespace

TEST_CASE("lambda_min estimate: Eigen over mpfr_float agrees with a direct MPFR evaluation", "[api][linalg]") {
  std::vector<QMatrix> grams;
  // Hilbert matrices: condition numbers up to ~1e25 at n = 16 (beyond double, within 267 bits).
  for (std::size_t n : {2, 5, 9, 16}) {
    QMatrix h(n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) h(i, j) = Rational(1, long(i + j + 1));
    grams.push_back(h);
  }
  // Gram matrices of nearly dependent rows: row k+1 = row k + 2^-60 e_k.
  std::mt19937_64 rng(5);
  for (std::size_t k : {3, 8, 40}) {
    QMatrix c(k, k + 2);
    for (std::size_t j = 0; j < k + 2; ++j) c(0, j) = Rational(long(rng() % 19) - 9, 8);
    for (std::size_t i = 1; i < k; ++i)
      for (std::size_t j = 0; j < k + 2; ++j) c(i, j) = c(i - 1, j) + (j == i ? Rational(Integer(1), Integer(1) << 60) : Rational(0));
    grams.push_back(gram_of_rows(c));
  }
  for (const QMatrix& g : grams) {
    const Rational eigen_est = detail::lambda_min_estimate_mpfr(g), direct = reference_lambda_min(g);
    INFO("n = " << g.rows() << ", estimate " << rational_to_double(eigen_est) << ", direct " << rational_to_double(direct));
    REQUIRE(direct > 0);
    REQUIRE(eigen_est > 0);
    Rational rel = (eigen_est - direct) / direct;
    if (rel < 0) rel = -rel;
    CHECK(rel < Rational(Integer(1), Integer(1) << 120));
  }
  // Not positive definite: both give 0 (the caller then has no mu to try).
  QMatrix s(2, 2);
  s(0, 0) = 1, s(0, 1) = 2, s(1, 0) = 2, s(1, 1) = 1;
  CHECK(detail::lambda_min_estimate_mpfr(s) == 0);
  CHECK(reference_lambda_min(s) == 0);
  // And the certified bound built on it: a Hilbert matrix's sigma_min^2 (its rows' Gram = H^2) is found,
  // and really is a lower bound of lambda_min(H H^T) (exact LDL^T of H H^T - mu I).
  const QMatrix h = grams[3];
  const auto mu = qmat_sigma_min_sq_lower(h);
  REQUIRE(mu);
  QMatrix shifted = gram_of_rows(h);
  for (std::size_t i = 0; i < shifted.rows(); ++i) shifted(i, i) -= *mu;
  CHECK(qmat_is_positive_definite(shifted));
}

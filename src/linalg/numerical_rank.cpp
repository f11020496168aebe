// numpy.linalg.matrix_rank's numerical rank (SVD of the double rounding, threshold sigma_max max(m,n) eps),
// reported beside the certified exact rank so that rounding noise in stored float data is visible.
#include "memcert/linalg/numerical_rank.hpp"

#include "memcert/linalg/eigen_svd.hpp"
#include "memcert/linalg/fast/rump.hpp"

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

// Below this many rows and columns the SVD is cheap: numpy's computation is then done as numpy does it.
constexpr Eigen::Index kGramShortcutMin = 48;

// Full numerical rank without an SVD, when the matrix is well conditioned (the common case, and the one
// where an SVD of a large matrix costs many times the certified exact rank). numpy's default threshold is
// sigma_max max(m,n) eps <= ||M||_F max(m,n) eps =: t. Rump's test certifies C C^T - t^2 I positive
// definite for C = M or M^T (k x n, k <= n), with the Gram matrix's rounding error bound, so every one of
// the k singular values exceeds t: the numerical rank is k at numpy's threshold and at any tol <= t.
// The reported tol is then sigma * max(m,n) * eps with sigma a power-iteration estimate from below of
// sigma_max (a Rayleigh quotient), so the reported (rank, tol) pair holds; it may differ from numpy's tol
// in its low digits. nullopt when the test does not certify (the caller runs the SVD).
// `at(i, j)` reads entry (i, j) of the rows x cols matrix as a double. (Works from the caller's storage:
// no Eigen copy is made unless the SVD is needed — fresh pages are costly.)
template <class At>
std::optional<NumericalRank> numerical_rank_full_by_gram(std::size_t rows, std::size_t cols, At at, double eps,
                                                         std::optional<double> tol) {
  if (std::min(rows, cols) < static_cast<std::size_t>(kGramShortcutMin)) return std::nullopt;
  const bool wide = rows <= cols;
  const std::size_t k = wide ? rows : cols, n = wide ? cols : rows;
  DMatrix c(k, n);
  double fro2 = 0;
  if (wide) {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < n; ++j) fro2 += (c(i, j) = at(i, j)) * c(i, j);
  } else {
    for (std::size_t r = 0; r < n; ++r)  // row r of the matrix is column r of c
      for (std::size_t j = 0; j < k; ++j) fro2 += (c(j, r) = at(r, j)) * c(j, r);
  }
  if (!std::isfinite(fro2) || fro2 == 0) return std::nullopt;
  const double maxdim = static_cast<double>(std::max(rows, cols));
  // Upward margins far above the rounding of fro2 (relative k n 2^-53) and of the products below.
  const double sigma_hi = std::sqrt(fro2) * (1 + 1e-6);
  const double t = tol ? *tol : sigma_hi * maxdim * eps;
  if (!std::isfinite(t)) return std::nullopt;
  GramDouble gd = gram_double(c);
  const double mu = t * t * (1 + 1e-6);
  double diag_max = 0;
  for (std::size_t i = 0; i < k; ++i) {
    gd.g(i, i) -= mu;
    diag_max = std::max(diag_max, std::abs(gd.g(i, i)) + mu);
  }
  // The subtraction's rounding moves each diagonal entry by at most one ulp: a perturbation of 2-norm
  // <= diag_max 2^-52, added to the Gram's own bound.
  const double rad = (gd.err2 + diag_max * 0x1p-52) * (1 + 1e-6);
  if (!rump_isspd(gd.g, rad).certified) return std::nullopt;
  NumericalRank out;
  out.eps = eps;
  out.rank = k;
  out.method = "gram-rump";
  if (tol) {
    out.tol = *tol;
  } else {
    // Power iteration on the Gram matrix (restored diagonal): the Rayleigh quotient is <= lambda_max.
    for (std::size_t i = 0; i < k; ++i) gd.g(i, i) += mu;
    std::vector<double> v(k, 1.0), w(k);
    double lambda = 0;
    for (int it = 0; it < 60; ++it) {
      double vv = 0, vw = 0;
      for (std::size_t i = 0; i < k; ++i) {
        double acc = 0;
        const double* gi = gd.g.row(i);
        for (std::size_t j = 0; j < k; ++j) acc += gi[j] * v[j];
        w[i] = acc;
      }
      for (std::size_t i = 0; i < k; ++i) vv += v[i] * v[i], vw += v[i] * w[i];
      lambda = vw / vv;
      double wn = 0;
      for (double x : w) wn += x * x;
      wn = std::sqrt(wn);
      if (!(wn > 0)) break;
      for (std::size_t i = 0; i < k; ++i) v[i] = w[i] / wn;
    }
    out.sigma_max = std::sqrt(std::max(lambda, 0.0));
    out.tol = std::min(numerical_rank_default_tol(out.sigma_max, rows, cols, eps), t);
  }
  return out;
}

// Singular values of `m` counted above `tol` (or numpy's default with `eps`).
NumericalRank numerical_rank_of_doubles(const Eigen::MatrixXd& m, double eps, std::optional<double> tol,
                                        bool try_gram = true) {
  NumericalRank out;
  out.eps = eps;
  if (m.rows() == 0 || m.cols() == 0) {
    out.tol = tol.value_or(0);
    return out;
  }
  if (try_gram) {
    auto at = [&m](std::size_t i, std::size_t j) { return m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)); };
    if (auto full = numerical_rank_full_by_gram(static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols()), at, eps, tol))
      return *full;
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
  double eps = std::numeric_limits<double>::epsilon();
  if (a.storage == Storage::float64) {
    bool all_float32 = true, fractional = false;  // as numerical_rank_eps, on the doubles directly
    for (double x : a.f64) {
      if (static_cast<double>(static_cast<float>(x)) != x) all_float32 = false;
      if (x != std::floor(x)) fractional = true;
    }
    if (all_float32 && fractional) eps = std::numeric_limits<float>::epsilon();
  }
  auto at = [&a](std::size_t i, std::size_t j) {
    return a.storage == Storage::int64 ? static_cast<double>(a.i64[i * a.cols + j]) : a.f64[i * a.cols + j];
  };
  if (auto full = numerical_rank_full_by_gram(a.rows, a.cols, at, eps, tol)) return *full;
  Eigen::MatrixXd m(a.rows, a.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = at(i, j);
  return numerical_rank_of_doubles(m, eps, tol, /*try_gram=*/false);
}

}  // namespace memcert

// numpy.linalg.matrix_rank's numerical rank (SVD of the double rounding, threshold sigma_max max(m,n) eps),
// reported beside the certified exact rank so that rounding noise in stored float data is visible.
#include "memcert/linalg/fmat/numerical_rank.hpp"

#include "memcert/linalg/fmat/eigen_svd.hpp"
#include "memcert/linalg/zmat/gram_int16.hpp"
#include "memcert/linalg/fmat/rump.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace memcert {

double numerical_rank_default_tol(double sigma_max, std::size_t m, std::size_t n, double eps) {
  return sigma_max * static_cast<double>(std::max(m, n)) * eps;
}

double numerical_rank_eps(unsigned stored_float_bytes) {
  return stored_float_bytes == 2   ? 0x1p-10  // float16
         : stored_float_bytes == 4 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                                   : std::numeric_limits<double>::epsilon();
}

namespace {

// Below this many rows and columns the SVD is cheap: numpy's computation is then done as numpy does it.
constexpr Eigen::Index kGramShortcutMin = 48;

// An estimate of lambda_max of the symmetric positive semidefinite matrix whose lower triangle is in g:
// the largest Ritz value of `steps` Lanczos steps with full reorthogonalization. A Ritz value is a
// Rayleigh quotient of a vector of the Krylov space, so (up to rounding) it is <= lambda_max; Lanczos
// reaches the top of the spectrum in far fewer products than power iteration (each product reads all of
// g). An estimate only: the caller's statements never depend on it being accurate.
double lambda_max_lanczos_lower(const double* g, std::size_t k, std::size_t steps = 32) {
  steps = std::min(steps, k);
  std::vector<double> basis, alpha, beta, q(k), w(k);
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // deterministic start with no special direction
  double nq = 0;
  for (double& qi : q) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    qi = static_cast<double>(x >> 11) * 0x1p-53 + 0.5;
    nq += qi * qi;
  }
  for (double& qi : q) qi /= std::sqrt(nq);
  for (std::size_t j = 0; j < steps; ++j) {
    basis.insert(basis.end(), q.begin(), q.end());
    symmetric_lower_mul_vec(g, k, q.data(), w.data());
    double a = 0;
    for (std::size_t i = 0; i < k; ++i) a += q[i] * w[i];
    alpha.push_back(a);
    for (int pass = 0; pass < 2; ++pass)  // w minus its components along every basis vector, twice
      for (std::size_t b = 0; b <= j; ++b) {
        const double* qb = basis.data() + b * k;
        double d = 0;
        for (std::size_t i = 0; i < k; ++i) d += qb[i] * w[i];
        for (std::size_t i = 0; i < k; ++i) w[i] -= d * qb[i];
      }
    double nw = 0;
    for (double wi : w) nw += wi * wi;
    nw = std::sqrt(nw);
    if (!(nw > 1e-12 * std::abs(a)) || j + 1 == steps) break;
    beta.push_back(nw);
    for (std::size_t i = 0; i < k; ++i) q[i] = w[i] / nw;
  }
  const auto m = static_cast<Eigen::Index>(alpha.size());
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(m, m);
  for (Eigen::Index i = 0; i < m; ++i) {
    t(i, i) = alpha[static_cast<std::size_t>(i)];
    if (i + 1 < m) t(i, i + 1) = t(i + 1, i) = beta[static_cast<std::size_t>(i)];
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(t, Eigen::EigenvaluesOnly);
  return es.eigenvalues().maxCoeff();
}
// t = ||M||_F max(rows, cols) eps from fro2 = ||M||_F^2 summed over `count` values (relative error below
// count 2^-53), rounded up far past that error, so t >= numpy's default threshold sigma_max max(rows, cols)
// eps; or `tol`. nullopt when M is zero or t is not finite (no proof is attempted then).
std::optional<double> threshold_from_sum_squares(double fro2, std::size_t count, std::size_t maxdim, double eps,
                                                 std::optional<double> tol) {
  if (!std::isfinite(fro2) || fro2 == 0) return std::nullopt;
  // 1e-6 covers the sum's rounding up to 10^9 entries, the second term beyond.
  const double margin = 1 + 1e-6 + static_cast<double>(count) * 0x1p-50;
  const double t = tol ? *tol : std::sqrt(fro2) * margin * static_cast<double>(maxdim) * eps;
  if (!std::isfinite(t)) return std::nullopt;
  return t;
}

// The same threshold for the `count` values of M (any order; float or double).
template <class F>
std::optional<double> full_rank_threshold(const F* v, std::size_t count, std::size_t maxdim, double eps,
                                          std::optional<double> tol) {
  // Eight partial sums, so the additions do not wait on each other.
  double part[8] = {};
  std::size_t i8 = 0;
  for (; i8 + 8 <= count; i8 += 8)
    for (std::size_t l = 0; l < 8; ++l) part[l] += static_cast<double>(v[i8 + l]) * static_cast<double>(v[i8 + l]);
  for (; i8 < count; ++i8) part[0] += static_cast<double>(v[i8]) * static_cast<double>(v[i8]);
  const double fro2 = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  return threshold_from_sum_squares(fro2, count, maxdim, eps, tol);
}

// Rump's test that every eigenvalue of C C^T exceeds t^2, given G within 2-norm err2 of C C^T as the lower
// triangle of the k x k row-major buffer g: G - t^2 I, enlarged by err2, certified positive definite. The
// buffer is overwritten. `lambda_out`, when given, receives a Lanczos estimate from below of
// lambda_max(G), taken before the factorization consumes g.
bool gram_eigenvalues_above(double* g, std::size_t k, double err2, double t, int threads, double* lambda_out) {
  if (!std::isfinite(err2)) return false;
  if (lambda_out) *lambda_out = lambda_max_lanczos_lower(g, k);
  // mu >= t^2: below t = 2^-500 the square could underflow (rounding down), so mu is then 2^-1000.
  const double mu = std::max(t * t * (1 + 1e-6), t > 0 ? 0x1p-1000 : 0.0);
  double diag_max = 0;
  for (std::size_t i = 0; i < k; ++i) {
    double& gii = g[i * k + i];
    gii -= mu;
    diag_max = std::max(diag_max, std::abs(gii) + mu);
  }
  // The subtraction's rounding moves each diagonal entry by at most one ulp: a perturbation of 2-norm
  // <= diag_max 2^-52, added to the Gram's own bound.
  const double rad = (err2 + diag_max * 0x1p-52) * (1 + 1e-6);
  return rump_isspd_lower_inplace(g, k, rad, threads).certified;
}

// Rump's test that every singular value of the k x n row-major doubles `c` (k <= n) exceeds t: the Gram
// matrix C C^T - t^2 I (one triangle, with its rounding error bound) certified positive definite. The
// buffer `g` (k x k) is overwritten.
bool gram_rump_singular_values_above(const double* c, std::size_t k, std::size_t n, double t, double* g, int threads,
                                     double* lambda_out = nullptr) {
  return gram_eigenvalues_above(g, k, gram_lower_double(c, k, n, g, threads), t, threads, lambda_out);
}

// The reported (rank, tol) of a rows x cols matrix whose k = min(rows, cols) singular values were all
// certified above t (see numerical_rank_full_by_gram), with lambda a Lanczos estimate of sigma_max^2.
NumericalRank full_numerical_rank(std::size_t rows, std::size_t cols, double t, double lambda, double eps,
                                  std::optional<double> tol) {
  NumericalRank out;
  out.eps = eps;
  out.rank = std::min(rows, cols);
  out.method = "gram-rump";
  if (tol) {
    out.tol = *tol;
  } else {
    out.sigma_max = std::sqrt(std::max(lambda, 0.0));
    out.tol = std::min(numerical_rank_default_tol(out.sigma_max, rows, cols, eps), t);
  }
  return out;
}

// Full numerical rank without an SVD, when the matrix is well conditioned (the common case, and the one
// where an SVD of a large matrix costs many times the certified exact rank). numpy's default threshold is
// sigma_max max(m,n) eps <= ||M||_F max(m,n) eps =: t. Rump's test certifies C C^T - t^2 I positive
// definite for C = M or M^T (k x n, k <= n), with the Gram matrix's rounding error bound, so every one of
// the k singular values exceeds t: the numerical rank is k at numpy's threshold and at any tol <= t.
// The reported tol is then min(t, sigma * max(m,n) * eps) with sigma a Lanczos estimate from below of
// sigma_max (a Ritz value), so the reported (rank, tol) pair holds; it may differ from numpy's tol
// in its low digits. nullopt when the test does not certify (the caller runs the SVD).
// `c`: the matrix as k x n row-major doubles, k = min(rows, cols) (the matrix or its transpose). Only
// one triangle of the Gram matrix is formed, and it is factored in place (fresh pages are costly, and the
// Gram matrix is as large as a square input).
std::optional<NumericalRank> numerical_rank_full_by_gram(std::size_t rows, std::size_t cols, const double* c,
                                                         double eps, std::optional<double> tol) {
  if (std::min(rows, cols) < static_cast<std::size_t>(kGramShortcutMin)) return std::nullopt;
  const std::size_t k = std::min(rows, cols), n = std::max(rows, cols);
  const std::optional<double> threshold = full_rank_threshold(c, k * n, n, eps, tol);
  if (!threshold) return std::nullopt;
  const double t = *threshold;
  auto g = std::make_unique_for_overwrite<double[]>(k * k);
  double lambda = 0;
  if (!gram_rump_singular_values_above(c, k, n, t, g.get(), 0, tol ? nullptr : &lambda)) return std::nullopt;
  return full_numerical_rank(rows, cols, t, lambda, eps, tol);
}

// numerical_rank_full_by_gram for int64 data of at most 15 bits per entry: the Gram matrix computed
// exactly by 16-bit integer products (gram_int16.hpp), so Rump's test carries no Gram error bound, and
// no double copy of the matrix is made. `applicable` is set false when the exact route cannot run (wider
// entries, no AVX2): the caller then takes the double route; a nullopt with `applicable` true means the
// test did not certify (the matrix is not well conditioned: an SVD is due).
std::optional<NumericalRank> numerical_rank_full_by_exact_gram(const TypedMatrix& a, std::optional<double> tol,
                                                               bool& applicable) {
  applicable = false;
  const std::size_t k = std::min(a.rows, a.cols), n = std::max(a.rows, a.cols);
  if (k < static_cast<std::size_t>(kGramShortcutMin)) return std::nullopt;
  auto g = std::make_unique_for_overwrite<double[]>(k * k);
  const std::optional<double> fro2 = gram_lower_exact_i16(a.i64.data(), a.rows, a.cols, a.rows > a.cols, g.get());
  if (!fro2) return std::nullopt;
  applicable = true;
  const double eps = std::numeric_limits<double>::epsilon();
  const std::optional<double> threshold = threshold_from_sum_squares(*fro2, k * n, n, eps, tol);
  if (!threshold) return std::nullopt;
  double lambda = 0;
  if (!gram_eigenvalues_above(g.get(), k, 0.0, *threshold, 0, tol ? nullptr : &lambda)) return std::nullopt;
  return full_numerical_rank(a.rows, a.cols, *threshold, lambda, eps, tol);
}

// numerical_rank_full_proved for float or double values (Float32Le: float32 at any alignment).
template <class F>
bool numerical_rank_full_proved_of(const F* v, std::size_t rows, std::size_t cols, double eps, std::optional<double> tol) {
  const std::size_t k = std::min(rows, cols), n = std::max(rows, cols);
  if (k == 0) return true;
  // numpy's threshold is the whole matrix's.
  const std::optional<double> threshold = full_rank_threshold(v, rows * cols, n, eps, tol);
  if (!threshold) return false;
  const double t = *threshold;
  // The short side against 2k of the n long-side lines, spread evenly (a random-like k x 2k matrix is far
  // from singular: sigma_min ~ sqrt(2k) - sqrt(k) times the entries' scale, while t is about 10^-4 of
  // sigma_max for float32 data): half the Gram's work at k / n = 1/4.
  const std::size_t m = std::min(n, 2 * k);
  // Buffers of up to 4 MB stay with the thread for its next matrix (many contexts in a row); larger ones
  // are freed on return.
  thread_local std::vector<double> c_kept, g_kept;
  std::vector<double> c_own, g_own;
  const bool keep = k * (m + k) <= (std::size_t(1) << 19);
  std::vector<double>& c = keep ? c_kept : c_own;
  std::vector<double>& g = keep ? g_kept : g_own;
  std::vector<std::size_t> lines;
  c.resize(k * m);
  g.resize(k * k);
  lines.resize(m);
  for (std::size_t j = 0; j < m; ++j) lines[j] = j * n / m;
  if (rows <= cols) {  // columns of the matrix
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < m; ++j) c[i * m + j] = static_cast<double>(v[i * cols + lines[j]]);
  } else {  // rows of the matrix, as columns of its transpose
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < k; ++i) c[i * m + j] = static_cast<double>(v[lines[j] * cols + i]);
  }
  return gram_rump_singular_values_above(c.data(), k, m, t, g.data(), 1);
}

// The rows x cols matrix read through `at(i, j)` as k x n row-major doubles (k = min(rows, cols)): the
// matrix itself when wide, its transpose when tall; filled by 32 x 32 tiles so transposed writes stay in
// cache, without a zeroing pass.
template <class At>
std::unique_ptr<double[]> short_side_rows(std::size_t rows, std::size_t cols, At at) {
  const bool wide = rows <= cols;
  const std::size_t k = std::min(rows, cols), n = std::max(rows, cols);
  auto c = std::make_unique_for_overwrite<double[]>(k * n);
  constexpr std::size_t tile = 32;
  for (std::size_t i0 = 0; i0 < k; i0 += tile)
    for (std::size_t j0 = 0; j0 < n; j0 += tile)
      for (std::size_t i = i0; i < std::min(k, i0 + tile); ++i)
        for (std::size_t j = j0; j < std::min(n, j0 + tile); ++j) c[i * n + j] = wide ? at(i, j) : at(j, i);
  return c;
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
    const auto rows = static_cast<std::size_t>(m.rows()), cols = static_cast<std::size_t>(m.cols());
    // Eigen stores by columns: a tall matrix's storage is already its transpose by rows.
    std::unique_ptr<double[]> c;
    if (rows <= cols)
      c = short_side_rows(rows, cols, [&m](std::size_t i, std::size_t j) { return m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)); });
    if (auto full = numerical_rank_full_by_gram(rows, cols, c ? c.get() : m.data(), eps, tol))
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

NumericalRank numerical_rank(const QMatrix& a, std::optional<double> tol, double eps) {
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
    NumericalRank nr = numerical_rank_of_doubles(m, eps, tol ? std::optional<double>(std::ldexp(*tol, -static_cast<int>(std::min(shift, 100000L)))) : std::nullopt);
    nr.tol = std::ldexp(nr.tol, static_cast<int>(std::min(shift, 100000L)));
    nr.sigma_max = std::ldexp(nr.sigma_max, static_cast<int>(std::min(shift, 100000L)));
    for (double& sv : nr.singular_values) sv = std::ldexp(sv, static_cast<int>(std::min(shift, 100000L)));
    return nr;
  }
  return numerical_rank_of_doubles(m, eps, tol);
}

NumericalRank numerical_rank(const TypedMatrix& a, std::optional<double> tol) {
  if (a.storage == Storage::rational) return numerical_rank(a.q, tol);
  const double eps = numerical_rank_eps(a.storage == Storage::float64 ? a.stored_float_bytes : 8);
  bool exact_route = false;
  if (a.storage == Storage::int64)
    if (auto full = numerical_rank_full_by_exact_gram(a, tol, exact_route)) return *full;
  auto at = [&a](std::size_t i, std::size_t j) {
    return a.storage == Storage::int64 ? static_cast<double>(a.i64[i * a.cols + j]) : a.f64[i * a.cols + j];
  };
  // When the exact route ran but did not certify, the double route (the same test on a rounded Gram
  // matrix) is skipped: it would hardly ever certify instead, and the SVD below answers either way.
  if (!exact_route) {
    // A wide float64 matrix is used where it lies; anything else is converted once.
    std::unique_ptr<double[]> c;
    if (!(a.storage == Storage::float64 && a.rows <= a.cols)) c = short_side_rows(a.rows, a.cols, at);
    if (auto full = numerical_rank_full_by_gram(a.rows, a.cols, c ? c.get() : a.f64.data(), eps, tol)) return *full;
  }
  Eigen::MatrixXd m(a.rows, a.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = at(i, j);
  return numerical_rank_of_doubles(m, eps, tol, /*try_gram=*/false);
}

bool numerical_rank_full_proved(const Float32Le* m, std::size_t rows, std::size_t cols, double eps, std::optional<double> tol) {
  return numerical_rank_full_proved_of(m, rows, cols, eps, tol);
}
bool numerical_rank_full_proved(const double* m, std::size_t rows, std::size_t cols, double eps, std::optional<double> tol) {
  return numerical_rank_full_proved_of(m, rows, cols, eps, tol);
}

}  // namespace memcert

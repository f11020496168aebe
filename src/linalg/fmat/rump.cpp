// Rump's floating-point positive-definiteness certificate, rigorous Gram matrices and enclosure rank
// lower bounds with tiered escalation. See rump.hpp for the constants.
//
// Upward rounding without touching the FPU mode: for a round-to-nearest result r of an exact value x,
// nextafter(r, +inf) >= x (|x - r| <= ulp/2). All bound arithmetic below goes through up_*().
// Cholesky in round-to-nearest: blocked, the trailing updates use the FMA product kernel. Rump's analysis
// rests on |A + dA = R^T R|, |dA| <= gamma_{n+1} |R^T||R| (Demmel), which holds for every evaluation
// order of the dot products and with or without FMA (an FMA rounds once where mul+add rounds twice).
#include "memcert/linalg/fmat/rump.hpp"

#include <mpfr.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "memcert/linalg/nmod/gemm_plain.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/mpfr_array.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert {

namespace {

constexpr double kU = 0x1p-53;      // unit roundoff, IEEE double round-to-nearest
constexpr double kEta = 0x1p-1074;  // smallest positive subnormal
const double kInf = std::numeric_limits<double>::infinity();

using dbound::add_up;
using dbound::div_up;
using dbound::dn;
using dbound::gamma_up;  // gamma_n = n u / (1 - n u), upper bound
using dbound::mul_up;
using dbound::sub_dn;
using dbound::up;

int threads_or_default(int t) { return t <= 0 ? fast_threads() : t; }

}  // namespace

namespace fast_detail {

namespace {

typedef double CholV4 __attribute__((vector_size(32)));

// Row `ri` of the panel: ri[j] = (ri[j] - sum_{k0 <= l < j} ri[l] L_jl) / L_jj for j in [k0, k1), with
// L's rows in `a` (row-major, leading dimension n). Four-wide partial sums, so it vectorizes.
__attribute__((target_clones("avx512f", "avx2", "default"))) void cholesky_panel_row(
    double* ri, const double* a, std::size_t n, std::size_t k0, std::size_t k1) {
  for (std::size_t j = k0; j < k1; ++j) {
    const double* rj = a + j * n;
    CholV4 acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
    std::size_t l = k0;
    for (; l + 8 <= j; l += 8) {
      CholV4 x0, y0, x1, y1;
      std::memcpy(&x0, ri + l, sizeof x0), std::memcpy(&y0, rj + l, sizeof y0);
      std::memcpy(&x1, ri + l + 4, sizeof x1), std::memcpy(&y1, rj + l + 4, sizeof y1);
      acc0 += x0 * y0, acc1 += x1 * y1;
    }
    const CholV4 acc = acc0 + acc1;
    double t = ri[j] - ((acc[0] + acc[1]) + (acc[2] + acc[3]));
    for (; l < j; ++l) t -= ri[l] * rj[l];
    ri[j] = t / rj[j];
  }
}

// sum_{k0 <= l < k1} x[l]^2 with the same four-wide partial sums (the diagonal entries' sums).
__attribute__((target_clones("avx512f", "avx2", "default"))) double cholesky_sum_squares(const double* x, std::size_t k0,
                                                                                          std::size_t k1) {
  CholV4 acc0 = {0, 0, 0, 0}, acc1 = {0, 0, 0, 0};
  std::size_t l = k0;
  for (; l + 8 <= k1; l += 8) {
    CholV4 x0, x1;
    std::memcpy(&x0, x + l, sizeof x0), std::memcpy(&x1, x + l + 4, sizeof x1);
    acc0 += x0 * x0, acc1 += x1 * x1;
  }
  const CholV4 acc = acc0 + acc1;
  double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; l < k1; ++l) s += x[l] * x[l];
  return s;
}

}  // namespace

bool cholesky_rn(double* a, std::size_t n, int threads) {
  // Right-looking blocked Cholesky. Every entry of L is still one sequence of subtractions of products
  // from a_ij followed by one division (by L_jj) or one square root, so Rump's bound for the standard
  // algorithm applies; only the order of the subtractions differs from the textbook loop.
  constexpr std::size_t nb = 128;
  for (std::size_t k0 = 0; k0 < n; k0 += nb) {
    const std::size_t k1 = std::min(n, k0 + nb);
    // Diagonal block (previous blocks already applied by trailing updates), row by row: row i's entries
    // left of the diagonal from the finished rows above it (as the panel rows below), then its diagonal.
    // The sums are vectorised (a chain of dependent subtractions would wait on each one's latency).
    for (std::size_t i = k0; i < k1; ++i) {
      double* ri = a + i * n;
      cholesky_panel_row(ri, a, n, k0, i);
      const double s = ri[i] - cholesky_sum_squares(ri, k0, i);
      if (!(s > 0) || !std::isfinite(s)) return false;
      ri[i] = std::sqrt(s);
    }
    if (k1 >= n) break;
    // The panel below it, L21 = A21 L11^-T, row by row: each row's block stays in cache and rows are
    // independent, so they are shared among threads in chunks.
    const std::size_t m = n - k1, chunk = 64;
    parallel_for((m + chunk - 1) / chunk, threads, [&](std::size_t c) {
      for (std::size_t i = k1 + c * chunk; i < std::min(n, k1 + (c + 1) * chunk); ++i)
        cholesky_panel_row(a + i * n, a, n, k0, k1);
    });
    // Trailing update of the lower triangle: A22 -= L21 L21^T by block rows (L21 read by rows: no copy).
    const std::size_t w = k1 - k0;
    constexpr std::size_t rb = 256;
    for (std::size_t i0 = 0; i0 < m; i0 += rb) {
      const std::size_t i1 = std::min(m, i0 + rb);
      fast_detail::gemm_plain_sub_bt(i1 - i0, i1, w, a + (k1 + i0) * n + k0, n, a + k1 * n + k0, n,
                                     a + (k1 + i0) * n + k1, n, threads);
    }
  }
  return true;
}

}  // namespace fast_detail

RumpOutcome rump_isspd_lower_inplace(double* a, std::size_t n, double rad_norm2, int threads) {
  RumpOutcome out;
  if (n == 0) {
    out.certified = true;
    return out;
  }
  if (!(rad_norm2 >= 0) || !std::isfinite(rad_norm2)) {
    out.reason = "radius norm not finite";
    return out;
  }
  double sum = 0, dmax = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double d = a[j * n + j];
    if (!(d > 0) || !std::isfinite(d)) {
      out.reason = "diagonal entry not positive";
      return out;
    }
    const double alpha = mul_up(static_cast<double>(j + 1) + 2.0, kU);  // alpha_j = (j+2) u, j 1-based
    sum = add_up(sum, mul_up(alpha, d));
    dmax = std::max(dmax, d);
  }
  const double nn = static_cast<double>(n);
  const double tail = mul_up(mul_up(6.0 * nn, add_up(nn, dmax)), kEta);  // 6 n (n + max a_jj) eta
  const double c = add_up(add_up(sum, rad_norm2), tail);
  out.shift = c;
  if (!std::isfinite(c)) {
    out.reason = "shift not finite";
    return out;
  }
  for (std::size_t j = 0; j < n; ++j) a[j * n + j] = sub_dn(a[j * n + j], c);  // A - c I, rounded downward
  if (!fast_detail::cholesky_rn(a, n, threads_or_default(threads))) {
    out.reason = "Cholesky of A - cI broke down";
    return out;
  }
  out.certified = true;
  return out;
}

RumpOutcome rump_isspd(const DMatrix& a, double rad_norm2, int threads) {
  const std::size_t n = a.rows();
  if (a.cols() != n) throw std::invalid_argument("rump_isspd: matrix not square");
  std::vector<double> w(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) w[i * n + j] = a(i, j);
  return rump_isspd_lower_inplace(w.data(), n, rad_norm2, threads);
}

RumpOutcome rump_isspd(const DMatrix& a, const DMatrix& rad, int threads) {
  double f = 0;
  for (double r : rad.data()) {
    if (!(r >= 0)) throw std::invalid_argument("rump_isspd: negative or NaN radius");
    f = add_up(f, mul_up(r, r));
  }
  return rump_isspd(a, up(std::sqrt(f)), threads);
}

double gram_lower_double(const double* c, std::size_t k, std::size_t n, double* g, int threads) {
  if (k == 0) return 0;
  // Lower triangle by block rows: rows [i0, i1) against columns [0, i1) (about half of the full product;
  // the diagonal blocks also fill a few entries above the diagonal, which the contract leaves unspecified).
  // Each entry is one dot product of length n, so the error bound below is the full product's.
  // Smaller block rows for small k: a single 256-row block would compute the whole square (a 197-row
  // context's Gram matrix is one block), while 64-row blocks skip most of the upper triangle (20% faster
  // at 197 x 394; the packing a block row repeats stays small next to its products).
  const std::size_t rb = k < 1024 ? 64 : 256;
  const int t = threads_or_default(threads);
  for (std::size_t i0 = 0; i0 < k; i0 += rb) {
    const std::size_t i1 = std::min(k, i0 + rb);
    for (std::size_t i = i0; i < i1; ++i) std::fill(g + i * k, g + i * k + i1, 0.0);
    // g := 0 - C C^T on the block, negated afterwards (exact).
    fast_detail::gemm_plain_sub_bt(i1 - i0, i1, n, c + i0 * n, n, c, n, g + i0 * k, k, t);
    for (std::size_t i = i0; i < i1; ++i)
      for (std::size_t j = 0; j < i1; ++j) g[i * k + j] = -g[i * k + j];
  }
  const double nn = static_cast<double>(n);
  const double gn = gamma_up(nn);
  // ||c_i||^2 <= (s_i + n eta) / (1 - gamma_n) with s_i the round-to-nearest sum of squares.
  const double denom = dn(1.0 - gn);
  double total = 0;
  for (std::size_t i = 0; i < k; ++i) {
    double s = 0;
    const double* ri = c + i * n;
    for (std::size_t l = 0; l < n; ++l) s += ri[l] * ri[l];
    const double si = div_up(add_up(s, mul_up(nn, kEta)), denom);
    total = add_up(total, si);
  }
  const double err2 = add_up(mul_up(gn, total), mul_up(mul_up(static_cast<double>(k), nn), kEta));
  return std::isfinite(err2) && denom > 0 ? err2 : kInf;
}

GramDouble gram_double(const DMatrix& c, int threads) {
  const std::size_t k = c.rows(), n = c.cols();
  GramDouble out;
  out.g = DMatrix(k, k, 0.0);
  if (k == 0) return out;
  out.err2 = gram_lower_double(c.data().data(), k, n, out.g.data().data(), threads);
  // Symmetrise from the lower triangle.
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j) out.g(i, j) = out.g(j, i);
  return out;
}

void gram_accumulate(DMatrix& g, const DMatrix& c, int threads) {
  const std::size_t k = c.rows(), n = c.cols();
  if (g.rows() != k || g.cols() != k) throw std::invalid_argument("gram_accumulate: g must be rows(c) x rows(c)");
  if (k == 0 || n == 0) return;
  // The lower triangle by block rows, as gram_lower_double: rows [i0, i1) against columns [0, i1), about
  // half the full product (a Gram matrix is symmetric; its readers take the lower triangle).
  DMatrix neg(k, n);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t l = 0; l < n; ++l) neg(i, l) = -c(i, l);  // exact
  constexpr std::size_t rb = 256;
  const int t = threads_or_default(threads);
  for (std::size_t i0 = 0; i0 < k; i0 += rb) {
    const std::size_t i1 = std::min(k, i0 + rb);
    // g := g - (-C) C^T = g + C C^T on the block.
    fast_detail::gemm_plain_sub_bt(i1 - i0, i1, n, neg.data().data() + i0 * n, n, c.data().data(), n,
                                   g.data().data() + i0 * k, k, t);
  }
}

std::optional<double> lambda_min_estimate(const DMatrix& g, int threads, int iterations) {
  const std::size_t n = g.rows();
  if (n == 0) return std::nullopt;
  std::vector<double> l(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) l[i * n + j] = g(i, j);
  if (!fast_detail::cholesky_rn(l.data(), n, threads_or_default(threads))) return std::nullopt;
  return lambda_min_from_factor(l.data(), n, iterations);
}

std::optional<double> lambda_min_from_factor(const double* l, std::size_t n, int iterations) {
  if (n == 0) return std::nullopt;
  // The solves are estimates only: Eigen's blocked triangular solves on the factor (row-major, lower).
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> L(l, n, n);
  Eigen::VectorXd x = Eigen::VectorXd::Ones(n), y(n);
  double lam = 0;
  for (int it = 0; it < iterations; ++it) {
    y = x;  // y = G^{-1} x via L L^T
    L.triangularView<Eigen::Lower>().solveInPlace(y);
    L.transpose().triangularView<Eigen::Upper>().solveInPlace(y);
    const double nrm = y.norm(), dot = x.dot(y);
    if (!(nrm > 0) || !std::isfinite(nrm) || !(dot > 0)) return std::nullopt;
    lam = x.squaredNorm() / dot;  // Rayleigh-like quotient of G^{-1}
    x = y / nrm;
  }
  return lam;
}

namespace {

// The double tier: Rump on G - mu I with the Gram error as radius. Tries mu candidates from large to small.
std::optional<double> double_tier(const DMatrix& c, double floor_up, double extra_rad, int threads) {
  const std::size_t k = c.rows();
  GramDouble gd = gram_double(c, threads);
  if (!std::isfinite(gd.err2)) return std::nullopt;
  const double rad = add_up(gd.err2, extra_rad);
  auto est = lambda_min_estimate(gd.g, threads);
  if (!est || !(*est > 0)) return std::nullopt;
  std::vector<double> cands;
  for (double f : {0.9, 0.5, 0.1}) {
    const double mu = *est * f;
    if (mu > floor_up) cands.push_back(mu);
  }
  if (cands.empty() || cands.back() > up(floor_up)) cands.push_back(up(floor_up));
  for (double mu : cands) {
    if (!(mu < *est * 1.01)) continue;
    DMatrix s = gd.g;
    bool ok = true;
    for (std::size_t j = 0; j < k; ++j) {
      s(j, j) = sub_dn(gd.g(j, j), mu);  // G - mu I rounded downward: the true matrix is >= it
      if (!(s(j, j) > 0)) ok = false;
    }
    if (!ok) continue;
    if (rump_isspd(s, rad, threads).certified) return mu;
  }
  return std::nullopt;
}

// ------------------------------- MPFR tier ----------------------------------------------------------
// The same certificate at precision b: u = 2^-b, no subnormals in MPFR (eta term dropped; the underflow
// flag is checked), Gram accumulated with round-to-nearest at precision b, every bound rounded upward.
std::optional<double> mpfr_tier(const DMatrix& c, double floor_up, double extra_rad, mpfr_prec_t b) {
  const std::size_t k = c.rows(), n = c.cols();
  mpfr_clear_underflow();
  MpfrArray g(k * k, b), t(3, b);
  mpfr_t& acc = t.v[0];
  mpfr_t& tmp = t.v[1];
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      mpfr_set_zero(acc, 1);
      for (std::size_t l = 0; l < n; ++l) {
        mpfr_set_d(tmp, c(i, l), MPFR_RNDN);  // exact (b >= 53)
        mpfr_mul_d(tmp, tmp, c(j, l), MPFR_RNDN);
        mpfr_add(acc, acc, tmp, MPFR_RNDN);
      }
      mpfr_set(g.v[i * k + j], acc, MPFR_RNDN);
    }
  // Error radius: gamma_n(b) sum_i ||c_i||^2 (rigorous upper bound from the exact double data) + extra.
  MpfrArray e(4, 64);
  mpfr_t &u = e.v[0], &gam = e.v[1], &tot = e.v[2], &x = e.v[3];
  mpfr_set_ui_2exp(u, 1, -b, MPFR_RNDU);
  mpfr_mul_ui(gam, u, n, MPFR_RNDU);  // n u
  mpfr_ui_sub(x, 1, gam, MPFR_RNDD);  // 1 - n u
  if (mpfr_sgn(x) <= 0) return std::nullopt;
  mpfr_div(gam, gam, x, MPFR_RNDU);   // gamma_n
  mpfr_set_zero(tot, 1);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t l = 0; l < n; ++l) {
      mpfr_set_d(x, std::fabs(c(i, l)), MPFR_RNDU);
      mpfr_mul(x, x, x, MPFR_RNDU);
      mpfr_add(tot, tot, x, MPFR_RNDU);
    }
  mpfr_mul(tot, tot, gam, MPFR_RNDU);
  mpfr_add_d(tot, tot, extra_rad, MPFR_RNDU);
  const double rad = mpfr_get_d(tot, MPFR_RNDU);
  // mu proposal: the double estimate of lambda_min (computed from the MPFR Gram rounded to double).
  DMatrix gd(k, k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) gd(i, j) = gd(j, i) = mpfr_get_d(g.v[i * k + j], MPFR_RNDN);
  auto est = lambda_min_estimate(gd, 1);
  std::vector<double> cands;
  if (est && *est > 0)
    for (double f : {0.9, 0.5, 0.1})
      if (*est * f > floor_up) cands.push_back(*est * f);
  cands.push_back(up(floor_up));
  MpfrArray w(k * k, b), s(4, b);
  mpfr_t &sh = s.v[0], &sum = s.v[1], &al = s.v[2], &y = s.v[3];
  for (double mu : cands) {
    // A = G - mu I (diagonal rounded downward), then Rump's shift at precision b (rounded upward).
    mpfr_set_zero(sum, 1);
    mpfr_set_zero(sh, 1);  // max diagonal
    bool ok = true;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) mpfr_set(w.v[i * k + j], g.v[i * k + j], MPFR_RNDN);
    for (std::size_t j = 0; j < k; ++j) {
      mpfr_t& d = w.v[j * k + j];
      mpfr_sub_d(d, d, mu, MPFR_RNDD);
      if (mpfr_sgn(d) <= 0) ok = false;
      mpfr_set_ui_2exp(al, static_cast<unsigned long>(j + 3), -b, MPFR_RNDU);  // (j+2) u, j 1-based
      mpfr_mul(y, al, d, MPFR_RNDU);
      mpfr_add(sum, sum, y, MPFR_RNDU);
    }
    if (!ok) continue;
    mpfr_add_d(sum, sum, rad, MPFR_RNDU);  // c = sum alpha_j a_jj + ||rad||_2 (no eta: no subnormals)
    for (std::size_t j = 0; j < k; ++j) mpfr_sub(w.v[j * k + j], w.v[j * k + j], sum, MPFR_RNDD);
    // Cholesky, round-to-nearest at precision b.
    bool chol = true;
    for (std::size_t j = 0; j < k && chol; ++j) {
      mpfr_set(y, w.v[j * k + j], MPFR_RNDN);
      for (std::size_t l = 0; l < j; ++l) {
        mpfr_sqr(al, w.v[j * k + l], MPFR_RNDN);
        mpfr_sub(y, y, al, MPFR_RNDN);
      }
      if (mpfr_sgn(y) <= 0) {
        chol = false;
        break;
      }
      mpfr_sqrt(y, y, MPFR_RNDN);
      mpfr_set(w.v[j * k + j], y, MPFR_RNDN);
      for (std::size_t i = j + 1; i < k; ++i) {
        mpfr_set(al, w.v[i * k + j], MPFR_RNDN);
        for (std::size_t l = 0; l < j; ++l) {
          mpfr_mul(sh, w.v[i * k + l], w.v[j * k + l], MPFR_RNDN);
          mpfr_sub(al, al, sh, MPFR_RNDN);
        }
        mpfr_div(w.v[i * k + j], al, y, MPFR_RNDN);
      }
    }
    if (chol && !mpfr_underflow_p()) return mu;
  }
  return std::nullopt;
}

QMatrix to_qmatrix(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}

// The exact tier: exact Gram of the rational rows, exact LDL^T of G - mu I. Candidates: fractions of a
// double estimate of lambda_min (useless when G is very ill-conditioned), then mu just above `floor`
// (enough for a rank certificate: Lemma 5 only needs mu > ||R_S||_F^2).
std::optional<Rational> exact_tier(const QMatrix& cs, const Rational& floor) {
  const std::size_t k = cs.rows();
  QMatrix g(k, k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      Rational s = 0;
      for (std::size_t l = 0; l < cs.cols(); ++l) s += cs(i, l) * cs(j, l);
      g(i, j) = g(j, i) = s;
    }
  std::vector<Rational> cands;
  DMatrix gd = mat_map<double>(g, [](const Rational& q) { return rational_to_double(q); });
  if (auto est = lambda_min_estimate(gd, 1); est && *est > 0)
    for (double f : {0.5, 0.1})
      if (Rational m = rational_from_double(*est * f); m > floor) cands.push_back(m);
  Rational tiny = 1;
  mpz_mul_2exp(tiny.get_den_mpz_t(), tiny.get_den_mpz_t(), 64);
  Rational step = floor * tiny;
  for (int e = 0; e < 4; ++e) {
    Rational t = 1;
    mpz_mul_2exp(t.get_den_mpz_t(), t.get_den_mpz_t(), static_cast<mp_bitcnt_t>(100 + 300 * e));
    cands.push_back(floor + step + t);
  }
  for (const Rational& mu : cands) {
    QMatrix s = g;
    for (std::size_t i = 0; i < k; ++i) s(i, i) -= mu;
    if (qmat_is_positive_definite(s)) return mu;
  }
  return std::nullopt;
}

}  // namespace

Rational dmat_rows_frobenius_sq(const DMatrix& a, const std::vector<std::size_t>& rows) {
  // Exact: each x = m 2^e (m odd-or-not 53-bit integer); sum m^2 2^(2e - 2 emin) in an mpz.
  int emin = std::numeric_limits<int>::max();
  for (std::size_t i : rows)
    for (std::size_t j = 0; j < a.cols(); ++j) {
      const double x = a(i, j);
      if (!std::isfinite(x)) throw std::domain_error("dmat_rows_frobenius_sq: NaN or infinity");
      if (x != 0) {
        int e;
        std::frexp(x, &e);
        emin = std::min(emin, e - 53);
      }
    }
  if (emin == std::numeric_limits<int>::max()) return Rational(0);
  Integer acc = 0, m2;
  for (std::size_t i : rows)
    for (std::size_t j = 0; j < a.cols(); ++j) {
      const double x = a(i, j);
      if (x == 0) continue;
      int e;
      const double f = std::frexp(std::fabs(x), &e);
      Integer m = static_cast<long>(std::ldexp(f, 53));
      m2 = m * m;
      mpz_mul_2exp(m2.get_mpz_t(), m2.get_mpz_t(), static_cast<mp_bitcnt_t>(2 * (e - 53 - emin)));
      acc += m2;
    }
  Rational r(acc);
  if (emin < 0) {
    Integer den = 1;
    mpz_mul_2exp(den.get_mpz_t(), den.get_mpz_t(), static_cast<mp_bitcnt_t>(-2 * emin));
    r = Rational(acc, den);
  } else {
    mpz_mul_2exp(acc.get_mpz_t(), acc.get_mpz_t(), static_cast<mp_bitcnt_t>(2 * emin));
    r = Rational(acc);
  }
  r.canonicalize();
  return r;
}

namespace {

// mu > floor with C C^T - mu I positive definite for the k x n matrix c, certified by the first tier that
// decides: double Rump, MPFR at 128 then 256 bits (up to mpfr_max_rows rows), exact LDL^T (up to
// exact_max_rows rows); `tier` names it.
std::optional<SigmaLower> sigma_ladder(const DMatrix& c, const Rational& floor, const EnclosureFastOptions& opt) {
  const double floor_up = rational_to_double_up(floor);
  const int th = opt.threads <= 0 ? fast_threads() : opt.threads;
  auto mpfr = [&](mpfr_prec_t b) {
    return [&c, &floor, &opt, floor_up, b]() -> std::optional<SigmaLower> {
      if (!opt.allow_mpfr || c.rows() > opt.mpfr_max_rows) return std::nullopt;
      if (auto mu = mpfr_tier(c, floor_up, 0.0, b); mu && rational_from_double(*mu) > floor)
        return SigmaLower{rational_from_double(*mu), "mpfr-" + std::to_string(b)};
      return std::nullopt;
    };
  };
  return filtered<SigmaLower>(
      [&]() -> std::optional<SigmaLower> {
        if (!opt.allow_double) return std::nullopt;
        if (auto mu = double_tier(c, floor_up, 0.0, th); mu && Rational(*mu) > floor)
          return SigmaLower{rational_from_double(*mu), "double-rump"};
        return std::nullopt;
      },
      mpfr(128), mpfr(256),
      [&]() -> std::optional<SigmaLower> {
        if (!opt.allow_exact || c.rows() > opt.exact_max_rows) return std::nullopt;
        if (auto mu = exact_tier(to_qmatrix(c), floor)) return SigmaLower{*mu, "exact-ldl"};
        return std::nullopt;
      });
}

}  // namespace

std::optional<SigmaLower> sigma_min_sq_lower_fast(const DMatrix& c, const Rational& floor, bool escalate) {
  if (c.rows() > c.cols()) return std::nullopt;
  if (c.rows() == 0) return std::nullopt;
  EnclosureFastOptions opt;  // MPFR up to 400 rows, exact up to 200
  opt.allow_mpfr = opt.allow_exact = escalate;
  opt.threads = fast_threads();
  return sigma_ladder(c, floor, opt);
}

std::optional<EnclosureRankCertificate> enclosure_rank_lower_fast(const DMatrix& centre, const DMatrix& radius,
                                                                  const std::vector<std::size_t>& rows,
                                                                  const EnclosureFastOptions& opt) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("enclosure_rank_lower_fast: centre and radius shapes differ");
  for (std::size_t i : rows)
    if (i >= centre.rows()) throw std::invalid_argument("enclosure_rank_lower_fast: row index out of range");
  if (rows.size() > centre.cols()) return std::nullopt;
  for (std::size_t i : rows)
    for (std::size_t j = 0; j < radius.cols(); ++j)
      if (!(radius(i, j) >= 0)) throw std::invalid_argument("enclosure_rank_lower_fast: negative or NaN radius");
  EnclosureRankCertificate cert;
  cert.rows = rows;
  cert.radius_frobenius_sq = dmat_rows_frobenius_sq(radius, rows);
  if (rows.empty()) {
    cert.mu = 1;
    cert.method = "trivial";
    return cert;
  }
  auto s = sigma_ladder(mat_select_rows(centre, rows), cert.radius_frobenius_sq, opt);
  if (!s) return std::nullopt;
  cert.mu = std::move(s->mu);
  cert.method = std::move(s->tier);
  return cert;
}

std::optional<EnclosureRankCertificate> enclosure_rank_lower_fast(const QMatrix& centre, const QMatrix& radius,
                                                                  const std::vector<std::size_t>& rows,
                                                                  const EnclosureFastOptions& opt) {
  if (centre.rows() != radius.rows() || centre.cols() != radius.cols())
    throw std::invalid_argument("enclosure_rank_lower_fast: centre and radius shapes differ");
  // Exact-tier first when small: no widening needed.
  DMatrix c(centre.rows(), centre.cols()), r(centre.rows(), centre.cols());
  for (std::size_t i = 0; i < c.data().size(); ++i) {
    const Rational& q = centre.data()[i];
    const double d = rational_to_double(q);
    c.data()[i] = d;
    Rational err = q - rational_from_double(d);
    if (err < 0) err = -err;
    r.data()[i] = rational_to_double_up(radius.data()[i] + err);  // radius widened by the rounding error
  }
  EnclosureFastOptions o = opt;
  o.allow_exact = false;
  auto cert = enclosure_rank_lower_fast(c, r, rows, o);
  if (cert) return cert;
  if (opt.allow_exact && rows.size() <= opt.exact_max_rows) {
    EnclosureRankCertificate e;
    e.rows = rows;
    for (std::size_t i : rows)
      for (std::size_t j = 0; j < radius.cols(); ++j) e.radius_frobenius_sq += radius(i, j) * radius(i, j);
    if (auto mu = exact_tier(mat_select_rows(centre, rows), e.radius_frobenius_sq)) {
      e.mu = *mu;
      e.method = "exact-ldl";
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace memcert

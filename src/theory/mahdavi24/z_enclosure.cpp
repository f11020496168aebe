// The enclosure of Z as the induction builds it (docs/THEORY.md section 4) and its certified rank test:
// the Gram matrix of the interval centres plus Rump's positive-definiteness test (docs/THEORY.md section 7).
#include "z_enclosure.hpp"
#include "memcert/numeric/double_bits.hpp"
#include "int128.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert::mahdavi24 {

using Eigen::MatrixXd;

namespace {
const double kEta = std::ldexp(1.0, -1074);
using dbound::add_up;
using dbound::inflate_up;  // a non-negative sum of `terms` terms computed in round-to-nearest, bounded
DMatrix to_dmatrix(const MatrixXd& a) {
  DMatrix d(a.rows(), a.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) d(i, j) = a(i, j);
  return d;
}
}  // namespace

int mpfr_threads() { return mpfr_buildopt_tls_p() ? fast_threads() : 1; }

GramAccumulator::GramAccumulator(std::size_t T) : G_(T, T, 0.0), norm2_(T, 0.0), rad2_(T, 0.0) {}

void GramAccumulator::add(const MatrixXd& C, const MatrixXd& R) {
  gram_accumulate(G_, to_dmatrix(C));
  for (Eigen::Index i = 0; i < C.rows(); ++i) {
    norm2_[i] += C.row(i).squaredNorm();
    rad2_[i] += R.row(i).squaredNorm();
  }
  cols_ += C.cols();
  ++blocks_;
}

GramRankResult GramAccumulator::certify(const std::vector<std::size_t>& rows, const MatrixXd* XC, const MatrixXd* XR,
                                        bool want_sigma, double lambda_hint) const {
  const std::size_t k = rows.size();
  GramRankResult res;
  if (k == 0) { res.ok = true; return res; }
  // G_S: G_ itself when S is every row in order and nothing is added (the final certificate: no selection
  // copy beside the factorization's own buffer), else the selected lower triangle (all that is read).
  bool whole = !XC && k == G_.rows();
  for (std::size_t i = 0; i < k && whole; ++i) whole = rows[i] == i;
  DMatrix sel;
  if (!whole) {
    sel = DMatrix(k, k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) sel(i, j) = at(rows[i], rows[j]);
  }
  const DMatrix& GS = whole ? G_ : sel;
  double radF2 = 0, norm2 = 0;
  for (std::size_t i = 0; i < k; ++i) {
    radF2 += rad2_[rows[i]];
    norm2 += norm2_[rows[i]];
  }
  std::size_t m = cols_, depth = blocks_;
  if (XC) {
    gram_accumulate(sel, to_dmatrix(*XC));
    norm2 += XC->squaredNorm();
    radF2 += XR->squaredNorm();
    m += XC->cols();
    ++depth;
  }
  // |fl(G)_ij - (C C^T)_ij| <= gamma_N sum_l |c_il||c_jl| + m eta <= gamma_N ||c_i|| ||c_j|| + m eta, with
  // N = m + depth bounding every entry's chain of roundings (dot products within a block, one addition
  // per block) -- taken twice, plus 4, as a margin. So the error's Frobenius norm (>= its 2-norm) is at
  // most gamma_N sum_{i in S} ||c_i||^2 + k m eta. The squared norms were summed in round-to-nearest
  // over m k non-negative terms: inflated accordingly.
  const double N = double(2 * (m + depth) + 4);
  const double gamma = dbound::gamma_margin(N);
  const double norm2_up = inflate_up(norm2, m * k + 8);
  const double errF = inflate_up(inflate_up(gamma * norm2_up) + inflate_up(double(k) * double(m) * kEta * 2.0));
  radF2 = inflate_up(radF2, m * k + 8);
  const double radF = inflate_up(std::sqrt(radF2));
  res.radius_f = radF;
  // Candidate mu: near the estimated lambda_min when a good sigma bound is wanted, else just above
  // ||R_S||_F^2 (all the rank claim needs). Each candidate costs one blocked Cholesky.
  // Rump's test of G_S - mu I with the Gram error as radius: success certifies sigma_k >= sqrt(mu) - ||R_S||_F.
  // A certified attempt also refreshes the estimate of lambda_min for the next certificate's hint, by
  // inverse iteration on the factor Rump's test leaves (of G_S - (mu + c) I): no second factorization.
  std::vector<double> buf;
  auto attempt = [&](double mu) {
    if (!(mu > radF * radF)) return false;
    buf.assign(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < i; ++j) buf[i * k + j] = GS(i, j);
      buf[i * k + i] = dbound::sub_dn(GS(i, i), mu);
    }
    const RumpOutcome o = rump_isspd_lower_inplace(buf.data(), k, errF);
    if (!o.certified) return false;
    const double sq = dbound::sqrt_dn(mu);
    const double sl = dbound::sub_dn(sq, radF);
    if (!(sl > 0)) return false;
    res.ok = true;
    res.mu = mu;
    res.sigma_lower = sl;
    if (const auto lam = lambda_min_from_factor(buf.data(), k); lam && *lam > 0) res.lambda_estimate = mu + o.shift + *lam;
    return true;
  };
  // Candidates, one blocked Cholesky each: near lambda_min when a good sigma bound is wanted (a hint
  // from a nearby matrix first: it saves the estimate's own Cholesky), else just above ||R_S||_F^2.
  if (want_sigma) {
    // The hint first: one factorization when it certifies (and its refreshed estimate is not far above).
    if (lambda_hint > 0 && attempt(0.81 * lambda_hint)) {  // one factorization
      if (!(res.lambda_estimate > 2.0 * lambda_hint)) return res;
      // Far below lambda_min: one more factorization near the refreshed estimate, for a better sigma.
      const GramRankResult via_hint = res;
      if (attempt(0.81 * via_hint.lambda_estimate)) return res;
      return via_hint;
    }
    if (auto lam = lambda_min_estimate(GS); lam && *lam > 0) {
      res.lambda_estimate = *lam;
      if (attempt(0.81 * *lam) || attempt(0.25 * *lam)) return res;
    }
  }
  attempt(add_up(2.0 * radF * radF, 1e-300));
  return res;
}

ZExamples z_examples(const AttentionDataset& ds, mpfr_prec_t prec) {
  ZExamples z;
  const std::size_t T = ds.T(), n = ds.n(), d = ds.d();
  z.n = n;
  z.d = d;
  std::vector<std::optional<ContextEnclosure>> ctx(T);
  std::vector<Rational> b2(T);
  z.sd = scaled_dataset(ds);
  z.eq.resize(T);
  parallel_for(T, mpfr_threads(), [&](std::size_t t) {
    z.eq[t] = QVector(ds.queries.row(t), ds.queries.row(t) + d);
    if (ds.typed && !z.sd.context_doubles[t].empty()) {  // shares the scaled numerators (no second copy)
      const int k = static_cast<int>(mpz_sizeinbase(z.sd.contexts[t].den.get_mpz_t(), 2)) - 1;  // den = 2^k
      ctx[t].emplace(z.sd.context_doubles[t].data(), k, n, d, prec);
    } else if (ds.typed) {
      thread_local std::vector<double> v;
      attention_context_doubles(ds, t, v);
      ctx[t].emplace(v.data(), n, d, prec);
    } else {
      ctx[t].emplace(ds.contexts[t], prec);
    }
    const std::vector<double>& nd = z.sd.context_doubles[t];
    if (!nd.empty() && d < (std::size_t(1) << 20)) {
      // The squared token norms in 128 bits: numerators below 2^52, so d of their squares stay below 2^124.
      int128::u128 best = 0;
      for (std::size_t j = 0; j < n; ++j) {
        int128::u128 acc = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const auto x = static_cast<std::uint64_t>(std::fabs(nd[j * d + c]));
          acc += static_cast<int128::u128>(x) * x;
        }
        best = std::max(best, acc);
      }
      b2[t] = Rational(int128::to_integer(best), z.sd.contexts[t].den * z.sd.contexts[t].den);
      b2[t].canonicalize();
      return;
    }
    ScaledMatrix scratch;
    const ZMatrix& num = scaled_context(z.sd, t, scratch).num;
    // The largest squared token norm, max_j sum_c num_jc^2 / den^2, in integers.
    Integer best = 0, sq;
    for (std::size_t j = 0; j < n; ++j) {
      Integer acc = 0;
      for (std::size_t c = 0; c < d; ++c) mpz_addmul(acc.get_mpz_t(), num(j, c).get_mpz_t(), num(j, c).get_mpz_t());
      if (acc > best) best = acc;
    }
    sq = z.sd.contexts[t].den * z.sd.contexts[t].den;
    b2[t] = Rational(best, sq);
    b2[t].canonicalize();
  });
  z.ctx.reserve(T);
  for (std::size_t t = 0; t < T; ++t) {
    z.ctx.push_back(std::move(*ctx[t]));
    if (b2[t] > z.B2) z.B2 = b2[t];
  }
  z.B = std::sqrt(rational_to_double(z.B2));
  return z;
}

void z_fill_rows(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, const QVector& logits, std::size_t t) {
  std::vector<double> c(z.d), rr(z.d);
  z.ctx[t].mix(logits, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

void z_fill_affine(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, const AffineLogits& L,
                   const Rational& cc, std::size_t t) {
  thread_local std::vector<double> c, rr;
  c.resize(z.d);
  rr.resize(z.d);
  z.ctx[t].mix_affine(L, cc, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

void z_fill_token(const ZExamples& z, MatrixXd& C, MatrixXd& R, std::size_t row, std::size_t t, std::size_t j) {
  std::vector<double> c(z.d), rr(z.d);
  z.ctx[t].token(j, c.data(), rr.data());
  for (std::size_t k = 0; k < z.d; ++k) { C(row, k) = c[k]; R(row, k) = rr[k]; }
}

namespace {
// x as an exact double when |x| < 2^52 (sets ok = false otherwise).
double small_int(const Integer& x, bool& ok) {
  if (mpz_sizeinbase(x.get_mpz_t(), 2) > 52) { ok = false; return 0.0; }
  return x.get_d();
}
// acc += x * f for an integer-valued double |f| < 2^53 (fits an unsigned long on LP64).
static_assert(sizeof(unsigned long) >= 8, "addmul_double needs a 64-bit unsigned long");
void addmul_double(mpz_ptr acc, const Integer& x, double f) {
  if (f == 0 || sgn(x) == 0) return;
  const unsigned long m = static_cast<unsigned long>(std::fabs(f));
  if (f > 0) mpz_addmul_ui(acc, x.get_mpz_t(), m);
  else mpz_submul_ui(acc, x.get_mpz_t(), m);
}
constexpr double kExactLimit = 9007199254740992.0;  // 2^53: integer sums below it are exact in double
}  // namespace

std::vector<ScaledVector> claim1_logits_all(const ZExamples& z, const FitHead& fit, const std::vector<std::size_t>& group) {
  const std::size_t T = z.sd.contexts.size(), n = z.n, d = z.d, k = group.size();
  std::vector<ScaledVector> a(T);
  // Q_R (d x k) and M = (Q_R^T Q_R)^{-1}, exact.
  QMatrix QR(d, k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < d; ++c) QR(c, i) = z.eq[group[i]][c];
  const ScaledMatrix Us = scaled_from_qmat(fit.U), QRs = scaled_from_qmat(QR);
  std::optional<QMatrix> M = qmat_inverse(mat_mul(mat_transpose(QR), QR));
  bool ok = M.has_value();
  std::vector<double> Ud(d * k), Qd(d * k);
  double Umax = 0, Qmax = 0;
  for (std::size_t c = 0; c < d && ok; ++c)
    for (std::size_t i = 0; i < k && ok; ++i) {
      Ud[c * k + i] = small_int(Us.num(c, i), ok);
      Qd[c * k + i] = small_int(QRs.num(c, i), ok);
      Umax = std::max(Umax, std::fabs(Ud[c * k + i]));
      Qmax = std::max(Qmax, std::fabs(Qd[c * k + i]));
    }
  if (ok) {
    const ScaledMatrix Ms = scaled_from_qmat(*M);
    parallel_for(T, fast_threads(), [&](std::size_t t) {
      const ScaledVector& e = z.sd.queries[t];
      bool small = !z.sd.context_doubles[t].empty() && double(d) * z.sd.context_max_abs[t] * Umax < kExactLimit;
      double emax = 0;
      std::vector<double> ed(d);
      for (std::size_t c = 0; c < d && small; ++c) { ed[c] = small_int(e.num[c], small); emax = std::max(emax, std::fabs(ed[c])); }
      small = small && double(d) * Qmax * emax < kExactLimit;
      if (!small) {  // the direct route
        ScaledVector v = scaled_mat_vec(scaled_from_qmat(fit.Qpinv), e);
        ScaledMatrix scratch;
        a[t] = scaled_mat_vec(scaled_context(z.sd, t, scratch), scaled_mat_vec(Us, v));
        return;
      }
      // y = Q_R^T e and F = E U: small-integer products, exact in double (partial sums < 2^53).
      std::vector<double> y(k, 0.0), F(n * k, 0.0);
      for (std::size_t c = 0; c < d; ++c)
        for (std::size_t i = 0; i < k; ++i) y[i] += Qd[c * k + i] * ed[c];
      const std::vector<double>& E = z.sd.context_doubles[t];
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t c = 0; c < d; ++c) {
          const double ejc = E[j * d + c];
          if (ejc == 0) continue;
          for (std::size_t i = 0; i < k; ++i) F[j * k + i] += ejc * Ud[c * k + i];
        }
      // v = M y, then a = F v (big integers times small ones).
      std::vector<Integer> v(k, Integer(0));
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t l = 0; l < k; ++l) addmul_double(v[i].get_mpz_t(), Ms.num(i, l), y[l]);
      ScaledVector out;
      out.num.assign(n, Integer(0));
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < k; ++i) addmul_double(out.num[j].get_mpz_t(), v[i], F[j * k + i]);
      out.den = z.sd.contexts[t].den * Us.den * Ms.den * QRs.den * e.den;
      a[t] = std::move(out);
    });
    return a;
  }
  const ScaledMatrix Qs = scaled_from_qmat(fit.Qpinv);
  parallel_for(T, fast_threads(), [&](std::size_t t) {
    ScaledVector v = scaled_mat_vec(Qs, z.sd.queries[t]);
    ScaledMatrix scratch;
    a[t] = scaled_mat_vec(scaled_context(z.sd, t, scratch), scaled_mat_vec(Us, v));
  });
  return a;
}

namespace {
// The row sums of context_times_bounds: sum[j] = fl(sum_c E_jc xd_c), abs[j] = fl(sum_c |fl(E_jc xd_c)|), in
// eight independent lanes (vectorised via target_clones; any summation order is covered by the bound).
__attribute__((target_clones("avx512f", "avx2", "default"))) void row_sums_abs(const double* E, std::size_t n,
                                                                                std::size_t d, const double* xd,
                                                                                double* sum, double* abs) {
  for (std::size_t j = 0; j < n; ++j) {
    const double* er = E + j * d;
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::size_t c = 0;
    for (; c + 8 <= d; c += 8)
      for (int k = 0; k < 8; ++k) {
        const double p = er[c + k] * xd[c + k];
        s[k] += p;
        a[k] += std::fabs(p);
      }
    for (; c < d; ++c) {
      const double p = er[c] * xd[c];
      s[0] += p;
      a[0] += std::fabs(p);
    }
    sum[j] = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    abs[j] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
}
}  // namespace

void context_times_bounds(const double* E, std::size_t n, std::size_t d, const double* xd, double* lo, double* hi) {
  // fl(E xd) - E x = [fl(E xd) - E xd] + E (xd - x): at most gamma_{d+1} S + 2u S, S = sum_c |E_jc| |xd_c|
  // (any summation order, products included; |x - xd| <= ulp(xd) <= 2u |xd|), so gamma_{d+3} S. S itself
  // is summed in round-to-nearest: S <= fl(S) / ((1 - gamma_d)(1 - u)) <= fl(S) (1 + 2 gamma_{d+1}). The
  // entries are integers (no underflow); every bound step rounds upward (nextafter after the operation).
  const double g = dbound::gamma_up_exact(double(d + 3), dbound::kUnitRoundoff);
  const double infl = add_up(1.0, 2.0 * dbound::gamma_up_exact(double(d + 1), dbound::kUnitRoundoff));
  row_sums_abs(E, n, d, xd, lo, hi);  // lo: the sums, hi: the sums of absolute values (overwritten below)
  for (std::size_t j = 0; j < n; ++j) {
    const double sum = lo[j];
    const double err = dbound::mul_up(dbound::mul_up(g, hi[j]), infl);
    lo[j] = dbound::sub_dn(sum, err);
    hi[j] = add_up(sum, err);
  }
}

namespace {
// sum_c e_c g_c in 64-bit integers (e integer-valued doubles; the caller bounds the sum below 2^62).
// Vectorised on AVX-512 (vcvttpd2qq, vpmullq) via target_clones.
__attribute__((target_clones("arch=x86-64-v4", "default"))) std::int64_t dot_block_int64(const double* e,
                                                                                         const std::int64_t* g,
                                                                                         std::size_t len) {
  std::int64_t part = 0;
  for (std::size_t c = 0; c < len; ++c) part += static_cast<std::int64_t>(e[c]) * g[c];
  return part;
}
}  // namespace

bool context_times_int64(const std::vector<double>& E, double max_abs, std::size_t n, std::size_t d,
                         const std::vector<std::int64_t>& g, std::vector<int128::i128>& out) {
  std::uint64_t gmax = 0;
  for (std::int64_t x : g) gmax = std::max<std::uint64_t>(gmax, x < 0 ? 0 - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x));
  const int gbits = 64 - (gmax ? __builtin_clzll(gmax) : 64);
  const int dbits = 64 - __builtin_clzll(static_cast<unsigned long long>(d) | 1);
  if (E.size() != n * d || g.size() != d || gbits > 62 || 52 + gbits + dbits > 126) return false;
  out.assign(n, 0);
  int ebits = 0;
  std::frexp(max_abs, &ebits);  // |E| <= max_abs < 2^ebits
  if (ebits + gbits <= 56) {
    // Each product is below 2^(ebits + gbits): sums of 2^(62 - ebits - gbits) of them stay below 2^62, so
    // they run in 64-bit integers and only the block sums are added in 128 bits.
    const std::size_t block = std::size_t(1) << std::min(62 - ebits - gbits, 30);
    for (std::size_t j = 0; j < n; ++j) {
      int128::i128 acc = 0;
      const double* er = &E[j * d];
      for (std::size_t c0 = 0; c0 < d; c0 += block) {
        const std::size_t c1 = std::min(d, c0 + block);
        acc += dot_block_int64(er + c0, g.data() + c0, c1 - c0);
      }
      out[j] = acc;
    }
    return true;
  }
  for (std::size_t j = 0; j < n; ++j) {
    int128::i128 acc = 0;
    const double* er = &E[j * d];
    for (std::size_t c = 0; c < d; ++c) acc += static_cast<int128::i128>(static_cast<std::int64_t>(er[c])) * g[c];
    out[j] = acc;
  }
  return true;
}

std::vector<ScaledVector> lemma3_scores_all(const ZExamples& z, const QVector& g, const QVector& w,
                                            std::vector<Integer>* factors) {
  const std::size_t T = z.sd.contexts.size(), n = z.n, d = z.d;
  const ScaledVector gs = scaled_from_qvec(g), ws = scaled_from_qvec(w);
  bool gsmall = true;
  std::vector<double> gd(d);
  double gmax = 0;
  for (std::size_t c = 0; c < d && gsmall; ++c) { gd[c] = small_int(gs.num[c], gsmall); gmax = std::max(gmax, std::fabs(gd[c])); }
  bool g64 = true;  // g's numerators as int64 for the 128-bit route
  std::vector<std::int64_t> gi(d);
  for (std::size_t c = 0; c < d && g64; ++c) gi[c] = int128::small_int64(gs.num[c], g64);
  std::vector<ScaledVector> s(T);
  if (factors) factors->assign(T, Integer(0));
  parallel_for(T, fast_threads(), [&](std::size_t t) {
    // w^T e as an integer over ws.den * e.den.
    Integer we = 0;
    for (std::size_t c = 0; c < d; ++c)
      if (sgn(ws.num[c]) != 0 && sgn(z.sd.queries[t].num[c]) != 0)
        mpz_addmul(we.get_mpz_t(), ws.num[c].get_mpz_t(), z.sd.queries[t].num[c].get_mpz_t());
    ScaledVector v;
    thread_local std::vector<int128::i128> eg;
    if (gsmall && !z.sd.context_doubles[t].empty() && double(d) * z.sd.context_max_abs[t] * gmax < kExactLimit) {
      v.num.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        double acc = 0;  // exact: integer partial sums below 2^53
        for (std::size_t c = 0; c < d; ++c) acc += z.sd.context_doubles[t][j * d + c] * gd[c];
        v.num[j] = Integer(acc);
      }
      v.den = z.sd.contexts[t].den * gs.den;
    } else if (g64 && !z.sd.context_doubles[t].empty() && context_times_int64(z.sd.context_doubles[t], z.sd.context_max_abs[t], n, d, gi, eg)) {
      v.num.resize(n);
      for (std::size_t j = 0; j < n; ++j) v.num[j] = int128::to_integer(eg[j]);
      v.den = z.sd.contexts[t].den * gs.den;
    } else {
      ScaledMatrix scratch;
      v = scaled_mat_vec(scaled_context(z.sd, t, scratch), gs);
    }
    for (auto& x : v.num) x *= we;
    v.den *= ws.den * z.sd.queries[t].den;
    s[t] = std::move(v);
    if (factors) (*factors)[t] = we;
  });
  return s;
}

SaturationData scaled_saturation(const ScaledVector& a, const ScaledVector& s) {
  SaturationData r;
  const std::size_t n = s.num.size();
  if (n == 0) return r;
  std::size_t j = 0;
  for (std::size_t i = 1; i < n; ++i) if (s.num[i] > s.num[j]) j = i;
  r.jstar = j;
  r.unique = true;
  const Integer* second = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == j) continue;
    if (s.num[i] == s.num[j]) r.unique = false;
    if (!second || s.num[i] > *second) second = &s.num[i];
  }
  r.gap = second ? Rational(s.num[j] - *second, s.den) : Rational(0);
  r.gap.canonicalize();
  Integer best = 0;
  for (std::size_t i = 0; i < n && i < a.num.size(); ++i)
    if (a.num[i] - a.num[j] > best) best = a.num[i] - a.num[j];
  r.spread = Rational(best, a.den);
  r.spread.canonicalize();
  return r;
}

}  // namespace memcert::mahdavi24

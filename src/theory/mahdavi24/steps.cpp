// The individual proof steps of mahdavi24's Theorem 1 (docs/THEORY.md sections 3-4), one function each:
// Claim 1, Lemma 3, Lemma 4 (quantitative), Lemma 5 (Weyl), and Rump's positive-definiteness test used
// by the enclosure rank certificates (docs/THEORY.md section 7).
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "memcert/numeric/double_bits.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/fmat/rump.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/util/parallel.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "format.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

namespace {
QVector row_of(const QMatrix& a, std::size_t i) { return QVector(a.row(i), a.row(i) + a.cols()); }
}  // namespace

// x rounded up (or down) to a dyadic with `bits` significant bits. x > 0.
Rational detail::round_dyadic(const Rational& x, int bits, bool up) {
  if (x <= 0) return Rational(0);
  int e = 0;
  std::frexp(rational_to_double(x), &e);  // x ~ 2^(e-1) .. 2^e (estimate only: any e gives a valid bound)
  long k = bits - e;                        // scale by 2^k
  Rational scaled = x;
  if (k >= 0) scaled *= Rational(Integer(1) << static_cast<unsigned long>(k));
  else scaled /= Rational(Integer(1) << static_cast<unsigned long>(-k));
  Integer q;
  if (up) mpz_cdiv_q(q.get_mpz_t(), scaled.get_num_mpz_t(), scaled.get_den_mpz_t());
  else mpz_fdiv_q(q.get_mpz_t(), scaled.get_num_mpz_t(), scaled.get_den_mpz_t());
  Rational r(q);
  if (k >= 0) r /= Rational(Integer(1) << static_cast<unsigned long>(k));
  else r *= Rational(Integer(1) << static_cast<unsigned long>(-k));
  r.canonicalize();
  return r;
}

// ---- Claim 1 (docs/THEORY.md section 4, "Claim 1 (head 1 fits r examples)") ------------------------------
std::optional<FitHead> claim1_fit_head(const AttentionDataset& ds, const std::vector<std::size_t>& group,
                                       const std::vector<QVector>& targets,
                                       const std::vector<QVector>* preimages, const ScaledDataset* sd) {
  const std::size_t k = group.size(), d = ds.d();
  if (targets.size() != k || (preimages && preimages->size() != k))
    throw std::invalid_argument("claim1_fit_head: one target per example");
  FitHead f;
  f.targets = targets;
  f.U = QMatrix(d, k, Rational(0));
  f.Qpinv = QMatrix(k, d, Rational(0));
  if (k == 0) return f;
  // Q_R = [e^(t)]_{t in R} (d x |R|) and its exact left inverse (Q_R^T Q_R)^{-1} Q_R^T.
  QMatrix QR(d, k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < d; ++c) QR(c, i) = ds.queries(group[i], c);
  auto L = qmat_left_inverse(QR);
  if (!L) return std::nullopt;
  f.Qpinv = *L;
  // u^(t) = E^(t)+ l^(t) (exact right inverse), or the given preimage with E u = l checked exactly.
  for (std::size_t i = 0; i < k; ++i) {
    std::optional<QMatrix> own;  // a typed-backed data set's context as rationals, only for this example
    if (ds.typed) own = attention_context(ds, group[i]);
    const QMatrix& E = own ? *own : ds.contexts[group[i]];
    if (targets[i].size() != E.rows()) throw std::invalid_argument("claim1_fit_head: target length != n");
    QVector u;
    if (preimages) {
      u = (*preimages)[i];
      if (sd) {  // E u == l in integers: (E_num u_num) * l_den == l_num * (E_den u_den), entrywise
        ScaledMatrix scratch;
        const ScaledVector v = scaled_mat_vec(scaled_context(*sd, group[i], scratch), scaled_from_qvec(u));
        const ScaledVector l = scaled_from_qvec(targets[i]);
        for (std::size_t j = 0; j < v.num.size(); ++j)
          if (v.num[j] * l.den != l.num[j] * v.den) return std::nullopt;
      } else if (mat_vec(E, u) != targets[i]) {
        return std::nullopt;
      }
    } else {
      auto R = qmat_right_inverse(E);
      if (!R) return std::nullopt;
      u = mat_vec(*R, targets[i]);
    }
    for (std::size_t c = 0; c < d; ++c) f.U(c, i) = u[c];
  }
  return f;
}

QMatrix claim1_fit_matrix(const FitHead& f) { return mat_mul(f.U, f.Qpinv); }

// ---- Lemma 3 (docs/THEORY.md section 3, "Lemma 3"; weakened to a unique maximum as in Lemma 4) ----------
namespace {
// A typed context (exact doubles v, n x d) in scaled form without a rational per entry: the common
// denominator is 2^k with 2^-k the lowest set bit over the context (1 for integer data), the numerators
// v 2^k are integers. They stay doubles when every one is below 2^52 (num left 0 x 0); otherwise num is
// built in big integers (context_doubles[t] then stays empty, as on the rational route).
void scaled_typed_context(const std::vector<double>& v, std::size_t n, std::size_t d, ScaledDataset& sd, std::size_t t) {
  int lowest = INT_MAX, highest = INT_MIN;  // exponents of the lowest set bit and of frexp over non-zero values
  for (double x : v) {
    if (x == 0) continue;
    int low = 0, top = 0;
    double_exponents(x, low, top);
    lowest = std::min(lowest, low);
    highest = std::max(highest, top);
  }
  const int k = lowest == INT_MAX || lowest >= 0 ? 0 : -lowest;
  ScaledMatrix& s = sd.contexts[t];
  s.den = Integer(1) << static_cast<unsigned long>(k);
  std::vector<double> num;
  // Every |v 2^k| < 2^(highest + k): below 2^52 when highest + k <= 52. Times 2^k is then exact (an integer,
  // no overflow); 2^k is a double for k <= 1023 (else ldexp per value).
  bool small = lowest == INT_MAX || highest + k <= 52;
  double mx = 0;
  if (small) {
    num.resize(n * d);
    const double p2 = k <= 1023 ? std::ldexp(1.0, k) : 0.0;
    for (std::size_t i = 0; i < n * d; ++i) {
      num[i] = k <= 1023 ? v[i] * p2 : std::ldexp(v[i], k);
      mx = std::max(mx, std::fabs(num[i]));
    }
  }
  if (small) {
    sd.context_doubles[t] = std::move(num);
    sd.context_max_abs[t] = mx;
    return;
  }
  s.num = ZMatrix(n, d);
  for (std::size_t i = 0; i < n * d; ++i) {
    if (v[i] == 0) continue;
    int e = 0;
    const double m = std::ldexp(std::frexp(v[i], &e), 53);  // v = m 2^(e - 53), m an integer
    Integer& z = s.num.data()[i];
    z = Integer(m);
    const int sh = e - 53 + k;  // >= -ctz(m): the shift below is exact either way
    if (sh >= 0) mpz_mul_2exp(z.get_mpz_t(), z.get_mpz_t(), static_cast<unsigned long>(sh));
    else mpz_tdiv_q_2exp(z.get_mpz_t(), z.get_mpz_t(), static_cast<unsigned long>(-sh));
  }
  sd.context_max_abs[t] = 0;
}
}  // namespace

const ScaledMatrix& scaled_context(const ScaledDataset& sd, std::size_t t, ScaledMatrix& scratch) {
  const ScaledMatrix& s = sd.contexts[t];
  if (s.num.rows() > 0 || sd.context_doubles[t].empty()) return s;
  const std::vector<double>& v = sd.context_doubles[t];
  const std::size_t n = sd.context_rows, d = v.size() / std::max<std::size_t>(n, 1);
  scratch.den = s.den;
  scratch.num = ZMatrix(n, d);
  for (std::size_t i = 0; i < v.size(); ++i) scratch.num.data()[i] = Integer(v[i]);  // exact: |v| < 2^52
  return scratch;
}

ScaledDataset scaled_dataset(const AttentionDataset& ds) {
  const std::size_t T = ds.T(), n = ds.n(), d = ds.d();
  ScaledDataset sd;
  sd.contexts.resize(T);
  sd.queries.resize(T);
  sd.context_doubles.resize(T);
  sd.context_max_abs.assign(T, 0.0);
  sd.context_rows = n;
  parallel_for(T, fast_threads(), [&](std::size_t t) {
    if (ds.typed) {
      thread_local std::vector<double> v;
      attention_context_doubles(ds, t, v);
      scaled_typed_context(v, n, d, sd, t);
      sd.queries[t] = scaled_from_qvec(row_of(ds.queries, t));
      return;
    }
    sd.contexts[t] = scaled_from_qmat(ds.contexts[t]);
    sd.queries[t] = scaled_from_qvec(row_of(ds.queries, t));
    const ZMatrix& num = sd.contexts[t].num;
    std::vector<double> v(n * d);
    bool ok = true;
    for (std::size_t i = 0; i < n * d && ok; ++i) {
      ok = mpz_sizeinbase(num.data()[i].get_mpz_t(), 2) <= 52;
      v[i] = ok ? num.data()[i].get_d() : 0.0;  // exact: |x| < 2^52
      sd.context_max_abs[t] = std::max(sd.context_max_abs[t], std::fabs(v[i]));
    }
    if (ok) sd.context_doubles[t] = std::move(v);
  });
  return sd;
}

namespace {
// sign(w^T e^(t)) for w in scaled form: the integer dot product over positive denominators.
int dot_sign(const ScaledVector& w, const ScaledVector& e) {
  Integer s = 0;
  for (std::size_t i = 0; i < w.num.size(); ++i)
    if (sgn(w.num[i]) != 0 && sgn(e.num[i]) != 0) mpz_addmul(s.get_mpz_t(), w.num[i].get_mpz_t(), e.num[i].get_mpz_t());
  return sgn(s);
}
}  // namespace

bool lemma3_check(const AttentionDataset& ds, const std::vector<std::size_t>& group,
                  const std::vector<std::size_t>& others, const QVector& g, const QVector& w, const ScaledDataset* sd) {
  const ScaledVector ws = scaled_from_qvec(w), gs = scaled_from_qvec(g);
  auto query = [&](std::size_t t) { return sd ? sd->queries[t] : scaled_from_qvec(row_of(ds.queries, t)); };
  for (std::size_t t : group)
    if (dot_sign(ws, query(t)) != 0) return false;  // (20): W' e^(t) = g (w^T e^(t)) = 0
  // g's numerators as exact doubles when small: E g is then exact in double (partial sums < 2^53).
  const std::size_t d = ds.d();
  std::vector<double> gd(d);
  double gmax = 0;
  bool gsmall = true;
  for (std::size_t c = 0; c < d && gsmall; ++c) {
    gsmall = mpz_sizeinbase(gs.num[c].get_mpz_t(), 2) <= 52;
    gd[c] = gs.num[c].get_d();
    gmax = std::max(gmax, std::fabs(gd[c]));
  }
  bool g64 = true;  // g's numerators as int64 for the 128-bit route
  std::vector<std::int64_t> gi(d);
  for (std::size_t c = 0; c < d && g64; ++c) gi[c] = int128::small_int64(gs.num[c], g64);
  std::atomic<bool> ok{true};
  parallel_for(others.size(), fast_threads(), [&](std::size_t idx) {
    if (!ok.load(std::memory_order_relaxed)) return;
    const std::size_t t = others[idx];
    const int we = dot_sign(ws, query(t));
    if (we == 0) { ok = false; return; }
    // E g over a positive denominator; the sign of w^T e orients it; the maximum must be unique.
    if (sd && gsmall && !sd->context_doubles[t].empty() &&
        double(d) * sd->context_max_abs[t] * gmax < 9007199254740992.0) {
      const std::vector<double>& E = sd->context_doubles[t];
      const std::size_t n = E.size() / d;
      double best = -INFINITY;
      std::size_t count = 0;
      for (std::size_t j = 0; j < n; ++j) {
        double v = 0;
        for (std::size_t c = 0; c < d; ++c) v += E[j * d + c] * gd[c];  // exact integer arithmetic
        if (we < 0) v = -v;
        if (v > best) { best = v; count = 1; } else if (v == best) ++count;
      }
      if (count != 1) ok = false;
      return;
    }
    thread_local std::vector<int128::i128> eg;
    if (sd && g64 && !sd->context_doubles[t].empty() && context_times_int64(sd->context_doubles[t], sd->context_max_abs[t], sd->context_rows, d, gi, eg)) {
      std::size_t j = 0;  // the same test on the 128-bit values
      for (std::size_t i = 0; i < eg.size(); ++i) {
        if (we < 0) eg[i] = -eg[i];
        if (eg[i] > eg[j]) j = i;
      }
      for (std::size_t i = 0; i < eg.size(); ++i)
        if (i != j && eg[i] == eg[j]) { ok = false; return; }
      return;
    }
    ScaledMatrix scratch;
    ScaledVector v = scaled_mat_vec(sd ? scaled_context(*sd, t, scratch) : scaled_from_qmat(attention_context(ds, t)), gs);
    if (we < 0) for (auto& x : v.num) x = -x;
    std::size_t j = 0;
    for (std::size_t i = 1; i < v.num.size(); ++i) if (v.num[i] > v.num[j]) j = i;
    for (std::size_t i = 0; i < v.num.size(); ++i)
      if (i != j && v.num[i] == v.num[j]) { ok = false; return; }
  });
  return ok.load();
}

std::optional<Saturator> lemma3_rank_one_saturator(const AttentionDataset& ds,
                                                   const std::vector<std::size_t>& group,
                                                   const std::vector<std::size_t>& others,
                                                   std::mt19937_64& rng, std::size_t max_attempts,
                                                   const QVector* first_g, const ScaledDataset* sd) {
  const std::size_t d = ds.d(), k = group.size();
  // Vectors orthogonal to span{e^(t) : t in group}: the kernel of Q_R^T restricted to a random set C of
  // min(d, k + 8) coordinates, padded with zeros (Q_R^T w = Q_R^T|_C w_C = 0). Any non-zero kernel
  // vector serves Lemma 3, and the whole kernel (d - k columns of large rationals) costs about d / 8 times
  // more. Such a w misses a query e_t whose restriction to C lies in the span of Q_R's (structured data:
  // one-hot queries off C); so C is redrawn every 8 attempts, and the second half of the attempts draws
  // from the whole kernel, which fails only when the lemma does.
  QMatrix K;
  auto draw_kernel = [&](bool whole) {
    std::vector<std::size_t> cols(d);
    for (std::size_t c = 0; c < d; ++c) cols[c] = c;
    if (!whole && k + 8 < d) {
      std::shuffle(cols.begin(), cols.end(), rng);
      cols.resize(k + 8);
      std::sort(cols.begin(), cols.end());
    }
    QMatrix QRt(k, cols.size());
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t c = 0; c < cols.size(); ++c) QRt(i, c) = ds.queries(group[i], cols[c]);
    const QMatrix Kc = group.empty() ? QMatrix::identity(d) : qmat_kernel(QRt);
    K = QMatrix(d, Kc.cols(), Rational(0));
    for (std::size_t c = 0; c < Kc.rows(); ++c)
      for (std::size_t j = 0; j < Kc.cols(); ++j) K(group.empty() ? c : cols[c], j) = Kc(c, j);
  };
  std::uniform_int_distribution<int> cw(-8, 8), cg(-64, 64);
  const std::size_t half = max_attempts / 2;
  for (std::size_t attempt = 0; attempt < max_attempts; ++attempt) {
    if (attempt < half ? attempt % 8 == 0 : attempt == half) draw_kernel(attempt >= half);
    if (K.cols() == 0) return std::nullopt;
    QVector coef(K.cols());
    bool nz = false;
    for (auto& x : coef) { x = cw(rng); nz = nz || x != 0; }
    if (!nz) coef[0] = 1;
    QVector w = mat_vec(K, coef);
    // Scale w to a primitive integer vector (scaling keeps every property checked).
    Integer l = rational_denominator_lcm(w.begin(), w.end()), gc = 0;
    for (auto& x : w) { x *= l; mpz_gcd(gc.get_mpz_t(), gc.get_mpz_t(), x.get_num_mpz_t()); }
    if (gc > 1) for (auto& x : w) x /= gc;
    // Normalise by a power of two so that max |w_i| is in [1/2, 1): keeps gaps and c readable (any
    // non-zero multiple of w satisfies the same checks).
    std::size_t bits = 0;
    for (auto& x : w) bits = std::max<std::size_t>(bits, mpz_sizeinbase(x.get_num_mpz_t(), 2));
    if (bits > 0) for (auto& x : w) x /= Rational(Integer(1) << static_cast<unsigned long>(bits));
    QVector g(d);
    if (attempt == 0 && first_g) g = *first_g;
    else for (auto& x : g) x = cg(rng);
    if (lemma3_check(ds, group, others, g, w, sd)) return Saturator{g, w, attempt + 1};
  }
  return std::nullopt;
}

// ---- Lemma 4 made quantitative (docs/THEORY.md section 4, "Explicit saturation bound") -----------------
SaturationData saturation_data(const QVector& a, const QVector& s) {
  SaturationData r;
  if (s.empty()) return r;
  std::size_t j = 0;
  for (std::size_t i = 1; i < s.size(); ++i) if (s[i] > s[j]) j = i;
  r.jstar = j;
  r.unique = true;
  bool have_second = false;
  Rational second;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == j) continue;
    if (s[i] == s[j]) r.unique = false;
    if (!have_second || s[i] > second) { second = s[i]; have_second = true; }
  }
  r.gap = have_second ? Rational(s[j] - second) : Rational(0);
  r.spread = 0;
  for (std::size_t i = 0; i < a.size() && i < s.size(); ++i)
    if (a[i] - a[j] > r.spread) r.spread = a[i] - a[j];
  return r;
}

Rational lemma4_saturation_scale(const Rational& spread, const Rational& gap, std::size_t n, const Rational& eps) {
  if (n <= 1) return Rational(0);
  if (gap <= 0 || eps <= 0) throw std::invalid_argument("lemma4_saturation_scale: gap and eps must be > 0");
  // c >= (A + ln(2(n-1)/eps)) / delta, with the right side enclosed rigorously; then rounded up.
  Interval v = (Interval(spread) + interval_log(Interval(Rational(2 * static_cast<long>(n - 1)) / eps))) / Interval(gap);
  Rational hi = v.upper();
  if (hi <= 0) return Rational(0);
  return detail::round_dyadic(hi, 12, /*up=*/true);
}

double lemma4_l1_bound_upper(const Rational& spread, const Rational& gap, std::size_t n, const Rational& c) {
  if (n <= 1) return 0.0;
  Interval v = Interval(Rational(2 * static_cast<long>(n - 1))) * interval_exp(Interval(spread - c * gap));
  return v.upper_double_up();
}

// ---- Lemma 5 (Weyl), direct criterion (docs/THEORY.md section 4, "The saturation scale c") -------------
std::optional<Rational> lemma5_weyl_eps(const Rational& sigma_lower, std::size_t m, const Rational& B2) {
  if (sigma_lower <= 0) return std::nullopt;
  if (m == 0 || B2 == 0) return Rational(1);  // no perturbed rows: any eps works
  // eps < sigma / (sqrt(m) B), checked exactly as m eps^2 B^2 < sigma^2.
  double est = rational_to_double(sigma_lower) / std::sqrt(double(m) * rational_to_double(B2));
  Rational eps = est >= 1 ? Rational(1) : detail::round_dyadic(rational_from_double(est * 0.999), 16, false);
  const Rational s2 = sigma_lower * sigma_lower;
  for (int i = 0; i < 200 && eps > 0; ++i) {
    if (Rational(static_cast<long>(m)) * eps * eps * B2 < s2) return eps;
    eps /= 2;
  }
  return std::nullopt;
}

// ---- Lemma 5, the paper's B.2 criterion (appendix B.2; an estimate in double) -----------------------
// Column reduction of Z_inf = [[Z_o, L], [X, D]] (old rows / new rows x old heads / head h) with
// C = X Z_o^+ = (X Z_o^T)(Z_o Z_o^T)^{-1} gives [[Z_o, 0], [X, D - C L]], so rank Z_c >= m + rank(D - C L_c)
// and the perturbation of the Schur block is C (L_c - L_inf): admissible when
// ||C||_2 sqrt(m) eps B < sigma_min(D - C L_inf). Estimated from the double Gram blocks; the step's rank
// is certified directly at the resulting c either way.
WeylB2 lemma5_weyl_b2_estimate(const std::vector<double>& Goo, const std::vector<double>& Gno,
                               const std::vector<double>& Linf, const std::vector<double>& D, std::size_t m,
                               std::size_t k, std::size_t d, double B) {
  using Eigen::MatrixXd;
  WeylB2 r;
  if (m == 0 || k == 0 || k > d || !(B > 0)) return r;
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> go(Goo.data(), m, m),
      gn(Gno.data(), k, m), l(Linf.data(), m, d), dd(D.data(), k, d);
  // The fast blocked Cholesky on the threads (the Gram block is m x m with m up to T: Eigen's own LLT, one
  // thread, took as long as every rank certificate of the step together at H = 64); LDL^T only if it
  // breaks down. An estimate: no error bound is needed here.
  MatrixXd GnoT = MatrixXd(gn).transpose(), C;
  std::vector<double> lf(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j <= i; ++j) lf[i * m + j] = Goo[i * m + j];
  if (fast_detail::cholesky_rn(lf.data(), m, fast_threads())) {
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> L(lf.data(), m, m);
    L.triangularView<Eigen::Lower>().solveInPlace(GnoT);
    L.transpose().triangularView<Eigen::Upper>().solveInPlace(GnoT);
    C = GnoT.transpose();  // k x m
  } else {
    C = MatrixXd(MatrixXd(go).ldlt().solve(GnoT)).transpose();
  }
  MatrixXd S = MatrixXd(dd) - C * MatrixXd(l);
  Eigen::JacobiSVD<MatrixXd> svs(S);
  r.sigma = svs.singularValues().minCoeff();
  // ||C||_2 = sqrt(lambda_max(C C^T)), from the small k x k matrix rather than an SVD of k x m.
  Eigen::SelfAdjointEigenSolver<MatrixXd> cc(C * C.transpose(), Eigen::EigenvaluesOnly);
  r.c_norm = std::sqrt(std::max(0.0, cc.eigenvalues().maxCoeff()));
  if (!(r.sigma > 0) || !std::isfinite(r.c_norm)) return r;
  r.eps = r.c_norm > 0 ? std::min(1.0, r.sigma / (r.c_norm * std::sqrt(double(m)) * B)) : 1.0;
  r.available = std::isfinite(r.eps);
  return r;
}

}  // namespace memcert::mahdavi24

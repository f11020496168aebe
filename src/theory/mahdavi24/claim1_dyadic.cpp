// Claim 1 with a dyadic W_Q (docs/THEORY.md section 4, "Claim 1 with a dyadic left inverse"): P, a short
// dyadic matrix near Q_R^+ rounded from a double solve, replaces the exact left inverse, and the targets are
// defined as the logits E^(t) U P e^(t) that the weights actually give, computed exactly in integers.
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <Eigen/Dense>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/parallel.hpp"
#include "int128.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

namespace {
using int128::i128;
int dyadic_bits_of(double m) { int e = 0; std::frexp(m, &e); return e; }  // |x| <= m < 2^e
// The widest logit enclosure the bounded route may give (absolute): about what 64-bit MPFR enclosures of
// exact logits of size 2^28 give.
const double kMaxLogitWidth = std::ldexp(1.0, -36);
}  // namespace

std::optional<ScaledMatrix> claim1_dyadic_left_inverse(const ZExamples& z, const std::vector<std::size_t>& group, int bits) {
  const std::size_t k = group.size(), d = z.d;
  if (k == 0 || bits < 2 || bits > 50) return std::nullopt;
  Eigen::MatrixXd Q(d, k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < d; ++c) Q(c, i) = rational_to_double(z.eq[group[i]][c]);
  // Least squares Q X = I_d column by column: X = Q^+ (full column rank), a k x d matrix. Only a guide: any
  // P whose logits certify Z_inf's rank is a valid Claim 1 (the certificate decides, not this solve).
  const Eigen::MatrixXd Pd = Q.colPivHouseholderQr().solve(Eigen::MatrixXd::Identity(d, d));
  const double m = Pd.cwiseAbs().maxCoeff();
  if (!std::isfinite(m) || !(m > 0)) return std::nullopt;
  const int s = bits - dyadic_bits_of(m);  // P = round(Pd 2^s) / 2^s, |numerators| <= 2^bits
  ScaledMatrix P;
  P.num = ZMatrix(k, d);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t c = 0; c < d; ++c) {
      const double x = std::nearbyint(std::ldexp(Pd(i, c), s));  // exact: |x| <= 2^bits
      Integer v(static_cast<long>(x));
      if (s < 0) v <<= static_cast<unsigned long>(-s);
      P.num(i, c) = v;
    }
  P.den = s > 0 ? Integer(Integer(1) << static_cast<unsigned long>(s)) : Integer(1);
  return P;
}

namespace {
// U (d x k) and P (k x d) as int64 with the bit bounds that keep w = U (P e) below 2^126: w per example.
class Claim1Product {
 public:
  Claim1Product(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P)
      : z_(z), U_(U), P_(P), d_(z.d), k_(P.rows()), Ui_(d_ * k_), Pi_(k_ * d_) {
    if (U.rows() != d_ || U.cols() != k_ || P.cols() != d_) throw std::invalid_argument("claim1 logits: shapes");
    double um = 0, pm = 0;
    for (std::size_t c = 0; c < d_ && ok_; ++c)
      for (std::size_t i = 0; i < k_ && ok_; ++i) {
        Ui_[c * k_ + i] = int128::small_int64(U.num(c, i), ok_);
        Pi_[i * d_ + c] = int128::small_int64(P.num(i, c), ok_);
        um = std::max(um, std::fabs(double(Ui_[c * k_ + i])));
        pm = std::max(pm, std::fabs(double(Pi_[i * d_ + c])));
      }
    lgd_ = dyadic_bits_of(double(d_));
    budget_ = dyadic_bits_of(pm) + lgd_ + dyadic_bits_of(um) + dyadic_bits_of(double(k_));
  }
  // w = U (P e^(t)) exactly, |w| < 2^100 (what the split of E w needs); false: use big integers.
  bool w_of(std::size_t t, std::vector<i128>& w) const {
    const ScaledVector& e = z_.sd.queries[t];
    bool small = ok_ && !z_.sd.context_doubles[t].empty();
    std::vector<std::int64_t> ei(d_);
    double em = 0;
    for (std::size_t c = 0; c < d_ && small; ++c) { ei[c] = int128::small_int64(e.num[c], small); em = std::max(em, std::fabs(double(ei[c]))); }
    // v = P e, then w = U v: |v| < 2^(pbits + ebits + lg d), |w| < that * 2^(ubits + lg k).
    if (!small || lgd_ > 13 || budget_ + dyadic_bits_of(em) > 120) return false;
    std::vector<i128> v(k_, 0);
    w.assign(d_, 0);
    for (std::size_t i = 0; i < k_; ++i) {
      i128 acc = 0;
      const std::int64_t* pr = &Pi_[i * d_];
      for (std::size_t c = 0; c < d_; ++c) acc += static_cast<i128>(pr[c]) * ei[c];
      v[i] = acc;
    }
    int wb = 0;
    for (std::size_t c = 0; c < d_; ++c) {
      i128 acc = 0;
      const std::int64_t* ur = &Ui_[c * k_];
      for (std::size_t i = 0; i < k_; ++i)
        if (ur[i]) acc += static_cast<i128>(ur[i]) * v[i];
      w[c] = acc;
      wb = std::max(wb, int128::bits(acc));
    }
    return wb <= 100;
  }
  // w = hi 2^40 + lo with 0 <= lo < 2^40, |hi| < 2^60 (w from w_of, |w| < 2^100): the halves that keep each
  // partial sum of E w below 2^(52 + 60 + lg d) < 2^126 (|E| < 2^52, d < 2^13, checked by w_of).
  static void split(const std::vector<i128>& w, std::vector<std::int64_t>& hi, std::vector<std::int64_t>& lo) {
    hi.resize(w.size());
    lo.resize(w.size());
    for (std::size_t c = 0; c < w.size(); ++c) {
      const i128 h = w[c] >> 40;  // arithmetic shift: floor
      hi[c] = static_cast<std::int64_t>(h);
      lo[c] = static_cast<std::int64_t>(w[c] - (h << 40));
    }
  }
  // Row i of E w exactly, from split's halves.
  Integer row(std::size_t t, const std::vector<std::int64_t>& hi, const std::vector<std::int64_t>& lo, std::size_t i) const {
    const double* er = &z_.sd.context_doubles[t][i * d_];
    i128 ah = 0, al = 0;
    for (std::size_t c = 0; c < d_; ++c) {
      const auto x = static_cast<std::int64_t>(er[c]);  // exact: |x| < 2^52
      ah += static_cast<i128>(x) * hi[c];
      al += static_cast<i128>(x) * lo[c];
    }
    return (int128::to_integer(ah) << 40) + int128::to_integer(al);
  }
  // The exact logits by big integers: E (U (P e)).
  ScaledVector big(std::size_t t) const {
    ScaledMatrix scratch;
    return scaled_mat_vec(scaled_context(z_.sd, t, scratch), scaled_mat_vec(U_, scaled_mat_vec(P_, z_.sd.queries[t])));
  }
  // The denominator of example t's logits.
  Integer den(std::size_t t) const { return z_.sd.contexts[t].den * U_.den * P_.den * z_.sd.queries[t].den; }

 private:
  const ZExamples& z_;
  const ScaledMatrix &U_, &P_;
  std::size_t d_, k_;
  std::vector<std::int64_t> Ui_, Pi_;
  bool ok_ = true;
  int lgd_ = 0, budget_ = 0;
};
}  // namespace

std::vector<ScaledVector> claim1_logits_dyadic(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                                               const std::vector<std::size_t>& examples) {
  const std::size_t n = z.n;
  const Claim1Product prod(z, U, P);
  std::vector<ScaledVector> out(examples.size());
  parallel_for(examples.size(), fast_threads(), [&](std::size_t ix) {
    const std::size_t t = examples[ix];
    thread_local std::vector<i128> w;
    if (!prod.w_of(t, w)) { out[ix] = prod.big(t); return; }
    thread_local std::vector<std::int64_t> hi, lo;
    Claim1Product::split(w, hi, lo);
    ScaledVector a;
    a.num.resize(n);
    for (std::size_t j = 0; j < n; ++j) a.num[j] = prod.row(t, hi, lo, j);
    a.den = prod.den(t);
    out[ix] = std::move(a);
  });
  return out;
}

std::vector<std::optional<Rational>> claim1_spreads(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                                                    const std::vector<std::size_t>& examples,
                                                    const std::vector<const ScaledBounds*>& bounds,
                                                    const std::vector<std::size_t>& jstar) {
  const Claim1Product prod(z, U, P);
  std::vector<std::optional<Rational>> out(examples.size());
  parallel_for(examples.size(), fast_threads(), [&](std::size_t ix) {
    const ScaledBounds* b = bounds[ix];
    if (!b || b->lo.empty()) return;
    const std::size_t t = examples[ix], n = b->lo.size(), js = jstar[ix];
    if (sgn(b->factor) <= 0 || js >= n) throw std::invalid_argument("claim1_spreads: bounds");
    thread_local std::vector<i128> w;
    Integer best = 0;
    if (!prod.w_of(t, w)) {  // not the route the bounds came from; stay exact regardless
      const ScaledVector a = prod.big(t);
      for (std::size_t i = 0; i < n; ++i) best = std::max(best, Integer(a.num[i] - a.num[js]));
      out[ix] = Rational(best, a.den);
      out[ix]->canonicalize();
      return;
    }
    double top = b->lo[0];
    for (std::size_t i = 1; i < n; ++i) top = std::max(top, b->lo[i]);
    // max_i a_i is attained at a row with hi_i >= max_k lo_k (any other row lies below that lo's row).
    thread_local std::vector<std::int64_t> wh, wl;
    Claim1Product::split(w, wh, wl);
    const Integer aj = prod.row(t, wh, wl, js);
    for (std::size_t i = 0; i < n; ++i)
      if (b->hi[i] >= top && i != js) best = std::max(best, Integer(prod.row(t, wh, wl, i) - aj));
    out[ix] = Rational(best, prod.den(t));
    out[ix]->canonicalize();
  });
  return out;
}

void claim1_logit_bounds(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                         const std::vector<std::size_t>& examples, std::vector<ScaledBounds>& bounds,
                         std::vector<ScaledVector>& exact) {
  const std::size_t n = z.n, d = z.d;
  const Claim1Product prod(z, U, P);
  bounds.assign(examples.size(), ScaledBounds());
  exact.assign(examples.size(), ScaledVector());
  std::vector<std::size_t> wide;  // examples whose enclosure came out too wide: exact route below
  std::mutex wide_mutex;
  parallel_for(examples.size(), fast_threads(), [&](std::size_t ix) {
    const std::size_t t = examples[ix];
    thread_local std::vector<i128> w;
    thread_local std::vector<double> wd;
    if (!prod.w_of(t, w)) { exact[ix] = prod.big(t); return; }
    wd.resize(d);
    for (std::size_t c = 0; c < d; ++c) wd[c] = static_cast<double>(w[c]);  // within 2u: |w| < 2^100
    ScaledBounds& b = bounds[ix];
    b.lo.resize(n);
    b.hi.resize(n);
    context_times_bounds(z.sd.context_doubles[t].data(), n, d, wd.data(), b.lo.data(), b.hi.data());
    b.factor = Rational(Integer(1), prod.den(t));
    b.factor.canonicalize();
    // A wide enclosure (cancellation, huge logits from a nearly singular Q_R) would widen Z's rows and the
    // label check: such an example takes the exact route. (This only picks the route; both are rigorous.)
    double width = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double wj = b.hi[j] - b.lo[j];
      if (!(wj <= width)) width = wj;  // a NaN (not expected) is kept, and sends the example to the exact route
    }
    if (!(width * std::fabs(rational_to_double(b.factor)) <= kMaxLogitWidth)) {
      b = ScaledBounds();
      std::lock_guard<std::mutex> lock(wide_mutex);
      wide.push_back(ix);
    }
  });
  if (wide.empty()) return;
  std::vector<std::size_t> which(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) which[i] = examples[wide[i]];
  std::vector<ScaledVector> ex = claim1_logits_dyadic(z, U, P, which);
  for (std::size_t i = 0; i < wide.size(); ++i) exact[wide[i]] = std::move(ex[i]);
}

}  // namespace memcert::mahdavi24

// Claim 1 with a dyadic W_Q (docs/THEORY.md section 4, "Claim 1 with a dyadic left inverse"): P, a short
// dyadic matrix near Q_R^+ rounded from a double solve, replaces the exact left inverse, and the targets are
// defined as the logits E^(t) U P e^(t) that the weights actually give, computed exactly in integers.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <Eigen/Dense>

#include "memcert/linalg/fast/dmod.hpp"
#include "memcert/util/parallel.hpp"
#include "int128.hpp"
#include "z_enclosure.hpp"

namespace memcert::mahdavi24 {

namespace {
using int128::i128;
int dyadic_bits_of(double m) { int e = 0; std::frexp(m, &e); return e; }  // |x| <= m < 2^e
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

std::vector<ScaledVector> claim1_logits_dyadic(const ZExamples& z, const ScaledMatrix& U, const ScaledMatrix& P,
                                               const std::vector<std::size_t>& examples) {
  const std::size_t n = z.n, d = z.d, k = P.rows();
  if (U.rows() != d || U.cols() != k || P.cols() != d) throw std::invalid_argument("claim1_logits_dyadic: shapes");
  std::vector<ScaledVector> out(examples.size());
  // U and P as int64 with their magnitudes in bits (the bounds that keep every sum below 2^126).
  bool ok = true;
  std::vector<std::int64_t> Ui(d * k), Pi(k * d);
  double um = 0, pm = 0;
  for (std::size_t c = 0; c < d && ok; ++c)
    for (std::size_t i = 0; i < k && ok; ++i) {
      Ui[c * k + i] = int128::small_int64(U.num(c, i), ok);
      Pi[i * d + c] = int128::small_int64(P.num(i, c), ok);
      um = std::max(um, std::fabs(double(Ui[c * k + i])));
      pm = std::max(pm, std::fabs(double(Pi[i * d + c])));
    }
  const int lgd = dyadic_bits_of(double(d)), lgk = dyadic_bits_of(double(k));
  parallel_for(examples.size(), fast_threads(), [&](std::size_t ix) {
    const std::size_t t = examples[ix];
    const ScaledVector& e = z.sd.queries[t];
    const std::vector<double>& E = z.sd.context_doubles[t];
    bool small = ok && !E.empty();
    std::vector<std::int64_t> ei(d);
    double em = 0;
    for (std::size_t c = 0; c < d && small; ++c) { ei[c] = int128::small_int64(e.num[c], small); em = std::max(em, std::fabs(double(ei[c]))); }
    // v = P e, then w = U v: |v| < 2^(pbits + ebits + lg d), |w| < that * 2^(ubits + lg k).
    small = small && lgd <= 13 && dyadic_bits_of(pm) + dyadic_bits_of(em) + lgd + dyadic_bits_of(um) + lgk <= 120;
    if (!small) {  // big-integer route: E (U (P e))
      ScaledMatrix scratch;
      out[ix] = scaled_mat_vec(scaled_context(z.sd, t, scratch), scaled_mat_vec(U, scaled_mat_vec(P, e)));
      return;
    }
    std::vector<i128> v(k, 0), w(d, 0);
    for (std::size_t i = 0; i < k; ++i) {
      i128 acc = 0;
      const std::int64_t* pr = &Pi[i * d];
      for (std::size_t c = 0; c < d; ++c) acc += static_cast<i128>(pr[c]) * ei[c];
      v[i] = acc;
    }
    int wb = 0;
    for (std::size_t c = 0; c < d; ++c) {
      i128 acc = 0;
      const std::int64_t* ur = &Ui[c * k];
      for (std::size_t i = 0; i < k; ++i)
        if (ur[i]) acc += static_cast<i128>(ur[i]) * v[i];
      w[c] = acc;
      wb = std::max(wb, int128::bits(acc));
    }
    if (wb > 100) {  // the split below needs |w| < 2^100
      ScaledMatrix scratch;
      out[ix] = scaled_mat_vec(scaled_context(z.sd, t, scratch), scaled_mat_vec(U, scaled_mat_vec(P, e)));
      return;
    }
    // a = E w with w = hi 2^40 + lo, 0 <= lo < 2^40, |hi| < 2^60: |E| < 2^52 (context_doubles), so each
    // partial sum stays below 2^(52 + 60 + lg d) < 2^126 (d < 2^13, checked above).
    std::vector<std::int64_t> hi(d), lo(d);
    for (std::size_t c = 0; c < d; ++c) {
      const i128 h = w[c] >> 40;  // arithmetic shift: floor
      hi[c] = static_cast<std::int64_t>(h);
      lo[c] = static_cast<std::int64_t>(w[c] - (h << 40));
    }
    ScaledVector a;
    a.num.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      i128 ah = 0, al = 0;
      const double* er = &E[j * d];
      for (std::size_t c = 0; c < d; ++c) {
        const std::int64_t x = static_cast<std::int64_t>(er[c]);  // exact: |x| < 2^52
        ah += static_cast<i128>(x) * hi[c];
        al += static_cast<i128>(x) * lo[c];
      }
      a.num[j] = (int128::to_integer(ah) << 40) + int128::to_integer(al);
    }
    a.den = z.sd.contexts[t].den * U.den * P.den * e.den;
    out[ix] = std::move(a);
  });
  return out;
}

}  // namespace memcert::mahdavi24

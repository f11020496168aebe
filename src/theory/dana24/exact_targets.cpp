// dana24 step 6c: the exact statement of the read-out solve. The solve of step 6b runs in double, so its
// solution X = [M, W_O] is a matrix of dyadic rationals; so is the feature centre F~ it was solved from.
// Their product E* := X F~ is therefore an exact dyadic rational matrix, computed here with integers
// (each row of X and of F~ scaled by a power of two), and the margin of its logits W_U E*(t) is exact.
#include <algorithm>
#include <cmath>
#include <limits>

#include "memcert/numeric/dinterval.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert::dana24 {

namespace {

// A row of doubles as integers times one power of two: value_k = z[k] 2^exp, exactly.
struct ScaledIntegerRow {
  std::vector<Integer> z;
  long exp = 0;
};

// Scales n doubles x[0], x[stride], ... to integers over their smallest binary exponent (exact: every
// finite double is m 2^e with an integer m of at most 53 bits).
ScaledIntegerRow dyadic_row_to_integers(const double* x, std::size_t n, std::size_t stride) {
  ScaledIntegerRow r;
  r.z.resize(n);
  long emin = std::numeric_limits<long>::max();
  std::vector<long> mant(n), ex(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double v = x[k * stride];
    if (v == 0) continue;
    int e = 0;
    const double fr = std::frexp(v, &e);
    mant[k] = static_cast<long>(std::ldexp(fr, 53));
    ex[k] = e - 53;
    emin = std::min(emin, ex[k]);
  }
  if (emin == std::numeric_limits<long>::max()) emin = 0;
  r.exp = emin;
  for (std::size_t k = 0; k < n; ++k) {
    if (mant[k] == 0) continue;
    r.z[k] = mant[k];
    mpz_mul_2exp(r.z[k].get_mpz_t(), r.z[k].get_mpz_t(), static_cast<mp_bitcnt_t>(ex[k] - emin));
  }
  return r;
}

// q 2^e as a rational.
Rational rational_times_pow2(const Integer& z, long e) {
  Rational q(z);
  if (e >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
  else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
  return q;
}

}  // namespace

ExactTargets dana24_exact_targets(const FeatureEnclosure& f, const Readout& r, const DMatrix& WU,
                                  const AssocData& a, int threads) {
  const std::size_t T = f.centre.rows(), m = f.centre.cols(), d = r.M.rows(), N = WU.rows();
  // X = [M, W_O], row by row.
  std::vector<ScaledIntegerRow> X(d);
  std::vector<double> row(m);
  long xmin = std::numeric_limits<long>::max();
  for (std::size_t i = 0; i < d; ++i) {
    for (std::size_t k = 0; k < m; ++k) row[k] = k < d ? r.M(i, k) : r.WO(i, k - d);
    X[i] = dyadic_row_to_integers(row.data(), m, 1);
    xmin = std::min(xmin, X[i].exp);
  }
  // W_U over one power of two.
  const ScaledIntegerRow W = dyadic_row_to_integers(WU.data().data(), N * d, 1);
  ExactTargets out;
  out.margin.assign(T, Rational(0));
  out.lo = DMatrix(d, T, 0.0);
  out.hi = DMatrix(d, T, 0.0);
  parallel_for(T, threads, [&](std::size_t t) {
    const ScaledIntegerRow F = dyadic_row_to_integers(&f.centre(t, 0), m, 1);
    // E*(t)_i = (sum_k X_ik F_tk) 2^(X[i].exp + F.exp), put over the common exponent xmin + F.exp.
    std::vector<Integer> E(d);
    for (std::size_t i = 0; i < d; ++i) {
      Integer& s = E[i];
      for (std::size_t k = 0; k < m; ++k)
        if (sgn(X[i].z[k]) != 0 && sgn(F.z[k]) != 0) mpz_addmul(s.get_mpz_t(), X[i].z[k].get_mpz_t(), F.z[k].get_mpz_t());
      const Rational q = rational_times_pow2(s, X[i].exp + F.exp);
      out.lo(i, t) = rational_to_double_down(q);
      out.hi(i, t) = rational_to_double_up(q);
      mpz_mul_2exp(s.get_mpz_t(), s.get_mpz_t(), static_cast<mp_bitcnt_t>(X[i].exp - xmin));
    }
    // Logits times 2^-(W.exp + xmin + F.exp), exactly; margin = min_{j != g} L_g - L_j.
    auto logit = [&](std::size_t j) {
      Integer L = 0;
      for (std::size_t i = 0; i < d; ++i)
        if (sgn(W.z[j * d + i]) != 0) mpz_addmul(L.get_mpz_t(), W.z[j * d + i].get_mpz_t(), E[i].get_mpz_t());
      return L;
    };
    const std::size_t g = a.next[t];
    const Integer Lg = logit(g);
    Integer best;
    bool any = false;
    for (std::size_t j = 0; j < N; ++j) {
      if (j == g) continue;
      Integer L = logit(j);
      if (!any || L > best) best = std::move(L), any = true;
    }
    out.margin[t] = any ? rational_times_pow2(Integer(Lg - best), W.exp + xmin + F.exp) : Rational(1);
  });
  out.min_margin = T ? *std::min_element(out.margin.begin(), out.margin.end()) : Rational(0);
  return out;
}

double dana24_encoder_deviation(const Model& md, const AssocData& a, const ExactTargets& x) {
  double dev = 0;
  for (std::size_t t = 0; t < a.T(); ++t) {
    const auto E = dana24_encoder_enclosure(md, a.sequences[t]);
    for (std::size_t i = 0; i < E.size(); ++i) {
      // Both differences rounded up by one ulp (each is one rounded subtraction).
      const double up = dbound::sub_up(E[i].second, x.lo(i, t));
      const double dn = dbound::sub_up(x.hi(i, t), E[i].first);
      if (!(up <= dev && dn <= dev)) dev = std::isnan(up) || std::isnan(dn) ? std::numeric_limits<double>::infinity()
                                                                            : std::max({dev, up, dn});
    }
  }
  return dev;
}

}  // namespace memcert::dana24

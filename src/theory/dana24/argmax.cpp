// Step 8 of docs/papers/dana24.md section 5: the end-to-end certificate. Eq. (2) is evaluated with the weights
// as they are (exact doubles) in outward-rounded interval arithmetic (numeric/dinterval.hpp); nothing from the
// construction's steps 3-7 is assumed.
#include <algorithm>
#include <limits>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/numeric/dinterval.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/util/parallel.hpp"

namespace memcert::dana24 {

using dbound::dn;
using dbound::up;

namespace {

// y = W x for an exact matrix W and an interval vector x (zero weights skipped: rank-one heads).
std::vector<DInterval> di_matvec(const DMatrix& W, const std::vector<DInterval>& x) {
  std::vector<DInterval> y(W.rows());
  for (std::size_t r = 0; r < W.rows(); ++r) {
    const double* w = W.row(r);
    DInterval acc{0, 0};
    for (std::size_t i = 0; i < W.cols(); ++i) fma_into(acc, w[i], x[i]);
    y[r] = acc;
  }
  return y;
}

// The input of W_U for one sequence: E(t) = x(t,S) + sum_h W_O^h W_V^h A^h(t) (eq. (1)-(2)).
std::vector<DInterval> encoder_di(const Model& m, const std::vector<std::uint32_t>& seq) {
  const std::size_t S = m.S, d = m.d;
  std::vector<std::vector<DInterval>> x(S, std::vector<DInterval>(d));
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t i = 0; i < d; ++i) x[s][i] = DInterval::point(m.e(seq[s], i)) + DInterval::point(m.pos(s, i));
  std::vector<DInterval> E = x[S - 1];  // the skip connection carries x(t,S)
  std::vector<DInterval> score(S), z(S);
  for (std::size_t h = 0; h < m.H; ++h) {
    const std::vector<DInterval> qv = di_matvec(m.WQ[h], x[S - 1]);
    double c = -std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < S; ++s) {
      const std::vector<DInterval> kv = di_matvec(m.WK[h], x[s]);
      DInterval sc{0, 0};
      for (std::size_t r = 0; r < qv.size(); ++r) sc = sc + qv[r] * kv[r];
      score[s] = sc;
      c = std::max(c, sc.hi);
    }
    // Softmax shifted by the exact double c >= every score, so every exponent is <= 0.
    DInterval sum{0, 0};
    for (std::size_t s = 0; s < S; ++s) {
      z[s] = exp_nonpositive({dn(score[s].lo - c), std::min(up(score[s].hi - c), 0.0)});
      sum = sum + z[s];
    }
    std::vector<DInterval> A(d, DInterval{0, 0});
    for (std::size_t s = 0; s < S; ++s) {
      const DInterval as = z[s] / sum;
      for (std::size_t i = 0; i < d; ++i) A[i] = A[i] + as * x[s][i];
    }
    const std::vector<DInterval> v = di_matvec(m.WV[h], A);
    const std::vector<DInterval> o = di_matvec(m.WO[h], v);
    for (std::size_t i = 0; i < d; ++i) E[i] = E[i] + o[i];
  }
  return E;
}

// The same forward pass with MPFR intervals at `prec` bits (directed rounding, numeric/interval.hpp), for
// the sequences the double pass leaves undecided. Ill-conditioned feature matrices (d = 2 with many
// heads: sigma_min(F) ~ 1e-20) give output weights W_O ~ 1e10 whose products cancel to O(1): the double
// intervals then widen by ~ 1e10 * 2^-53 per term, while the exact value is within the solve's residual
// of the target. More bits remove the cancellation loss; nothing else changes.
double certified_margin_mpfr(const Model& m, const std::vector<std::uint32_t>& seq, std::size_t g, mpfr_prec_t prec) {
  Interval::PrecisionScope scope(prec);
  const std::size_t S = m.S, d = m.d;
  auto point = [](double w) { return Interval(rational_from_double(w)); };
  auto matvec = [&](const DMatrix& W, const std::vector<Interval>& x) {
    std::vector<Interval> y(W.rows());
    for (std::size_t r = 0; r < W.rows(); ++r)
      for (std::size_t i = 0; i < W.cols(); ++i)
        if (W(r, i) != 0) y[r] += point(W(r, i)) * x[i];
    return y;
  };
  std::vector<std::vector<Interval>> x(S, std::vector<Interval>(d));
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t i = 0; i < d; ++i) x[s][i] = point(m.e(seq[s], i)) + point(m.pos(s, i));
  std::vector<Interval> E = x[S - 1];
  for (std::size_t h = 0; h < m.H; ++h) {
    const std::vector<Interval> qv = matvec(m.WQ[h], x[S - 1]);
    std::vector<Interval> z(S);
    Interval top;
    for (std::size_t s = 0; s < S; ++s) {
      const std::vector<Interval> kv = matvec(m.WK[h], x[s]);
      Interval sc;
      for (std::size_t r = 0; r < qv.size(); ++r) sc += qv[r] * kv[r];
      z[s] = sc;
      top = s == 0 ? sc : interval_max(top, sc);
    }
    // Shift by an exact point inside the largest score's range so the exps stay moderate.
    const Interval shift(top.midpoint());
    Interval sum;
    for (std::size_t s = 0; s < S; ++s) z[s] = interval_exp(z[s] - shift), sum += z[s];
    std::vector<Interval> A(d);
    for (std::size_t s = 0; s < S; ++s) {
      const Interval as = z[s] / sum;
      for (std::size_t i = 0; i < d; ++i) A[i] += as * x[s][i];
    }
    const std::vector<Interval> o = matvec(m.WO[h], matvec(m.WV[h], A));
    for (std::size_t i = 0; i < d; ++i) E[i] += o[i];
  }
  const std::vector<Interval> logit = matvec(m.WU, E);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < m.N; ++j)
    if (j != g) best = std::min(best, (logit[g] - logit[j]).lower_double_down());
  return best;
}

}  // namespace

std::vector<std::pair<double, double>> dana24_encoder_enclosure(const Model& m, const std::vector<std::uint32_t>& seq) {
  std::vector<std::pair<double, double>> out;
  for (const DInterval& x : encoder_di(m, seq)) out.emplace_back(x.lo, x.hi);
  return out;
}

ArgmaxCertificate dana24_certify_argmax(const Model& m, const AssocData& a) {
  ArgmaxCertificate c;
  c.margin.assign(a.T(), -std::numeric_limits<double>::infinity());
  std::vector<std::size_t> escalations(a.T(), 0);
  parallel_for(a.T(), fast_threads(), [&](std::size_t t) {
    const std::vector<DInterval> E = encoder_di(m, a.sequences[t]);
    const std::vector<DInterval> logit = di_matvec(m.WU, E);
    const std::size_t g = a.next[t];
    double rival = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < m.N; ++j)
      if (j != g) rival = std::max(rival, logit[j].hi);
    // Certified: T_g - T_j >= logit[g].lo - logit[j].hi for every j != g. Each tier certifies the arg-max
    // when its margin is positive; the reported margin is the best one found. Escalation: MPFR at 128, 256,
    // 512 bits (if none certifies, the weights really miss the target).
    auto in_double = [&] {
      c.margin[t] = m.N == 1 ? std::numeric_limits<double>::infinity() : dn(logit[g].lo - rival);
      return c.margin[t] > 0 ? UncertainBool::certain(true) : UncertainBool::indeterminate();
    };
    auto in_mpfr = [&](long prec) {
      c.margin[t] = std::max(c.margin[t], certified_margin_mpfr(m, a.sequences[t], g, prec));
      return c.margin[t] > 0 ? UncertainBool::certain(true) : UncertainBool::indeterminate();
    };
    escalations[t] = decide_escalating(in_double, {128, 256, 512}, in_mpfr, kNoExactTier).mpfr_tiers;
  });
  for (std::size_t e : escalations) c.escalated += e;
  c.min_margin = std::numeric_limits<double>::infinity();
  for (double mg : c.margin) {
    if (mg > 0) ++c.certified;
    c.min_margin = std::min(c.min_margin, mg);
  }
  return c;
}

}  // namespace memcert::dana24

// c_weyl (THEORY.md section 4, "Which c to report"): the smallest saturation scale at which head h's
// direct Weyl criterion sqrt(m) eps_h(c) B < sigma holds with the ACTUAL eps_h(c) = max_t 2 (1 -
// softmax(a_t + c s_t)_{j*_t}) over the earlier examples, not Lemma 4's bound on it.
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "memcert/numeric/dinterval.hpp"
#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/numeric/double_bits.hpp"
#include "memcert/numeric/filter.hpp"
#include "memcert/numeric/rational.hpp"
#include "memcert/util/parallel.hpp"

#include "memcert/theory/mahdavi24/theorem1.hpp"
#include "format.hpp"

namespace memcert::mahdavi24 {

namespace {

// MPFR scratch for one evaluation (n logits).
struct EpsScratch {
  std::vector<__mpfr_struct> lo, hi;
  mpfr_t clo, chi, tmp, x, u_lo, u_hi, e_lo, e_hi;
  explicit EpsScratch(std::size_t n) : lo(n), hi(n) {
    for (std::size_t k = 0; k < n; ++k) { mpfr_init2(&lo[k], 64); mpfr_init2(&hi[k], 64); }
    for (mpfr_ptr p : {clo, chi, tmp, x, u_lo, u_hi, e_lo, e_hi}) mpfr_init2(p, 64);
  }
  ~EpsScratch() {
    for (auto& v : lo) mpfr_clear(&v);
    for (auto& v : hi) mpfr_clear(&v);
    for (mpfr_ptr p : {clo, chi, tmp, x, u_lo, u_hi, e_lo, e_hi}) mpfr_clear(p);
  }
  EpsScratch(const EpsScratch&) = delete;
  EpsScratch& operator=(const EpsScratch&) = delete;
};

// Encloses eps_t(c) = 2 (1 - alpha_{j*}) = 2 u / (1 + u), u = sum_{j != j*} exp(l_j - l_{j*}), from the
// directed-rounding logit enclosures [lo_j, hi_j] at scale c: u_lo uses lo_j - hi_{j*}, u_hi uses
// hi_j - lo_{j*}; 2u/(1+u) is increasing in u, so the results bracket eps_t(c).
void eps_enclosure(const AffineLogits& L, std::size_t jstar, const Rational& c, EpsScratch& s, mpfr_ptr e_lo,
                   mpfr_ptr e_hi) {
  const std::size_t n = L.n();
  mpfr_set_q(s.clo, c.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(s.chi, c.get_mpq_t(), MPFR_RNDU);
  for (std::size_t k = 0; k < n; ++k) L.bounds(c, &s.lo[k], &s.hi[k], k, s.clo, s.chi, s.tmp);
  mpfr_set_zero(s.u_lo, 1);
  mpfr_set_zero(s.u_hi, 1);
  for (std::size_t j = 0; j < n; ++j) {
    if (j == jstar) continue;
    mpfr_sub(s.x, &s.lo[j], &s.hi[jstar], MPFR_RNDD);
    mpfr_exp(s.x, s.x, MPFR_RNDD);
    mpfr_add(s.u_lo, s.u_lo, s.x, MPFR_RNDD);
    mpfr_sub(s.x, &s.hi[j], &s.lo[jstar], MPFR_RNDU);
    mpfr_exp(s.x, s.x, MPFR_RNDU);
    mpfr_add(s.u_hi, s.u_hi, s.x, MPFR_RNDU);
  }
  // 2u/(1+u): numerator and denominator rounded in the directions that keep the bound.
  mpfr_add_ui(s.x, s.u_lo, 1, MPFR_RNDU);
  mpfr_mul_ui(e_lo, s.u_lo, 2, MPFR_RNDD);
  mpfr_div(e_lo, e_lo, s.x, MPFR_RNDD);
  mpfr_add_ui(s.x, s.u_hi, 1, MPFR_RNDD);
  mpfr_mul_ui(e_hi, s.u_hi, 2, MPFR_RNDU);
  mpfr_div(e_hi, e_hi, s.x, MPFR_RNDU);
}

// The double filter of eps_enclosure (CGAL's way: decide in floating point when the bound allows, else
// fall back to MPFR). One example's a and s as outward doubles, read once; at each c every step rounds
// outward (next_up / next_down after round-to-nearest) and exp is exp_nonpositive_bounded with its proven
// error (kExpRelErr, kExpAbsErr), so the result is an upper bound on eps_t(c) -- a few ulps of c s wider
// than MPFR's, which only matters at the bisection's last steps, where MPFR decides.
struct DoubleLogits {
  std::vector<double> alo, ahi, slo, shi;
  bool ok = false;
};
// An upper bound on eps_t(c) for c in [clo, chi] (0 <= clo), or +inf when the filter cannot give one.
double eps_upper_double(const DoubleLogits& L, std::size_t jstar, double clo, double chi) {
  const std::size_t n = L.alo.size();
  using dbound::dn;
  using dbound::up;
  auto lower = [&](std::size_t k) {  // a_k + c s_k >= this
    const double cs = L.slo[k] >= 0 ? dn(clo * L.slo[k]) : dn(chi * L.slo[k]);
    return dn(L.alo[k] + cs);
  };
  auto upper = [&](std::size_t k) {
    const double cs = L.shi[k] >= 0 ? up(chi * L.shi[k]) : up(clo * L.shi[k]);
    return up(L.ahi[k] + cs);
  };
  const double ljs = lower(jstar);
  double u = 0;  // >= sum_{j != j*} exp(l_j - l_j*)
  for (std::size_t j = 0; j < n; ++j) {
    if (j == jstar) continue;
    const double x = up(upper(j) - ljs);
    if (!(x <= 0)) return std::numeric_limits<double>::infinity();  // no longer a small eps: MPFR decides
    const double e = up(up(exp_nonpositive_bounded(x) + kExpAbsErr) * up(1.0 + 2.0 * kExpRelErr));
    u = up(u + e);
  }
  if (!std::isfinite(u)) return std::numeric_limits<double>::infinity();
  return up(up(2.0 * u) / dn(1.0 + u));  // 2u / (1 + u), increasing in u
}

}  // namespace

std::optional<WeylScale> weyl_scale_bisect(const std::vector<const AffineLogits*>& logits,
                                           const std::vector<std::size_t>& jstar, const Rational& sigma_lower,
                                           const Rational& B2, const Rational& c_hint) {
  const std::size_t m = logits.size();
  if (m == 0 || sigma_lower <= 0) return std::nullopt;
  const std::size_t n = logits[0]->n();
  WeylScale out;
  if (n <= 1) return out;  // a single token: alpha = 1 at every c, eps = 0
  // The criterion m eps^2 B^2 < sigma^2 as eps < tau := sigma / sqrt(m B^2); tau_lo <= tau (rounded down).
  mpfr_t tau_lo, t;
  for (mpfr_ptr p : {tau_lo, t}) mpfr_init2(p, 64);
  Rational mB2 = B2 * Rational(static_cast<long>(m));
  mpfr_set_q(t, mB2.get_mpq_t(), MPFR_RNDU);
  mpfr_sqrt(t, t, MPFR_RNDU);
  mpfr_set_q(tau_lo, sigma_lower.get_mpq_t(), MPFR_RNDD);
  mpfr_div(tau_lo, tau_lo, t, MPFR_RNDD);
  // holds: certified eps_t(c) < tau (otherwise not certified, treated as failing); e_hi_out: eps_t's
  // upper bound there. Each thread has its own MPFR scratch.
  // The filter's data, read once per example (in parallel), and tau_lo as a double rounded down.
  const int threads = mpfr_buildopt_tls_p() ? fast_threads() : 1;
  std::vector<DoubleLogits> dl(m);
  parallel_for(m, threads, [&](std::size_t i) {
    DoubleLogits& x = dl[i];
    for (auto* v : {&x.alo, &x.ahi, &x.slo, &x.shi}) v->resize(n);
    x.ok = logits[i]->outward_doubles(x.alo.data(), x.ahi.data(), x.slo.data(), x.shi.data());
  });
  const double tau_d = mpfr_get_d(tau_lo, MPFR_RNDD);
  // Each tier certifies only "holds" (an upper bound below tau): double, then MPFR at 64 bits; no exact
  // tier (eps involves exp), and what no tier certifies counts as failing.
  auto holds = [&](std::size_t i, const Rational& c, double* e_hi_out = nullptr) {
    auto in_double = [&] {
      if (!dl[i].ok) return UncertainBool::indeterminate();
      thread_local Rational c_last = -1;  // c as doubles rounded outward, kept while c repeats
      thread_local double c_lo = 0, c_hi = 0;
      if (c != c_last) {
        c_lo = std::max(0.0, rational_to_double_down(c));
        c_hi = rational_to_double_up(c);
        c_last = c;
      }
      const double e = std::isfinite(c_hi) ? eps_upper_double(dl[i], jstar[i], c_lo, c_hi) : INFINITY;
      if (!(e < tau_d)) return UncertainBool::indeterminate();
      if (e_hi_out) *e_hi_out = e;
      return UncertainBool::certain(true);
    };
    auto in_mpfr = [&](long /*prec: EpsScratch's 64 bits*/) {
      thread_local std::unique_ptr<EpsScratch> sp;
      thread_local std::size_t sp_n = 0;
      if (!sp || sp_n != n) sp = std::make_unique<EpsScratch>(n), sp_n = n;
      EpsScratch& sc = *sp;
      eps_enclosure(*logits[i], jstar[i], c, sc, sc.e_lo, sc.e_hi);
      if (e_hi_out) *e_hi_out = mpfr_get_d(sc.e_hi, MPFR_RNDU);
      return mpfr_less_p(sc.e_hi, tau_lo) ? UncertainBool::certain(true) : UncertainBool::indeterminate();
    };
    return decide_escalating(in_double, {64}, in_mpfr, kNoExactTier).value.certainly_true();
  };
  // eps_t is non-increasing in c (the arg-max's weight grows with c when the maximum is unique), so the
  // criterion for all t holds at c iff it holds for each t; c_weyl = max_t c_t. Examples are taken in
  // order against the running maximum; an example that passes there costs one evaluation. Those tests
  // run ahead on the threads, a block at a time, at the maximum as the block starts: passing at that
  // smaller scale implies passing at the running one, so only the failures are re-run in order, and the
  // result is exactly that of the one-thread loop, whatever the thread count.
  bool ok = true;
  Rational best = 0, best_lo = 0;
  bool best_lo_set = false;
  constexpr std::size_t kBlock = 64;
  std::vector<char> pre(kBlock);
  for (std::size_t b0 = 0; b0 < m && ok; b0 += kBlock) {
    const std::size_t b1 = std::min(m, b0 + kBlock);
    const Rational start = best;
    parallel_for(b1 - b0, threads, [&](std::size_t k) { pre[k] = holds(b0 + k, start); });
    for (std::size_t i = b0; i < b1 && ok; ++i) {
      if (pre[i - b0] || holds(i, best)) continue;
      Rational lo = best, hi = best * 2;
      if (hi < c_hint) hi = c_hint;
      if (hi <= 0) hi = 1;
      int doublings = 0;
      while (!holds(i, hi)) {
        lo = hi;
        hi *= 2;
        if (++doublings > 64) { ok = false; break; }
      }
      if (!ok) break;
      // Bisect [lo, hi] (dyadic midpoints) to a relative width 2^-12.
      while (hi - lo > hi / 4096) {
        Rational mid = (lo + hi) / 2;
        if (holds(i, mid)) hi = mid; else lo = mid;
      }
      // A short dyadic >= hi (the criterion holds there too: eps is non-increasing in c).
      best = detail::round_dyadic(hi, 14, /*up=*/true);
      best_lo = lo;
      best_lo_set = true;
    }
  }
  if (ok) {
    // Final pass at c_weyl: every example certified, and the largest eps upper bound reported.
    std::vector<double> eh(m, 0.0);
    std::vector<char> pass(m, 0);
    parallel_for(m, threads, [&](std::size_t i) { pass[i] = holds(i, best, &eh[i]); });
    double emax = 0;
    for (std::size_t i = 0; i < m; ++i) {
      if (!pass[i]) ok = false;
      emax = std::max(emax, eh[i]);
    }
    out.c = best;
    out.c_lower = best_lo_set ? std::optional<Rational>(best_lo) : std::nullopt;
    out.eps_upper = emax;
  }
  for (mpfr_ptr p : {tau_lo, t}) mpfr_clear(p);
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace memcert::mahdavi24

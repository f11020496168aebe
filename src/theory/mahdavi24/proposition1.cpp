// Proposition 1 of mahdavi24 by induction over heads (docs/THEORY.md section 4): head 1 by Claim 1, each
// later head by Claim 2, each step closed by rank k_h of Z_c (Lemma 5, or certified directly); then rank(Z) >= T.
#include "memcert/theory/mahdavi24/proposition1.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/util/memory.hpp"
#include "memcert/util/parallel.hpp"
#include "proposition1_steps.hpp"
#include "z_enclosure.hpp"
#include "format.hpp"

namespace memcert::mahdavi24 {

using Eigen::MatrixXd;

namespace {

using detail::fmt;
using detail::fmtq;

void say(const Theorem1Options& opt, const std::string& s) { if (opt.narrate) opt.narrate(s); }

Rational short_down(double x) {  // a short dyadic <= x (x > 0)
  if (!(x > 0)) return Rational(0);
  int e = 0;
  std::frexp(x, &e);
  double s = std::ldexp(1.0, 20 - e);
  return rational_from_double(std::floor(x * s) / s);
}

// Claim 1 with random rational targets (exact preimages u in (1/8)Z^d, l = E u), redrawn until Z_inf of
// this step (rows `old` then `group`; head h's limit rows e_j*^T E on `old`) has certified rank. Fills
// st.fit, st.tr.{targets, target_attempts, sigma_lower}, st.a (a = E W_fit e, checked against the targets
// on the group), XC/XR (Z_inf's extra block of the last draw) and returns Z_inf's certificate.
// With opt.exact_fit false, W_fit = U P with P dyadic near Q_R^+ and the targets are the logits E U P e
// it gives, exactly (docs/THEORY.md section 4, "Claim 1 with a dyadic W_Q").
GramRankResult claim1_certified_fit(const AttentionDataset& ds, const ZExamples& z, const GramAccumulator& gram,
                                    const std::vector<std::size_t>& old, const std::vector<std::size_t>& jstar,
                                    const std::vector<std::size_t>& group, std::size_t h, const Theorem1Options& opt,
                                    std::mt19937_64& rng, HeadStep& st, MatrixXd& XC, MatrixXd& XR,
                                    double hint = 0, const SigmaReference* ref = nullptr) {
  const std::size_t d = z.d, k = group.size();
  std::vector<std::size_t> rows = old;
  rows.insert(rows.end(), group.begin(), group.end());
  std::uniform_int_distribution<int> uu(-2, 2);
  std::optional<FitHead> fit;
  std::optional<ScaledMatrix> P;
  if (!opt.exact_fit) {
    StageTimes::Scope fit_clock(opt.timings, "claim1 fit");
    P = claim1_dyadic_left_inverse(z, group);
    if (!P) throw std::runtime_error("Claim 1: the double solve for W_Q gave no finite matrix, head " + std::to_string(h + 1));
  }
  GramRankResult zinf;
  std::vector<ScaledVector> group_logits;  // dyadic route: the group's exact logits, i.e. the targets
  XC.resize(rows.size(), d);
  XR.resize(rows.size(), d);
  for (std::size_t attempt = 1; attempt <= opt.max_retries; ++attempt) {
    std::vector<QVector> U, L;
    for (std::size_t t : group) {
      QVector u(d);
      for (auto& x : u) { x = Rational(uu(rng), 8); x.canonicalize(); }
      ScaledMatrix scratch;
      if (opt.exact_fit) L.push_back(scaled_to_qvec(scaled_mat_vec(scaled_context(z.sd, t, scratch), scaled_from_qvec(u))));  // l = E u, exactly
      U.push_back(std::move(u));
    }
    StageTimes::Scope fit_clock(opt.timings, "claim1 fit");
    if (opt.exact_fit) {
      fit = claim1_fit_head(ds, group, L, &U, &z.sd);
      if (!fit) throw std::runtime_error("Claim 1: exact fit failed although the hypotheses hold");
    } else {
      fit.emplace();
      fit->U = QMatrix(d, k, Rational(0));
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t c = 0; c < d; ++c) fit->U(c, i) = U[i][c];
      group_logits = claim1_logits_dyadic(z, scaled_from_qmat(fit->U), *P, group);
      for (const auto& v : group_logits) L.push_back(scaled_to_qvec(v));  // the targets: the logits W_fit = U P gives
      fit->targets = L;
    }
    for (std::size_t i = 0; i < old.size(); ++i) z_fill_token(z, XC, XR, i, old[i], jstar[i]);  // limit rows e_j*^T E
    for (std::size_t i = 0; i < group.size(); ++i) z_fill_rows(z, XC, XR, old.size() + i, L[i], group[i]);
    st.tr.target_attempts = attempt;
    if (ref && ref->heads <= h && ref->covers(rows.size())) {  // the reference's sigma holds
      zinf.ok = true;
      zinf.sigma_lower = ref->sigma;
      st.tr.sigma_reference_heads = ref->heads;
      break;
    }
    StageTimes::Scope zinf_clock(opt.timings, "Z_inf rank certificates");
    zinf = gram.certify(rows, &XC, &XR, /*want_sigma=*/true, attempt == 1 ? hint : 0.0);
    if (zinf.ok) break;
  }
  if (!zinf.ok)
    throw std::runtime_error("step " + std::to_string(h + 1) + ": could not certify rank k_h of Z_inf after " +
                             std::to_string(opt.max_retries) + " target draws");
  if (P) {  // W_Q^T = P: the exact rationals of the dyadic matrix
    fit->Qpinv = QMatrix(k, d);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t c = 0; c < d; ++c) { fit->Qpinv(i, c) = Rational(P->num(i, c), P->den); fit->Qpinv(i, c).canonicalize(); }
  }
  st.fit = *fit;
  st.tr.targets = fit->targets;
  st.tr.sigma_lower = zinf.sigma_lower;
  st.lambda_hint = zinf.lambda_estimate;
  // Logits of this head for every example: a = E W_fit e, exactly for the group (the targets), enclosed
  // for every other example (only their softmax enclosures enter Z); Lemma 4's spread of an earlier
  // example is exact from the few rows its bounds leave as candidates for the maximum (claim1_spread).
  StageTimes::Scope logit_clock(opt.timings, "exact logits (claim 1)");
  if (P) {
    std::vector<char> in_group(ds.T(), 0);
    for (std::size_t t : group) in_group[t] = 1;
    std::vector<std::size_t> others;
    for (std::size_t t = 0; t < ds.T(); ++t)
      if (!in_group[t]) others.push_back(t);
    const ScaledMatrix Us = scaled_from_qmat(fit->U);
    std::vector<ScaledBounds> bd;
    std::vector<ScaledVector> bx;
    claim1_logit_bounds(z, Us, *P, others, bd, bx);
    st.a.assign(ds.T(), ScaledVector());
    st.ab.assign(ds.T(), ScaledBounds());
    for (std::size_t i = 0; i < group.size(); ++i) st.a[group[i]] = std::move(group_logits[i]);  // computed above
    for (std::size_t i = 0; i < others.size(); ++i) {
      if (bd[i].lo.empty()) st.a[others[i]] = std::move(bx[i]);
      else st.ab[others[i]] = std::move(bd[i]);
    }
    std::vector<const ScaledBounds*> ob(old.size());
    for (std::size_t i = 0; i < old.size(); ++i) ob[i] = &st.ab[old[i]];
    st.old_spread = claim1_spreads(z, Us, *P, old, ob, jstar);
  } else {
    st.a = claim1_logits_all(z, *fit, group);
  }
  for (std::size_t i = 0; i < group.size(); ++i)
    if (scaled_to_qvec(st.a[group[i]]) != fit->targets[i]) throw std::logic_error("Claim 1: E W_fit e != target (impossible), head " + std::to_string(h + 1) + " example " + std::to_string(group[i]));
  return zinf;
}

// A head without examples (T < H(r-1)+1): W^h = 0, uniform attention; the rank is already reached.
HeadStep empty_head(std::size_t T, std::size_t n, std::size_t h, const Theorem1Options& opt) {
  HeadStep st;
  st.a.assign(T, ScaledVector());
  st.s.assign(T, ScaledVector());
  for (std::size_t t = 0; t < T; ++t) {
    st.a[t].num.assign(n, Integer(0));
    st.s[t].num.assign(n, Integer(0));
  }
  st.tr.eps_criterion = "none";
  say(opt, "Head " + std::to_string(h + 1) + ": no examples left; W^" + std::to_string(h + 1) + " = 0.");
  return st;
}

// sigma - sqrt(m eps^2 B^2), rounded down: Lemma 5's conclusion sigma_k(Z_c) >= sigma_k(Z_inf) - ||Z_c - Z_inf||_2
// with ||Z_c - Z_inf||_2 <= sqrt(m) eps B (each of the m earlier rows moves by at most eps B).
double weyl_step_sigma(double sigma, std::size_t m, const Rational& eps, const Rational& B2) {
  const Rational q = Rational(static_cast<long>(m)) * eps * eps * B2;
  mpfr_t t, s;
  mpfr_inits2(64, t, s, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_q(t, q.get_mpq_t(), MPFR_RNDU);
  mpfr_sqrt(t, t, MPFR_RNDU);
  mpfr_set_d(s, sigma, MPFR_RNDN);  // exact: a double
  mpfr_sub(s, s, t, MPFR_RNDD);
  const double r = mpfr_get_d(s, MPFR_RNDD);
  mpfr_clears(t, s, static_cast<mpfr_ptr>(nullptr));
  return r;
}

// The step's conclusion at the proof's c: rank Z_c >= k_h (rows R_1..R_h, heads 1..h). Where Lemma 5's
// direct criterion chose eps, that rank is already proved (sigma_k(Z_c) >= sigma - sqrt(m) eps B > 0, and
// the checker re-certifies sigma), so no factorization is spent on it; head 1's Z_c is its Z_inf. Only a
// head whose eps came from the B.2 estimate (not a proof) gets Z_c certified here by Rump's test.
void certify_step(const ZExamples& z, const GramAccumulator& gram, const std::vector<std::size_t>& rows,
                  std::size_t old, std::size_t h, const Theorem1Options& opt, HeadStep& st) {
  if (!st.sat) {
    st.tr.step_sigma_lower = st.tr.sigma_lower;
    st.step_lambda = st.lambda_hint;
    return;
  }
  if (st.tr.eps_criterion == "direct") {
    st.tr.step_sigma_lower = weyl_step_sigma(st.tr.sigma_lower, old, *st.tr.eps, z.B2);
    if (st.tr.step_sigma_lower > 0) {
      st.step_lambda = st.lambda_hint;  // Z_inf's estimate: the next head's hint
      return;
    }
    // The criterion holds with so little room that the rounded-up square root eats it: certify Z_c itself.
  }
  const std::size_t d = z.d;
  StageTimes::Scope step_clock(opt.timings, "step rank certificates");
  MatrixXd BC(rows.size(), d), BR(rows.size(), d);
  parallel_for(rows.size(), mpfr_threads(), [&](std::size_t i) { z_fill_affine(z, BC, BR, i, st.L[rows[i]], st.c, rows[i]); });
  GramRankResult stepc = gram.certify(rows, &BC, &BR, /*want_sigma=*/true, st.lambda_hint);
  if (!stepc.ok)
    throw std::runtime_error("step " + std::to_string(h + 1) + ": rank certificate of Z_c failed at the proof's c");
  st.tr.step_sigma_lower = stepc.sigma_lower;
  st.step_lambda = stepc.lambda_estimate > 0 ? stepc.lambda_estimate : st.lambda_hint;
}

// Radii r >= 0 as floats rounded up (f >= r; conversion rounds to nearest, so one step up when below).
Eigen::MatrixXf radius_up_float(const MatrixXd& R) {
  Eigen::MatrixXf f(R.rows(), R.cols());
  for (Eigen::Index j = 0; j < R.cols(); ++j)
    for (Eigen::Index i = 0; i < R.rows(); ++i) {
      float x = static_cast<float>(R(i, j));
      if (static_cast<double>(x) < R(i, j)) x = std::nextafter(x, std::numeric_limits<float>::infinity());
      f(i, j) = x;
    }
  return f;
}

// Head h's block of Z (all T examples) at scale cc, into (C, R).
void head_block(const ZExamples& z, const std::vector<AffineLogits>& L, const Rational& cc, MatrixXd& C, MatrixXd& R) {
  C.resize(L.size(), z.d);
  R.resize(L.size(), z.d);
  parallel_for(L.size(), mpfr_threads(), [&](std::size_t t) { z_fill_affine(z, C, R, t, L[t], cc, t); });
}

// A reference for heads h, h+1, ... (docs/THEORY.md section 4, "sigma from a reference"): heads 1..h as
// they are in `gram`, on the rows of every later group that fits in ratio h d of its columns (there Z's
// rows are in general position with room to spare). Two factorizations (estimate, Rump's test at 0.81 of
// it) of the largest Gram matrix serve all those heads; none when even head h's rows do not fit or the
// test fails (then each head certifies its own Z_inf).
std::optional<SigmaReference> sigma_reference(const GramAccumulator& gram, const std::vector<std::vector<std::size_t>>& groups,
                                              std::size_t h, std::size_t d, const Theorem1Options& opt) {
  const double cap = opt.sigma_reference_ratio * double(h * d);
  std::size_t rows = 0;
  for (std::size_t j = 0; j < groups.size(); ++j) {
    if (double(rows + groups[j].size()) > cap) break;
    rows += groups[j].size();
  }
  std::size_t need = 0;
  for (std::size_t j = 0; j <= h; ++j) need += groups[j].size();
  if (rows < need) return std::nullopt;
  StageTimes::Scope clock(opt.timings, "sigma references");
  std::vector<std::size_t> idx;
  for (std::size_t j = 0; j < groups.size() && idx.size() < rows; ++j) idx.insert(idx.end(), groups[j].begin(), groups[j].end());
  const GramRankResult r = gram.certify(idx, nullptr, nullptr, /*want_sigma=*/true);
  if (!r.ok || !(r.sigma_lower > 0)) return std::nullopt;
  say(opt, "   sigma reference: heads 1.." + std::to_string(h) + " alone on the first " + std::to_string(rows) +
      " rows have sigma >= " + fmt(r.sigma_lower) + " (certified), a lower bound for the Z_inf of every head whose rows they cover.");
  return SigmaReference{h, rows, r.sigma_lower};
}

// c_weyl of head h (THEORY.md section 4): the Weyl chain's Z_inf (heads 1..h-1 at their c_weyl in
// `gram_w`, head h's limit rows as in the proof chain: they do not depend on c) gets its own certified
// sigma, then weyl_scale_bisect finds the smallest c meeting the direct criterion with the actual eps.
// Returns false when that sigma or scale cannot be certified (the Weyl chain stops there).
bool weyl_step(const ZExamples& z, const GramAccumulator& gram_w, const std::vector<std::size_t>& old,
               const std::vector<std::size_t>& rows, const Theorem1Options& opt, HeadStep& st,
               const SigmaReference* ref) {
  GramRankResult zw;
  if (ref && ref->covers(rows.size())) {  // the Weyl chain's own reference (heads before h)
    zw.ok = true;
    zw.sigma_lower = ref->sigma;
  } else {
    StageTimes::Scope clock(opt.timings, "c_weyl: Z_inf certificates");
    zw = gram_w.certify(rows, &st.zinfC, &st.zinfR, /*want_sigma=*/true, st.lambda_hint);
  }
  StageTimes::Scope clock(opt.timings, "c_weyl: bisection");
  if (!zw.ok || !(zw.sigma_lower > 0)) return false;
  std::vector<const AffineLogits*> logits;
  for (std::size_t t : old) logits.push_back(&st.L[t]);
  Rational sigma = short_down(zw.sigma_lower);
  auto ws = weyl_scale_bisect(logits, st.jstar, sigma, z.B2, st.c);
  if (!ws) return false;
  st.tr.sigma_weyl = rational_to_double(sigma);
  st.tr.c_weyl = ws->c;
  st.tr.c_weyl_lower = ws->c_lower;
  st.tr.eps_weyl = ws->eps_upper;
  return true;
}

}  // namespace

// ---- Claim 1 for head 1 (docs/THEORY.md section 4, "Claim 1 (head 1 fits r examples)") --------------------
HeadStep claim1_first_head(const AttentionDataset& ds, const ZExamples& z, const GramAccumulator& gram,
                           const std::vector<std::size_t>& group, const Theorem1Options& opt, std::mt19937_64& rng) {
  const std::size_t T = ds.T();
  HeadStep st;
  st.s.assign(T, ScaledVector());
  for (std::size_t t = 0; t < T; ++t) st.s[t].num.assign(z.n, Integer(0));
  MatrixXd XC, XR;
  GramRankResult zinf = claim1_certified_fit(ds, z, gram, {}, {}, group, 0, opt, rng, st, XC, XR);
  say(opt, "Head 1, Claim 1: random rational target logits l^(t) for the " + std::to_string(group.size()) +
      " examples of R_1; W_fit = U Q_R^+ reproduces them exactly (rank <= " + std::to_string(group.size()) +
      "); the rows softmax(l^(t))^T E^(t) have certified rank " + std::to_string(group.size()) + " (sigma >= " +
      fmt(zinf.sigma_lower) + ", " + std::to_string(st.tr.target_attempts) + " target draw(s)).");
  st.tr.eps_criterion = "none";
  return st;
}

// ---- Claim 2 for head h >= 2 (docs/THEORY.md section 4, "Claim 2", with Lemmas 3, 4, 5) --------------------
HeadStep claim2_saturate_head(const AttentionDataset& ds, const ZExamples& z, const GramAccumulator& gram,
                              const std::vector<std::size_t>& old, const std::vector<std::size_t>& group, std::size_t h,
                              const Theorem1Options& opt, std::mt19937_64& rng, double zinf_hint,
                              const SigmaReference* ref) {
  const std::size_t n = z.n, d = z.d, m = old.size();
  HeadStep st;
  // Lemma 3: W' = g w^T with W' e = 0 on R_h and a unique maximum of E W' e on the old examples.
  {
    StageTimes::Scope clock(opt.timings, "lemma3 saturator");
    st.sat = lemma3_rank_one_saturator(ds, group, old, rng, 200, nullptr, &z.sd);
  }
  if (!st.sat) throw std::runtime_error("Lemma 3: no saturator found after 200 random attempts");
  const Saturator& sat = *st.sat;
  st.tr.g = sat.g;
  st.tr.w = sat.w;
  st.tr.lemma3_attempts = sat.attempts;
  // s^(t) = (w^T e^(t)) E^(t) g for every example, exactly, as integers over one denominator. (Unlike a,
  // s stays exact for the later examples too: c s reaches 10^8 and more, where an a priori bound of the
  // double product would widen the logits by 10^-4.)
  {
    StageTimes::Scope clock(opt.timings, "exact logits (lemma 3)");
    st.s = lemma3_scores_all(z, sat.g, sat.w, &st.s_factor);
  }
  std::vector<std::size_t> jstar(m);
  for (std::size_t i = 0; i < m; ++i) jstar[i] = scaled_saturation(st.s[old[i]], st.s[old[i]]).jstar;
  say(opt, "Head " + std::to_string(h + 1) + ", Lemma 3: rank-one W' = g w^T with w orthogonal to the " +
      std::to_string(group.size()) + " queries of R_" + std::to_string(h + 1) + " and a unique maximum of E W' e on the " +
      std::to_string(m) + " earlier examples (" + std::to_string(sat.attempts) + " random draw" +
      (sat.attempts > 1 ? "s" : "") + ").");
  // Claim 1 on R_h, with Z_inf's limit rows for the old examples.
  MatrixXd XC, XR;
  GramRankResult zinf = claim1_certified_fit(ds, z, gram, old, jstar, group, h, opt, rng, st, XC, XR, zinf_hint, ref);
  HeadTrace& tr = st.tr;
  st.jstar = jstar;
  st.zinfC = XC;
  st.zinfR = XR;
  // Lemma 5: eps from the Weyl bound (direct criterion, certified) and the paper's B.2 criterion.
  Rational sigma_q = rational_from_double(zinf.sigma_lower);
  tr.eps_direct = lemma5_weyl_eps(sigma_q, m, z.B2);
  // B.2 (estimate): C = X Z_{h-1}^+ via the accumulated Gram, S = D - C L_inf (not for m > b2_max_old).
  if (m <= opt.b2_max_old) {
    StageTimes::Scope clock(opt.timings, "lemma5 B.2 estimate");
    const std::size_t k = group.size();
    std::vector<double> Goo(m * m), Gno(k * m), Linf(m * d), Dm(k * d);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) Goo[i * m + j] = gram.at(old[i], old[j]);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < m; ++j) Gno[i * m + j] = gram.at(group[i], old[j]);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t c2 = 0; c2 < d; ++c2) Linf[i * d + c2] = XC(i, c2);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t c2 = 0; c2 < d; ++c2) Dm[i * d + c2] = XC(m + i, c2);
    WeylB2 b2 = lemma5_weyl_b2_estimate(Goo, Gno, Linf, Dm, m, k, d, z.B);
    if (b2.available) tr.eps_b2 = b2.eps;
  }
  double ed = tr.eps_direct ? rational_to_double(*tr.eps_direct) : 0.0;
  if (tr.eps_b2 && *tr.eps_b2 > ed) {
    tr.eps = short_down(*tr.eps_b2 * 0.999);
    tr.eps_criterion = "b2";
  } else if (tr.eps_direct) {
    tr.eps = *tr.eps_direct;
    tr.eps_criterion = "direct";
  } else {
    throw std::runtime_error("step " + std::to_string(h + 1) + ": no admissible eps");
  }
  // Lemma 4: c = max over the old examples of (A + ln(2(n-1)/eps)) / delta.
  StageTimes::Scope lemma4_clock(opt.timings, "lemma4 scale");
  Rational c = 0;
  bool first = true;
  for (std::size_t i = 0; i < m; ++i) {
    SaturationData sd = scaled_saturation(st.a[old[i]], st.s[old[i]]);  // a empty: spread 0, set below
    if (i < st.old_spread.size() && st.old_spread[i]) sd.spread = *st.old_spread[i];
    if (first || sd.gap < tr.gap) tr.gap = sd.gap;
    if (first || sd.spread > tr.spread) tr.spread = sd.spread;
    first = false;
    Rational ci = lemma4_saturation_scale(sd.spread, sd.gap, n, *tr.eps);
    if (ci > c) c = ci;
  }
  tr.c = c;
  tr.c_proof = c;
  st.c = c;
  say(opt, "Head " + std::to_string(h + 1) + ", Claim 2: W^" + std::to_string(h + 1) + " = W_fit + c W' fits the " +
      std::to_string(group.size()) + " new examples exactly; the limit matrix Z_inf (" + std::to_string(m + group.size()) +
      " rows) has sigma_min >= " + fmt(zinf.sigma_lower) + " (certified). Weyl (Lemma 5): eps = " + fmtq(*tr.eps) +
      " (" + (tr.eps_criterion == "b2" ? "paper's B.2 criterion, larger" : "direct criterion sqrt(m) eps B < sigma") +
      "; direct " + (tr.eps_direct ? fmtq(*tr.eps_direct) : std::string("n/a")) + ", B.2 " +
      (tr.eps_b2 ? fmt(*tr.eps_b2) : m > opt.b2_max_old ? std::string("not estimated, m > ") + std::to_string(opt.b2_max_old) : std::string("n/a")) + "). Lemma 4: gap >= " + fmtq(tr.gap) + ", spread <= " +
      fmtq(tr.spread) + " give c = " + fmtq(c) + ".");
  return st;
}

// ---- Proposition 1 (docs/THEORY.md sections 3-4): induction over heads, then rank(Z) >= T ------------------
Proposition1Result proposition1_induction(const AttentionDataset& ds, const std::vector<std::vector<std::size_t>>& groups,
                                          const Theorem1Options& opt, std::mt19937_64& rng) {
  const std::size_t T = ds.T(), n = ds.n(), d = ds.d();
  std::optional<StageTimes::Scope> setup_clock(std::in_place, opt.timings, "exact data setup");
  const ZExamples z = z_examples(ds, opt.precision);
  setup_clock.reset();
  Proposition1Result out;
  GramAccumulator gram(T);  // the proof chain: every head at Lemma 4's c
  bool weyl_ok = opt.saturation || opt.scale == "weyl";
  GramAccumulator gram_w(weyl_ok ? T : 0);  // the Weyl chain: every head at its c_weyl (only when wanted)
  // Per head, a + c s for every example (scale-free), kept only for what re-evaluates the heads at
  // another c (the c_network grid, a scale other than the proof's): H T of them.
  const bool keep_logits = opt.saturation || opt.scale != "proof";
  std::vector<std::vector<AffineLogits>> logits;
  std::vector<std::size_t> old;  // R_1 u ... u R_{h-1}
  double step_lambda = 0;        // the last step certificate's estimate of lambda_min (Z_inf's hint)
  // Lemma 5's sigma for the heads whose rows it covers, one per chain: a new reference when the rows outgrow
  // the last one, and none tried again before 1.5 times the head at which one failed.
  struct ReferenceChain {
    std::optional<SigmaReference> ref;
    std::size_t retry = 1;
    void refresh(const GramAccumulator& g, const std::vector<std::vector<std::size_t>>& groups, std::size_t h,
                 std::size_t d, std::size_t k, const Theorem1Options& opt) {
      if (h == 0 || h < retry || (ref && ref->covers(k))) return;
      ref = sigma_reference(g, groups, h, d, opt);
      if (!ref) retry = h + (h + 1) / 2;
    }
    const SigmaReference* get() const { return ref ? &*ref : nullptr; }
  } ref, ref_w;  // the proof chain's and the Weyl chain's (heads at c_weyl)
  // Step h certifies rank Z_c >= k_h = |R_1 u ... u R_h| for rows R_1..R_h and heads 1..h.
  for (std::size_t h = 0; h < opt.H; ++h) {
    const auto& group = groups[h];
    std::vector<std::size_t> rows = old;
    rows.insert(rows.end(), group.begin(), group.end());
    if (!group.empty()) {
      ref.refresh(gram, groups, h, d, rows.size(), opt);
      if (weyl_ok) ref_w.refresh(gram_w, groups, h, d, rows.size(), opt);
    }
    HeadStep st = group.empty() ? empty_head(T, n, h, opt)
                  : h == 0      ? claim1_first_head(ds, z, gram, group, opt, rng)
                                : claim2_saturate_head(ds, z, gram, old, group, h, opt, rng, step_lambda, ref.get());
    st.tr.head = h + 1;
    st.tr.group = group;
    st.tr.old_examples = old.size();
    st.tr.rank_target = rows.size();
    MhaHead head;
    head.WK = QMatrix(d, opt.dh, Rational(0));
    head.WQ = QMatrix(d, opt.dh, Rational(0));
    {
      StageTimes::Scope clock(opt.timings, "logit enclosures");
      const bool with_s = st.sat.has_value();
      std::vector<std::optional<AffineLogits>> tmp(T);
      parallel_for(T, mpfr_threads(), [&](std::size_t t) {
        if (t < st.ab.size() && !st.ab[t].lo.empty()) tmp[t].emplace(st.ab[t], with_s ? &st.s[t] : nullptr, opt.precision);
        else tmp[t].emplace(st.a[t], with_s ? &st.s[t] : nullptr, opt.precision);
      });
      st.L.clear();
      for (auto& x : tmp) st.L.push_back(std::move(*x));
    }
    if (!group.empty()) {
      certify_step(z, gram, rows, old.size(), h, opt, st);
      step_lambda = st.step_lambda;
      // Exact factorization W^h = W_K W_Q^T: W_K = [U, c g], W_Q = [Q_R^+T, w] (padded to d_h).
      const std::size_t kk = group.size();
      for (std::size_t i = 0; i < kk; ++i)
        for (std::size_t cix = 0; cix < d; ++cix) { head.WK(cix, i) = st.fit.U(cix, i); head.WQ(cix, i) = st.fit.Qpinv(i, cix); }
      if (st.sat)
        for (std::size_t cix = 0; cix < d; ++cix) { head.WK(cix, kk) = st.c * st.sat->g[cix]; head.WQ(cix, kk) = st.sat->w[cix]; }
    }
    // This head's block of Z for every example (at the chosen c), added to the Gram accumulator.
    MatrixXd HC(T, d), HR(T, d);
    {
      StageTimes::Scope clock(opt.timings, "Z block + Gram");
      head_block(z, st.L, st.c, HC, HR);
      gram.add(HC, HR);
    }
    // The Weyl chain: a head without a saturator sits at c = 0 in both chains.
    if (weyl_ok) {
      if (!st.sat) {
        st.tr.c_weyl = Rational(0);
        gram_w.add(HC, HR);
      } else if (weyl_step(z, gram_w, old, rows, opt, st, ref_w.get())) {
        StageTimes::Scope clock(opt.timings, "c_weyl: Z block + Gram");
        MatrixXd WC, WR;
        head_block(z, st.L, *st.tr.c_weyl, WC, WR);
        gram_w.add(WC, WR);
        say(opt, "   c_weyl = " + fmtq(*st.tr.c_weyl) + " (proof's c = " + fmtq(st.c) + "): the direct Weyl criterion with the actual eps <= " +
            fmt(st.tr.eps_weyl) + " and the Weyl chain's sigma >= " + fmt(st.tr.sigma_weyl) + " (heads 1.." + std::to_string(h) +
            " at their c_weyl).");
      } else {
        weyl_ok = false;
        gram_w = GramAccumulator(0);  // the Weyl chain stops here: its T x T Gram matrix is not needed
        say(opt, "   c_weyl: the Weyl chain's Z_inf or criterion could not be certified at head " + std::to_string(h + 1) + ".");
      }
    }
    out.blockC.push_back(std::move(HC));
    out.blockR.push_back(radius_up_float(HR));
    out.heads.push_back(std::move(head));
    out.trace.push_back(std::move(st.tr));
    if (keep_logits) {  // kept compact (about 24 bytes per logit, c s at full precision): the blocks above used them full
      const bool fs = st.sat && st.s_factor.size() == st.L.size();
      parallel_for(st.L.size(), mpfr_threads(), [&](std::size_t t) {
        st.L[t].compact(fs ? &st.s[t] : nullptr, fs ? &st.s_factor[t] : nullptr);
      });
      logits.push_back(std::move(st.L));
    }
    old.insert(old.end(), group.begin(), group.end());
    if (opt.progress) opt.progress(h + 1, opt.H);
  }
  out.weyl_chain = weyl_ok;
  gram_w = GramAccumulator(0);  // not needed past the heads
  std::vector<std::size_t> all(T);
  for (std::size_t t = 0; t < T; ++t) all[t] = t;
  // Every head at one common scale cc: Z's blocks and the final rank certificate there.
  // (A head without a saturator has logits a alone, so cc does not change it.)
  auto network_at = [&](const Rational& cc) {
    GramAccumulator g(T);
    for (std::size_t h = 0; h < opt.H; ++h) {
      MatrixXd BC, BR;
      head_block(z, logits[h], cc, BC, BR);
      g.add(BC, BR);
    }
    return g.certify(all, nullptr, nullptr, /*want_sigma=*/true);
  };
  auto copy_gram = [&](GramAccumulator& g) { out.gram = g.release(); };  // moved, not copied (T^2 doubles)
  if (opt.saturation || opt.scale == "network") {
    StageTimes::Scope clock(opt.timings, "c_network grid");
    Rational c_max = 0;
    for (const auto& tr : out.trace) {
      c_max = std::max(c_max, tr.c_proof);
      if (tr.c_weyl) c_max = std::max(c_max, *tr.c_weyl);
    }
    // Accepted with a margin: the smallest accepted c is marginal by construction, and the independent
    // checker certifies the rank from its own enclosure of Z (its own radii), so a bare pass here could be
    // a reported c that does not reproduce. sigma_lower >= kNetworkMargin ||R||_F leaves room for radii
    // kNetworkMargin + 1 times the engine's.
    constexpr double kNetworkMargin = 3;
    out.c_network = c_network_grid_search(c_max, [&](const Rational& cc) {
      if (opt.c_network_above && cc <= *opt.c_network_above) return false;
      GramRankResult r = network_at(cc);
      const bool ok = r.ok && r.sigma_lower >= kNetworkMargin * r.radius_f;
      if (ok) out.network_sigma_lower = r.sigma_lower;
      return ok;
    });
    say(opt, out.c_network ? "c_network = " + fmtq(*out.c_network) + ": every head at this one c gives the final certificate rank(Z) >= " +
                                 std::to_string(T) + " (smallest value of the grid {0} u {" + fmtq(c_max) + " 2^-j : j = 40..0})."
                           : "c_network: no value of the grid {0} u {" + fmtq(c_max) + " 2^-j : j = 40..0} certifies rank(Z) >= " +
                                 std::to_string(T) + " with every head at one c.");
  }
  // ---- the chosen scale (the weights' structure is the proof chain's in every case) ----
  if (opt.scale != "proof") {
    std::vector<Rational> cs(opt.H);
    for (std::size_t h = 0; h < opt.H; ++h) {
      if (opt.scale == "weyl") {
        if (!weyl_ok) throw std::runtime_error("--c weyl: the Weyl chain could not be certified at every head");
        cs[h] = *out.trace[h].c_weyl;
      } else if (opt.scale == "network") {
        if (!out.c_network) throw std::runtime_error("--c network: no grid value certifies rank(Z) >= T with every head at one c");
        cs[h] = *out.c_network;
      } else {
        cs[h] = opt.c_value;
      }
    }
    GramAccumulator g(T);
    out.blockC.clear();
    out.blockR.clear();
    for (std::size_t h = 0; h < opt.H; ++h) {
      HeadTrace& tr = out.trace[h];
      const bool sat = !tr.w.empty();
      tr.c = sat ? cs[h] : Rational(0);
      if (sat) {
        // W_K[:, |R_h|] = c g; the Weyl chain is not claimed at this scale (the certificate rests on
        // the final rank alone), so the trace says "none".
        const std::size_t kk = tr.group.size();
        for (std::size_t cix = 0; cix < d; ++cix) out.heads[h].WK(cix, kk) = tr.c * tr.g[cix];
        tr.eps_criterion = "none";
      }
      MatrixXd BC, BR;
      head_block(z, logits[h], tr.c, BC, BR);
      g.add(BC, BR);
      out.blockC.push_back(std::move(BC));
      out.blockR.push_back(radius_up_float(BR));
    }
    std::vector<std::vector<AffineLogits>>().swap(logits);
    release_free_memory();
    StageTimes::Scope clock(opt.timings, "final rank certificate");
    out.final = g.certify(all, nullptr, nullptr, true);
    copy_gram(g);
    if (!out.final.ok) throw std::runtime_error("final rank certificate of Z failed at the chosen scale (--c " + opt.scale.str() + ")");
    say(opt, "Scale " + opt.scale.str() + ": rank(Z) >= " + std::to_string(T) + " = T* certified for the weights at this scale (sigma_min >= " +
        fmt(out.final.sigma_lower) + ").");
    return out;
  }
  // ---- Proposition 1's conclusion: rank(Z) >= T (the fact "memorizes" rests on) ----
  // The kept logits served the grid only: freed (and their pages returned) before the certificate's copies.
  std::vector<std::vector<AffineLogits>>().swap(logits);
  release_free_memory();
  {
    StageTimes::Scope clock(opt.timings, "final rank certificate");
    out.final = gram.certify(all, nullptr, nullptr, true);
  }
  copy_gram(gram);
  if (!out.final.ok) throw std::runtime_error("final rank certificate of Z failed");
  say(opt, "Proposition 1: rank(Z) >= " + std::to_string(T) + " = T* certified for the final weights (Z is " + std::to_string(T) +
      " x " + std::to_string(opt.H * d) + ", sigma_min >= " + fmt(out.final.sigma_lower) + ").");
  return out;
}

}  // namespace memcert::mahdavi24

// kind "dana24-claim", Theorem 1 with epsilon > 0 (docs/papers/dana24.md "Theorem 1 with epsilon > 0").
//
// Common fields: "N","S","d","dh","H"; "sequences":[T][S] pairwise distinct (the support of the prior);
// "prior":[T] exact, every entry > 0, sum exactly 1; "epsilon" exact in (0, 1); "T_eps". The checker
// re-derives T_eps as the paper's T_epsilon: the smallest number of sequences (heaviest first) whose
// cumulative prior mass is > 1 - epsilon; and requires T_eps <= H d_h + d (the theorem's hypothesis).
//
//  dana24/theorem-1-eps (verdict "confirmed"): "logits":[T][N] exact (pi_t = softmax(logits_t), full
//    support), "E":[T][d] exact (the sequence encoder f(t) = W E(t) with W = weights.WU), "weights" (as
//    kind "dana24"), optional "rayleigh_witness":[T] exact, optional "literal_4": bool. Recomputed:
//      d_KL(pi, T) = sum_t prior_t KL(pi_t || softmax T(t)) from above, T(t) enclosed from the exact weights
//        (the kind "dana24" forward pass, MPFR), KL(p || softmax y) = sum_j p_j (z_j - y_j) + lse(y) - lse(z);
//      d_KL(pi, f) from below (each term clipped at 0, a KL is >= 0);
//      ||W E||_2 from below: the largest of the column norms, the row norms and the Rayleigh quotient
//        ||W E v|| / ||v|| of the witness (any v gives a lower bound, so the witness is not trusted);
//      C = sqrt(1 + ||F_{S_1}^{-1} F_{S_2}||_2^2) from below (c_bounds: the features F(t) = [x(t,S);
//        W_V^h A^h(t)] enclosed by the same forward pass, a perturbation bound around the exact K~ =
//        A~^{-1} B~ of the midpoints; 1 when F_{S_1} is not square or the enclosure is too wide);
//    and requires d_KL(pi, T) <= d_KL(pi, f) + k C_lo eps ||W E||_2 with k = 2 (k = 1 when "literal_4" is
//    true): the proof's (13)-(14) bound d_KL(pi, T) <= d_KL(pi, f) + 2 C eps ||W E||_2 (and (4) as
//    printed when k = 1), since every factor of the right-hand side is bounded from below.
//  dana24/theorem-1-eps-singular-f-s1 (verdict "counterexample"): the T_eps heaviest sequences S_1 are
//    strictly heavier than the rest, share one last token, and T_eps = H d_h + d > 1 + H min(d_h, d):
//    the skip block of F_{S_1} has rank <= 1 and each head block rank <= min(d_h, d), so F_{S_1} (and the
//    block P_1 V P_1^T of footnote 8) is singular for every choice of weights.
#include <mpfr.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <set>

#include "kernel/context.hpp"
#include "kinds/dana24/dana24_forward.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {
namespace {

std::string theorem1_eps_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

constexpr mpfr_prec_t kTheorem1EpsPrec = 256;

// RAII for a few MPFR scalars.
struct Mp {
  mpfr_t v;
  Mp() { mpfr_init2(v, kTheorem1EpsPrec), mpfr_set_zero(v, 1); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
};

// log sum_j exp(y_j) rounded in direction `r` (y exact).
void lse(const std::vector<mpq_class>& y, mpfr_rnd_t r, mpfr_t out) {
  const mpq_class mx = *std::max_element(y.begin(), y.end());
  Mp s, x;
  for (const auto& v : y) {
    const mpq_class u = v - mx;  // <= 0
    mpfr_set_q(x.v, u.get_mpq_t(), r);
    mpfr_exp(x.v, x.v, r);
    mpfr_add(s.v, s.v, x.v, r);
  }
  mpfr_log(out, s.v, r);
  mpfr_add_q(out, out, mx.get_mpq_t(), r);
}

// KL(softmax z || softmax y) for y in [ylo, yhi] entrywise: an upper bound (`upper`) or a lower bound.
void kl_bound(const std::vector<mpq_class>& z, const std::vector<mpq_class>& ylo, const std::vector<mpq_class>& yhi,
              bool upper, mpfr_t out) {
  const mpfr_rnd_t r = upper ? MPFR_RNDU : MPFR_RNDD;
  Mp lz_lo, lz_hi, p_lo, p_hi, x, acc;
  lse(z, MPFR_RNDD, lz_lo.v);
  lse(z, MPFR_RNDU, lz_hi.v);
  for (std::size_t j = 0; j < z.size(); ++j) {
    // p_j = exp(z_j - lse(z)) in [p_lo, p_hi].
    mpfr_set_q(p_lo.v, z[j].get_mpq_t(), MPFR_RNDD);
    mpfr_sub(p_lo.v, p_lo.v, lz_hi.v, MPFR_RNDD);
    mpfr_exp(p_lo.v, p_lo.v, MPFR_RNDD);
    mpfr_set_q(p_hi.v, z[j].get_mpq_t(), MPFR_RNDU);
    mpfr_sub(p_hi.v, p_hi.v, lz_lo.v, MPFR_RNDU);
    mpfr_exp(p_hi.v, p_hi.v, MPFR_RNDU);
    // (z_j - y_j) in [z_j - yhi_j, z_j - ylo_j]; the product's extreme with p_j >= 0.
    const mpq_class gap = upper ? mpq_class(z[j] - ylo[j]) : mpq_class(z[j] - yhi[j]);
    mpfr_set_q(x.v, gap.get_mpq_t(), r);
    const bool use_hi = upper ? sgn(gap) >= 0 : sgn(gap) < 0;
    mpfr_mul(x.v, x.v, use_hi ? p_hi.v : p_lo.v, r);
    mpfr_add(acc.v, acc.v, x.v, r);
  }
  lse(upper ? yhi : ylo, r, x.v);  // lse is increasing in every y_j
  mpfr_add(acc.v, acc.v, x.v, r);
  mpfr_sub(acc.v, acc.v, upper ? lz_lo.v : lz_hi.v, r);
  if (!upper && mpfr_sgn(acc.v) < 0) mpfr_set_zero(acc.v, 1);  // KL >= 0
  mpfr_set(out, acc.v, r);
}

// Exact inverse of a square rational matrix (Gauss-Jordan with a non-zero pivot); false when singular.
bool q_inverse(QMat a, QMat& inv) {
  const std::size_t n = a.size();
  inv.assign(n, QRow(n, 0));
  for (std::size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    while (p < n && sgn(a[p][c]) == 0) ++p;
    if (p == n) return false;
    std::swap(a[p], a[c]), std::swap(inv[p], inv[c]);
    const mpq_class piv = a[c][c];
    for (std::size_t j = 0; j < n; ++j) a[c][j] /= piv, inv[c][j] /= piv;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c || sgn(a[r][c]) == 0) continue;
      const mpq_class f = a[r][c];
      for (std::size_t j = 0; j < n; ++j) a[r][j] -= f * a[c][j], inv[r][j] -= f * inv[c][j];
    }
  }
  return true;
}

// sqrt of an exact non-negative rational, rounded in direction r.
void q_sqrt(const mpq_class& q, mpfr_rnd_t r, mpfr_t out) {
  mpfr_set_q(out, q.get_mpq_t(), r);
  mpfr_sqrt(out, out, r);
}

// Certified bounds c_lo <= C <= c_hi of the proof's C = sqrt(1 + ||F_{S_1}^{-1} F_{S_2}||_2^2) (docs/papers/dana24.md
// section 6), F = [x(t,S); W_V^h A^h(t)] enclosed entrywise by [flo, fhi], S_1 = the T_eps heaviest
// sequences (F_{S_1} square: T_eps = d + H d_h). With midpoints A~, B~ and radii RA, RB: K~ = A~^{-1} B~
// exactly; ||A^{-1}||_2 <= alpha = n / (1 - a n), n = ||A~^{-1}||_F, a = ||RA||_F (needs a n < 1);
// K - K~ = A^{-1} (dB - dA K~), so ||K - K~||_2 <= delta = alpha (b + a ||K~||_F), b = ||RB||_F; then
// max_t ||K~ e_t|| - delta <= ||K||_2 <= ||K~||_F + delta. False (no bound) when F_{S_1} is not square,
// A~ is singular or a n >= 1.
bool c_bounds(const std::vector<std::size_t>& s1, const std::vector<std::size_t>& s2,
              const std::vector<std::vector<mpq_class>>& flo, const std::vector<std::vector<mpq_class>>& fhi,
              mpfr_t c_lo, mpfr_t c_hi) {
  const std::size_t m = flo.empty() ? 0 : flo[0].size();
  if (s1.size() != m || s2.empty()) return false;
  QMat A(m, QRow(m)), B(m, QRow(s2.size()));
  mpq_class ra = 0, rb = 0;
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t t = s1[k];
      A[r][k] = (flo[t][r] + fhi[t][r]) / 2;
      const mpq_class rad = (fhi[t][r] - flo[t][r]) / 2;
      ra += rad * rad;
    }
    for (std::size_t k = 0; k < s2.size(); ++k) {
      const std::size_t t = s2[k];
      B[r][k] = (flo[t][r] + fhi[t][r]) / 2;
      const mpq_class rad = (fhi[t][r] - flo[t][r]) / 2;
      rb += rad * rad;
    }
  }
  QMat Ai;
  if (!q_inverse(A, Ai)) return false;
  mpq_class ninv2 = 0, kf2 = 0, col_max2 = 0;
  for (const auto& row : Ai)
    for (const auto& x : row) ninv2 += x * x;
  for (std::size_t k = 0; k < s2.size(); ++k) {
    mpq_class col = 0;
    for (std::size_t r = 0; r < m; ++r) {
      mpq_class v = 0;
      for (std::size_t i = 0; i < m; ++i) v += Ai[r][i] * B[i][k];
      col += v * v;
    }
    kf2 += col;
    if (col > col_max2) col_max2 = col;
  }
  Mp a, n, b, kf, alpha, delta, x, y;
  q_sqrt(ra, MPFR_RNDU, a.v), q_sqrt(ninv2, MPFR_RNDU, n.v), q_sqrt(rb, MPFR_RNDU, b.v), q_sqrt(kf2, MPFR_RNDU, kf.v);
  mpfr_mul(x.v, a.v, n.v, MPFR_RNDU);
  mpfr_ui_sub(x.v, 1, x.v, MPFR_RNDD);  // 1 - a n, from below
  if (mpfr_sgn(x.v) <= 0) return false;
  mpfr_div(alpha.v, n.v, x.v, MPFR_RNDU);
  mpfr_mul(delta.v, a.v, kf.v, MPFR_RNDU);
  mpfr_add(delta.v, delta.v, b.v, MPFR_RNDU);
  mpfr_mul(delta.v, delta.v, alpha.v, MPFR_RNDU);
  // Upper: sqrt(1 + (||K~||_F + delta)^2).
  mpfr_add(y.v, kf.v, delta.v, MPFR_RNDU);
  mpfr_sqr(y.v, y.v, MPFR_RNDU);
  mpfr_add_ui(y.v, y.v, 1, MPFR_RNDU);
  mpfr_sqrt(c_hi, y.v, MPFR_RNDU);
  // Lower: sqrt(1 + max(0, max_t ||K~ e_t|| - delta)^2).
  q_sqrt(col_max2, MPFR_RNDD, y.v);
  mpfr_sub(y.v, y.v, delta.v, MPFR_RNDD);
  if (mpfr_sgn(y.v) < 0) mpfr_set_zero(y.v, 1);
  mpfr_sqr(y.v, y.v, MPFR_RNDD);
  mpfr_add_ui(y.v, y.v, 1, MPFR_RNDD);
  mpfr_sqrt(c_lo, y.v, MPFR_RNDD);
  return true;
}

struct Common {
  Dana24Shape sh;
  std::vector<std::vector<std::size_t>> seq;
  std::vector<mpq_class> prior;
  mpq_class epsilon;
  std::size_t T_eps = 0;
  std::vector<std::size_t> order;  // sequences, heaviest first
};

bool read_common(const Value& c, Common& k, std::string& why) {
  const char* names[] = {"N", "S", "d", "dh", "H", "T_eps"};
  std::size_t* outs[] = {&k.sh.N, &k.sh.S, &k.sh.d, &k.sh.dh, &k.sh.H, &k.T_eps};
  for (int i = 0; i < 6; ++i) {
    const Value* v = member(c, "", names[i], json::Type::Number, why);
    if (!v || !read_size(*v, names[i], 1u << 16, *outs[i], why)) return false;
  }
  if (k.sh.N < 2 || k.sh.S == 0 || k.sh.d == 0 || (k.sh.H > 0 && (k.sh.dh == 0 || k.sh.dh > k.sh.d))) {
    why = "N, S, d, dh: expected N >= 2, S, d >= 1 and 1 <= d_h <= d (paper footnote 1)";
    return false;
  }
  const Value* sv = member(c, "", "sequences", json::Type::Array, why);
  if (!sv) return false;
  const std::size_t T = sv->size();
  if (T == 0 || T > 100000) {
    why = "sequences: expected 1..100000 sequences";
    return false;
  }
  std::set<std::vector<std::size_t>> seen;
  k.seq.assign(T, std::vector<std::size_t>(k.sh.S));
  for (std::size_t t = 0; t < T; ++t) {
    const json::Item s_item = sv->at(t);
    const Value& s = *s_item;
    if (s.type != json::Type::Array || s.size() != k.sh.S) {
      why = theorem1_eps_at("sequences", t) + ": expected S tokens";
      return false;
    }
    for (std::size_t i = 0; i < k.sh.S; ++i)
      if (!read_size(*s.at(i), theorem1_eps_at(theorem1_eps_at("sequences", t), i), k.sh.N - 1, k.seq[t][i], why)) return false;
    if (!seen.insert(k.seq[t]).second) {
      why = theorem1_eps_at("sequences", t) + ": a repeated sequence";
      return false;
    }
  }
  const Value* pv = member(c, "", "prior", json::Type::Array, why);
  const Value* ev = pv ? member(c, "", "epsilon", json::Type::String, why) : nullptr;
  if (!ev || !read_rational_vector(*pv, "prior", T, k.prior, why) || !read_rational(*ev, "epsilon", k.epsilon, why))
    return false;
  mpq_class sum = 0;
  for (std::size_t t = 0; t < T; ++t) {
    if (sgn(k.prior[t]) <= 0) {
      why = theorem1_eps_at("prior", t) + ": expected > 0 (the support of the prior)";
      return false;
    }
    sum += k.prior[t];
  }
  if (sum != 1) {
    why = "prior: does not sum to 1";
    return false;
  }
  if (!(sgn(k.epsilon) > 0 && k.epsilon < 1)) {
    why = "epsilon: expected 0 < epsilon < 1";
    return false;
  }
  // T_epsilon: the smallest count of heaviest sequences with cumulative mass > 1 - epsilon.
  k.order.resize(T);
  std::iota(k.order.begin(), k.order.end(), 0);
  std::stable_sort(k.order.begin(), k.order.end(), [&](std::size_t a, std::size_t b) { return k.prior[a] > k.prior[b]; });
  mpq_class cum = 0;
  std::size_t need = 0;
  while (need < T && !(cum > 1 - k.epsilon)) cum += k.prior[k.order[need++]];
  if (need != k.T_eps) {
    why = "T_eps: the smallest number of sequences with mass > 1 - epsilon is " + std::to_string(need);
    return false;
  }
  if (k.T_eps > k.sh.H * k.sh.dh + k.sh.d) {
    why = "T_eps: Theorem 1 needs H d_h + d >= T_eps";
    return false;
  }
  return true;
}

// Every item of the array `v` as a row of `cols` exact numbers. (Out of line: GCC 12 reports a spurious
// -Wfree-nonheap-object for a vector of rows sized and filled inline.)
[[gnu::noinline]] bool read_rows(const Value& v, const std::string& name, std::size_t cols, std::vector<QRow>& out,
                                 std::string& why) {
  out.resize(v.size());
  for (std::size_t t = 0; t < out.size(); ++t)
    if (!read_rational_vector(*v.at(t), theorem1_eps_at(name, t), cols, out[t], why)) return false;
  return true;
}

// The encoder's logits WE[t] = W E(t) (exact) and n2 <= ||W E||_2^2: the largest squared column norm,
// row norm and Rayleigh quotient ||W E v||^2 / ||v||^2 of the optional witness v (any v gives a lower bound).
bool encoder_logits(const Value& c, const std::vector<QRow>& W, const std::vector<QRow>& E,
                    std::vector<std::vector<mpq_class>>& WE, mpq_class& n2, std::string& why) {
  const std::size_t T = E.size(), N = W.size(), d = E.empty() ? 0 : E[0].size();
  WE.assign(T, std::vector<mpq_class>(N));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t i = 0; i < d; ++i) WE[t][j] += W[j][i] * E[t][i];
  n2 = 0;
  std::vector<mpq_class> rows(N);
  for (std::size_t t = 0; t < T; ++t) {
    mpq_class col = 0;
    for (std::size_t j = 0; j < N; ++j) col += WE[t][j] * WE[t][j], rows[j] += WE[t][j] * WE[t][j];
    if (col > n2) n2 = col;
  }
  for (const auto& r : rows)
    if (r > n2) n2 = r;
  if (const Value* rv = c.find("rayleigh_witness")) {
    QRow v;
    if (!read_rational_vector(*rv, "rayleigh_witness", T, v, why)) return false;
    mpq_class vv = 0, uu = 0;
    std::vector<mpq_class> u(N);
    for (std::size_t t = 0; t < T; ++t) {
      vv += v[t] * v[t];
      for (std::size_t j = 0; j < N; ++j) u[j] += WE[t][j] * v[t];
    }
    for (const auto& x : u) uu += x * x;
    if (sgn(vv) > 0 && uu / vv > n2) n2 = uu / vv;
  }
  return true;
}

bool check_theorem1_eps(const Value& c, std::string& why) {
  Common k;
  if (!read_common(c, k, why)) return false;
  const std::size_t T = k.seq.size(), N = k.sh.N, d = k.sh.d;
  if (!within_budget(double(T) * (double(k.sh.H) * k.sh.S * d * (k.sh.dh + 2) + double(N) * d) * 64,
                     double(T) * (N + d) * 256, "the theorem-1-eps check", why))
    return false;
  const Value* zv = member(c, "", "logits", json::Type::Array, why);
  const Value* Ev = zv ? member(c, "", "E", json::Type::Array, why) : nullptr;
  const Value* wv = Ev ? member(c, "", "weights", json::Type::Object, why) : nullptr;
  if (!wv) return false;
  if (zv->size() != T || Ev->size() != T) {
    why = "logits, E: expected one row per sequence";
    return false;
  }
  std::vector<QRow> z, E;
  if (!read_rows(*zv, "logits", N, z, why) || !read_rows(*Ev, "E", d, E, why)) return false;
  bool literal = false;
  if (const Value* lv = c.find("literal_4"))
    if (!read_bool(*lv, "literal_4", literal, why)) return false;
  // W = W_U, exact.
  const Value* wu = member(*wv, "weights", "WU", json::Type::Array, why);
  if (!wu) return false;
  if (wu->size() != N) {
    why = "weights.WU: expected N rows";
    return false;
  }
  std::vector<QRow> W;
  if (!read_rows(*wu, "weights.WU", d, W, why)) return false;
  // The model's logits, enclosed.
  std::vector<std::vector<mpq_class>> lo, hi, flo, fhi;
  if (!dana24_logit_enclosures(*wv, k.sh, k.seq, lo, hi, why, &flo, &fhi)) return false;
  // The encoder's logits W E(t), exact; ||W E||_2^2 from below.
  std::vector<std::vector<mpq_class>> WE;
  mpq_class n2;
  if (!encoder_logits(c, W, E, WE, n2, why)) return false;
  Mp kl_T, kl_f, term, rhs;
  for (std::size_t t = 0; t < T; ++t) {
    kl_bound(z[t], lo[t], hi[t], true, term.v);
    mpfr_mul_q(term.v, term.v, k.prior[t].get_mpq_t(), MPFR_RNDU);
    mpfr_add(kl_T.v, kl_T.v, term.v, MPFR_RNDU);
    kl_bound(z[t], WE[t], WE[t], false, term.v);
    mpfr_mul_q(term.v, term.v, k.prior[t].get_mpq_t(), MPFR_RNDD);
    mpfr_add(kl_f.v, kl_f.v, term.v, MPFR_RNDD);
  }
  // C from below (1 when the enclosure of F is too wide to do better: C >= 1 always).
  Mp c_lo, c_hi;
  mpfr_set_ui(c_lo.v, 1, MPFR_RNDD);
  mpfr_set_inf(c_hi.v, 1);
  {
    std::vector<std::size_t> s1(k.order.begin(), k.order.begin() + static_cast<long>(k.T_eps)),
        s2(k.order.begin() + static_cast<long>(k.T_eps), k.order.end());
    if (!c_bounds(s1, s2, flo, fhi, c_lo.v, c_hi.v)) mpfr_set_ui(c_lo.v, 1, MPFR_RNDD), mpfr_set_inf(c_hi.v, 1);
  }
  mpfr_set_q(rhs.v, n2.get_mpq_t(), MPFR_RNDD);
  mpfr_sqrt(rhs.v, rhs.v, MPFR_RNDD);
  const mpq_class factor = k.epsilon * (literal ? 1 : 2);
  mpfr_mul_q(rhs.v, rhs.v, factor.get_mpq_t(), MPFR_RNDD);
  mpfr_mul(rhs.v, rhs.v, c_lo.v, MPFR_RNDD);
  mpfr_add(rhs.v, rhs.v, kl_f.v, MPFR_RNDD);
  if (!mpfr_number_p(kl_T.v) || !mpfr_lessequal_p(kl_T.v, rhs.v)) {
    why = std::string("d_KL(pi, T) <= d_KL(pi, f) + ") + (literal ? "" : "2 ") +
          "eps ||W E||_2 not certified (d_KL(pi, T) <= " + std::to_string(mpfr_get_d(kl_T.v, MPFR_RNDU)) +
          ", right-hand side >= " + std::to_string(mpfr_get_d(rhs.v, MPFR_RNDD)) + ")";
    return false;
  }
  char cb[96];
  std::snprintf(cb, sizeof cb, "C in [%.6g, %.6g]", mpfr_get_d(c_lo.v, MPFR_RNDD), mpfr_get_d(c_hi.v, MPFR_RNDU));
  note_applied(std::string("dana24 Theorem 1, epsilon > 0: d_KL(pi,T) enclosed from the exact weights <= d_KL(pi,f) + ") +
               (literal ? "1" : "2") + " C eps ||WE||_2 with the certified lower end of " + cb);
  return true;
}

bool check_singular_f_s1(const Value& c, std::string& why) {
  Common k;
  if (!read_common(c, k, why)) return false;
  const std::size_t T = k.seq.size(), need = k.sh.H * k.sh.dh + k.sh.d;
  if (k.T_eps != need) {
    why = "T_eps: expected T_eps = H d_h + d";
    return false;
  }
  if (k.T_eps < T && !(k.prior[k.order[k.T_eps - 1]] > k.prior[k.order[k.T_eps]])) {
    why = "prior: S_1 is not determined (a tie at the T_eps-th heaviest sequence)";
    return false;
  }
  for (std::size_t i = 1; i < k.T_eps; ++i)
    if (k.seq[k.order[i]].back() != k.seq[k.order[0]].back()) {
      why = "sequences: the T_eps most likely sequences do not share their last token";
      return false;
    }
  const std::size_t ceiling = 1 + k.sh.H * std::min(k.sh.dh, k.sh.d);
  if (!(ceiling < k.T_eps)) {
    why = "the rank ceiling 1 + H min(d_h, d) is not below T_eps";
    return false;
  }
  return true;
}

}  // namespace

bool check_dana24_theorem1_eps(const Value& c, std::string& why, bool singular_variant) {
  return singular_variant ? check_singular_f_s1(c, why) : check_theorem1_eps(c, why);
}

}  // namespace memcert_checker

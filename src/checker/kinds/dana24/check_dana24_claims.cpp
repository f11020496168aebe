// kind "dana24-claim": one instance of a dana24 claim or boundary variant (docs/papers/dana24.md sections 6-7)
// that is not a whole construction (those are kind "dana24"). Every verdict is re-derived from the
// instance data in the certificate; no reported figure is believed.
//
// Common fields: "claim", "verdict" ("confirmed" | "counterexample"), sizes "N","S","d","H","dh" (as the
// claim needs), "sequences":[T][S] tokens in [0,N) pairwise distinct, "next":[T] tokens in [0,N).
//  dana24/lemma-2 (confirmed): heads only, rank A >= min(T, H d) where column t of A is
//    [A^1(t); ...; A^H(t)], A^h(t) = sum_s softmax_s((q_h.x(t,S)) (k_h.x(t,s))) x(t,s), x = e + pos.
//    Fields "e":[N][d], "pos":[S][d], "q","k":[H][d] exact; "mu" exact. The checker encloses A with MPFR
//    (exact scores, directed-rounding exp), takes M = A^T (T <= H d) or A (else), centre C, radius R, and
//    requires ||R||_F^2 < mu and C C^T - mu I positive definite (so sigma_min(M) > 0, Lemma 5 / Weyl).
//  dana24/lemma-2-s1 (counterexample): S = 1, H >= 2, T > d: every head's A^h(t) = x(t,1) exactly, so
//    rank A = rank [x(t,1)]_t <= d < min(T, H d), for EVERY choice of weights.
//  dana24/corollary-1-no-heads (counterexample): H = 0 and sequences "pair":[i,j] with equal last tokens
//    and different next tokens: T(t) = W_U (e(t_S) + pos_S) is equal for both, so no strict arg-max can
//    give both labels.
//  dana24/theorem-1-proof-rank-ceiling (counterexample): H min(d_h,d) + min(d, n_last) < H d_h + d = T,
//    with n_last recomputed from the sequences: the proof's feature matrix cannot reach rank T.
//  dana24/experiment-6-dh-gt-d (counterexample): d_h > d: every W_O^h W_V^h is d x d, so the feature rank
//    is <= d + H d < T = H d_h + d.
//  dana24/proposition-3-d1 (counterexample): d = 1 and at least three distinct next tokens: with scalar
//    E(t) the logits are E(t) w_j, whose strict arg-max is an arg-max or an arg-min of w: at most two
//    labels are reachable.
//  dana24/proposition-2 (confirmed): "logits":[C][N] exact (rational log-probabilities of C contexts),
//    d < N - 1, "minor_rows":[d+1], "minor_cols":[d+1]: the (d+1)-minor of P Z* (P = I - 11^T/N, column c =
//    logits of context c) is non-zero, so rank(P Z*) > d and no d-dimensional sequence encoder represents
//    these conditionals exactly.
//  dana24/proposition-3 (confirmed): "s":[N] pairwise distinct rationals, "lambda" > 0 exact, sequences with
//    "next" (point-mass conditionals g(t), uniform prior over the T sequences). W_j = ((1-s_j^2)/(1+s_j^2),
//    2 s_j/(1+s_j^2)) are rational points of the unit circle and f_lambda(t) = lambda W W_{g(t)}. The checker
//    encloses d_KL = (1/T) sum_t log(1 + sum_{j != g} exp(-lambda (1 - W_j.W_g))) from above (MPFR) and
//    (N-1) exp(-lambda delta), delta = min_{j != k} (1 - W_j.W_k) > 0 exact, from below, and requires
//    d_KL <= (N-1) exp(-lambda delta) (log(1+x) <= x), so d_KL -> 0 as lambda -> infinity.
//  dana24/theorem-1-adversarial-wv (counterexample): 1 <= d_h < d, T = H d_h + d, "e":[N][d], "pos":[S][d],
//    "WV":[H][dh][d] exact, "pair":[i,j] with equal last tokens and different next tokens: every W_V^h has
//    full rank d_h (W W^T non-singular) and W_V^h x(t,s) = 0 for t in the pair and every s, exactly. As
//    A^h(t) is a convex combination of the x(t,s), the features of i and j coincide for every W_QK.
//  dana24/corollary-1-ties (counterexample): T > H d_h + d and "WU":[N][d] with all rows equal: every
//    logit of every sequence ties, so every label "is the maximum logit" (the non-strict definition).
//  dana24/theorem-2: check_dana24_theorem2.cpp; dana24/theorem-1-eps and
//    dana24/theorem-1-eps-singular-f-s1: check_dana24_theorem1_eps.cpp.
#include <mpfr.h>

#include <set>

#include "kernel/definite.hpp"
#include "kernel/exact.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {
namespace {

std::string dana24_claims_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

bool field_size(const Value& c, const char* key, std::size_t max, std::size_t& out, std::string& why) {
  const Value* v = member(c, "", key, json::Type::Number, why);
  return v && read_size(*v, key, max, out, why);
}
bool field_matrix(const Value& c, const char* key, std::size_t rows, std::size_t cols, QMat& out, std::string& why) {
  const Value* v = member(c, "", key, json::Type::Array, why);
  if (!v) return false;
  if (v->size() != rows) {
    why = std::string(key) + ": expected " + std::to_string(rows) + " rows";
    return false;
  }
  out.assign(rows, {});
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(*v->at(i), dana24_claims_at(key, i), cols, out[i], why)) return false;
  return true;
}

struct Assoc {
  std::size_t N = 0, S = 0, T = 0;
  std::vector<std::vector<std::size_t>> seq;
  std::vector<std::size_t> next;
};

bool read_assoc(const Value& c, Assoc& a, std::string& why) {
  if (!field_size(c, "N", 1u << 24, a.N, why) || !field_size(c, "S", 1u << 16, a.S, why)) return false;
  if (a.N == 0 || a.S == 0) {
    why = "N, S: expected >= 1";
    return false;
  }
  const Value* sv = member(c, "", "sequences", json::Type::Array, why);
  if (!sv) return false;
  a.T = sv->size();
  if (a.T == 0) {
    why = "sequences: expected at least one";
    return false;
  }
  std::set<std::vector<std::size_t>> seen;
  a.seq.assign(a.T, std::vector<std::size_t>(a.S));
  for (std::size_t t = 0; t < a.T; ++t) {
    const json::Item s_item = sv->at(t);
    const Value& s = *s_item;
    if (s.type != json::Type::Array || s.size() != a.S) {
      why = dana24_claims_at("sequences", t) + ": expected S tokens";
      return false;
    }
    for (std::size_t k = 0; k < a.S; ++k)
      if (!read_size(*s.at(k), dana24_claims_at(dana24_claims_at("sequences", t), k), a.N - 1, a.seq[t][k], why)) return false;
    if (!seen.insert(a.seq[t]).second) {
      why = dana24_claims_at("sequences", t) + ": a repeated sequence";
      return false;
    }
  }
  if (const Value* nv = c.find("next")) {
    if (nv->type != json::Type::Array || nv->size() != a.T) {
      why = "next: expected one token per sequence";
      return false;
    }
    a.next.resize(a.T);
    for (std::size_t t = 0; t < a.T; ++t)
      if (!read_size(*nv->at(t), dana24_claims_at("next", t), a.N - 1, a.next[t], why)) return false;
  }
  return true;
}

bool need_next(const Assoc& a, std::string& why) {
  if (a.next.size() == a.T) return true;
  why = "next: missing";
  return false;
}

// Smallest magnitude an enclosure of exp(u) keeps: a bound below 2^-kExpFloor becomes 0 (a lower bound)
// or 2^-kExpFloor (an upper bound), both still valid since 0 < exp(u). Without it an exp that underflows
// (u = -1e1998 from a weight of 1e999) is MPFR's smallest number 2^-(2^30), whose exact rational alone
// takes 128 MB and makes every later exact sum crawl.
constexpr long kExpFloor = 4096;
void exp_bound_floor(mpfr_t z, mpfr_rnd_t direction) {
  if (mpfr_cmp_si_2exp(z, 1, -kExpFloor) >= 0) return;
  if (direction == MPFR_RNDD) mpfr_set_zero(z, 1);
  else mpfr_set_si_2exp(z, 1, -kExpFloor, MPFR_RNDU);
}

// dana24/lemma-2.
bool check_dana24_lemma2(const Value& c, std::string& why) {
  Assoc a;
  std::size_t d = 0, H = 0;
  if (!read_assoc(c, a, why) || !field_size(c, "d", 1u << 12, d, why) || !field_size(c, "H", 1u << 12, H, why))
    return false;
  if (d == 0 || H == 0) {
    why = "d, H: expected >= 1";
    return false;
  }
  QMat e, pos, q, k;
  if (!field_matrix(c, "e", a.N, d, e, why) || !field_matrix(c, "pos", a.S, d, pos, why) ||
      !field_matrix(c, "q", H, d, q, why) || !field_matrix(c, "k", H, d, k, why))
    return false;
  mpq_class mu;
  const Value* mv = member(c, "", "mu", json::Type::String, why);
  if (!mv || !read_rational(*mv, "mu", mu, why)) return false;
  // A enclosed: lo/hi as exact rationals from MPFR endpoints.
  const mpfr_prec_t P = 160;
  QMat lo(H * d, QRow(a.T)), hi(H * d, QRow(a.T));
  mpfr_t z, tmp, sl, sh;
  mpfr_inits2(P, z, tmp, sl, sh, static_cast<mpfr_ptr>(nullptr));
  std::vector<mpq_class> scores(a.S);
  std::vector<mpq_class> wl(a.S), wh(a.S);
  for (std::size_t t = 0; t < a.T; ++t) {
    std::vector<QRow> x(a.S, QRow(d));
    for (std::size_t s = 0; s < a.S; ++s)
      for (std::size_t i = 0; i < d; ++i) x[s][i] = e[a.seq[t][s]][i] + pos[s][i];
    for (std::size_t h = 0; h < H; ++h) {
      mpq_class qs = 0;
      for (std::size_t i = 0; i < d; ++i) qs += q[h][i] * x[a.S - 1][i];
      mpq_class mx;
      for (std::size_t s = 0; s < a.S; ++s) {
        mpq_class ks = 0;
        for (std::size_t i = 0; i < d; ++i) ks += k[h][i] * x[s][i];
        scores[s] = qs * ks;  // exact
        if (s == 0 || scores[s] > mx) mx = scores[s];
      }
      // w_s = exp(score_s - max) enclosed; a_s in [wl_s / sum_hi, wh_s / sum_lo].
      mpfr_set_zero(sl, 1), mpfr_set_zero(sh, 1);
      for (std::size_t s = 0; s < a.S; ++s) {
        const mpq_class u = scores[s] - mx;
        mpfr_set_q(z, u.get_mpq_t(), MPFR_RNDD);
        mpfr_exp(z, z, MPFR_RNDD);
        exp_bound_floor(z, MPFR_RNDD);
        mpfr_get_q(wl[s].get_mpq_t(), z);
        mpfr_add(sl, sl, z, MPFR_RNDD);
        mpfr_set_q(z, u.get_mpq_t(), MPFR_RNDU);
        mpfr_exp(z, z, MPFR_RNDU);
        exp_bound_floor(z, MPFR_RNDU);
        mpfr_get_q(wh[s].get_mpq_t(), z);
        mpfr_add(sh, sh, z, MPFR_RNDU);
      }
      mpq_class suml, sumh;
      mpfr_get_q(suml.get_mpq_t(), sl), mpfr_get_q(sumh.get_mpq_t(), sh);
      // a_s in [wl_s / sumh, wh_s / suml]; L = sum_s (lower a_s bound for x >= 0, upper for x < 0) x_s, with
      // the two divisions taken once per sum (the same exact numbers, without a large gcd per term).
      for (std::size_t i = 0; i < d; ++i) {
        mpq_class lh = 0, ll = 0, uh = 0, ul = 0;  // L = lh / sumh + ll / suml, U = ul / suml + uh / sumh
        for (std::size_t s = 0; s < a.S; ++s) {
          const mpq_class& xv = x[s][i];
          if (sgn(xv) >= 0) lh += wl[s] * xv, ul += wh[s] * xv;
          else ll += wh[s] * xv, uh += wl[s] * xv;
        }
        lo[h * d + i][t] = lh / sumh + ll / suml;
        hi[h * d + i][t] = ul / suml + uh / sumh;
      }
    }
  }
  mpfr_clears(z, tmp, sl, sh, static_cast<mpfr_ptr>(nullptr));
  // Rows of M = A^T (T <= Hd) or A.
  const bool transpose = a.T <= H * d;
  const std::size_t m = transpose ? a.T : H * d, n = transpose ? H * d : a.T;
  QMat C(m, QRow(n)), R(m, QRow(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t r = transpose ? j : i, col = transpose ? i : j;
      C[i][j] = (lo[r][col] + hi[r][col]) / 2;
      R[i][j] = (hi[r][col] - lo[r][col]) / 2;
    }
  if (!sum_of_squares_below(R, mu)) {
    why = "mu: ||R||_F^2 of the recomputed enclosure is not below mu";
    return false;
  }
  if (!gram_minus_shift_definite(C, mu)) {
    why = "mu: C C^T - mu I is not positive definite: rank A >= min(T, H d) not certified";
    return false;
  }
  return true;
}

bool check_s1(const Value& c, std::string& why) {
  Assoc a;
  std::size_t d = 0, H = 0;
  if (!read_assoc(c, a, why) || !field_size(c, "d", 1u << 20, d, why) || !field_size(c, "H", 1u << 20, H, why))
    return false;
  if (a.S != 1 || H < 2 || a.T <= d) {
    why = "expected S = 1, H >= 2 and T > d (then rank A <= d < min(T, H d))";
    return false;
  }
  return true;
}

bool check_no_heads(const Value& c, std::string& why) {
  Assoc a;
  std::size_t H = 1;
  if (!read_assoc(c, a, why) || !need_next(a, why) || !field_size(c, "H", 1u << 20, H, why)) return false;
  const Value* pv = member(c, "", "pair", json::Type::Array, why);
  if (!pv) return false;
  std::size_t i = 0, j = 0;
  if (pv->size() != 2 || !read_size(*pv->at(0), "pair[0]", a.T - 1, i, why) ||
      !read_size(*pv->at(1), "pair[1]", a.T - 1, j, why))
    return why.empty() ? (why = "pair: expected two sequence indices", false) : false;
  if (H != 0 || i == j || a.seq[i].back() != a.seq[j].back() || a.next[i] == a.next[j]) {
    why = "pair: expected H = 0 and two sequences with equal last tokens and different next tokens";
    return false;
  }
  return true;
}

bool check_rank_ceiling(const Value& c, std::string& why, bool dh_gt_d) {
  Assoc a;
  std::size_t d = 0, H = 0, dh = 0;
  if (!read_assoc(c, a, why) || !field_size(c, "d", 1u << 20, d, why) || !field_size(c, "H", 1u << 20, H, why) ||
      !field_size(c, "dh", 1u << 20, dh, why))
    return false;
  std::set<std::size_t> last;
  for (const auto& s : a.seq) last.insert(s.back());
  const std::size_t n_last = last.size();
  const std::size_t ceiling = H * std::min(dh, d) + std::min(d, n_last);
  if (a.T != H * dh + d) {
    why = "sequences: expected T = H d_h + d";
    return false;
  }
  if (dh_gt_d && dh <= d) {
    why = "dh: expected d_h > d";
    return false;
  }
  if (!(ceiling < a.T)) {
    why = "the rank ceiling H min(d_h,d) + min(d, n_last) = " + std::to_string(ceiling) + " is not below T";
    return false;
  }
  return true;
}

bool check_d1(const Value& c, std::string& why) {
  Assoc a;
  std::size_t d = 0;
  if (!read_assoc(c, a, why) || !need_next(a, why) || !field_size(c, "d", 1u << 20, d, why)) return false;
  std::set<std::size_t> labels(a.next.begin(), a.next.end());
  if (d != 1 || labels.size() < 3) {
    why = "expected d = 1 and at least three distinct next tokens";
    return false;
  }
  return true;
}

bool check_prop2(const Value& c, std::string& why) {
  std::size_t N = 0, d = 0, C = 0;
  if (!field_size(c, "N", 1u << 12, N, why) || !field_size(c, "d", 1u << 12, d, why) ||
      !field_size(c, "contexts", 1u << 12, C, why))
    return false;
  if (N < 2 || !(d + 1 < N)) {
    why = "expected d < N - 1";
    return false;
  }
  QMat Z;
  if (!field_matrix(c, "logits", C, N, Z, why)) return false;
  std::vector<std::size_t> rows, cols;
  const Value* rv = member(c, "", "minor_rows", json::Type::Array, why);
  const Value* cv = rv ? member(c, "", "minor_cols", json::Type::Array, why) : nullptr;
  if (!cv || !read_index_set(*rv, "minor_rows", d + 1, N, rows, why) ||
      !read_index_set(*cv, "minor_cols", d + 1, C, cols, why))
    return false;
  // (P Z*)_{j,c} = z_c[j] - mean_j z_c.
  QMat minor(d + 1, QRow(d + 1));
  for (std::size_t b = 0; b <= d; ++b) {
    mpq_class mean = 0;
    for (std::size_t j = 0; j < N; ++j) mean += Z[cols[b]][j];
    mean /= N;
    for (std::size_t r = 0; r <= d; ++r) minor[r][b] = Z[cols[b]][rows[r]] - mean;
  }
  if (det_bareiss(scale_rows_to_integers(minor)) == 0) {
    why = "minor_rows/minor_cols: the minor of P Z* is zero";
    return false;
  }
  return true;
}

bool check_prop3(const Value& c, std::string& why) {
  Assoc a;
  if (!read_assoc(c, a, why) || !need_next(a, why)) return false;
  QRow sv;
  const Value* v = member(c, "", "s", json::Type::Array, why);
  if (!v || !read_rational_vector(*v, "s", a.N, sv, why)) return false;
  mpq_class lambda;
  const Value* lv = member(c, "", "lambda", json::Type::String, why);
  if (!lv || !read_rational(*lv, "lambda", lambda, why)) return false;
  if (sgn(lambda) <= 0 || a.N < 2) {
    why = "lambda: expected > 0 (and N >= 2)";
    return false;
  }
  std::vector<mpq_class> wx(a.N), wy(a.N);
  for (std::size_t j = 0; j < a.N; ++j) {
    const mpq_class den = 1 + sv[j] * sv[j];
    wx[j] = (1 - sv[j] * sv[j]) / den, wy[j] = 2 * sv[j] / den;
    for (std::size_t i = 0; i < j; ++i)
      if (sv[i] == sv[j]) {
        why = dana24_claims_at("s", j) + ": expected distinct parameters (distinct circle points)";
        return false;
      }
  }
  auto gap = [&](std::size_t j, std::size_t k) { return mpq_class(1 - (wx[j] * wx[k] + wy[j] * wy[k])); };
  mpq_class delta = gap(0, 1);
  for (std::size_t j = 0; j < a.N; ++j)
    for (std::size_t k = 0; k < a.N; ++k)
      if (j != k && gap(j, k) < delta) delta = gap(j, k);
  const mpfr_prec_t P = 128;
  mpfr_t kl, term, x, bound;
  mpfr_inits2(P, kl, term, x, bound, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_zero(kl, 1);
  for (std::size_t t = 0; t < a.T; ++t) {
    const std::size_t g = a.next[t];
    mpfr_set_ui(term, 1, MPFR_RNDU);
    for (std::size_t j = 0; j < a.N; ++j) {
      if (j == g) continue;
      const mpq_class e = -lambda * gap(j, g);
      mpfr_set_q(x, e.get_mpq_t(), MPFR_RNDU);
      mpfr_exp(x, x, MPFR_RNDU);
      mpfr_add(term, term, x, MPFR_RNDU);
    }
    mpfr_log(term, term, MPFR_RNDU);
    mpfr_add(kl, kl, term, MPFR_RNDU);
  }
  mpfr_div_ui(kl, kl, static_cast<unsigned long>(a.T), MPFR_RNDU);
  const mpq_class e = -lambda * delta;
  mpfr_set_q(bound, e.get_mpq_t(), MPFR_RNDD);
  mpfr_exp(bound, bound, MPFR_RNDD);
  mpfr_mul_ui(bound, bound, static_cast<unsigned long>(a.N - 1), MPFR_RNDD);
  const bool ok = sgn(delta) > 0 && mpfr_lessequal_p(kl, bound);
  mpfr_clears(kl, term, x, bound, static_cast<mpfr_ptr>(nullptr));
  if (!ok) why = "d_KL(pi, f_lambda) <= (N - 1) exp(-lambda delta) not certified";
  return ok;
}

}  // namespace

// dana24/theorem-1-adversarial-wv: full-rank W_V^h vanishing on every token vector of a pair.
bool check_adversarial_wv(const Value& c, std::string& why) {
  Assoc a;
  std::size_t d = 0, H = 0, dh = 0;
  if (!read_assoc(c, a, why) || !need_next(a, why) || !field_size(c, "d", 1u << 12, d, why) ||
      !field_size(c, "H", 1u << 12, H, why) || !field_size(c, "dh", 1u << 12, dh, why))
    return false;
  if (H == 0 || dh == 0 || dh >= d || a.T != H * dh + d) {
    why = "expected H >= 1, 1 <= d_h < d and T = H d_h + d (Theorem 1's instance with a kernel in W_V)";
    return false;
  }
  QMat e, pos;
  if (!field_matrix(c, "e", a.N, d, e, why) || !field_matrix(c, "pos", a.S, d, pos, why)) return false;
  const Value* pv = member(c, "", "pair", json::Type::Array, why);
  if (!pv) return false;
  std::size_t i = 0, j = 0;
  if (pv->size() != 2 || !read_size(*pv->at(0), "pair[0]", a.T - 1, i, why) ||
      !read_size(*pv->at(1), "pair[1]", a.T - 1, j, why))
    return why.empty() ? (why = "pair: expected two sequence indices", false) : false;
  if (i == j || a.seq[i].back() != a.seq[j].back() || a.next[i] == a.next[j]) {
    why = "pair: expected two sequences with equal last tokens and different next tokens";
    return false;
  }
  const Value* wv = member(c, "", "WV", json::Type::Array, why);
  if (!wv) return false;
  if (wv->size() != H) {
    why = "WV: expected H matrices";
    return false;
  }
  for (std::size_t h = 0; h < H; ++h) {
    const json::Item m_item = wv->at(h);
    const Value& m = *m_item;
    if (m.type != json::Type::Array || m.size() != dh) {
      why = dana24_claims_at("WV", h) + ": expected d_h rows";
      return false;
    }
    QMat W(dh);
    for (std::size_t r = 0; r < dh; ++r)
      if (!read_rational_vector(*m.at(r), dana24_claims_at(dana24_claims_at("WV", h), r), d, W[r], why)) return false;
    // Full row rank: the Gram matrix W W^T is non-singular.
    QMat G(dh, QRow(dh));
    for (std::size_t r = 0; r < dh; ++r)
      for (std::size_t q = 0; q < dh; ++q)
        for (std::size_t k = 0; k < d; ++k) G[r][q] += W[r][k] * W[q][k];
    if (sgn(det_bareiss(scale_rows_to_integers(G))) == 0) {
      why = dana24_claims_at("WV", h) + ": not of full rank d_h";
      return false;
    }
    // W_V^h x(t,s) = 0 for both sequences and every position, exactly.
    for (std::size_t t : {i, j})
      for (std::size_t s = 0; s < a.S; ++s)
        for (std::size_t r = 0; r < dh; ++r) {
          mpq_class v = 0;
          for (std::size_t k = 0; k < d; ++k) v += W[r][k] * (e[a.seq[t][s]][k] + pos[s][k]);
          if (sgn(v) != 0) {
            why = dana24_claims_at("WV", h) + ": does not vanish on x(t,s) of sequence " + std::to_string(t) +
                  ", position " + std::to_string(s);
            return false;
          }
        }
  }
  return true;
}

// dana24/corollary-1-ties: W_U with equal rows ties every logit of every sequence.
bool check_ties(const Value& c, std::string& why) {
  Assoc a;
  std::size_t d = 0, H = 0, dh = 0;
  if (!read_assoc(c, a, why) || !need_next(a, why) || !field_size(c, "d", 1u << 12, d, why) ||
      !field_size(c, "H", 1u << 12, H, why) || !field_size(c, "dh", 1u << 12, dh, why))
    return false;
  if (d == 0 || a.T <= H * dh + d) {
    why = "expected d >= 1 and T > H d_h + d (more associations than the claimed capacity)";
    return false;
  }
  QMat WU;
  if (!field_matrix(c, "WU", a.N, d, WU, why)) return false;
  for (std::size_t k = 1; k < a.N; ++k)
    if (WU[k] != WU[0]) {
      why = dana24_claims_at("WU", k) + ": expected every row of W_U equal to row 0 (a tie of all logits)";
      return false;
    }
  return true;
}

bool check_dana24_theorem2(const Value& c, std::string& why);  // check_dana24_theorem2.cpp
bool check_dana24_theorem1_eps(const Value& c, std::string& why, bool singular_variant);  // check_dana24_theorem1_eps.cpp

bool check_dana24_claim(const Value& c, std::string& why) {
  std::string claim, verdict;
  if (!read_string(c, "", "claim", claim, why) || !read_string(c, "", "verdict", verdict, why)) return false;
  struct Entry {
    const char* id;
    const char* verdict;
    bool (*fn)(const Value&, std::string&);
  };
  static const Entry table[] = {
      {"dana24/lemma-2", "confirmed", check_dana24_lemma2},
      {"dana24/lemma-2-s1", "counterexample", check_s1},
      {"dana24/corollary-1-no-heads", "counterexample", check_no_heads},
      {"dana24/theorem-1-proof-rank-ceiling", "counterexample",
       [](const Value& v, std::string& w) { return check_rank_ceiling(v, w, false); }},
      {"dana24/experiment-6-dh-gt-d", "counterexample",
       [](const Value& v, std::string& w) { return check_rank_ceiling(v, w, true); }},
      {"dana24/proposition-3-d1", "counterexample", check_d1},
      {"dana24/theorem-1-adversarial-wv", "counterexample", check_adversarial_wv},
      {"dana24/corollary-1-ties", "counterexample", check_ties},
      {"dana24/proposition-2", "confirmed", check_prop2},
      {"dana24/proposition-3", "confirmed", check_prop3},
      {"dana24/theorem-2", "confirmed", check_dana24_theorem2},
      {"dana24/theorem-1-eps", "confirmed",
       [](const Value& v, std::string& w) { return check_dana24_theorem1_eps(v, w, false); }},
      {"dana24/theorem-1-eps-singular-f-s1", "counterexample",
       [](const Value& v, std::string& w) { return check_dana24_theorem1_eps(v, w, true); }},
  };
  for (const Entry& e : table) {
    if (claim != e.id) continue;
    if (verdict != e.verdict) {
      why = "verdict: expected \"" + std::string(e.verdict) + "\" for " + claim;
      return false;
    }
    return e.fn(c, why);
  }
  why = "claim: unknown dana24 claim \"" + claim + "\"";
  return false;
}

}  // namespace memcert_checker

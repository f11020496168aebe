// kind "dana24-claim", claim "dana24/theorem-2" (verdict "confirmed"): Theorem 2's per-sequence bound
// (docs/papers/dana24.md "How to read Theorem 2"). The certificate gives B (N x d, exact), "scale" s > 0 (so
// W W^T = G = s B B^T, W = sqrt(s) B), "C" and "conditionals": [{"pi": [N] exact, "g", "lambda_hi"}].
// Re-derived here:
//  * C_W = max |G - I| (exact) <= C < 1/2, and G_gg > G_jg for j != g (so phi below is decreasing);
//  * pi_t > 0 entrywise, sum exactly 1; negH = -sum pi log pi enclosed [negH_lo, negH_up] (MPFR, directed);
//  * phi(lambda_hi) = log sum_j exp(lambda_hi (G_jg - G_gg)) <= negH_lo (rounded up): since phi(0) = log N >=
//    negH and phi decreases, the solution lambda* of phi = negH lies in [0, lambda_hi];
//  * at lambda* the KL has the closed form lambda* D, D = sum_j pi_j (G_gg - G_jg) (exact), so KL <= lambda_hi D;
//  * the bound (1 - pi_g)(1 + 2C + C |pi~ - unif|_1)/(1 - 2C) log((N-1)/(e^{negH} - 1)) enclosed from below
//    (the log term with negH_up); the claim holds iff lambda_hi D <= that lower bound for every conditional.
//  * optional "C_at_most_theorem_C": true: also C <= sqrt(32 ln(N+1)/d) (MPFR), the theorem's own C, so the
//    bound certified at C holds at the theorem's C (it increases with C). The Gram matrix of an integer B
//    (the large-d JL instance, N = 1000, d = 900) is computed in int64, exactly.
#include <mpfr.h>

#include <cstdint>
#include <cstdlib>

#include "kernel/context.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

namespace {

// B's Gram matrix G = s B B^T (exact: int64 for small integer B, else rationals), with N, d, s and C.
struct Dana24Theorem2 {
  std::size_t N = 0, d = 0;
  mpq_class s, C;
  bool small_int = true;
  std::vector<std::int64_t> gi;  // B B^T (small_int)
  QMat Gq;                       // s B B^T (otherwise)
  mpq_class G(std::size_t i, std::size_t j) const {
    return small_int ? mpq_class(mpq_class(gi[i * N + j]) * s) : Gq[i][j];
  }
};

// MPFR temporaries of one conditional's check (160 bits).
struct Dana24Theorem2Scratch {
  mpfr_t negH_lo, negH_up, x, y, phi, bound;
  Dana24Theorem2Scratch() { mpfr_inits2(160, negH_lo, negH_up, x, y, phi, bound, static_cast<mpfr_ptr>(nullptr)); }
  ~Dana24Theorem2Scratch() { mpfr_clears(negH_lo, negH_up, x, y, phi, bound, static_cast<mpfr_ptr>(nullptr)); }
  Dana24Theorem2Scratch(const Dana24Theorem2Scratch&) = delete;
  Dana24Theorem2Scratch& operator=(const Dana24Theorem2Scratch&) = delete;
};

// Stage 1: B, scale, C and the exact Gram matrix.
bool theorem2_read_gram(const Value& c, Dana24Theorem2& g2, std::string& why) {
  QMat B;
  std::size_t& N = g2.N;
  std::size_t& d = g2.d;
  mpq_class& s = g2.s;
  mpq_class& C = g2.C;
  const Value* bv = member(c, "", "B", json::Type::Array, why);
  if (!bv) return false;
  N = bv->size();
  if (N < 2 || N > 4096 || bv->at(0)->type != json::Type::Array || bv->at(0)->empty() || bv->at(0)->size() > 4096) {
    why = "B: expected 2..4096 rows of 1..4096 entries";
    return false;
  }
  d = bv->at(0)->size();
  B.resize(N);
  for (std::size_t i = 0; i < N; ++i)
    if (!read_rational_vector(*bv->at(i), "B[" + std::to_string(i) + "]", d, B[i], why)) return false;
  const Value* sv = member(c, "", "scale", json::Type::String, why);
  const Value* cv = sv ? member(c, "", "C", json::Type::String, why) : nullptr;
  if (!cv || !read_rational(*sv, "scale", s, why) || !read_rational(*cv, "C", C, why)) return false;
  if (s <= 0) { why = "scale: expected > 0"; return false; }
  if (!(C < mpq_class(1, 2)) || C < 0) { why = "C: the bound needs 0 <= C < 1/2"; return false; }
  // W W^T = s B B^T. Integer B with small entries (the JL instance: 1000 x 900 signs) takes an int64
  // product (|B_ik| < 2^20 and d <= 4096 keep every sum below 2^52); otherwise exact rationals. Either way
  // the Gram matrix is exact. C_W = max |s (B B^T)_ij - [i = j]| must be <= C.
  bool& small_int = g2.small_int;
  for (const auto& row : B)
    for (const auto& x : row)
      if (x.get_den() != 1 || abs(x.get_num()) >= (1 << 20)) small_int = false;
  std::vector<std::int64_t>& gi = g2.gi;
  QMat& Gq = g2.Gq;
  if (small_int) {
    if (!within_budget(double(N) * double(N) * double(d) / 2 / 20, double(N) * double(N) * 8 + double(N) * d * 8,
                       "the theorem-2 Gram matrix", why))
      return false;
    std::vector<std::int64_t> bi(N * d);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < d; ++k) bi[i * d + k] = B[i][k].get_num().get_si();
    B.clear();
    gi.assign(N * N, 0);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        std::int64_t acc = 0;
        for (std::size_t k = 0; k < d; ++k) acc += bi[i * d + k] * bi[j * d + k];
        gi[i * N + j] = gi[j * N + i] = acc;
      }
  } else {
    if (!within_budget(double(N) * double(N) * double(d) * 32, double(N) * double(N) * 64, "the theorem-2 Gram matrix", why))
      return false;
    Gq.assign(N, QRow(N, 0));
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        mpq_class acc = 0;
        for (std::size_t k = 0; k < d; ++k) acc += B[i][k] * B[j][k];
        Gq[i][j] = Gq[j][i] = acc * s;
      }
  }
  return true;
}

// Stage 2: C_W = max |G - I| <= C.
bool theorem2_check_C(const Dana24Theorem2& k, std::string& why) {
  const std::size_t N = k.N;
  const bool small_int = k.small_int;
  const auto& gi = k.gi;
  const auto& Gq = k.Gq;
  auto G = [&](std::size_t i, std::size_t j) { return k.G(i, j); };
  const mpq_class& C = k.C;
  {
    // Off-diagonal: the largest |entry| (int64 path: one exact comparison); diagonal: each entry.
    std::size_t bi_ = 0, bj_ = 1;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        if (i == j) continue;
        if (small_int ? std::llabs(gi[i * N + j]) > std::llabs(gi[bi_ * N + bj_]) : abs(Gq[i][j]) > abs(Gq[bi_][bj_]))
          bi_ = i, bj_ = j;
      }
    if (abs(G(bi_, bj_)) > C) {
      why = "C: |W W^T - I| exceeds C at (" + std::to_string(bi_) + "," + std::to_string(bj_) + ")";
      return false;
    }
    for (std::size_t i = 0; i < N; ++i)
      if (abs(G(i, i) - 1) > C) {
        why = "C: |W W^T - I| exceeds C at (" + std::to_string(i) + "," + std::to_string(i) + ")";
        return false;
      }
  }
  return true;
}

// Stage 3 (optional): C <= the theorem's own sqrt(32 ln(N+1)/d), i.e. C^2 d / 32 <= ln(N+1). The bound increases
  // with C, so it then holds at the theorem's C too.
bool theorem2_check_theorem_C(const Value& c, const Dana24Theorem2& k, std::string& why) {
  const std::size_t N = k.N, d = k.d;
  const mpq_class& C = k.C;
  if (const Value* tv = c.find("C_at_most_theorem_C")) {
    bool claimed = false;
    if (!read_bool(*tv, "C_at_most_theorem_C", claimed, why)) return false;
    if (claimed) {
      mpfr_t l, r;
      mpfr_inits2(160, l, r, static_cast<mpfr_ptr>(nullptr));
      const mpq_class lhs = C * C * static_cast<unsigned long>(d) / 32;
      mpfr_set_q(l, lhs.get_mpq_t(), MPFR_RNDU);
      mpfr_set_ui(r, static_cast<unsigned long>(N + 1), MPFR_RNDD);
      mpfr_log(r, r, MPFR_RNDD);
      const bool ok = mpfr_lessequal_p(l, r);
      mpfr_clears(l, r, static_cast<mpfr_ptr>(nullptr));
      if (!ok) {
        why = "C_at_most_theorem_C: C exceeds sqrt(32 ln(N+1)/d)";
        return false;
      }
    }
  }
  return true;
}

// Stage 4: one conditional's bound (the bracket of lambda*, KL = lambda* D, the bound from below).
bool theorem2_check_conditional(const Value& e, const std::string& at, const Dana24Theorem2& k, Dana24Theorem2Scratch& m,
                                std::string& why) {
  const std::size_t N = k.N;
  const mpq_class& C = k.C;
  auto G = [&](std::size_t i, std::size_t j) { return k.G(i, j); };
  mpfr_ptr negH_lo = m.negH_lo, negH_up = m.negH_up, x = m.x, y = m.y, phi = m.phi, bound = m.bound;
  QRow pi;
  std::size_t g = 0;
  mpq_class lam;
  const Value* pv = member(e, at, "pi", json::Type::Array, why);
  const Value* gv = pv ? member(e, at, "g", json::Type::Number, why) : nullptr;
  const Value* hv = gv ? member(e, at, "lambda_hi", json::Type::String, why) : nullptr;
  if (!hv || !read_rational_vector(*pv, at + ".pi", N, pi, why) || !read_size(*gv, at + ".g", N - 1, g, why) ||
      !read_rational(*hv, at + ".lambda_hi", lam, why))
    return false;
  mpq_class sum = 0;
  for (const auto& p : pi) {
    if (p <= 0) { why = at + ".pi: full support needed (every entry > 0)"; return false; }
    sum += p;
  }
  if (sum != 1) { why = at + ".pi: does not sum to 1"; return false; }
  if (lam < 0) { why = at + ".lambda_hi: expected >= 0"; return false; }
  for (std::size_t j = 0; j < N; ++j)
    if (j != g && !(G(j, g) < G(g, g))) { why = at + ": G_jg < G_gg fails (phi not decreasing)"; return false; }
  // negH = -sum pi log pi, both ends.
  mpfr_set_zero(negH_lo, 1);
  mpfr_set_zero(negH_up, 1);
  for (const auto& p : pi) {
    mpfr_set_q(x, p.get_mpq_t(), MPFR_RNDD);  // x <= p
    mpfr_log(x, x, MPFR_RNDD);                // x <= log p (<= 0)
    mpfr_mul_q(x, x, p.get_mpq_t(), MPFR_RNDD);  // x <= p log p
    mpfr_sub(negH_up, negH_up, x, MPFR_RNDU);
    mpfr_set_q(y, p.get_mpq_t(), MPFR_RNDU);
    mpfr_log(y, y, MPFR_RNDU);
    mpfr_mul_q(y, y, p.get_mpq_t(), MPFR_RNDU);
    mpfr_sub(negH_lo, negH_lo, y, MPFR_RNDD);
  }
  // phi(lambda_hi), rounded up.
  mpfr_set_zero(phi, 1);
  for (std::size_t j = 0; j < N; ++j) {
    const mpq_class arg = lam * (G(j, g) - G(g, g));
    mpfr_set_q(x, arg.get_mpq_t(), MPFR_RNDU);
    mpfr_exp(x, x, MPFR_RNDU);
    mpfr_add(phi, phi, x, MPFR_RNDU);
  }
  mpfr_log(phi, phi, MPFR_RNDU);
  if (!mpfr_lessequal_p(phi, negH_lo)) { why = at + ".lambda_hi: phi(lambda_hi) <= -H not certified (not an upper end of the bracket)"; return false; }
  // KL <= lambda_hi D (exact).
  mpq_class D = 0;
  for (std::size_t j = 0; j < N; ++j) D += pi[j] * (G(g, g) - G(j, g));
  const mpq_class kl_up = lam * D;
  // The bound from below: factor F exact, log((N-1)/(e^{negH} - 1)) with negH_up.
  mpq_class l1 = 0;
  for (std::size_t j = 0; j < N; ++j)
    if (j != g) l1 += abs(pi[j] / (1 - pi[g]) - mpq_class(1, static_cast<unsigned long>(N - 1)));
  const mpq_class F = (1 - pi[g]) * (1 + 2 * C + C * l1) / (1 - 2 * C);
  mpfr_expm1(x, negH_up, MPFR_RNDU);  // e^{negH} - 1, rounded up
  if (mpfr_sgn(x) <= 0) { why = at + ": e^{-H} - 1 not certified positive (a point mass)"; return false; }
  mpfr_ui_div(bound, static_cast<unsigned long>(N - 1), x, MPFR_RNDD);
  mpfr_log(bound, bound, MPFR_RNDD);
  mpfr_mul_q(bound, bound, F.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(x, kl_up.get_mpq_t(), MPFR_RNDU);
  if (!mpfr_lessequal_p(x, bound)) { why = at + ": d_KL <= the per-sequence bound not certified"; return false; }
  return true;
}

}  // namespace

bool check_dana24_theorem2(const Value& c, std::string& why) {
  Dana24Theorem2 k;
  if (!theorem2_read_gram(c, k, why) || !theorem2_check_C(k, why) || !theorem2_check_theorem_C(c, k, why)) return false;
  const Value* lv = member(c, "", "conditionals", json::Type::Array, why);
  if (!lv) return false;
  if (lv->empty() || lv->size() > 100000) { why = "conditionals: expected 1..100000 entries"; return false; }
  const double N = double(k.N);
  if (!within_budget(double(lv->size()) * N * 64, N * N * 64, "the theorem-2 check", why)) return false;
  Dana24Theorem2Scratch m;
  bool ok = true;
  for (std::size_t t = 0; t < lv->size() && ok; ++t)
    ok = theorem2_check_conditional(*lv->at(t), "conditionals[" + std::to_string(t) + "]", k, m, why);
  if (ok) note_applied("dana24 Theorem 2, per-sequence form: lambda bracketed from above, KL = lambda* D, bound enclosed from below");
  return ok;
}

}  // namespace memcert_checker

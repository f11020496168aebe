// kind "claim": one instance of a theory claim from the claims registry (proofs/), re-derived from the
// instance data. For each claim id the checker recomputes every matrix the claim talks about (Z from
// contexts and weights, the attention layer's output, ...) and checks the stated verdict:
//   "confirmed"      the claim's hypotheses hold on the instance and so does its conclusion;
//   "counterexample" the hypotheses (of the claim, or of its boundary variant) hold and the naive
//                    conclusion fails, with an exact witness.
// Lower bounds on ranks are minors non-zero modulo the prime 2^61 - 1 (rank mod p <= rank over Q, so
// rank mod p is a certified LOWER bound); upper bounds are exact kernel vectors that are independent
// (rank mod p of the vectors = their count). softmax values use MPFR with directed rounding.
#include <algorithm>
#include <functional>
#include <map>

#include "kernel/context.hpp"
#include "kernel/exact.hpp"
#include "kernel/interval.hpp"
#include "kernel/read.hpp"
#include "kinds/vaswani17/sinusoidal.hpp"

#include <cmath>

namespace memcert_checker {

namespace {

const ModP kP{(std::uint64_t{1} << 61) - 1};  // a Mersenne prime

std::string claim_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// ---- readers for nested arrays of exact numbers --------------------------------------------------
bool vec(const Value& v, const std::string& where, QRow& out, std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array"; return false; }
  return read_rational_vector(v, where, v.size(), out, why);
}
bool mat(const Value& v, const std::string& where, QMat& out, std::string& why) {
  if (v.type != json::Type::Array || v.empty()) { why = where + ": expected a non-empty array of rows"; return false; }
  out.assign(v.size(), {});
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!vec(*v.at(i), claim_at(where, i), out[i], why)) return false;
    if (out[i].size() != out[0].size() || out[i].empty()) { why = claim_at(where, i) + ": ragged or empty row"; return false; }
  }
  return true;
}
bool field_mat(const Value& c, const std::string& key, QMat& out, std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::Array, why);
  return v && mat(*v, key, out, why);
}
bool field_vec(const Value& c, const std::string& key, QRow& out, std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::Array, why);
  return v && vec(*v, key, out, why);
}
bool field_q(const Value& c, const std::string& key, mpq_class& out, std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::String, why);
  return v && read_rational(*v, key, out, why);
}
bool field_size(const Value& c, const std::string& key, std::size_t& out, std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::Number, why);
  return v && read_size(*v, key, kMaxDimension, out, why);
}
bool field_mats(const Value& c, const std::string& key, std::vector<QMat>& out, std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::Array, why);
  if (!v) return false;
  if (v->empty()) { why = key + ": empty"; return false; }
  out.assign(v->size(), {});
  for (std::size_t i = 0; i < v->size(); ++i)
    if (!mat(*v->at(i), claim_at(key, i), out[i], why)) return false;
  for (const auto& m : out)
    if (m.size() != out[0].size() || m[0].size() != out[0][0].size()) { why = key + ": shapes differ"; return false; }
  return true;
}
bool field_indices(const Value& c, const std::string& key, std::size_t bound, std::vector<std::size_t>& out,
                   std::string& why) {
  const Value* v = member(c, "certificate", key, json::Type::Array, why);
  return v && read_index_set(*v, key, v->size(), bound, out, why);
}

// ---- exact matrix helpers --------------------------------------------------------------------------
std::size_t cols(const QMat& a) { return a.empty() ? 0 : a[0].size(); }
QMat transpose(const QMat& a) {
  QMat t(cols(a), QRow(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < cols(a); ++j) t[j][i] = a[i][j];
  return t;
}
QMat mul(const QMat& a, const QMat& b) {
  QMat c(a.size(), QRow(cols(b), 0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < b.size(); ++k) {
      if (a[i][k] == 0) continue;
      for (std::size_t j = 0; j < cols(b); ++j) c[i][j] += a[i][k] * b[k][j];
    }
  return c;
}
bool all_zero(const QRow& v) { return std::all_of(v.begin(), v.end(), [](const mpq_class& q) { return q == 0; }); }

// Certified LOWER bound on the rank of a rational matrix.
std::size_t rank_lower(const QMat& a) {
  if (a.empty()) return 0;
  return rank_mod_p(reduce_mod(scale_rows_to_integers(a), kP), kP);
}
QMat rows_of(const QMat& a, const std::vector<std::size_t>& idx) {
  QMat s;
  for (auto i : idx) s.push_back(a[i]);
  return s;
}
// Every k-subset of the rows independent (exhaustive, each certified mod p). Sound as a lower bound.
bool kruskal_at_least(const QMat& v, std::size_t k, std::string& why, const std::string& what) {
  std::size_t T = v.size();
  if (k == 0) return true;
  if (k > T) { why = what + ": Kruskal rank >= " + std::to_string(k) + " impossible for " + std::to_string(T) + " vectors"; return false; }
  // Cost before the enumeration: C(T, k) subsets, each a rank mod p of a k x d matrix.
  mpz_class subsets;
  mpz_bin_uiui(subsets.get_mpz_t(), T, k);
  const double d = v.empty() ? 0 : double(v[0].size());
  if (!within_budget(subsets.get_d() * double(k) * double(k) * d, double(k) * d * 64,
                     what + ": the exhaustive Kruskal check (C(" + std::to_string(T) + ", " + std::to_string(k) + ") subsets)", why))
    return false;
  std::vector<std::size_t> idx(k);
  for (std::size_t i = 0; i < k; ++i) idx[i] = i;
  while (true) {
    if (rank_lower(rows_of(v, idx)) < k) { why = what + ": a " + std::to_string(k) + "-subset is not independent mod p"; return false; }
    std::size_t i = k;
    while (i > 0 && idx[i - 1] == T - k + i - 1) --i;
    if (i == 0) return true;
    ++idx[i - 1];
    for (std::size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}
// Kernel vectors (given as a list) of `a`: a v = 0 exactly and independent. Returns the certified upper
// bound cols(a) - count on rank a through `upper`.
bool kernel_upper(const QMat& a, const Value& c, const std::string& key, std::size_t& upper, std::string& why) {
  const Value* kv = member(c, "certificate", key, json::Type::Array, why);
  if (!kv) return false;
  QMat K;
  for (std::size_t i = 0; i < kv->size(); ++i) {
    QRow v;
    if (!vec(*kv->at(i), claim_at(key, i), v, why)) return false;
    if (v.size() != cols(a)) { why = claim_at(key, i) + ": length " + std::to_string(v.size()) + ", expected " + std::to_string(cols(a)); return false; }
    if (!all_zero(qmat_mul_vec(a, v))) { why = claim_at(key, i) + ": not in the kernel (exact product non-zero)"; return false; }
    K.push_back(v);
  }
  if (rank_lower(K) != K.size()) { why = key + ": vectors not certified independent"; return false; }
  upper = cols(a) - K.size();
  return true;
}

bool read_verdict(const Value& c, std::string& verdict, std::string& why) {
  if (!read_string(c, "certificate", "verdict", verdict, why)) return false;
  if (verdict != "confirmed" && verdict != "counterexample") { why = "verdict: expected confirmed|counterexample"; return false; }
  return true;
}
bool expect_verdict(const std::string& got, const char* want, std::string& why) {
  if (got != want) { why = std::string("verdict: this claim id only admits \"") + want + "\""; return false; }
  return true;
}

// ---- attention: weights and the representation matrix ---------------------------------------------
// alpha[h][t] (n entries each, all > 0, summing to 1: points of the open simplex = softmax outputs).
bool read_alphas(const Value& c, std::size_t H, std::size_t T, std::size_t n, std::vector<QMat>& alpha, std::string& why) {
  const Value* av = member(c, "certificate", "alpha", json::Type::Array, why);
  if (!av) return false;
  if (av->size() != H) { why = "alpha: expected H = " + std::to_string(H) + " heads"; return false; }
  alpha.assign(H, {});
  for (std::size_t h = 0; h < H; ++h) {
    if (!mat(*av->at(h), claim_at("alpha", h), alpha[h], why)) return false;
    if (alpha[h].size() != T || cols(alpha[h]) != n) { why = claim_at("alpha", h) + ": expected T x n"; return false; }
    for (std::size_t t = 0; t < T; ++t) {
      mpq_class s = 0;
      for (const auto& x : alpha[h][t]) {
        if (x <= 0) { why = claim_at(claim_at("alpha", h), t) + ": a weight is not positive"; return false; }
        s += x;
      }
      if (s != 1) { why = claim_at(claim_at("alpha", h), t) + ": weights do not sum to 1"; return false; }
    }
  }
  return true;
}
QMat representation(const std::vector<QMat>& ctx, const std::vector<QMat>& alpha) {
  std::size_t H = alpha.size(), T = alpha[0].size(), n = ctx[0].size(), d = cols(ctx[0]);
  QMat Z(T, QRow(H * d, 0));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t) {
      const QMat& E = ctx.size() == 1 ? ctx[0] : ctx[t];
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < d; ++j) Z[t][h * d + j] += alpha[h][t][k] * E[k][j];
    }
  return Z;
}

// Propositions 2 and 5 and the non-shared ablation: rank bounds on Z.
bool check_rank_claim(const Value& c, const std::string& claim, std::string& why) {
  std::size_t H, n, d, T, lower;
  std::string verdict;
  if (!field_size(c, "H", H, why) || !field_size(c, "n", n, why) || !field_size(c, "d", d, why) ||
      !field_size(c, "T", T, why) || !field_size(c, "rank_Z_lower", lower, why) || !read_verdict(c, verdict, why))
    return false;
  if (H == 0 || n == 0 || d == 0 || T == 0) { why = "sizes must be positive"; return false; }
  std::vector<QMat> ctx, alpha;
  if (!field_mats(c, "contexts", ctx, why) || !read_alphas(c, H, T, n, alpha, why)) return false;
  if (ctx[0].size() != n || cols(ctx[0]) != d) { why = "contexts: expected n x d"; return false; }
  bool prop5 = claim == "mahdavi24/proposition-5";
  bool prop5_ablation = claim == "mahdavi24/proposition-5-nonconstant-sums";
  bool shared_claim = claim == "mahdavi24/proposition-2";
  if (shared_claim && ctx.size() != 1) { why = "contexts: proposition-2 needs one shared context"; return false; }
  if (!shared_claim && ctx.size() != T) { why = "contexts: expected T contexts"; return false; }
  std::size_t bound;
  QMat Z = representation(ctx, alpha);
  if (prop5) {
    mpq_class s;
    if (!field_q(c, "s", s, why)) return false;
    for (std::size_t t = 0; t < ctx.size(); ++t)
      for (std::size_t k = 0; k < n; ++k) {
        mpq_class sum = 0;
        for (const auto& x : ctx[t][k]) sum += x;
        if (sum != s) { why = "contexts[" + std::to_string(t) + "][" + std::to_string(k) + "]: coordinate sum is not s"; return false; }
      }
    bound = H * (d - 1) + (s == 0 ? 0 : 1);
  } else if (prop5_ablation) {
    bound = H * (d - 1) + 1;
  } else {
    bound = H * (n - 1) + 1;
  }
  if (rank_lower(Z) < lower) { why = "rank_Z_lower: Z has no non-zero minor of that size mod p"; return false; }
  if (verdict == "counterexample") {
    if (lower <= bound) { why = "rank_Z_lower does not exceed the bound " + std::to_string(bound); return false; }
    return true;
  }
  if (claim == "mahdavi24/proposition-2-non-shared" || prop5_ablation)
    return expect_verdict(verdict, "counterexample", why);
  std::size_t b;
  if (!field_size(c, "bound", b, why)) return false;
  if (b != bound) { why = "bound: expected " + std::to_string(bound); return false; }
  std::size_t upper;
  if (prop5) {
    if (!kernel_upper(Z, c, "kernel_Z", upper, why)) return false;
  } else {
    // Z = A (I_H (x) E) with A = [alpha_1 .. alpha_H], so rank Z <= rank A.
    QMat A(T, QRow(H * n));
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t k = 0; k < n; ++k) A[t][h * n + k] = alpha[h][t][k];
    if (!kernel_upper(A, c, "kernel_A", upper, why)) return false;
  }
  if (upper > bound) { why = "kernel: certifies only rank <= " + std::to_string(upper); return false; }
  if (lower != bound) { why = "rank_Z_lower: the bound is not shown attained"; return false; }
  return true;
}

bool check_lemma2(const Value& c, const std::string& claim, std::string& why) {
  QMat X;
  mpq_class a;
  std::string verdict;
  if (!field_mat(c, "X", X, why) || !field_q(c, "a", a, why) || !read_verdict(c, verdict, why)) return false;
  std::size_t n = X.size(), d = cols(X);
  if (rank_lower(X) != n) { why = "X: rows not certified independent"; return false; }
  QRow colsum(d, 0);
  for (const auto& r : X)
    for (std::size_t j = 0; j < d; ++j) colsum[j] += r[j];
  QMat Y = X;
  for (auto& r : Y)
    for (std::size_t j = 0; j < d; ++j) r[j] += a * colsum[j];
  bool boundary = claim == "mahdavi24/lemma-2-boundary";
  bool at_boundary = a * static_cast<long>(n) == -1;
  if (boundary && !at_boundary) { why = "a: the boundary claim needs a = -1/n"; return false; }
  if (!boundary && at_boundary) { why = "a: Lemma 2 excludes a = -1/n"; return false; }
  if (verdict == "confirmed") {
    if (boundary) return expect_verdict(verdict, "counterexample", why);
    if (rank_lower(Y) != n) { why = "Y: rows not certified independent"; return false; }
    return true;
  }
  QRow coef;
  if (!field_vec(c, "coefficients", coef, why)) return false;
  if (coef.size() != n || all_zero(coef)) { why = "coefficients: expected n values, not all zero"; return false; }
  QRow comb(d, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) comb[j] += coef[i] * Y[i][j];
  if (!all_zero(comb)) { why = "coefficients: sum c_i y_i != 0"; return false; }
  return true;
}

QRow mean_token(const QMat& E) {
  QRow m(cols(E), 0);
  for (const auto& r : E)
    for (std::size_t j = 0; j < m.size(); ++j) m[j] += r[j];
  for (auto& x : m) x /= static_cast<long>(E.size());
  return m;
}

bool check_prop4(const Value& c, const std::string& claim, std::string& why) {
  std::vector<QMat> ctx;
  QMat Q, WK, WQ, WV, WO;
  std::string verdict;
  if (!field_mats(c, "contexts", ctx, why) || !field_mat(c, "queries", Q, why) || !field_mat(c, "W_K", WK, why) ||
      !field_mat(c, "W_Q", WQ, why) || !field_mat(c, "W_V", WV, why) || !field_mat(c, "W_O", WO, why) ||
      !read_verdict(c, verdict, why))
    return false;
  std::size_t T = ctx.size(), n = ctx[0].size(), d = cols(ctx[0]);
  if (Q.size() != T || cols(Q) != d || WK.size() != d || WQ.size() != d || cols(WK) != cols(WQ) ||
      WV.size() != d || WO.size() != cols(WV) || cols(WO) != d) { why = "shapes do not match"; return false; }
  // Uniform attention: W_K W_Q^T = 0 makes every logit 0, so softmax is exactly 1/n.
  for (const auto& r : mul(WK, transpose(WQ)))
    if (!all_zero(r)) { why = "W_K W_Q^T != 0: attention is not uniform"; return false; }
  QMat M = transpose(mul(WV, WO));  // output = M p + x with p the mean token
  mpq_class lambda = M[0][0];
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j)
      if (M[i][j] != (i == j ? lambda : mpq_class(0))) { why = "W_V W_O is not lambda I"; return false; }
  // Variants (proofs/mahdavi24/proposition_4.cpp): which lambda each one speaks about.
  const bool at_one = claim == "mahdavi24/proposition-4" || claim == "mahdavi24/proposition-4-without-assumption-3";
  const bool minus_one = claim == "mahdavi24/proposition-4-lambda-minus-1";
  if (at_one && lambda != 1) { why = "this claim is about W_V W_O = I (lambda = 1)"; return false; }
  if (minus_one != (lambda == -1)) { why = minus_one ? "lambda must be -1" : "lambda = -1 is excluded"; return false; }
  if (claim == "mahdavi24/proposition-4-lambda-not-1" && lambda == 1) { why = "lambda must differ from 1"; return false; }
  std::size_t k = std::min(n, T);
  QMat a3(T), outq(T);
  for (std::size_t t = 0; t < T; ++t) {
    if (rank_lower(ctx[t]) != n) { why = "contexts[" + std::to_string(t) + "]: Assumption 2 not certified on the input"; return false; }
    QRow xb = mean_token(ctx[t]);
    a3[t] = Q[t];
    outq[t] = Q[t];
    for (std::size_t j = 0; j < d; ++j) { a3[t][j] += xb[j]; outq[t][j] += lambda * xb[j]; }
  }
  auto out_context = [&](std::size_t t) {  // x + lambda xbar for every token x of context t
    QRow xb = mean_token(ctx[t]);
    QMat out = ctx[t];
    for (auto& r : out)
      for (std::size_t j = 0; j < d; ++j) r[j] += lambda * xb[j];
    return out;
  };
  auto assumption2_out = [&] {
    for (std::size_t t = 0; t < T; ++t)
      if (rank_lower(out_context(t)) != n) { why = "output context " + std::to_string(t) + ": Assumption 2 not certified"; return false; }
    return true;
  };
  if (claim == "mahdavi24/proposition-4") {
    if (!expect_verdict(verdict, "confirmed", why)) return false;
    if (!kruskal_at_least(a3, k, why, "Assumption 3 on the input")) return false;
    if (!kruskal_at_least(outq, k, why, "Assumption 1 on the output")) return false;
    return assumption2_out();
  }
  if (claim == "mahdavi24/proposition-4-assumption-2")
    return expect_verdict(verdict, "confirmed", why) && assumption2_out();
  if (!expect_verdict(verdict, "counterexample", why)) return false;
  if (minus_one) {
    // Assumption 2 on the input holds (checked above); one output context has a non-zero exact kernel vector.
    std::size_t t;
    QRow coef;
    if (!field_size(c, "context", t, why) || !field_vec(c, "coefficients", coef, why)) return false;
    if (t >= T || coef.size() != n || all_zero(coef)) { why = "context / coefficients: out of range or zero"; return false; }
    QMat out = out_context(t);
    QRow comb(d, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < d; ++j) comb[j] += coef[i] * out[i][j];
    if (!all_zero(comb)) { why = "coefficients: the output context's rows are not dependent with them"; return false; }
    return true;
  }
  // Assumption 1 holds on the input and fails on the output (for lambda != 1 also Assumption 3 on the input).
  if (!kruskal_at_least(Q, k, why, "Assumption 1 on the input")) return false;
  if (claim == "mahdavi24/proposition-4-lambda-not-1" && !kruskal_at_least(a3, k, why, "Assumption 3 on the input"))
    return false;
  std::vector<std::size_t> sub;
  QRow coef;
  if (!field_indices(c, "dependent_subset", T, sub, why) || !field_vec(c, "coefficients", coef, why)) return false;
  if (sub.size() != k || coef.size() != k || all_zero(coef)) { why = "dependent_subset: expected k indices and non-zero coefficients"; return false; }
  QRow comb(d, 0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < d; ++j) comb[j] += coef[i] * outq[sub[i]][j];
  if (!all_zero(comb)) { why = "coefficients: the output queries' combination is not zero"; return false; }
  return true;
}

bool claim_check_prop3(const Value& c, std::string& why) {
  std::size_t d, n, m, T;
  QMat X, E, W;
  QRow b, v;
  std::string verdict;
  if (!field_size(c, "d", d, why) || !field_size(c, "n", n, why) || !field_size(c, "m", m, why) ||
      !field_size(c, "T", T, why) || !field_mat(c, "queries", X, why) || !field_mat(c, "context", E, why) ||
      !field_mat(c, "W", W, why) || !field_vec(c, "b", b, why) || !field_vec(c, "v", v, why) ||
      !read_verdict(c, verdict, why) || !expect_verdict(verdict, "confirmed", why))
    return false;
  if (T != m * (d + 2) + 1 || X.size() != T || cols(X) != d) { why = "T: expected m(d+2)+1 queries in R^d"; return false; }
  if (E.size() != n || cols(E) != d || n > d) { why = "context: expected n x d with n <= d"; return false; }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j)
      if (E[i][j] != (i == j ? 1 : 0)) { why = "context: expected the first n standard basis vectors"; return false; }
  if (W.size() != m || cols(W) != (n + 1) * d || b.size() != m || v.size() != m) { why = "network: shapes"; return false; }
  if (!kruskal_at_least(X, std::min(T, d), why, "General Position of the queries")) return false;  // => Assumption 1
  if (rank_lower(E) != n) { why = "Assumption 2"; return false; }
  auto net = [](const QMat& w, const QRow& bb, const QRow& vv, const QRow& x) {
    QRow h = qmat_mul_vec(w, x);
    mpq_class y = 0;
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i] + bb[i] > 0) y += vv[i] * (h[i] + bb[i]);
    return y;
  };
  QMat Wq(m, QRow(d));
  QRow bp = b;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < d; ++j) Wq[i][j] = W[i][n * d + j];
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < d; ++j) bp[i] += W[i][k * d + j] * E[k][j];
  }
  for (std::size_t t = 0; t < T; ++t) {
    QRow full;
    for (const auto& r : E) full.insert(full.end(), r.begin(), r.end());
    full.insert(full.end(), X[t].begin(), X[t].end());
    if (net(W, b, v, full) != net(Wq, bp, v, X[t])) { why = "reduction identity fails at example " + std::to_string(t); return false; }
  }
  return true;
}

bool check_lemma1(const Value& c, const std::string& claim, std::string& why) {
  QMat A, B, D, C;
  std::string verdict;
  if (!field_mat(c, "A", A, why) || !field_mat(c, "B", B, why) || !field_mat(c, "D", D, why) || !read_verdict(c, verdict, why)) return false;
  bool ablation = claim == "mahdavi24/lemma-1-nonzero-block";
  if (ablation) {
    if (!field_mat(c, "C", C, why)) return false;
  } else {
    C.assign(D.size(), QRow(cols(A), 0));
  }
  if (B.size() != A.size() || cols(B) != cols(D) || C.size() != D.size() || cols(C) != cols(A)) { why = "block shapes"; return false; }
  QMat M;
  for (std::size_t i = 0; i < A.size(); ++i) { QRow r = A[i]; r.insert(r.end(), B[i].begin(), B[i].end()); M.push_back(r); }
  for (std::size_t i = 0; i < D.size(); ++i) { QRow r = C[i]; r.insert(r.end(), D[i].begin(), D[i].end()); M.push_back(r); }
  if (verdict == "confirmed") {
    if (ablation) return expect_verdict(verdict, "counterexample", why);
    std::size_t ua, ud;
    if (!kernel_upper(A, c, "kernel_A", ua, why) || !kernel_upper(D, c, "kernel_D", ud, why)) return false;
    if (rank_lower(M) < ua + ud) { why = "rank of the block matrix not certified >= rank A + rank D"; return false; }
    return true;
  }
  std::size_t um;
  if (!kernel_upper(M, c, "kernel_M", um, why)) return false;
  if (um >= rank_lower(A) + rank_lower(D)) { why = "rank M not certified below rank A + rank D"; return false; }
  return true;
}

bool distinct(const QRow& v) {
  QRow s = v;
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

bool check_lemma3(const Value& c, const std::string& claim, std::string& why) {
  std::vector<QMat> ctx;
  QMat Q;
  std::size_t k;
  std::string verdict;
  if (!field_mats(c, "contexts", ctx, why) || !field_mat(c, "queries", Q, why) || !field_size(c, "k", k, why) ||
      !read_verdict(c, verdict, why))
    return false;
  std::size_t T = ctx.size(), n = ctx[0].size(), d = cols(ctx[0]);
  if (Q.size() != T || cols(Q) != d) { why = "queries: expected T x d"; return false; }
  std::vector<std::size_t> R;
  if (!field_indices(c, "R", T, R, why)) return false;
  for (std::size_t t = 0; t < T; ++t)
    if (rank_lower(ctx[t]) != n) { why = "contexts[" + std::to_string(t) + "]: full rank not certified"; return false; }
  if (!kruskal_at_least(Q, k, why, "queries")) return false;
  if (claim == "mahdavi24/lemma-3") {
    if (!expect_verdict(verdict, "confirmed", why)) return false;
    if (R.size() + 1 > k) { why = "R: |R| <= k-1 required"; return false; }
    QRow w, g;
    if (!field_vec(c, "w", w, why) || !field_vec(c, "g", g, why)) return false;
    if (w.size() != d || g.size() != d) { why = "w, g: expected length d"; return false; }
    std::vector<bool> inR(T, false);
    for (auto t : R) inR[t] = true;
    for (std::size_t t = 0; t < T; ++t) {
      mpq_class we = 0;
      for (std::size_t j = 0; j < d; ++j) we += w[j] * Q[t][j];
      if (inR[t]) {
        if (we != 0) { why = "(20) fails: W' e^(" + std::to_string(t) + ") != 0"; return false; }
        continue;
      }
      QRow s = qmat_mul_vec(ctx[t], g);
      for (auto& x : s) x *= we;
      if (we == 0 || !distinct(s)) { why = "(21) fails at example " + std::to_string(t); return false; }
    }
    return true;
  }
  // Boundary: |R| = k and a query outside R in the span of R's queries.
  if (!expect_verdict(verdict, "counterexample", why)) return false;
  std::size_t t0;
  QRow coef;
  if (!field_size(c, "t0", t0, why) || !field_vec(c, "coefficients", coef, why)) return false;
  if (R.size() != k) { why = "R: the boundary case has |R| = k"; return false; }
  if (t0 >= T || std::find(R.begin(), R.end(), t0) != R.end()) { why = "t0: must be an example outside R"; return false; }
  if (coef.size() != R.size() || n < 2) { why = "coefficients: one per element of R (and n >= 2)"; return false; }
  if (claim == "mahdavi24/theorem-1-dependent-queries") {
    // Theorem 1's grouping with r = |R| + 1 <= n: R_1 = {0..r-1}, R_2 = {r..2r-2}; t0 must lie in R_1.
    std::size_t r = R.size() + 1;
    if (r > n || t0 >= r) { why = "t0/R: not Theorem 1's grouping (t0 in R_1, r <= n)"; return false; }
    for (std::size_t i = 0; i < R.size(); ++i)
      if (R[i] != r + i) { why = "R: expected Theorem 1's group R_2 = {r, ..., 2r-2}"; return false; }
  }
  for (std::size_t j = 0; j < d; ++j) {
    mpq_class s = 0;
    for (std::size_t i = 0; i < R.size(); ++i) s += coef[i] * Q[R[i]][j];
    if (s != Q[t0][j]) { why = "coefficients: e^(t0) != sum c_i e^(R_i)"; return false; }
  }
  return true;
}

bool check_lemma4(const Value& c, const std::string& claim, std::string& why) {
  QMat E, W, Wp;
  QRow e;
  std::string verdict;
  if (!field_mat(c, "E", E, why) || !field_mat(c, "W", W, why) || !field_mat(c, "W_prime", Wp, why) ||
      !field_vec(c, "e", e, why) || !read_verdict(c, verdict, why))
    return false;
  std::size_t n = E.size(), d = cols(E);
  if (W.size() != d || cols(W) != d || Wp.size() != d || cols(Wp) != d || e.size() != d) { why = "shapes"; return false; }
  QRow b = qmat_mul_vec(E, qmat_mul_vec(W, e)), s = qmat_mul_vec(E, qmat_mul_vec(Wp, e));
  if (claim == "mahdavi24/lemma-4") {
    if (!expect_verdict(verdict, "confirmed", why)) return false;
    std::size_t js;
    if (!field_size(c, "j_star", js, why)) return false;
    if (js >= n) { why = "j_star out of range"; return false; }
    for (std::size_t j = 0; j < n; ++j)
      if (j != js && s[j] >= s[js]) { why = "s has no unique maximum at j_star"; return false; }
    const Value* st = member(c, "certificate", "steps", json::Type::Array, why);
    if (!st) return false;
    if (st->empty()) { why = "steps: empty"; return false; }
    for (std::size_t i = 0; i < st->size(); ++i) {
      mpq_class eps, cc;
      const json::Item step = st->at(i);
      const Value& item = *step;
      const Value* ev = member(item, claim_at("steps", i), "eps", json::Type::String, why);
      const Value* cv = ev ? member(item, claim_at("steps", i), "c", json::Type::String, why) : nullptr;
      if (!cv || !read_rational(*ev, claim_at("steps", i) + ".eps", eps, why) || !read_rational(*cv, claim_at("steps", i) + ".c", cc, why)) return false;
      if (eps <= 0 || cc < 0) { why = claim_at("steps", i) + ": need eps > 0, c >= 0"; return false; }
      // ||softmax - e_j*||_1 = 2 (1 - alpha_j*) <= 2 sum_{j != j*} exp(b_j - b_j* + c (s_j - s_j*)); each
      // exponent decreases in c because s_j < s_j*, so the bound holds for every c' >= c.
      Interval S(mpq_class(0));
      for (std::size_t j = 0; j < n; ++j)
        if (j != js) S = S + exp(Interval(mpq_class(b[j] - b[js] + cc * (s[j] - s[js]))));
      Interval dist = Interval(mpq_class(2)) * S;
      if (!dist.upper_below(eps)) { why = claim_at("steps", i) + ": L1 distance not certified below eps"; return false; }
    }
    return true;
  }
  // Tied maximum: for c >= 0 the tied weights are >= softmax(b) at those indices.
  if (!expect_verdict(verdict, "counterexample", why)) return false;
  std::vector<std::size_t> tied;
  mpq_class L;
  if (!field_indices(c, "tied", n, tied, why) || !field_q(c, "weight_lower", L, why)) return false;
  if (tied.size() != 2 || L <= 0) { why = "tied: two indices and a positive lower bound"; return false; }
  mpq_class mx = *std::max_element(s.begin(), s.end());
  if (s[tied[0]] != mx || s[tied[1]] != mx) { why = "tied: not both at the maximum of s"; return false; }
  Interval den(mpq_class(0));
  for (std::size_t j = 0; j < n; ++j) den = den + exp(Interval(b[j]));
  for (auto j : tied) {
    Interval a = exp(Interval(b[j])) / den;
    if (!a.lower_above(L)) { why = "weight_lower: not certified below the tied weights"; return false; }
  }
  return true;
}

bool check_lemma5(const Value& c, const std::string& claim, std::string& why) {
  QMat A;
  std::string verdict;
  if (!field_mat(c, "A", A, why) || !read_verdict(c, verdict, why)) return false;
  std::size_t m = A.size(), q = cols(A);
  if (claim == "mahdavi24/lemma-5") {
    QMat P;
    mpq_class mu;
    std::vector<std::size_t> S;
    if (!field_mat(c, "P", P, why) || !field_q(c, "mu", mu, why) || !field_indices(c, "rows", m, S, why)) return false;
    if (P.size() != m || cols(P) != q) { why = "P: shape"; return false; }
    std::size_t ua;
    if (!kernel_upper(A, c, "kernel_A", ua, why)) return false;
    if (S.size() != ua) { why = "rows: expected rank A rows"; return false; }
    QMat AS = rows_of(A, S), G = mul(AS, transpose(AS));
    for (std::size_t i = 0; i < G.size(); ++i) G[i][i] -= mu;
    if (mu <= 0 || !positive_definite_ldlt(G)) { why = "A_S A_S^T - mu I not positive definite"; return false; }
    mpq_class fro = 0;
    for (const auto& r : P)
      for (const auto& x : r) fro += x * x;
    if (fro >= mu) { why = "||B - A||_F^2 >= mu: hypothesis not certified"; return false; }
    QMat B = A;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < q; ++j) B[i][j] += P[i][j];
    if (verdict == "confirmed") {
      if (rank_lower(B) < ua) { why = "rank B not certified >= rank A"; return false; }
      return true;
    }
    std::size_t ub;
    if (!kernel_upper(B, c, "kernel_B", ub, why)) return false;
    if (ub >= S.size()) { why = "rank B not certified below rank A"; return false; }
    return true;
  }
  if (!expect_verdict(verdict, "counterexample", why)) return false;
  QMat C;
  QRow x, y;
  mpq_class s2;
  if (!field_mat(c, "C", C, why) || !field_vec(c, "x", x, why) || !field_vec(c, "y", y, why) || !field_q(c, "s2", s2, why)) return false;
  if (m != q || C.size() != m || x.size() != m || y.size() != m || s2 <= 0) { why = "shapes"; return false; }
  if (rank_lower(A) != m) { why = "A: full rank not certified"; return false; }
  QMat AAt = mul(A, transpose(A)), CCt = mul(C, transpose(C));
  for (std::size_t i = 0; i < m; ++i) AAt[i][i] -= s2;
  if (AAt != CCt) { why = "A A^T - s2 I != C C^T (sigma_min(A)^2 >= s2 not shown)"; return false; }
  mpq_class xx = 0, yy = 0;
  for (std::size_t i = 0; i < m; ++i) { xx += x[i] * x[i]; yy += y[i] * y[i]; }
  if (xx * yy != s2) { why = "||x y^T||_2^2 != s2"; return false; }
  QMat B = A;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) B[i][j] += x[i] * y[j];
  std::size_t ub;
  if (!kernel_upper(B, c, "kernel_B", ub, why)) return false;
  if (ub >= m) { why = "kernel_B: no rank drop"; return false; }
  return true;
}

// The float64 sinusoidal encodings' rank margin (P recomputed by the checker, sinusoidal.hpp): sigma_min(P)^2 <= ||u^T P||^2 / ||u||^2 <= delta2 <= 1e-24.
bool check_pe_margin(const Value& c, const std::string&, std::string& why) {
  QMat P;
  QRow u;
  mpq_class delta2;
  std::string verdict;
  if (!field_mat(c, "matrix", P, why) || !field_vec(c, "u", u, why) || !field_q(c, "delta2", delta2, why) ||
      !read_verdict(c, verdict, why) || !expect_verdict(verdict, "counterexample", why))
    return false;
  if (u.size() != P.size() || P.size() > cols(P) || all_zero(u)) { why = "u: expected a non-zero vector of length n <= d"; return false; }
  // The claim is about THE float64 encodings: the matrix is recomputed from its shape, not believed. The
  // C library's sin/cos/exp (which models and numpy use) are faithful, not always correctly rounded, so
  // each entry must be the correctly rounded value or one of its two double neighbours (error < 1 ulp):
  // the checker's fixed rule, never the certificate's; the margin is then checked on the given matrix.
  const QMat want = sinusoidal_encoding_float64(P.size(), cols(P));
  for (std::size_t i = 0; i < P.size(); ++i)
    for (std::size_t j = 0; j < cols(P); ++j) {
      if (P[i][j] == want[i][j]) continue;
      const double w = want[i][j].get_d();  // exact: want holds doubles
      const bool neighbour = P[i][j] == mpq_class(std::nextafter(w, HUGE_VAL)) ||
                             P[i][j] == mpq_class(std::nextafter(w, -HUGE_VAL));
      if (neighbour) continue;
      why = "matrix[" + std::to_string(i) + "][" + std::to_string(j) + "]: not the float64 sinusoidal encoding (recomputed " +
            want[i][j].get_str() + ", within 1 ulp accepted)";
      return false;
    }
  if (delta2 > mpq_class(1, 1) / mpq_class("1000000000000000000000000")) { why = "delta2: above 1e-24"; return false; }
  mpq_class num = 0, den = 0;
  for (std::size_t j = 0; j < cols(P); ++j) {
    mpq_class s = 0;
    for (std::size_t i = 0; i < P.size(); ++i) s += u[i] * P[i][j];
    num += s * s;
  }
  for (const auto& x : u) den += x * x;
  if (num > delta2 * den) { why = "||u^T P||^2 > delta2 ||u||^2"; return false; }
  return true;
}

// Step 2: predictions y_hat = W_D^T W_O^T [W_V^h^T p_h]_h equal the labels for every example.
bool check_readout(const Value& c, const std::string&, std::string& why) {
  std::size_t H, n, d, T;
  std::string verdict;
  std::vector<QMat> ctx, alpha, WV;
  QMat Y, WO, WD;
  if (!field_size(c, "H", H, why) || !field_size(c, "n", n, why) || !field_size(c, "d", d, why) ||
      !field_size(c, "T", T, why) || !read_verdict(c, verdict, why) || !expect_verdict(verdict, "confirmed", why) ||
      !field_mats(c, "contexts", ctx, why) || !read_alphas(c, H, T, n, alpha, why) || !field_mat(c, "labels", Y, why) ||
      !field_mats(c, "W_V", WV, why) || !field_mat(c, "W_O", WO, why) || !field_mat(c, "W_D", WD, why))
    return false;
  if (ctx.size() != T || ctx[0].size() != n || cols(ctx[0]) != d || Y.size() != T || WV.size() != H ||
      WV[0].size() != d) { why = "shapes"; return false; }
  std::size_t dv = cols(WV[0]), dout = cols(Y);
  if (WO.size() != H * dv || cols(WO) != d || WD.size() != d || cols(WD) != dout) { why = "W_O/W_D shapes"; return false; }
  if (dv < dout || d < dout) { why = "Step 2 needs d_v >= d_out and d >= d_out"; return false; }
  QMat Z = representation(ctx, alpha);
  for (std::size_t t = 0; t < T; ++t) {
    QRow stacked;
    for (std::size_t h = 0; h < H; ++h) {
      QRow p(Z[t].begin() + h * d, Z[t].begin() + (h + 1) * d);
      QRow o = qmat_mul_vec(transpose(WV[h]), p);
      stacked.insert(stacked.end(), o.begin(), o.end());
    }
    if (qmat_mul_vec(transpose(WD), qmat_mul_vec(transpose(WO), stacked)) != Y[t]) { why = "example " + std::to_string(t) + ": prediction != label"; return false; }
  }
  return true;
}

// Theorem 1 without d >= d_out: Assumptions 1-2, T = H(r-1)+1, rank(labels) > d.
bool check_dout(const Value& c, const std::string&, std::string& why) {
  std::size_t H, dh, dout;
  std::string verdict;
  std::vector<QMat> ctx;
  QMat Q, Y;
  if (!field_size(c, "H", H, why) || !field_size(c, "d_h", dh, why) || !field_size(c, "d_out", dout, why) ||
      !read_verdict(c, verdict, why) || !expect_verdict(verdict, "counterexample", why) ||
      !field_mats(c, "contexts", ctx, why) || !field_mat(c, "queries", Q, why) || !field_mat(c, "labels", Y, why))
    return false;
  std::size_t T = ctx.size(), n = ctx[0].size(), d = cols(ctx[0]);
  if (H == 0 || dh == 0 || n >= d || Q.size() != T || cols(Q) != d || Y.size() != T || cols(Y) != dout) { why = "shapes (the theorem takes n < d)"; return false; }
  std::size_t r = std::min(n, dh);
  if (T > H * (r - 1) + 1) { why = "T exceeds H(r-1)+1"; return false; }
  for (std::size_t t = 0; t < T; ++t)
    if (rank_lower(ctx[t]) != n) { why = "Assumption 2 not certified"; return false; }
  if (!kruskal_at_least(Q, std::min(n, T), why, "Assumption 1")) return false;
  if (rank_lower(Y) <= d) { why = "labels: rank not certified above d"; return false; }
  return true;
}

}  // namespace

bool check_claim_per_head_scales(const Value& c, const std::string& claim, std::string& why);  // check_claim_scales.cpp
bool check_claim_ks_consistency(const Value& c, const std::string& claim, std::string& why);   // check_claim_ks_consistency.cpp

bool check_claim(const json::Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "certificate", "claim", claim, why)) return false;
  using Fn = std::function<bool(const Value&, const std::string&, std::string&)>;
  static const std::map<std::string, Fn> table = {
      {"mahdavi24/proposition-2", check_rank_claim},
      {"mahdavi24/proposition-2-non-shared", check_rank_claim},
      {"mahdavi24/proposition-5", check_rank_claim},
      {"mahdavi24/proposition-5-nonconstant-sums", check_rank_claim},
      {"mahdavi24/proposition-3", [](const Value& c, const std::string&, std::string& w) { return claim_check_prop3(c, w); }},
      {"mahdavi24/proposition-4", check_prop4},
      {"mahdavi24/proposition-4-without-assumption-3", check_prop4},
      {"mahdavi24/proposition-4-assumption-2", check_prop4},
      {"mahdavi24/proposition-4-lambda-not-1", check_prop4},
      {"mahdavi24/proposition-4-lambda-minus-1", check_prop4},
      {"mahdavi24/lemma-1", check_lemma1},
      {"mahdavi24/lemma-1-nonzero-block", check_lemma1},
      {"mahdavi24/lemma-2", check_lemma2},
      {"mahdavi24/lemma-2-boundary", check_lemma2},
      {"mahdavi24/lemma-3", check_lemma3},
      {"mahdavi24/lemma-3-dependent-queries", check_lemma3},
      {"mahdavi24/theorem-1-dependent-queries", check_lemma3},
      {"mahdavi24/lemma-4", check_lemma4},
      {"mahdavi24/lemma-4-tied-maximum", check_lemma4},
      {"mahdavi24/lemma-5", check_lemma5},
      {"mahdavi24/lemma-5-equality", check_lemma5},
      {"vaswani17/sinusoidal-rank-margin", check_pe_margin},
      {"mahdavi24/step-2-readout", check_readout},
      {"mahdavi24/theorem-1-without-d-ge-dout", check_dout},
      {"mahdavi24/theorem-1-per-head-scales", check_claim_per_head_scales},
      {"mahdavi24/theorem-1-small-common-scale", check_claim_per_head_scales},
      {"ks25/theorem-4.1-inconsistent-labels", check_claim_ks_consistency},
      {"ks25/corollary-4.1-inconsistent-labels", check_claim_ks_consistency},
      {"ks25/theorem-D.1-inconsistent-labels", check_claim_ks_consistency},
  };
  auto it = table.find(claim);
  if (it == table.end()) { why = "claim: no claim checker for \"" + claim + "\""; return false; }
  return it->second(cert, claim, why);
}

}  // namespace memcert_checker

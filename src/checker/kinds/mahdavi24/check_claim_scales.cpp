// kind "claim", claims "mahdavi24/theorem-1-per-head-scales" (per-head saturation scales of the Theorem 1
// construction do not compose) and "mahdavi24/theorem-1-small-common-scale" (one saturating head re-scaled
// below the proof's c breaks the rank); docs/SATURATION.md. The certificate holds
//   "construction": a kind-"theorem1" certificate of the construction at the proof's scales (checked in
//                   full: its data satisfy Assumptions 1-2 and rank(Z) >= T = H(r-1)+1 is certified),
//   "heads":        [{"WK","WQ"}] per head (d x d_h), the same construction with head h's scale c_h
//                   replaced by "scales"[h] > 0 — checked exactly: W_K W_Q^T = W^h + (scales[h] - c_h) g w^T
//                   with c_h, g, w from the construction's trace (head 1 unchanged),
//   "rows":         [i, j], two examples with different labels.
// The checker recomputes, exactly: general position of the queries and Assumption 3 (every subset rank mod
// p), E^(i) = E^(j), and in every head logits of i and j equal up to an additive constant — then the
// softmax weights, hence the rows i and j of Z, are identical: rank(Z) <= T - 1 < T*, and no read-out
// gives the two examples their different labels. Verdict "counterexample" to "per-head scales compose".
#include <algorithm>

#include "kernel/context.hpp"
#include "kernel/exact.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

bool check_theorem1(const json::Value& cert, std::string& why);

namespace {

const ModP kPrime{(std::uint64_t{1} << 61) - 1};

bool rows_of(const Value& v, const std::string& where, std::size_t rows, std::size_t cols, QMat& out, std::string& why) {
  if (v.type != json::Type::Array || v.size() != rows) { why = where + ": expected " + std::to_string(rows) + " rows"; return false; }
  out.assign(rows, {});
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(*v.at(i), where + "[" + std::to_string(i) + "]", cols, out[i], why)) return false;
  return true;
}
const Value* path(const Value& obj, std::initializer_list<const char*> keys, json::Type last, std::string& why) {
  const Value* v = &obj;
  std::string where;
  std::size_t k = 0;
  for (const char* key : keys) {
    bool final = ++k == keys.size();
    v = member(*v, where, key, final ? last : json::Type::Object, why);
    if (!v) return nullptr;
    where += where.empty() ? key : std::string(".") + key;
  }
  return v;
}
QMat product_abt(const QMat& a, const QMat& b) {  // a b^T
  QMat c(a.size(), QRow(b.size(), 0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      for (std::size_t k = 0; k < a[i].size(); ++k) c[i][j] += a[i][k] * b[j][k];
  return c;
}
// Every k-subset of the rows independent: each subset's rank mod p (a lower bound on its rank over Q).
bool every_subset_independent(const QMat& v, std::size_t k, const std::string& what, std::string& why) {
  std::vector<std::size_t> idx(k);
  for (std::size_t i = 0; i < k; ++i) idx[i] = i;
  for (;;) {
    QMat s;
    for (auto i : idx) s.push_back(v[i]);
    if (rank_mod_p(reduce_mod(scale_rows_to_integers(s), kPrime), kPrime) < k) { why = what + ": a dependent subset"; return false; }
    std::size_t i = k;
    while (i > 0 && idx[i - 1] == v.size() - k + i - 1) --i;
    if (i == 0) return true;
    ++idx[i - 1];
    for (std::size_t j = i; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}

}  // namespace

bool check_claim_per_head_scales(const Value& c, const std::string& claim, std::string& why) {
  // "mahdavi24/theorem-1-small-common-scale": one saturating head (H = 2), so its scale is the network's
  // common scale, and it must lie strictly below the proof's c.
  const bool common = claim == "mahdavi24/theorem-1-small-common-scale";
  std::string verdict;
  if (!read_string(c, "certificate", "verdict", verdict, why)) return false;
  if (verdict != "counterexample") { why = "verdict: expected \"counterexample\""; return false; }
  const Value* cons = member(c, "certificate", "construction", json::Type::Object, why);
  if (!cons) return false;
  {
    std::string inner;
    if (!check_theorem1(*cons, inner)) { why = "construction: " + inner; return false; }
  }
  // Without the skip connection the predictions are a function of the rows of Z alone (eq. 8), so equal
  // rows mean equal predictions; with it, y_hat also reads e, and the claim would not follow.
  if (const Value* sk = cons->find("skip")) {
    if (sk->type != json::Type::Bool || sk->boolean) { why = "construction.skip: the claim is about the layer without skip connection"; return false; }
  }
  std::size_t H = 0, n = 0, d = 0, dh = 0, T = 0;
  for (auto [key, out] : {std::pair<const char*, std::size_t*>{"H", &H}, {"n", &n}, {"d", &d}, {"dh", &dh}, {"T", &T}}) {
    const Value* v = member(*cons, "construction", key, json::Type::Number, why);
    if (!v || !read_size(*v, std::string("construction.") + key, 64, *out, why)) return false;
  }
  // Small by design: exhaustive subsets below.
  if (T > 16 || d > 64) { why = "construction: the per-head-scales check takes T <= 16, d <= 64"; return false; }
  const Value* cv = path(*cons, {"data", "contexts"}, json::Type::Array, why);
  const Value* qv = path(*cons, {"data", "queries"}, json::Type::Array, why);
  const Value* yv = path(*cons, {"data", "labels"}, json::Type::Array, why);
  if (!cv || !qv || !yv) return false;
  if (cv->size() != T) { why = "construction.data.contexts: expected T contexts"; return false; }
  std::vector<QMat> E(T);
  for (std::size_t t = 0; t < T; ++t)
    if (!rows_of(*cv->at(t), "construction.data.contexts[" + std::to_string(t) + "]", n, d, E[t], why)) return false;
  QMat Q, Y;
  if (!rows_of(*qv, "construction.data.queries", T, d, Q, why)) return false;
  if (yv->type != json::Type::Array || yv->size() != T) { why = "construction.data.labels: expected T rows"; return false; }
  const std::size_t dout = yv->at(0)->type == json::Type::Array ? yv->at(0)->size() : 0;
  if (dout == 0 || !rows_of(*yv, "construction.data.labels", T, dout, Y, why)) return false;

  // The data's hypotheses beyond Assumptions 1-2 (those the theorem1 check certified): general position
  // and Assumption 3 ({e^(t) + xbar^(t)} of Kruskal rank >= n).
  if (!every_subset_independent(Q, std::min(T, d), "general position of the queries", why)) return false;
  QMat shifted = Q;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < d; ++k) {
      mpq_class s = 0;
      for (std::size_t i = 0; i < n; ++i) s += E[t][i][k];
      shifted[t][k] += s / mpq_class(static_cast<unsigned long>(n));
    }
  if (!every_subset_independent(shifted, std::min(T, n), "Assumption 3", why)) return false;

  // The two examples.
  const Value* rv = member(c, "certificate", "rows", json::Type::Array, why);
  std::vector<std::size_t> rows;
  if (!rv || !read_index_set(*rv, "rows", 2, T, rows, why)) return false;
  const std::size_t i = rows[0], j = rows[1];
  if (i == j) { why = "rows: two different examples expected"; return false; }
  if (E[i] != E[j]) { why = "rows: the two examples' contexts differ (identical rows of Z are not implied)"; return false; }
  if (Y[i] == Y[j]) { why = "rows: the two examples' labels are equal (no counterexample to memorization)"; return false; }

  // The re-scaled heads: each W_K W_Q^T must be the construction's head with only its scale changed.
  const Value* hv = member(c, "certificate", "heads", json::Type::Array, why);
  const Value* sv = member(c, "certificate", "scales", json::Type::Array, why);
  const Value* wv = path(*cons, {"weights", "heads"}, json::Type::Array, why);
  const Value* tv = member(*cons, "construction", "trace", json::Type::Array, why);
  if (!hv || !sv || !wv || !tv) return false;
  if (hv->size() != H || sv->size() != H || wv->size() != H || tv->size() != H) { why = "heads/scales: expected H entries"; return false; }
  std::size_t rescaled = 0;
  for (std::size_t h = 0; h < H; ++h) {
    const std::string at = "heads[" + std::to_string(h) + "]";
    QMat WK, WQ, PK, PQ;
    const Value* a = member(*hv->at(h), at, "WK", json::Type::Array, why);
    const Value* b = a ? member(*hv->at(h), at, "WQ", json::Type::Array, why) : nullptr;
    const Value* pa = b ? member(*wv->at(h), "construction.weights", "WK", json::Type::Array, why) : nullptr;
    const Value* pb = pa ? member(*wv->at(h), "construction.weights", "WQ", json::Type::Array, why) : nullptr;
    if (!pb || !rows_of(*a, at + ".WK", d, dh, WK, why) || !rows_of(*b, at + ".WQ", d, dh, WQ, why) ||
        !rows_of(*pa, "construction.weights.WK", d, dh, PK, why) || !rows_of(*pb, "construction.weights.WQ", d, dh, PQ, why))
      return false;
    QMat W = product_abt(WK, WQ), P = product_abt(PK, PQ);
    mpq_class s;
    if (!read_rational(*sv->at(h), "scales[" + std::to_string(h) + "]", s, why)) return false;
    const Value* gv = member(*tv->at(h), "construction.trace", "g", json::Type::Array, why);
    const Value* wwv = gv ? member(*tv->at(h), "construction.trace", "w", json::Type::Array, why) : nullptr;
    const Value* cpv = wwv ? member(*tv->at(h), "construction.trace", "c", json::Type::String, why) : nullptr;
    if (!cpv) return false;
    if (gv->empty()) {  // no saturating term (head 1): the head must be the construction's, scale 0
      if (W != P) { why = at + ": a head without a saturating term must keep the construction's weights"; return false; }
      if (s != 0) { why = "scales[" + std::to_string(h) + "]: a head without a saturating term has scale 0"; return false; }
      continue;
    }
    QRow g, w;
    mpq_class cp;
    if (!read_rational_vector(*gv, "construction.trace.g", d, g, why) || !read_rational_vector(*wwv, "construction.trace.w", d, w, why) ||
        !read_rational(*cpv, "construction.trace.c", cp, why))
      return false;
    if (s <= 0) { why = "scales[" + std::to_string(h) + "]: a saturation scale must be > 0"; return false; }
    if (common && s >= cp) { why = "scales[" + std::to_string(h) + "]: must lie below the proof's c"; return false; }
    for (std::size_t x = 0; x < d; ++x)
      for (std::size_t y = 0; y < d; ++y)
        if (W[x][y] != P[x][y] + (s - cp) * g[x] * w[y]) { why = at + ": W_K W_Q^T is not the construction's head at scales[h]"; return false; }
    ++rescaled;
    // Logits of the two examples: equal up to an additive constant => equal softmax weights.
    QRow li = qmat_mul_vec(E[i], qmat_mul_vec(W, Q[i])), lj = qmat_mul_vec(E[j], qmat_mul_vec(W, Q[j]));
    for (std::size_t k = 1; k < n; ++k)
      if (li[k] - li[0] != lj[k] - lj[0]) { why = at + ": the two examples' logits differ beyond a constant"; return false; }
  }
  if (rescaled == 0) { why = "heads: no saturating head was re-scaled"; return false; }
  if (common && rescaled != 1) { why = "heads: a common scale needs exactly one saturating head"; return false; }
  // Heads without a saturating term were checked equal to the construction; their logits too must agree.
  for (std::size_t h = 0; h < H; ++h) {
    if (!path(*tv->at(h), {"g"}, json::Type::Array, why)->empty()) continue;
    QMat WK, WQ;
    rows_of(*member(*hv->at(h), "", "WK", json::Type::Array, why), "WK", d, dh, WK, why);
    rows_of(*member(*hv->at(h), "", "WQ", json::Type::Array, why), "WQ", d, dh, WQ, why);
    QMat W = product_abt(WK, WQ);
    QRow li = qmat_mul_vec(E[i], qmat_mul_vec(W, Q[i])), lj = qmat_mul_vec(E[j], qmat_mul_vec(W, Q[j]));
    for (std::size_t k = 1; k < n; ++k)
      if (li[k] - li[0] != lj[k] - lj[0]) { why = "heads[" + std::to_string(h) + "]: the two examples' logits differ beyond a constant"; return false; }
  }
  note_applied("per-head scales: rows i and j of Z identical (same context, logits equal up to a constant in every head), so rank(Z) <= T - 1");
  return true;
}

}  // namespace memcert_checker

// kind "theorem1", claim "mahdavi24/theorem-1": the written multi-head attention weights memorize the
// certificate's T examples (THEORY.md sections 1, 3, 4 "Step 2", and 7). Re-derived from scratch:
//  1. exact logits a_h = E W_K^h (W_Q^h)^T e for every example and head (integer arithmetic over one
//     common denominator per matrix, GMP);
//  2. softmax enclosures alpha_h = x / sum(x), x_k = exp(a_k - max a) with MPFR directed rounding, and
//     p_h = E^T alpha_h enclosed entrywise: row t of Z is [p_1; ...; p_H] in [centre +- radius];
//  3. rank(Z) >= T for EVERY matrix of the enclosure: G = fl(C C^T) of the double centres with the
//     rigorous bound |fl(G) - C C^T| <= gamma_m |C||C|^T; mu just above ||R||_F^2; G - mu I proved
//     positive definite by Rump's floating-point test (BIT 2006; THEORY.md section 7 constants, first
//     term doubled as a margin), so sigma_T(C) > ||R||_F >= ||R||_2 and Weyl gives rank >= T;
//  4. the whole forward pass o_h = W_V^T p_h, o = W_O^T [o_h] (+ e with skip), y_hat = W_D^T o in
//     MPFR intervals: every real label within "tolerance", or a certified arg-max for class labels;
//  5. the trace's target logits for each head's group equal the recomputed exact logits (Claim 1).
// Only IEEE round-to-nearest double +, -, *, /, sqrt (no FMA contraction: the build disables it),
// GMP and MPFR are trusted.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "interval.hpp"
#include "read.hpp"

namespace memcert_checker {

namespace {

constexpr mpfr_prec_t kPrec = 128;
const double kInfD = std::numeric_limits<double>::infinity();
inline double upd(double r) { return std::nextafter(r, kInfD); }
inline double dnd(double r) { return std::nextafter(r, -kInfD); }

std::string at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

// A plain JSON array-of-arrays matrix of exact strings with the expected shape.
bool read_plain_matrix(const Value& v, const std::string& where, std::size_t rows, std::size_t cols, QMat& out,
                       std::string& why) {
  if (v.type != json::Type::Array || v.items.size() != rows) {
    why = where + ": expected an array of " + std::to_string(rows) + " rows";
    return false;
  }
  out.assign(rows, QRow());
  for (std::size_t i = 0; i < rows; ++i)
    if (!read_rational_vector(v.items[i], at(where, i), cols, out[i], why)) return false;
  return true;
}

// Integer numerators over one common positive denominator.
struct Scaled {
  ZMat num;
  mpz_class den = 1;
};
Scaled scale_matrix(const QMat& a) {
  Scaled s;
  for (const auto& row : a)
    for (const auto& q : row) mpz_lcm(s.den.get_mpz_t(), s.den.get_mpz_t(), q.get_den_mpz_t());
  s.num.assign(a.size(), ZRow());
  for (std::size_t i = 0; i < a.size(); ++i) {
    s.num[i].resize(a[i].size());
    for (std::size_t j = 0; j < a[i].size(); ++j) s.num[i][j] = a[i][j].get_num() * (s.den / a[i][j].get_den());
  }
  return s;
}
// y = A x (A: rows x cols) or A^T x, integers.
ZRow zmul(const ZMat& a, const ZRow& x, bool transpose) {
  const std::size_t R = a.size(), C = R ? a[0].size() : 0;
  ZRow y(transpose ? C : R, mpz_class(0));
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < C; ++j) {
      if (sgn(a[i][j]) == 0) continue;
      if (transpose) { if (sgn(x[i]) != 0) mpz_addmul(y[j].get_mpz_t(), a[i][j].get_mpz_t(), x[i].get_mpz_t()); }
      else if (sgn(x[j]) != 0) mpz_addmul(y[i].get_mpz_t(), a[i][j].get_mpz_t(), x[j].get_mpz_t());
    }
  return y;
}

// Rump's test that every symmetric matrix within `rad_norm` (spectral norm) of `a` (k x k, row-major) is
// positive definite.
bool rump_pd(std::vector<double> a, std::size_t k, double rad_norm) {
  const double u = std::ldexp(1.0, -53), eta = std::ldexp(1.0, -1074);
  double s = 0, maxd = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double ajj = a[j * k + j];
    if (!(ajj > 0) || !std::isfinite(ajj)) return false;
    s = upd(s + upd(upd(double(j + 3) * u) * ajj));
    maxd = std::max(maxd, ajj);
  }
  double c = upd(upd(2.0 * s) + rad_norm);
  c = upd(c + upd(upd(6.0 * double(k)) * upd(upd(double(k) + maxd) * eta)));
  if (!std::isfinite(c)) return false;
  for (std::size_t j = 0; j < k; ++j) a[j * k + j] = dnd(a[j * k + j] - c);
  for (std::size_t j = 0; j < k; ++j) {
    double* rj = &a[j * k];
    double sjj = rj[j];
    for (std::size_t t = 0; t < j; ++t) sjj -= rj[t] * rj[t];
    if (!(sjj > 0)) return false;
    const double ljj = std::sqrt(sjj);
    rj[j] = ljj;
    for (std::size_t i = j + 1; i < k; ++i) {
      double* ri = &a[i * k];
      double sij = ri[j];
      for (std::size_t t = 0; t < j; ++t) sij -= ri[t] * rj[t];
      ri[j] = sij / ljj;
    }
  }
  return true;
}

// Raw MPFR scratch for the softmax/mix hot loop.
struct Scratch {
  std::vector<__mpfr_struct> al, ah;
  mpfr_t t, sl, sh, pl, ph, mid, rad;
  explicit Scratch(std::size_t n) : al(n), ah(n) {
    for (std::size_t i = 0; i < n; ++i) { mpfr_init2(&al[i], kPrec); mpfr_init2(&ah[i], kPrec); }
    mpfr_inits2(kPrec, t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
  }
  ~Scratch() {
    for (auto& x : al) mpfr_clear(&x);
    for (auto& x : ah) mpfr_clear(&x);
    mpfr_clears(t, sl, sh, pl, ph, mid, rad, (mpfr_ptr)0);
  }
};

}  // namespace

bool check_theorem1(const Value& cert, std::string& why) {
  std::string claim;
  if (!read_string(cert, "", "claim", claim, why)) return false;
  if (claim != "mahdavi24/theorem-1") {
    why = "claim: kind \"theorem1\" proves \"mahdavi24/theorem-1\", not \"" + claim + "\"";
    return false;
  }
  // ---- sizes ----
  std::size_t H = 0, n = 0, d = 0, dh = 0, dv = 0, dout = 0, T = 0, rankZ = 0;
  const std::size_t kMax = 1u << 20;
  struct SizeField { const char* key; std::size_t* out; };
  for (SizeField f : {SizeField{"H", &H}, SizeField{"n", &n}, SizeField{"d", &d}, SizeField{"dh", &dh},
                      SizeField{"dv", &dv}, SizeField{"d_out", &dout}, SizeField{"T", &T},
                      SizeField{"rank_Z_lower", &rankZ}}) {
    const Value* v = member(cert, "", f.key, json::Type::Number, why);
    if (!v || !read_size(*v, f.key, kMax, *f.out, why)) return false;
  }
  if (H == 0 || n == 0 || d == 0 || dh == 0 || dout == 0 || T == 0) { why = "sizes: H, n, d, dh, d_out, T must be >= 1"; return false; }
  if (n > d) { why = "n: Theorem 1 needs n <= d"; return false; }
  if (dv < dout || d < dout) { why = "d_out: Theorem 1 needs d_v >= d_out and d >= d_out"; return false; }
  const std::size_t r = std::min(n, dh);
  if (T > H * (r - 1) + 1) { why = "T: exceeds H(r-1)+1 = " + std::to_string(H * (r - 1) + 1); return false; }
  if (rankZ != T) { why = "rank_Z_lower: the certificate must claim rank(Z) >= T = " + std::to_string(T); return false; }
  bool skip = false;
  if (const Value* sv = cert.find("skip")) {
    if (sv->type != json::Type::Bool) { why = "skip: expected a boolean"; return false; }
    skip = sv->boolean;
  }
  mpq_class tol;
  const Value* tv = cert.find("tolerance");
  if (!tv) { why = "tolerance: missing"; return false; }
  if (!read_rational(*tv, "tolerance", tol, why)) return false;
  if (sgn(tol) < 0) { why = "tolerance: must be >= 0"; return false; }

  // ---- data ----
  const Value* data = member(cert, "", "data", json::Type::Object, why);
  if (!data) return false;
  const Value* cv = member(*data, "data", "contexts", json::Type::Array, why);
  if (!cv) return false;
  if (cv->items.size() != T) { why = "data.contexts: expected " + std::to_string(T) + " contexts"; return false; }
  std::vector<QMat> E(T);
  for (std::size_t t = 0; t < T; ++t)
    if (!read_plain_matrix(cv->items[t], at("data.contexts", t), n, d, E[t], why)) return false;
  const Value* qv = member(*data, "data", "queries", json::Type::Array, why);
  QMat Q;
  if (!qv || !read_plain_matrix(*qv, "data.queries", T, d, Q, why)) return false;
  bool class_labels = false;
  QMat Y;
  std::vector<std::size_t> cls;
  if (const Value* cl = data->find("class_labels")) {
    class_labels = true;
    if (cl->type != json::Type::Array || cl->items.size() != T) { why = "data.class_labels: expected " + std::to_string(T) + " labels"; return false; }
    cls.resize(T);
    for (std::size_t t = 0; t < T; ++t)
      if (!read_size(cl->items[t], at("data.class_labels", t), dout - 1, cls[t], why)) return false;
  } else {
    const Value* lv = member(*data, "data", "labels", json::Type::Array, why);
    if (!lv || !read_plain_matrix(*lv, "data.labels", T, dout, Y, why)) return false;
  }

  // ---- weights ----
  const Value* wv = member(cert, "", "weights", json::Type::Object, why);
  if (!wv) return false;
  const Value* hv = member(*wv, "weights", "heads", json::Type::Array, why);
  if (!hv) return false;
  if (hv->items.size() != H) { why = "weights.heads: expected " + std::to_string(H) + " heads"; return false; }
  std::vector<Scaled> WK(H), WQ(H);
  std::vector<QMat> WKq(H), WQq(H);
  std::vector<QMat> WV(H);
  for (std::size_t h = 0; h < H; ++h) {
    const Value& hd = hv->items[h];
    const std::string w = at("weights.heads", h);
    QMat k, q;
    const Value* kv = member(hd, w, "WK", json::Type::Array, why);
    if (!kv || !read_plain_matrix(*kv, w + ".WK", d, dh, k, why)) return false;
    const Value* qqv = member(hd, w, "WQ", json::Type::Array, why);
    if (!qqv || !read_plain_matrix(*qqv, w + ".WQ", d, dh, q, why)) return false;
    const Value* vv = member(hd, w, "WV", json::Type::Array, why);
    if (!vv || !read_plain_matrix(*vv, w + ".WV", d, dv, WV[h], why)) return false;
    WK[h] = scale_matrix(k);
    WQ[h] = scale_matrix(q);
    WKq[h] = std::move(k);
    WQq[h] = std::move(q);
  }
  QMat WO, WD;
  const Value* ov = member(*wv, "weights", "WO", json::Type::Array, why);
  if (!ov || !read_plain_matrix(*ov, "weights.WO", H * dv, d, WO, why)) return false;
  const Value* dvv = member(*wv, "weights", "WD", json::Type::Array, why);
  if (!dvv || !read_plain_matrix(*dvv, "weights.WD", d, dout, WD, why)) return false;

  // Point weights as intervals for the read-out chain.
  auto to_iv = [](const QMat& m) {
    std::vector<std::vector<Interval>> r(m.size());
    for (std::size_t i = 0; i < m.size(); ++i)
      for (const auto& q : m[i]) r[i].emplace_back(q, kPrec);
    return r;
  };
  std::vector<std::vector<std::vector<Interval>>> WVi(H);
  for (std::size_t h = 0; h < H; ++h) WVi[h] = to_iv(WV[h]);
  auto WOi = to_iv(WO), WDi = to_iv(WD);

  // ---- the trace (THEORY.md section 4), re-derived where it is a function of data and weights ----
  // Groups: R_1 = the first r examples, R_h = the next r-1. Claim 1: the target logits are E W e.
  // Claim 2 / Lemma 3: W_K[:, |R_h|] = c g and W_Q[:, |R_h|] = w, w^T e = 0 on R_h, w^T e != 0 and a
  // unique maximum of s = (w^T e) E g on the earlier examples; gap = min delta, spread = max A over them
  // (with a = logits - c s); Lemma 4: c >= (A + ln(2(n-1)/eps)) / delta for each of them; Lemma 5
  // (direct criterion): m eps^2 B^2 < sigma_lower^2. The remaining descriptive fields (attempt counts,
  // sigma values, c_minimal, the B.2 estimate) are covered by "trace_checksum" against accidental edits.
  struct HeadTrace {
    std::vector<std::size_t> group;
    std::vector<const Value*> targets;
    bool sat = false, direct = false;
    mpq_class c = 0, eps = 0, gap = 0, spread = 0, sigma = 0;
    QRow g, w;
    Scaled gs;
    std::size_t old = 0, rank_target = 0;
    bool have = false;
    mpq_class min_gap, max_spread;
  };
  std::vector<HeadTrace> ht(H);
  std::vector<std::size_t> grp(T, H);
  {
    const Value* trv = member(cert, "", "trace", json::Type::Array, why);
    if (!trv) return false;
    if (trv->items.size() != H) { why = "trace: expected one entry per head"; return false; }
    std::size_t next = 0;
    for (std::size_t h = 0; h < H; ++h) {
      const Value& e = trv->items[h];
      const std::string w = at("trace", h);
      HeadTrace& x = ht[h];
      const Value* gv = member(e, w, "group", json::Type::Array, why);
      const Value* lv = gv ? member(e, w, "target_logits", json::Type::Array, why) : nullptr;
      if (!lv) return false;
      const std::size_t want = std::min(h == 0 ? r : r - 1, T - next);
      if (gv->items.size() != want || lv->items.size() != want) {
        why = w + ": expected the group R_" + std::to_string(h + 1) + " of " + std::to_string(want) + " examples with their target logits";
        return false;
      }
      for (std::size_t i = 0; i < want; ++i) {
        std::size_t t = 0;
        if (!read_size(gv->items[i], at(w + ".group", i), T - 1, t, why)) return false;
        if (t != next + i) { why = at(w + ".group", i) + ": expected example " + std::to_string(next + i); return false; }
        x.group.push_back(t);
        x.targets.push_back(&lv->items[i]);
        grp[t] = h;
      }
      x.old = next;
      next += want;
      std::size_t old = 0, rt = 0;
      const Value* ov2 = member(e, w, "old_examples", json::Type::Number, why);
      if (!ov2 || !read_size(*ov2, w + ".old_examples", T, old, why)) return false;
      const Value* rv2 = member(e, w, "rank_target", json::Type::Number, why);
      if (!rv2 || !read_size(*rv2, w + ".rank_target", T, rt, why)) return false;
      if (old != x.old || rt != x.old + want) { why = w + ": old_examples / rank_target do not match the groups"; return false; }
      const Value* cv2 = e.find("c");
      if (!cv2 || !read_rational(*cv2, w + ".c", x.c, why)) { if (why.empty()) why = w + ".c: missing"; return false; }
      x.sat = h > 0 && want > 0;
      if (!x.sat) {
        if (sgn(x.c) != 0) { why = w + ".c: expected 0 for a head without a saturator"; return false; }
        continue;
      }
      const Value* gv2 = member(e, w, "g", json::Type::Array, why);
      if (!gv2 || !read_rational_vector(*gv2, w + ".g", d, x.g, why)) return false;
      const Value* wv2 = member(e, w, "w", json::Type::Array, why);
      if (!wv2 || !read_rational_vector(*wv2, w + ".w", d, x.w, why)) return false;
      for (std::size_t c = 0; c < d; ++c)
        if (WKq[h][c][want] != x.c * x.g[c] || WQq[h][c][want] != x.w[c]) {
          why = w + ": W_K[:, " + std::to_string(want) + "] != c g or W_Q[:, " + std::to_string(want) + "] != w (row " + std::to_string(c) + ")";
          return false;
        }
      x.gs = scale_matrix(QMat{x.g});
      const Value* ev = e.find("eps");
      if (!ev || !read_rational(*ev, w + ".eps", x.eps, why)) { if (why.empty()) why = w + ".eps: missing"; return false; }
      if (sgn(x.eps) <= 0) { why = w + ".eps: must be > 0"; return false; }
      const Value* gapv = e.find("gap");
      const Value* spv = e.find("spread");
      if (!gapv || !spv) { why = w + ": gap / spread missing"; return false; }
      if (!read_rational(*gapv, w + ".gap", x.gap, why) || !read_rational(*spv, w + ".spread", x.spread, why)) return false;
      std::string crit;
      if (!read_string(e, w, "eps_criterion", crit, why)) return false;
      if (crit != "direct" && crit != "b2") { why = w + ".eps_criterion: expected direct or b2"; return false; }
      x.direct = crit == "direct";
      const Value* sv2 = e.find("sigma_lower");
      if (!sv2 || !read_rational(*sv2, w + ".sigma_lower", x.sigma, why)) { if (why.empty()) why = w + ".sigma_lower: missing"; return false; }
    }
    // Integrity of the descriptive fields.
    auto text = [](const Value* v) -> std::string {
      if (!v) return "missing";
      switch (v->type) {
        case json::Type::Null: return "null";
        case json::Type::Bool: return v->boolean ? "true" : "false";
        case json::Type::Array: {
          std::string s2;
          for (std::size_t i = 0; i < v->items.size(); ++i) s2 += (i ? "," : "") + v->items[i].text;
          return s2;
        }
        default: return v->text;
      }
    };
    std::string all;
    for (const Value& e : trv->items)
      for (const char* k : {"lemma3_attempts", "target_attempts", "eps_b2_estimate", "sigma_lower", "c_minimal", "step_sigma_lower"})
        all += std::string(k) + "=" + text(e.find(k)) + ";";
    for (const char* k : {"hypotheses", "notes", "labels_generated", "examples"}) all += std::string(k) + "=" + text(cert.find(k)) + ";";
    std::uint64_t hh = 1469598103934665603ull;
    for (unsigned char ch : all) { hh ^= ch; hh *= 1099511628211ull; }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hh));
    std::string sum;
    if (!read_string(cert, "", "trace_checksum", sum, why)) return false;
    if (sum != buf) { why = "trace_checksum: does not match the trace's descriptive fields"; return false; }
  }
  std::vector<std::vector<const Value*>> target_of(H, std::vector<const Value*>(T, nullptr));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < ht[h].group.size(); ++i) target_of[h][ht[h].group[i]] = ht[h].targets[i];
  // B^2: the largest squared token norm.
  mpq_class B2 = 0;
  for (const auto& Et : E)
    for (const auto& row : Et) {
      mpq_class s2 = 0;
      for (const auto& x : row) s2 += x * x;
      if (s2 > B2) B2 = s2;
    }

  // ---- forward pass per example ----
  const std::size_t m = H * d;
  std::vector<double> C(T * m), R(T * m);
  Scratch s(n);
  for (std::size_t t = 0; t < T; ++t) {
    Scaled Es = scale_matrix(E[t]);
    QMat erow{Q[t]};
    Scaled es = scale_matrix(erow);
    std::vector<Interval> ocat;
    ocat.reserve(H * dv);
    // The context's entries as MPFR bounds, once per example.
    std::vector<__mpfr_struct> Elo(n * d), Ehi(n * d);
    for (std::size_t i = 0; i < n * d; ++i) {
      mpfr_init2(&Elo[i], kPrec);
      mpfr_init2(&Ehi[i], kPrec);
      mpfr_set_q(&Elo[i], E[t][i / d][i % d].get_mpq_t(), MPFR_RNDD);
      mpfr_set_q(&Ehi[i], E[t][i / d][i % d].get_mpq_t(), MPFR_RNDU);
    }
    struct EGuard {
      std::vector<__mpfr_struct>& a; std::vector<__mpfr_struct>& b;
      ~EGuard() { for (auto& x : a) mpfr_clear(&x); for (auto& x : b) mpfr_clear(&x); }
    } eguard{Elo, Ehi};
    for (std::size_t h = 0; h < H; ++h) {
      // (1) exact logits: E (W_K (W_Q^T e)) / (den_E den_K den_Q den_e)
      ZRow v = zmul(WQ[h].num, es.num[0], /*transpose=*/true);
      ZRow k = zmul(WK[h].num, v, false);
      ZRow a = zmul(Es.num, k, false);
      mpz_class den = Es.den * WK[h].den * WQ[h].den * es.den;  // > 0
      if (const Value* tv2 = target_of[h][t]) {
        QRow logits(n);
        for (std::size_t j = 0; j < n; ++j) { logits[j] = mpq_class(a[j], den); logits[j].canonicalize(); }
        QRow target;
        if (!read_rational_vector(*tv2, "trace[" + std::to_string(h) + "].target_logits", n, target, why)) return false;
        if (target != logits) {
          why = "trace[" + std::to_string(h) + "]: target logits of example " + std::to_string(t) +
                " differ from E W_K W_Q^T e recomputed from the weights";
          return false;
        }
      }
      if (ht[h].sat && grp[t] == h) {  // (20): w^T e = 0 on the group
        mpq_class we = 0;
        for (std::size_t c = 0; c < d; ++c) we += ht[h].w[c] * Q[t][c];
        if (sgn(we) != 0) { why = "trace[" + std::to_string(h) + "]: w^T e != 0 for example " + std::to_string(t) + " of the group"; return false; }
      }
      if (ht[h].sat && grp[t] < h) {  // an earlier example: saturation data and Lemma 4
        HeadTrace& x = ht[h];
        const std::string w = "trace[" + std::to_string(h) + "]";
        mpq_class we = 0;
        for (std::size_t c = 0; c < d; ++c) we += x.w[c] * Q[t][c];
        if (sgn(we) == 0) { why = w + ": w^T e = 0 for the earlier example " + std::to_string(t); return false; }
        ZRow v = zmul(Es.num, x.gs.num[0], false);  // E g = v / (den_E den_g)
        const int sg = sgn(we);
        std::size_t js = 0;
        for (std::size_t j = 1; j < n; ++j) if (sg * cmp(v[j], v[js]) > 0) js = j;
        mpz_class second;
        bool have2 = false;
        for (std::size_t j = 0; j < n; ++j) {
          if (j == js) continue;
          if (v[j] == v[js]) { why = w + ": E W' e has no unique maximum for example " + std::to_string(t); return false; }
          mpz_class o = sg * v[j];
          if (!have2 || o > second) { second = o; have2 = true; }
        }
        mpz_class Dg = Es.den * x.gs.den;
        mpq_class delta = have2 ? mpq_class(abs(we) * mpq_class(sg * v[js] - second, Dg)) : mpq_class(0);
        // A = max_j (a_j - a_j*) with a = logits - c s, as integers over one positive denominator.
        mpz_class K1 = Dg * we.get_den() * x.c.get_den(), K2 = den * x.c.get_num() * we.get_num();
        mpz_class best = 0;
        for (std::size_t j = 0; j < n; ++j) {
          mpz_class val = (a[j] - a[js]) * K1 - (v[j] - v[js]) * K2;
          if (val > best) best = val;
        }
        mpq_class A(best, den * K1);
        A.canonicalize();
        if (!x.have || delta < x.min_gap) x.min_gap = delta;
        if (!x.have || A > x.max_spread) x.max_spread = A;
        x.have = true;
        if (n >= 2) {
          if (sgn(delta) <= 0) { why = w + ": zero gap for example " + std::to_string(t); return false; }
          Interval rhs = (Interval(A, kPrec) + log(Interval(mpq_class(2 * long(n - 1)) / x.eps, kPrec))) / Interval(delta, kPrec);
          if (!rhs.is_valid() || mpfr_cmp_q(rhs.hi(), x.c.get_mpq_t()) > 0) {
            why = w + ": Lemma 4 bound fails for example " + std::to_string(t) + ": c < (A + ln(2(n-1)/eps)) / delta";
            return false;
          }
        }
      }
      // (2) softmax enclosure: a_j - M with the integer M = max_j a_j (numerators), exp, normalise.
      std::size_t jm = 0;
      for (std::size_t j = 1; j < n; ++j) if (a[j] > a[jm]) jm = j;
      mpfr_set_zero(s.sl, 1);
      mpfr_set_zero(s.sh, 1);
      for (std::size_t j = 0; j < n; ++j) {
        mpz_class df = a[j] - a[jm];  // <= 0; divided by den > 0 keeps the rounding directions
        mpfr_set_z(s.t, df.get_mpz_t(), MPFR_RNDD);
        mpfr_div_z(s.t, s.t, den.get_mpz_t(), MPFR_RNDD);
        mpfr_exp(&s.al[j], s.t, MPFR_RNDD);
        mpfr_set_z(s.t, df.get_mpz_t(), MPFR_RNDU);
        mpfr_div_z(s.t, s.t, den.get_mpz_t(), MPFR_RNDU);
        mpfr_exp(&s.ah[j], s.t, MPFR_RNDU);
        mpfr_add(s.sl, s.sl, &s.al[j], MPFR_RNDD);
        mpfr_add(s.sh, s.sh, &s.ah[j], MPFR_RNDU);
      }
      for (std::size_t j = 0; j < n; ++j) {
        mpfr_div(&s.al[j], &s.al[j], s.sh, MPFR_RNDD);
        mpfr_div(&s.ah[j], &s.ah[j], s.sl, MPFR_RNDU);
      }
      // (3) p = E^T alpha, entrywise enclosure; centre/radius as doubles for the Gram test
      std::vector<Interval> p;
      p.reserve(d);
      for (std::size_t c = 0; c < d; ++c) {
        mpfr_set_zero(s.pl, 1);
        mpfr_set_zero(s.ph, 1);
        for (std::size_t j = 0; j < n; ++j) {
          mpfr_srcptr elo = &Elo[j * d + c], ehi = &Ehi[j * d + c];
          mpfr_mul(s.t, elo, mpfr_sgn(elo) >= 0 ? &s.al[j] : &s.ah[j], MPFR_RNDD);
          mpfr_add(s.pl, s.pl, s.t, MPFR_RNDD);
          mpfr_mul(s.t, ehi, mpfr_sgn(ehi) >= 0 ? &s.ah[j] : &s.al[j], MPFR_RNDU);
          mpfr_add(s.ph, s.ph, s.t, MPFR_RNDU);
        }
        mpfr_add(s.mid, s.pl, s.ph, MPFR_RNDN);
        mpfr_div_2ui(s.mid, s.mid, 1, MPFR_RNDN);
        const double cd = mpfr_get_d(s.mid, MPFR_RNDN);
        if (!std::isfinite(cd)) { why = "forward pass: non-finite value"; return false; }
        mpfr_set_d(s.mid, cd, MPFR_RNDN);
        mpfr_sub(s.rad, s.ph, s.mid, MPFR_RNDU);
        double r1 = mpfr_get_d(s.rad, MPFR_RNDU);
        mpfr_sub(s.rad, s.mid, s.pl, MPFR_RNDU);
        double r2 = mpfr_get_d(s.rad, MPFR_RNDU);
        C[t * m + h * d + c] = cd;
        R[t * m + h * d + c] = std::max(std::max(r1, r2), 0.0);
        mpq_class ql, qh;
        mpfr_get_q(ql.get_mpq_t(), s.pl);
        mpfr_get_q(qh.get_mpq_t(), s.ph);
        p.emplace_back(ql, qh, kPrec);
      }
      // (4) o_h = W_V^T p
      for (std::size_t vv = 0; vv < dv; ++vv) {
        Interval acc(kPrec);
        for (std::size_t c = 0; c < d; ++c)
          if (sgn(WV[h][c][vv]) != 0) acc = acc + WVi[h][c][vv] * p[c];
        ocat.push_back(acc);
      }
    }
    // (5) o = W_O^T [o_1; ...; o_H] (+ e), (6) y_hat = W_D^T o
    std::vector<Interval> o;
    o.reserve(d);
    for (std::size_t c = 0; c < d; ++c) {
      Interval acc(kPrec);
      for (std::size_t i = 0; i < H * dv; ++i)
        if (sgn(WO[i][c]) != 0) acc = acc + WOi[i][c] * ocat[i];
      if (skip) acc = acc + Interval(Q[t][c], kPrec);
      o.push_back(acc);
    }
    std::vector<Interval> y;
    for (std::size_t c = 0; c < dout; ++c) {
      Interval acc(kPrec);
      for (std::size_t k2 = 0; k2 < d; ++k2)
        if (sgn(WD[k2][c]) != 0) acc = acc + WDi[k2][c] * o[k2];
      y.push_back(acc);
    }
    if (class_labels) {
      for (std::size_t c = 0; c < dout; ++c) {
        if (c == cls[t]) continue;
        if (!(y[cls[t]] - y[c]).is_positive()) {
          why = "labels: example " + std::to_string(t) + ": arg-max of y_hat is not certified to be class " + std::to_string(cls[t]);
          return false;
        }
      }
    } else {
      for (std::size_t c = 0; c < dout; ++c) {
        mpq_class lo = Y[t][c] - tol, hi = Y[t][c] + tol;
        if (!(y[c].is_valid() && mpfr_cmp_q(y[c].lo(), lo.get_mpq_t()) >= 0 && mpfr_cmp_q(y[c].hi(), hi.get_mpq_t()) <= 0)) {
          why = "labels: example " + std::to_string(t) + ", output " + std::to_string(c) +
                ": y_hat is not certified within tolerance of the label";
          return false;
        }
      }
    }
  }

  for (std::size_t h = 0; h < H; ++h) {
    const HeadTrace& x = ht[h];
    if (!x.sat) continue;
    const std::string w = "trace[" + std::to_string(h) + "]";
    if (!x.have || x.gap != x.min_gap || x.spread != x.max_spread) {
      why = w + ": gap / spread differ from the values recomputed over the earlier examples";
      return false;
    }
    if (x.direct && !(mpq_class(long(x.old)) * x.eps * x.eps * B2 < x.sigma * x.sigma)) {
      why = w + ": direct Weyl criterion m eps^2 B^2 < sigma_lower^2 fails";
      return false;
    }
  }

  // ---- rank(Z) >= T: Gram of the centres + Rump ----
  const double u = std::ldexp(1.0, -53), eta = std::ldexp(1.0, -1074);
  const double nu = upd(double(m) * u);
  if (!(nu < 0.5)) { why = "rank: dimension too large"; return false; }
  const double gam = upd(nu / dnd(1.0 - nu));
  std::vector<double> g(T * T);
  double sumsq = 0, radF2 = 0;
  for (std::size_t a = 0; a < T; ++a) {
    double sq = 0;
    for (std::size_t j = 0; j < m; ++j) {
      sq += C[a * m + j] * C[a * m + j];
      radF2 += R[a * m + j] * R[a * m + j];
    }
    sumsq = upd(sumsq + upd(upd(sq * upd(1.0 + 2.0 * gam)) + double(m) * eta));  // sq computed in RN: inflate
    for (std::size_t b = 0; b <= a; ++b) {
      double acc = 0;
      for (std::size_t j = 0; j < m; ++j) acc += C[a * m + j] * C[b * m + j];
      g[a * T + b] = acc;
      g[b * T + a] = acc;
    }
  }
  // ||R||_F^2 computed in round-to-nearest over T m terms: inflate by (1 + 2 (Tm) u).
  radF2 = upd(radF2 * upd(1.0 + upd(2.0 * double(T * m + 2) * u)) + eta);
  // |fl(G)_ab - G_ab| <= gam ||c_a|| ||c_b|| + m eta, so ||error||_2 <= gam sum_a ||c_a||^2 + T m eta.
  const double gerr = upd(upd(gam * sumsq) + upd(double(T) * double(m) * eta));
  const double mu = upd(upd(2.0 * radF2) + 1e-300);
  for (std::size_t j = 0; j < T; ++j) g[j * T + j] = dnd(g[j * T + j] - mu);
  if (!std::isfinite(gerr) || !rump_pd(std::move(g), T, gerr)) {
    why = "rank: could not certify rank(Z) >= " + std::to_string(T) +
          " (Gram matrix of the enclosure centres minus ||R||_F^2 not proved positive definite)";
    return false;
  }
  return true;
}

}  // namespace memcert_checker

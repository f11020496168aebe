// kind "ks": the ks25 Theorem 4.1 / Corollary 4.1 construction (or its linear-phi ablation), re-evaluated
// exactly from the certificate with GMP only.
//
//   {"kind":"ks","claim":"ks25/theorem-4.1"|"ks25/corollary-4.1"|"ks25/ablation-linear-phi",
//    "setting":"next-token"|"seq-to-seq","N","n","d","C",
//    "tokens":[V][d] exact, "sequences":[N][n] token indices, "labels":[N] | [N][n] (integers in [0,C)),
//      or instead of sequences and labels "data":{"file","digest"} (the file's, ks_data.cpp),
//    "separation":{"r2","delta2"},
//    "network":{"f1":[{"W":[[..]],"b":[..]}...],"attention":{"WOV":3x3},"f2":[...]},
//    "complexity":{"parameters","nonzero_parameters","depth","width","bit_complexity"},  (not for ablation)
//    "collision":[i,j], "positions":[ki,kj] (seq-to-seq), "token_sums_equal":bool  (ablation only),
//    "checksum": exact}
//
// Semantics (docs/CLI.md): a layer list maps h to ReLU(W h + b) for every layer but the last (affine);
// f1 : R^d -> R^3 per token; the context at position p is s = f1(x_p) + WOV * mean_k f1(x_k)
// (p = n-1 for next-token, every p for seq-to-seq); the prediction is f2(s) in R^1.
//
// The checker verifies: tokens pairwise distinct; r2 = max |x|^2 and delta2 = min |x - x'|^2 exactly;
// every prediction equals its label exactly; eq. (55): contexts of different (token, multiset) keys are
// >= 1/n apart (squared distances >= 1/n^2); the complexity figures; the checksum
// sum_(position p >= 1) p * value over all network numbers (f1 W row-major then b per layer, WOV, f2).
// For "ks25/theorem-D.1" (deep sets in this format: f1 = (phi~, 0, 0), f2 = rho~ of n * s_3) eq. (55) is
// not required: the prediction rho~(sum phi~) must equal every label. For the ablation: the two sequences have different labels and exactly equal contexts (so no f2 can
// separate them); with token_sums_equal, also equal token-vector sums and equal tokens at the positions
// (so they collide for EVERY linear phi).
#include <algorithm>
#include <numeric>
#include <thread>

#include "kernel/context.hpp"
#include "kernel/float_kernels.hpp"
#include "kernel/read.hpp"
#include "kinds/ks25/ks_network.hpp"

namespace memcert_checker {

namespace {

// The certificate as the stages read it, in the order the verdict needs it.
struct KsCertificate {
  std::string claim, setting;
  bool ablation = false, deep_set = false, s2s = false;
  std::size_t N = 0, n = 0, d = 0, C = 0, V = 0;
  std::size_t per = 1;  // labels per sequence: n (seq-to-seq) or 1
  std::vector<QRow> tok;              // V x d
  std::vector<std::uint32_t> seq;     // N x n token indices, row-major
  std::vector<std::uint32_t> sorted;  // each sequence's indices sorted (its multiset), N x n; filled on demand
  std::vector<std::size_t> label;     // N x per
  KsNet f1, f2;
  QMat wov;
  std::size_t wov_nonzero = 0, wov_bits = 0;
  std::vector<QRow> ctx;  // N x per contexts (3 values each), recomputed
  std::vector<std::size_t> by_ctx;  // 0 .. N per - 1 sorted by (context, index) (ks_check_predictions)

  std::uint32_t at(std::size_t i, std::size_t q) const { return seq[i * n + q]; }
  // Whether sequences i and j are the same multiset of tokens (sorted filled).
  bool same_multiset(std::size_t i, std::size_t j) const {
    return std::equal(sorted.begin() + i * n, sorted.begin() + (i + 1) * n, sorted.begin() + j * n);
  }
  bool multiset_less(std::size_t i, std::size_t j) const {
    return std::lexicographical_compare(sorted.begin() + i * n, sorted.begin() + (i + 1) * n, sorted.begin() + j * n,
                                        sorted.begin() + (j + 1) * n);
  }
  void sort_multisets() {
    sorted = seq;
    for (std::size_t i = 0; i < N; ++i) std::sort(sorted.begin() + i * n, sorted.begin() + (i + 1) * n);
  }
};

// Lexicographic comparison of two rows of equal length: -1, 0 or 1.
int ks_cmp(const QRow& x, const QRow& y) {
  for (std::size_t j = 0; j < x.size() && j < y.size(); ++j)
    if (const int c = cmp(x[j], y[j])) return c < 0 ? -1 : 1;
  return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
}

bool read_label(const Value& v, const std::string& where, std::size_t C, std::size_t& out, std::string& why) {
  if (!read_size(v, where, C == 0 ? 0 : C - 1, out, why)) return false;
  if (C == 0) { why = where + ": C must be >= 1"; return false; }
  return true;
}

bool eq_str(const Value& obj, const std::string& where, const std::string& key, const mpq_class& want,
            std::string& why) {
  const Value* v = member(obj, where, key, json::Type::String, why);
  if (!v) return false;
  mpq_class got;
  if (!read_rational(*v, where + "." + key, got, why)) return false;
  if (got != want) {
    why = (where.empty() ? key : where + "." + key) + ": stated " + got.get_str() + ", recomputed " + want.get_str();
    return false;
  }
  return true;
}

// Theorem D.1's deep set rho~(sum_k phi~(x_k)) written in the Transformer format, checked on the weights
// themselves so that the prediction is a function of the multiset of tokens whatever the data:
//   f1 = (phi~, 0, 0): rows 1 and 2 of f1's last layer are zero with zero bias;
//   WOV = e_2 e_0^T: the context's third coordinate is mean_k phi~(x_k), the others f1(x_last) = (phi~(x_last), 0);
//   f2 reads only that third coordinate (column 2 of its first layer; the others zero).
// Then f2(s) = rho~(s_3) does not depend on the order of the tokens (Theorem D.1's invariance). The
// labelling must be invariant too: two sequences with equal multisets of tokens carry equal labels
// (re-checked here from the data, so a non-invariant labelling is named even when predictions match).
bool deep_set_structure(const KsNet& f1, const QMat& wov, const KsNet& f2, KsCertificate& k,
                        const std::vector<std::size_t>& label, std::string& why) {
  if (f1.layers.empty()) { why = "network.f1: the deep set needs phi~ (at least one layer)"; return false; }
  const KsLayer& last = f1.layers.back();
  for (std::size_t i = 1; i < 3; ++i)
    if (!last.rows[i].empty() || sgn(last.bias[i]) != 0) {
      why = "network.f1: output " + std::to_string(i) + " is not identically 0 (Theorem D.1 writes f1 = (phi~, 0, 0))";
      return false;
    }
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      if (wov[i][j] != ((i == 2 && j == 0) ? 1 : 0)) {
        why = "network.attention.WOV: expected the uniform-attention e_2 e_0^T of Theorem D.1";
        return false;
      }
  const KsLayer& first = f2.layers.front();
  for (std::size_t i = 0; i < first.rows.size(); ++i)
    for (const KsTerm& t : first.rows[i])
      if (t.col != 2) {
        why = "network.f2: layer 0 row " + std::to_string(i) + " reads context coordinate " + std::to_string(t.col) +
              " (a deep set reads only the pooled sum, coordinate 2)";
        return false;
      }
  // The first sequence of each multiset: the sequences sorted by (multiset, index), each group's first.
  if (k.sorted.empty()) k.sort_multisets();
  std::vector<std::size_t> ord(k.N), first_of(k.N);
  std::iota(ord.begin(), ord.end(), 0);
  std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) {
    return k.multiset_less(a, b) || (!k.multiset_less(b, a) && a < b);
  });
  for (std::size_t r = 0; r < k.N; ++r)
    first_of[ord[r]] = r > 0 && k.same_multiset(ord[r - 1], ord[r]) ? first_of[ord[r - 1]] : ord[r];
  for (std::size_t i = 0; i < k.N; ++i)
    if (label[first_of[i]] != label[i]) {
      why = "labels: sequences " + std::to_string(first_of[i]) + " and " + std::to_string(i) +
            " are the same multiset with different labels (not permutation invariant)";
      return false;
    }
  return true;
}

// Stage 1: claim, setting and sizes.
bool ks_read_setting(const Value& c, KsCertificate& k, std::string& why) {
  if (!read_string(c, "", "claim", k.claim, why) || !read_string(c, "", "setting", k.setting, why)) return false;
  const std::string& claim = k.claim;
  k.ablation = claim == "ks25/ablation-linear-phi";
  k.deep_set = claim == "ks25/theorem-D.1";
  if (claim != "ks25/theorem-4.1" && claim != "ks25/corollary-4.1" && !k.ablation && !k.deep_set) {
    why = "claim: expected ks25/theorem-4.1, ks25/corollary-4.1, ks25/theorem-D.1 or ks25/ablation-linear-phi, got " +
          claim;
    return false;
  }
  if (k.setting != "next-token" && k.setting != "seq-to-seq") { why = "setting: expected next-token or seq-to-seq"; return false; }
  k.s2s = k.setting == "seq-to-seq";
  if (((claim == "ks25/theorem-4.1" || k.deep_set) && k.s2s) || (claim == "ks25/corollary-4.1" && !k.s2s)) {
    why = "setting: " + k.setting + " does not match claim " + claim;
    return false;
  }
  const Value* v;
  if (!(v = member(c, "", "N", json::Type::Number, why)) || !read_size(*v, "N", 1u << 30, k.N, why)) return false;
  if (!(v = member(c, "", "n", json::Type::Number, why)) || !read_size(*v, "n", 1u << 20, k.n, why)) return false;
  if (!(v = member(c, "", "d", json::Type::Number, why)) || !read_size(*v, "d", 1u << 20, k.d, why)) return false;
  if (!(v = member(c, "", "C", json::Type::Number, why)) || !read_size(*v, "C", 1u << 30, k.C, why)) return false;
  if (k.N == 0 || k.n == 0 || k.d == 0 || k.C == 0) { why = "N, n, d and C must be >= 1"; return false; }
  k.per = k.s2s ? k.n : 1;
  return true;
}

// Stage 2: the tokens, pairwise distinct.
bool ks_read_tokens(const Value& c, KsCertificate& k, std::string& why) {
  const Value* tv = member(c, "", "tokens", json::Type::Array, why);
  if (!tv) return false;
  k.V = tv->size();
  if (k.V == 0) { why = "tokens: empty"; return false; }
  if (k.V > UINT32_MAX) { why = "tokens: more than 2^32 - 1 rows"; return false; }
  k.tok.resize(k.V);
  for (std::size_t t = 0; t < k.V; ++t)
    if (!read_rational_vector(*tv->at(t), ks_at("tokens", t), k.d, k.tok[t], why)) return false;
  std::vector<std::size_t> ord(k.V);
  std::iota(ord.begin(), ord.end(), 0);
  std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return k.tok[a] < k.tok[b]; });
  for (std::size_t i = 1; i < k.V; ++i)
    if (k.tok[ord[i]] == k.tok[ord[i - 1]]) {
      why = "tokens: rows " + std::to_string(ord[i - 1]) + " and " + std::to_string(ord[i]) + " are equal";
      return false;
    }
  return true;
}

// Stage 3: the cost admitted, then sequences and labels.
bool ks_read_examples(const Value& c, KsCertificate& k, std::string& why) {
  {
    // Cost before the work: the exact separation compares every pair of tokens (V^2 d / 2; the
    // "projection" method needs V d), sequences and labels are linear in the data already read.
    const Value* sep = c.find("separation");
    const Value* m = sep ? sep->find("method") : nullptr;
    const bool pairwise = !(m && m->type == json::Type::String && m->text == "projection");
    const double V = double(k.V), d = double(k.d);
    const double ops = (pairwise ? V * V * d / 2 : V * d) + double(k.N) * double(k.n);
    if (!within_budget(ops * 4, V * d * 64 + double(k.N) * double(k.n) * 16, "the ks check", why)) return false;
  }
  const std::size_t N = k.N, n = k.n;
  // Data by reference: the sequences and labels are the named file's (its digest recomputed).
  if (const Value* dv = c.find("data"); dv && dv->type == json::Type::Object && dv->find("file"))
    return ks_read_referenced(*dv, N, n, k.d, k.s2s, k.C, k.tok, k.seq, k.label, why);
  const Value* sv = member(c, "", "sequences", json::Type::Array, why);
  if (!sv) return false;
  if (sv->size() != N) { why = "sequences: expected N = " + std::to_string(N) + " sequences"; return false; }
  k.seq.assign(N * n, 0);
  for (std::size_t i = 0; i < N; ++i) {
    const json::Item s_item = sv->at(i);
    const Value& s = *s_item;
    if (s.type != json::Type::Array || s.size() != n) { why = ks_at("sequences", i) + ": expected n token indices"; return false; }
    for (std::size_t q = 0, t; q < n; ++q) {
      if (!read_size(*s.at(q), ks_at(ks_at("sequences", i), q), k.V - 1, t, why)) return false;
      k.seq[i * n + q] = static_cast<std::uint32_t>(t);
    }
  }
  const Value* lv = member(c, "", "labels", json::Type::Array, why);
  if (!lv) return false;
  if (lv->size() != N) { why = "labels: expected N labels"; return false; }
  k.label.assign(N * k.per, 0);
  for (std::size_t i = 0; i < N; ++i) {
    if (k.s2s) {
      const json::Item li_item = lv->at(i);
      const Value& li = *li_item;
      if (li.type != json::Type::Array || li.size() != n) { why = ks_at("labels", i) + ": expected n labels"; return false; }
      for (std::size_t q = 0; q < n; ++q)
        if (!read_label(*li.at(q), ks_at(ks_at("labels", i), q), k.C, k.label[i * n + q], why)) return false;
    } else if (!read_label(*lv->at(i), ks_at("labels", i), k.C, k.label[i], why)) {
      return false;
    }
  }
  return true;
}

// Stage 4: r2 = max |x|^2 and delta2 (min |x - x'|^2, or the projection bound), exactly.
bool ks_check_separation(const Value& c, const KsCertificate& k, std::string& why) {
  const std::size_t V = k.V, d = k.d;
  const std::vector<QRow>& tok = k.tok;
  const Value* sep = member(c, "", "separation", json::Type::Object, why);
  if (!sep) return false;
  std::string method = "exact";
  if (sep->find("method") && !read_string(*sep, "separation", "method", method, why)) return false;
  if (method != "exact" && method != "projection") { why = "separation.method: expected exact or projection"; return false; }
  mpq_class r2 = 0, d2 = 0, acc, df;
  bool have = false;
  if (method == "projection") {
    // delta2 = g^2 / |u|^2, g = the smallest gap of the projections u^T x: a certified lower bound on
    // every |x - x'|^2 (Cauchy-Schwarz), computed in O(V log V).
    const Value* uv = member(*sep, "separation", "direction", json::Type::Array, why);
    QRow u;
    if (!uv || !read_rational_vector(*uv, "separation.direction", d, u, why)) return false;
    mpq_class u2 = 0;
    for (const auto& x : u) u2 += x * x;
    if (sgn(u2) == 0) { why = "separation.direction: zero vector"; return false; }
    std::vector<mpq_class> p(V, mpq_class(0));
    for (std::size_t t = 0; t < V; ++t)
      for (std::size_t j = 0; j < d; ++j) p[t] += u[j] * tok[t][j];
    std::sort(p.begin(), p.end());
    for (std::size_t t = 1; t < V; ++t) {
      df = p[t] - p[t - 1];
      if (!have || df < acc) acc = df;
      have = true;
    }
    if (have && sgn(acc) == 0) { why = "separation.direction: two tokens have equal projections"; return false; }
    d2 = have ? mpq_class(acc * acc / u2) : mpq_class(0);
  }
  for (std::size_t a = 0; a < V; ++a) {
    acc = 0;
    for (const auto& x : tok[a]) acc += x * x;
    if (acc > r2) r2 = acc;
  }
  if (method != "projection" && V > 1) d2 = ks_min_sq_distance(tok, d, checker_threads());
  return eq_str(*sep, "separation", "r2", r2, why) && eq_str(*sep, "separation", "delta2", d2, why);
}

// Stage 5: the network f1, WOV, f2 and the checksum over all its numbers.
bool ks_read_network(const Value& c, KsCertificate& k, std::string& why) {
  const Value* nv = member(c, "", "network", json::Type::Object, why);
  if (!nv) return false;
  mpq_class checksum = 0;
  unsigned long pos = 0;
  const Value* f1v = member(*nv, "network", "f1", json::Type::Array, why);
  if (!f1v || !ks_read_net(*f1v, "network.f1", k.d, k.f1, checksum, pos, why)) return false;
  if (ks_net_out(k.f1, k.d) != 3) { why = "network.f1: output dimension must be 3"; return false; }
  const Value* av = member(*nv, "network", "attention", json::Type::Object, why);
  if (!av) return false;
  const Value* wv = member(*av, "network.attention", "WOV", json::Type::Array, why);
  if (!wv) return false;
  if (wv->size() != 3) { why = "network.attention.WOV: expected 3 rows"; return false; }
  k.wov.assign(3, QRow());
  for (std::size_t i = 0; i < 3; ++i) {
    if (!read_rational_vector(*wv->at(i), ks_at("network.attention.WOV", i), 3, k.wov[i], why)) return false;
    for (const auto& x : k.wov[i]) {
      ++pos;
      if (sgn(x) != 0) {
        checksum += x * mpq_class(pos);
        ++k.wov_nonzero;
        k.wov_bits = std::max(k.wov_bits, ks_qbits(x));
      }
    }
  }
  const Value* f2v = member(*nv, "network", "f2", json::Type::Array, why);
  if (!f2v || !ks_read_net(*f2v, "network.f2", 3, k.f2, checksum, pos, why)) return false;
  if (!k.ablation && (k.f2.layers.empty() || ks_net_out(k.f2, 3) != 1)) { why = "network.f2: output dimension must be 1"; return false; }
  return eq_str(c, "", "checksum", checksum, why);
}

// Stage 6: f1 once per token, then every context s = f1(x_p) + WOV mean_k f1(x_k) (blocks of sequences
// on the checker's threads; each context is the same exact value whatever the split).
void ks_contexts(KsCertificate& k) {
  const std::size_t n = k.n;
  std::vector<QRow> f1o(k.V);
  parallel_for(k.V, checker_threads(), [&](std::size_t t, unsigned) { f1o[t] = ks_eval(k.f1, k.tok[t]); });
  k.ctx.assign(k.N * k.per, QRow());
  constexpr std::size_t kBlock = 1024;
  parallel_for((k.N + kBlock - 1) / kBlock, checker_threads(), [&](std::size_t blk, unsigned) {
    QRow mean(3), a(3);
    for (std::size_t i = blk * kBlock; i < std::min(k.N, (blk + 1) * kBlock); ++i) {
      for (auto& x : mean) x = 0;
      for (std::size_t q = 0; q < n; ++q)
        for (std::size_t j = 0; j < 3; ++j) mean[j] += f1o[k.at(i, q)][j];
      for (auto& x : mean) x /= mpq_class(static_cast<unsigned long>(n));
      for (std::size_t r = 0; r < 3; ++r) {
        a[r] = 0;
        for (std::size_t j = 0; j < 3; ++j) a[r] += k.wov[r][j] * mean[j];
      }
      for (std::size_t q = 0; q < k.per; ++q) {
        const std::size_t p = k.s2s ? q : n - 1;
        QRow s = f1o[k.at(i, p)];
        for (std::size_t j = 0; j < 3; ++j) s[j] += a[j];
        k.ctx[i * k.per + q] = std::move(s);
      }
    }
  });
}

// The ablation's verdict: two sequences with different labels and equal contexts (and, with
// token_sums_equal, equal token sums and equal tokens at the positions).
bool ks_check_collision(const Value& c, const KsCertificate& k, std::string& why) {
  const std::size_t N = k.N, n = k.n, per = k.per;
  const Value* cv = member(c, "", "collision", json::Type::Array, why);
  if (!cv) return false;
  if (cv->size() != 2) { why = "collision: expected [i, j]"; return false; }
  std::size_t i, j, pi = n - 1, pj = n - 1;
  if (!read_size(*cv->at(0), "collision[0]", N - 1, i, why) || !read_size(*cv->at(1), "collision[1]", N - 1, j, why))
    return false;
  if (k.s2s) {
    const Value* pv = member(c, "", "positions", json::Type::Array, why);
    if (!pv) return false;
    if (pv->size() != 2 || !read_size(*pv->at(0), "positions[0]", n - 1, pi, why) ||
        !read_size(*pv->at(1), "positions[1]", n - 1, pj, why)) {
      if (why.empty()) why = "positions: expected [ki, kj]";
      return false;
    }
  }
  const std::size_t ci = i * per + (k.s2s ? pi : 0), cj = j * per + (k.s2s ? pj : 0);
  if (k.label[ci] == k.label[cj]) { why = "collision: the two labels are equal"; return false; }
  if (k.ctx[ci] != k.ctx[cj]) { why = "collision: the two contexts differ"; return false; }
  // Typed: only the literal true asks for the stronger check, and anything but a boolean is malformed
  // (1 or "true" must not silently skip it).
  bool sums_equal = false;
  if (const Value* ts = c.find("token_sums_equal"))
    if (!read_bool(*ts, "token_sums_equal", sums_equal, why)) return false;
  if (!sums_equal) return true;
  if (k.at(i, pi) != k.at(j, pj)) { why = "token_sums_equal: the tokens at the positions differ"; return false; }
  QRow a(k.d, mpq_class(0)), b(k.d, mpq_class(0));
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t t = 0; t < k.d; ++t) {
      a[t] += k.tok[k.at(i, q)][t];
      b[t] += k.tok[k.at(j, q)][t];
    }
  if (a != b) { why = "token_sums_equal: the token sums differ"; return false; }
  return true;
}

// Stage 7: every prediction equals its label (f2 once per distinct context, all contexts at once sharing
// the work between them: ks_eval_shared; then the verdict in the order of the contexts).
bool ks_check_predictions(KsCertificate& k, std::string& why) {
  // The contexts sorted by (value, index); each run of equal values is one distinct context.
  k.by_ctx.resize(k.ctx.size());
  std::iota(k.by_ctx.begin(), k.by_ctx.end(), 0);
  std::sort(k.by_ctx.begin(), k.by_ctx.end(), [&](std::size_t a, std::size_t b) {
    const int c = ks_cmp(k.ctx[a], k.ctx[b]);
    return c < 0 || (c == 0 && a < b);
  });
  std::vector<std::size_t> of(k.ctx.size());
  std::vector<const QRow*> distinct;
  for (std::size_t r = 0; r < k.by_ctx.size(); ++r) {
    const std::size_t q = k.by_ctx[r];
    if (r == 0 || k.ctx[k.by_ctx[r - 1]] != k.ctx[q]) distinct.push_back(&k.ctx[q]);
    of[q] = distinct.size() - 1;
  }
  std::vector<mpq_class> out(distinct.size());
  {
    const unsigned threads = std::max(checker_threads(), 1u);
    std::vector<QRow> o = ks_eval_shared(k.f2, distinct, threads);
    for (std::size_t i = 0; i < o.size(); ++i) out[i] = std::move(o[i][0]);
  }
  std::vector<char> seen(distinct.size(), 0);
  std::vector<std::size_t> label_of(distinct.size(), 0);
  for (std::size_t q = 0; q < k.ctx.size(); ++q) {
    const std::size_t c = of[q];
    if (!seen[c]) {
      if (out[c] != mpq_class(static_cast<unsigned long>(k.label[q]))) {
        why = "prediction for sequence " + std::to_string(q / k.per) +
              (k.s2s ? " position " + std::to_string(q % k.per) : std::string()) + " is " + out[c].get_str() +
              ", label " + std::to_string(k.label[q]);
        return false;
      }
      seen[c] = 1;
      label_of[c] = k.label[q];
    } else if (label_of[c] != k.label[q]) {
      why = "sequence " + std::to_string(q / k.per) + ": equal context, different label";
      return false;
    }
  }
  return true;
}

// Stage 8, eq. (55): contexts of different (token, multiset) keys are >= 1/n apart (not for deep sets,
// which ignore the last token).
bool ks_check_eq55(KsCertificate& k, std::string& why) {
  const std::size_t n = k.n, per = k.per;
  // Each key's first context (in index order): the contexts sorted by (key, index), each group's first.
  if (k.sorted.empty()) k.sort_multisets();
  auto token = [&](std::size_t q) { return k.at(q / per, k.s2s ? q % per : n - 1); };
  auto key_less = [&](std::size_t a, std::size_t b) {
    if (token(a) != token(b)) return token(a) < token(b);
    return k.multiset_less(a / per, b / per);
  };
  std::vector<std::size_t> ord(k.ctx.size());
  std::iota(ord.begin(), ord.end(), 0);
  std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) {
    return key_less(a, b) || (!key_less(b, a) && a < b);
  });
  std::vector<char> first(k.ctx.size(), 0);
  for (std::size_t r = 0; r < ord.size(); ++r)
    first[ord[r]] = r == 0 || token(ord[r - 1]) != token(ord[r]) || !k.same_multiset(ord[r - 1] / per, ord[r] / per);
  ord.clear();
  ord.shrink_to_fit();
  // Those contexts in the order of their values (ties: index), from the predictions' sort.
  std::vector<std::size_t> kc;
  for (std::size_t q : k.by_ctx)
    if (first[q]) kc.push_back(q);
  // Lexicographic order: pairs in different coordinate-0 groups are >= the adjacent coordinate-0 gap
  // apart; within a group, different coordinate-1 groups >= the adjacent coordinate-1 gap; and so on
  // to coordinate 2; equal contexts of different keys violate eq. (55) outright.
  const mpq_class bound(1, static_cast<unsigned long>(n * n));
  for (std::size_t i = 1; i < kc.size(); ++i) {
    const QRow &x = k.ctx[kc[i - 1]], &y = k.ctx[kc[i]];
    std::size_t j = 0;
    while (j < 3 && x[j] == y[j]) ++j;
    if (j == 3) {
      why = "eq. (55): sequences " + std::to_string(kc[i - 1] / per) + " and " + std::to_string(kc[i] / per) +
            " have different keys but equal contexts";
      return false;
    }
    mpq_class g = y[j] - x[j];
    if (g * g < bound) {
      why = "eq. (55): contexts of sequences " + std::to_string(kc[i - 1] / per) + " and " +
            std::to_string(kc[i] / per) + " differ by less than 1/n in coordinate " + std::to_string(j);
      return false;
    }
  }
  return true;
}

// Stage 9: the complexity figures, recomputed, and the theorem's width.
bool ks_check_complexity(const Value& c, const KsCertificate& k, std::string& why) {
  const Value* cx = member(c, "", "complexity", json::Type::Object, why);
  if (!cx) return false;
  const std::size_t params = k.f1.parameters + 9 + k.f2.parameters;
  const std::size_t nonzero = k.f1.nonzero + k.wov_nonzero + k.f2.nonzero;
  const std::size_t depth = k.f1.layers.size() + 1 + k.f2.layers.size();
  const std::size_t width = std::max({k.f1.width, k.f2.width, std::size_t{3}});
  const std::size_t bits = std::max({k.f1.bits, k.f2.bits, k.wov_bits});
  const std::pair<const char*, std::size_t> want[] = {{"parameters", params},
                                                      {"nonzero_parameters", nonzero},
                                                      {"depth", depth},
                                                      {"width", width},
                                                      {"bit_complexity", bits}};
  // The theorems' width: 14 (Theorem 4.1 / Corollary 4.1), 12 (Theorem D.1's deep set).
  const std::size_t width_bound = k.deep_set ? 12 : 14;
  if (width > width_bound) {
    why = "complexity.width: the network has width " + std::to_string(width) + ", the theorem's is " +
          std::to_string(width_bound);
    return false;
  }
  for (const auto& [key, val] : want) {
    const Value* e = member(*cx, "complexity", key, json::Type::Number, why);
    std::size_t got;
    if (!e || !read_size(*e, std::string("complexity.") + key, std::size_t{1} << 62, got, why)) return false;
    if (got != val) {
      why = std::string("complexity.") + key + ": stated " + std::to_string(got) + ", recomputed " + std::to_string(val);
      return false;
    }
  }
  return true;
}

}  // namespace

bool check_ks(const Value& c, std::string& why) {
  KsCertificate k;
  if (!ks_read_setting(c, k, why) || !ks_read_tokens(c, k, why) || !ks_read_examples(c, k, why) ||
      !ks_check_separation(c, k, why) || !ks_read_network(c, k, why))
    return false;
  ks_contexts(k);
  if (k.ablation) return ks_check_collision(c, k, why);
  if (k.deep_set && !deep_set_structure(k.f1, k.wov, k.f2, k, k.label, why)) return false;
  return ks_check_predictions(k, why) && (k.deep_set || ks_check_eq55(k, why)) && ks_check_complexity(c, k, why);
}

}  // namespace memcert_checker

// kind "ks": the ks25 Theorem 4.1 / Corollary 4.1 construction (or its linear-phi ablation), re-evaluated
// exactly from the certificate with GMP only.
//
//   {"kind":"ks","claim":"ks25/theorem-4.1"|"ks25/corollary-4.1"|"ks25/ablation-linear-phi",
//    "setting":"next-token"|"seq-to-seq","N","n","d","C",
//    "tokens":[V][d] exact, "sequences":[N][n] token indices, "labels":[N] | [N][n] (integers in [0,C)),
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
#include <map>
#include <numeric>

#include "kernel/context.hpp"
#include "kernel/read.hpp"

namespace memcert_checker {

namespace {

std::string ks_at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

struct Term {
  std::size_t col;
  mpq_class w;
};
struct Layer {
  std::size_t in = 0, out = 0;
  std::vector<std::vector<Term>> rows;  // non-zero terms
  QRow bias;
};
struct Net {
  std::vector<Layer> layers;
  std::size_t parameters = 0, nonzero = 0, width = 0, bits = 0;
};

std::size_t qbits(const mpq_class& q) {
  std::size_t a = sgn(q) == 0 ? 0 : mpz_sizeinbase(q.get_num_mpz_t(), 2);
  std::size_t b = q.get_den() == 1 ? 0 : mpz_sizeinbase(q.get_den_mpz_t(), 2);
  return std::max(a, b);
}

// Reads a layer list; input dimension `in`; accumulates the checksum with running position `pos`.
bool read_net(const Value& v, const std::string& where, std::size_t in, Net& net, mpq_class& checksum,
              unsigned long& pos, std::string& why) {
  if (v.type != json::Type::Array) { why = where + ": expected an array of layers"; return false; }
  std::size_t cur = in;
  for (std::size_t l = 0; l < v.items.size(); ++l) {
    const std::string w = ks_at(where, l);
    const Value* W = member(v.items[l], w, "W", json::Type::Array, why);
    if (!W) return false;
    const Value* b = member(v.items[l], w, "b", json::Type::Array, why);
    if (!b) return false;
    Layer L;
    L.in = cur;
    L.out = W->items.size();
    if (L.out == 0) { why = w + ".W: a layer needs at least one row"; return false; }
    L.rows.resize(L.out);
    QRow row;
    for (std::size_t i = 0; i < L.out; ++i) {
      if (!read_rational_vector(W->items[i], ks_at(w + ".W", i), cur, row, why)) return false;
      for (std::size_t j = 0; j < cur; ++j) {
        ++pos;
        if (sgn(row[j]) != 0) {
          checksum += row[j] * mpq_class(pos);
          ++net.nonzero;
          net.bits = std::max(net.bits, qbits(row[j]));
          L.rows[i].push_back({j, row[j]});
        }
      }
    }
    if (!read_rational_vector(*b, w + ".b", L.out, L.bias, why)) return false;
    for (const auto& x : L.bias) {
      ++pos;
      if (sgn(x) != 0) {
        checksum += x * mpq_class(pos);
        ++net.nonzero;
        net.bits = std::max(net.bits, qbits(x));
      }
    }
    net.parameters += L.out * cur + L.out;
    net.width = std::max(net.width, L.out);
    cur = L.out;
    net.layers.push_back(std::move(L));
  }
  return true;
}

std::size_t net_out(const Net& n, std::size_t in) { return n.layers.empty() ? in : n.layers.back().out; }

QRow eval(const Net& net, const QRow& x) {
  QRow h = x, o;
  mpq_class t;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const Layer& L = net.layers[l];
    o.assign(L.out, mpq_class(0));
    for (std::size_t i = 0; i < L.out; ++i) {
      o[i] = L.bias[i];
      for (const Term& term : L.rows[i]) {
        t = term.w * h[term.col];
        o[i] += t;
      }
      if (l + 1 < net.layers.size() && sgn(o[i]) < 0) o[i] = 0;
    }
    std::swap(h, o);
  }
  return h;
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
bool deep_set_structure(const Net& f1, const QMat& wov, const Net& f2, const std::vector<std::vector<std::size_t>>& seq,
                        const std::vector<std::size_t>& label, std::string& why) {
  if (f1.layers.empty()) { why = "network.f1: the deep set needs phi~ (at least one layer)"; return false; }
  const Layer& last = f1.layers.back();
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
  const Layer& first = f2.layers.front();
  for (std::size_t i = 0; i < first.rows.size(); ++i)
    for (const Term& t : first.rows[i])
      if (t.col != 2) {
        why = "network.f2: layer 0 row " + std::to_string(i) + " reads context coordinate " + std::to_string(t.col) +
              " (a deep set reads only the pooled sum, coordinate 2)";
        return false;
      }
  std::map<std::vector<std::size_t>, std::size_t> first_of;  // multiset -> first sequence
  for (std::size_t i = 0; i < seq.size(); ++i) {
    std::vector<std::size_t> ms = seq[i];
    std::sort(ms.begin(), ms.end());
    auto [it, fresh] = first_of.emplace(std::move(ms), i);
    if (!fresh && label[it->second] != label[i]) {
      why = "labels: sequences " + std::to_string(it->second) + " and " + std::to_string(i) +
            " are the same multiset with different labels (not permutation invariant)";
      return false;
    }
  }
  return true;
}

}  // namespace

bool check_ks(const Value& c, std::string& why) {
  std::string claim, setting;
  if (!read_string(c, "", "claim", claim, why) || !read_string(c, "", "setting", setting, why)) return false;
  const bool ablation = claim == "ks25/ablation-linear-phi";
  const bool deep_set = claim == "ks25/theorem-D.1";
  if (claim != "ks25/theorem-4.1" && claim != "ks25/corollary-4.1" && !ablation && !deep_set) {
    why = "claim: expected ks25/theorem-4.1, ks25/corollary-4.1, ks25/theorem-D.1 or ks25/ablation-linear-phi, got " +
          claim;
    return false;
  }
  if (setting != "next-token" && setting != "seq-to-seq") { why = "setting: expected next-token or seq-to-seq"; return false; }
  const bool s2s = setting == "seq-to-seq";
  if (((claim == "ks25/theorem-4.1" || deep_set) && s2s) || (claim == "ks25/corollary-4.1" && !s2s)) {
    why = "setting: " + setting + " does not match claim " + claim;
    return false;
  }
  std::size_t N, n, d, C;
  const Value* v;
  if (!(v = member(c, "", "N", json::Type::Number, why)) || !read_size(*v, "N", 1u << 30, N, why)) return false;
  if (!(v = member(c, "", "n", json::Type::Number, why)) || !read_size(*v, "n", 1u << 20, n, why)) return false;
  if (!(v = member(c, "", "d", json::Type::Number, why)) || !read_size(*v, "d", 1u << 20, d, why)) return false;
  if (!(v = member(c, "", "C", json::Type::Number, why)) || !read_size(*v, "C", 1u << 30, C, why)) return false;
  if (N == 0 || n == 0 || d == 0 || C == 0) { why = "N, n, d and C must be >= 1"; return false; }

  // Tokens: distinct.
  const Value* tv = member(c, "", "tokens", json::Type::Array, why);
  if (!tv) return false;
  const std::size_t V = tv->items.size();
  if (V == 0) { why = "tokens: empty"; return false; }
  std::vector<QRow> tok(V);
  for (std::size_t t = 0; t < V; ++t)
    if (!read_rational_vector(tv->items[t], ks_at("tokens", t), d, tok[t], why)) return false;
  {
    std::vector<std::size_t> ord(V);
    std::iota(ord.begin(), ord.end(), 0);
    std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return tok[a] < tok[b]; });
    for (std::size_t i = 1; i < V; ++i)
      if (tok[ord[i]] == tok[ord[i - 1]]) {
        why = "tokens: rows " + std::to_string(ord[i - 1]) + " and " + std::to_string(ord[i]) + " are equal";
        return false;
      }
  }
  // Sequences and labels.
  {
    // Cost before the work: the exact separation compares every pair of tokens (V^2 d / 2; the
    // "projection" method needs V d), sequences and labels are linear in the data already read.
    const Value* sep = c.find("separation");
    const Value* m = sep ? sep->find("method") : nullptr;
    const bool pairwise = !(m && m->type == json::Type::String && m->text == "projection");
    const double ops = (pairwise ? double(V) * double(V) * double(d) / 2 : double(V) * double(d)) + double(N) * double(n);
    if (!within_budget(ops * 4, double(V) * double(d) * 64 + double(N) * double(n) * 16, "the ks check", why)) return false;
  }
  const Value* sv = member(c, "", "sequences", json::Type::Array, why);
  if (!sv) return false;
  if (sv->items.size() != N) { why = "sequences: expected N = " + std::to_string(N) + " sequences"; return false; }
  std::vector<std::vector<std::size_t>> seq(N, std::vector<std::size_t>(n));
  for (std::size_t i = 0; i < N; ++i) {
    const Value& s = sv->items[i];
    if (s.type != json::Type::Array || s.items.size() != n) { why = ks_at("sequences", i) + ": expected n token indices"; return false; }
    for (std::size_t k = 0; k < n; ++k)
      if (!read_size(s.items[k], ks_at(ks_at("sequences", i), k), V - 1, seq[i][k], why)) return false;
  }
  const Value* lv = member(c, "", "labels", json::Type::Array, why);
  if (!lv) return false;
  if (lv->items.size() != N) { why = "labels: expected N labels"; return false; }
  const std::size_t per = s2s ? n : 1;
  std::vector<std::size_t> label(N * per);
  for (std::size_t i = 0; i < N; ++i) {
    if (s2s) {
      const Value& li = lv->items[i];
      if (li.type != json::Type::Array || li.items.size() != n) { why = ks_at("labels", i) + ": expected n labels"; return false; }
      for (std::size_t k = 0; k < n; ++k)
        if (!read_label(li.items[k], ks_at(ks_at("labels", i), k), C, label[i * n + k], why)) return false;
    } else if (!read_label(lv->items[i], ks_at("labels", i), C, label[i], why)) {
      return false;
    }
  }

  // Separation, exactly.
  {
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
      have = false;
    }
    for (std::size_t a = 0; a < V; ++a) {
      acc = 0;
      for (const auto& x : tok[a]) acc += x * x;
      if (acc > r2) r2 = acc;
      if (method == "projection") continue;
      for (std::size_t b = a + 1; b < V; ++b) {
        acc = 0;
        for (std::size_t j = 0; j < d; ++j) {
          df = tok[a][j] - tok[b][j];
          acc += df * df;
        }
        if (!have || acc < d2) d2 = acc;
        have = true;
      }
    }
    if (!eq_str(*sep, "separation", "r2", r2, why) || !eq_str(*sep, "separation", "delta2", d2, why)) return false;
  }

  // The network.
  const Value* nv = member(c, "", "network", json::Type::Object, why);
  if (!nv) return false;
  mpq_class checksum = 0;
  unsigned long pos = 0;
  Net f1, f2;
  const Value* f1v = member(*nv, "network", "f1", json::Type::Array, why);
  if (!f1v || !read_net(*f1v, "network.f1", d, f1, checksum, pos, why)) return false;
  if (net_out(f1, d) != 3) { why = "network.f1: output dimension must be 3"; return false; }
  const Value* av = member(*nv, "network", "attention", json::Type::Object, why);
  if (!av) return false;
  const Value* wv = member(*av, "network.attention", "WOV", json::Type::Array, why);
  if (!wv) return false;
  if (wv->items.size() != 3) { why = "network.attention.WOV: expected 3 rows"; return false; }
  QMat wov(3);
  std::size_t wov_nonzero = 0, wov_bits = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    if (!read_rational_vector(wv->items[i], ks_at("network.attention.WOV", i), 3, wov[i], why)) return false;
    for (const auto& x : wov[i]) {
      ++pos;
      if (sgn(x) != 0) {
        checksum += x * mpq_class(pos);
        ++wov_nonzero;
        wov_bits = std::max(wov_bits, qbits(x));
      }
    }
  }
  const Value* f2v = member(*nv, "network", "f2", json::Type::Array, why);
  if (!f2v || !read_net(*f2v, "network.f2", 3, f2, checksum, pos, why)) return false;
  if (!ablation && (f2.layers.empty() || net_out(f2, 3) != 1)) { why = "network.f2: output dimension must be 1"; return false; }
  if (!eq_str(c, "", "checksum", checksum, why)) return false;

  // f1 once per token, then the contexts.
  std::vector<QRow> f1o(V);
  for (std::size_t t = 0; t < V; ++t) f1o[t] = eval(f1, tok[t]);
  std::vector<QRow> ctx(N * per);
  for (std::size_t i = 0; i < N; ++i) {
    QRow mean(3, mpq_class(0));
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < 3; ++j) mean[j] += f1o[seq[i][k]][j];
    for (auto& x : mean) x /= mpq_class(static_cast<unsigned long>(n));
    QRow a(3, mpq_class(0));
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t j = 0; j < 3; ++j) a[r] += wov[r][j] * mean[j];
    for (std::size_t q = 0; q < per; ++q) {
      const std::size_t p = s2s ? q : n - 1;
      QRow s = f1o[seq[i][p]];
      for (std::size_t j = 0; j < 3; ++j) s[j] += a[j];
      ctx[i * per + q] = std::move(s);
    }
  }

  if (ablation) {
    const Value* cv = member(c, "", "collision", json::Type::Array, why);
    if (!cv) return false;
    if (cv->items.size() != 2) { why = "collision: expected [i, j]"; return false; }
    std::size_t i, j, pi = n - 1, pj = n - 1;
    if (!read_size(cv->items[0], "collision[0]", N - 1, i, why) || !read_size(cv->items[1], "collision[1]", N - 1, j, why))
      return false;
    if (s2s) {
      const Value* pv = member(c, "", "positions", json::Type::Array, why);
      if (!pv) return false;
      if (pv->items.size() != 2 || !read_size(pv->items[0], "positions[0]", n - 1, pi, why) ||
          !read_size(pv->items[1], "positions[1]", n - 1, pj, why)) {
        if (why.empty()) why = "positions: expected [ki, kj]";
        return false;
      }
    }
    const std::size_t ci = i * per + (s2s ? pi : 0), cj = j * per + (s2s ? pj : 0);
    if (label[ci] == label[cj]) { why = "collision: the two labels are equal"; return false; }
    if (ctx[ci] != ctx[cj]) { why = "collision: the two contexts differ"; return false; }
    // Typed: only the literal true asks for the stronger check, and anything but a boolean is malformed
    // (1 or "true" must not silently skip it).
    bool sums_equal = false;
    if (const Value* ts = c.find("token_sums_equal"))
      if (!read_bool(*ts, "token_sums_equal", sums_equal, why)) return false;
    if (sums_equal) {
      if (seq[i][pi] != seq[j][pj]) { why = "token_sums_equal: the tokens at the positions differ"; return false; }
      QRow a(d, mpq_class(0)), b(d, mpq_class(0));
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t q = 0; q < d; ++q) {
          a[q] += tok[seq[i][k]][q];
          b[q] += tok[seq[j][k]][q];
        }
      if (a != b) { why = "token_sums_equal: the token sums differ"; return false; }
    }
    return true;
  }

  if (deep_set && !deep_set_structure(f1, wov, f2, seq, label, why)) return false;

  // Every prediction (f2 once per distinct context).
  {
    std::map<QRow, std::size_t> seen;  // context -> label
    for (std::size_t q = 0; q < ctx.size(); ++q) {
      auto it = seen.find(ctx[q]);
      if (it == seen.end()) {
        QRow out = eval(f2, ctx[q]);
        if (out[0] != mpq_class(static_cast<unsigned long>(label[q]))) {
          why = "prediction for sequence " + std::to_string(q / per) +
                (s2s ? " position " + std::to_string(q % per) : std::string()) + " is " + out[0].get_str() +
                ", label " + std::to_string(label[q]);
          return false;
        }
        seen.emplace(ctx[q], label[q]);
      } else if (it->second != label[q]) {
        why = "sequence " + std::to_string(q / per) + ": equal context, different label";
        return false;
      }
    }
  }

  // eq. (55): contexts of different (token, multiset) keys are >= 1/n apart (not for deep sets, which
  // ignore the last token).
  if (!deep_set) {
    std::map<std::pair<std::size_t, std::vector<std::size_t>>, std::size_t> keys;
    std::vector<std::size_t> kc;
    for (std::size_t q = 0; q < ctx.size(); ++q) {
      std::vector<std::size_t> ms = seq[q / per];
      std::sort(ms.begin(), ms.end());
      const std::size_t p = s2s ? q % per : n - 1;
      if (keys.emplace(std::make_pair(seq[q / per][p], std::move(ms)), q).second) kc.push_back(q);
    }
    std::sort(kc.begin(), kc.end(), [&](std::size_t a, std::size_t b) { return ctx[a] < ctx[b]; });
    // Lexicographic order: pairs in different coordinate-0 groups are >= the adjacent coordinate-0 gap
    // apart; within a group, different coordinate-1 groups >= the adjacent coordinate-1 gap; and so on
    // to coordinate 2; equal contexts of different keys violate eq. (55) outright.
    const mpq_class bound(1, static_cast<unsigned long>(n * n));
    for (std::size_t i = 1; i < kc.size(); ++i) {
      const QRow &x = ctx[kc[i - 1]], &y = ctx[kc[i]];
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
  }

  // Complexity.
  {
    const Value* cx = member(c, "", "complexity", json::Type::Object, why);
    if (!cx) return false;
    const std::size_t params = f1.parameters + 9 + f2.parameters;
    const std::size_t nonzero = f1.nonzero + wov_nonzero + f2.nonzero;
    const std::size_t depth = f1.layers.size() + 1 + f2.layers.size();
    const std::size_t width = std::max({f1.width, f2.width, std::size_t{3}});
    const std::size_t bits = std::max({f1.bits, f2.bits, wov_bits});
    const std::pair<const char*, std::size_t> want[] = {{"parameters", params},
                                                        {"nonzero_parameters", nonzero},
                                                        {"depth", depth},
                                                        {"width", width},
                                                        {"bit_complexity", bits}};
    // The theorems' width: 14 (Theorem 4.1 / Corollary 4.1), 12 (Theorem D.1's deep set).
    const std::size_t width_bound = deep_set ? 12 : 14;
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
  }
  return true;
}

}  // namespace memcert_checker

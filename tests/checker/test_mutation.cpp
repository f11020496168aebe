// Mutation campaign: for every certificate kind, 1000 random semantic mutations of an honest certificate
// (a number perturbed, array entries swapped or dropped, a type changed, a member removed or duplicated).
// None may verify unless an independent method shows the mutated certificate is still true:
//   rank / kruskal: the claimed bounds recomputed by brute force (tests/checker/brute_q.hpp, plain
//     Gauss-Jordan over Q, independent of checker and engine);
//   theorem1 / ks / claim: a mutant that verifies must be value-preserving (equal after reading every
//     exact number as a rational) or touch only a field the checker reports as not checked;
//   theorem1 data (contexts, queries, labels): the forward pass and rank(Z) recomputed in long double
//     (an independent evaluation, with a margin) must show the mutated claim still true;
//   dana24: the arg-max margin of every association recomputed in long double, with a margin;
//   dana24-claim: proposition-2's rank(P Z*) > d by exact brute force; lemma-2's rank A = min(T, H d) by a
//     long double Gram matrix whose Cholesky pivots stay clear of 0.
// Every verdict must also be well-formed: valid, rejected, malformed or undecided, never an exception.
#include "catch.hpp"
#include <gmpxx.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>

#include "brute_q.hpp"
#include "model_fixture.hpp"
#include "memcert/checker/checker.hpp"
#include "support/cli_run.hpp"

using nlohmann::json;

namespace {

const std::string kDir = memcert_test::scratch_dir("checker_mutation");
constexpr int kMutations = 1000;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
bool run(const std::string& args) {
  return std::system((std::string(std::getenv("MEMCERT_BIN")) + " " + args + " >/dev/null 2>&1").c_str()) == 0;
}

// Every node's JSON pointer (root excluded), in document order.
void paths(const json& j, const std::string& at, std::vector<std::string>& out) {
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string p = at + "/" + it.key();
      out.push_back(p);
      paths(*it, p, out);
    }
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string p = at + "/" + std::to_string(i);
      out.push_back(p);
      paths(j[i], p, out);
    }
}

bool rational(const std::string& s, mpq_class& q) {
  try {
    if (s == "1e999") {  // the mutator's one exponent form: 10^999 exactly
      mpz_class p;
      mpz_ui_pow_ui(p.get_mpz_t(), 10, 999);
      q = p;
      return true;
    }
    if (s.find_first_of(".eE") != std::string::npos) return false;
    q = mpq_class(s);
    if (q.get_den() == 0) return false;
    q.canonicalize();
    return true;
  } catch (...) {
    return false;
  }
}

// Reads exact-number strings as canonical rationals, so "2/4" and "1/2" compare equal.
json canonical(const json& j) {
  if (j.is_object() || j.is_array()) {
    json c = j;
    for (auto& x : c) x = canonical(x);
    return c;
  }
  mpq_class q;
  if (j.is_string() && rational(j.get<std::string>(), q)) return q.get_str();
  return j;
}

mpq_class exact(const json& x) {
  mpq_class q;
  if (!x.is_string() || !rational(x.get<std::string>(), q)) throw std::runtime_error("not an exact number: " + x.dump());
  return q;
}

struct Mutant {
  std::string text;   // the certificate text to verify
  std::string where;  // the mutated pointer ("" for a text-level mutation)
  json value;         // the mutated JSON (when where is set)
};

Mutant mutate(const json& base, std::mt19937_64& rng) {
  std::vector<std::string> ps;
  paths(base, "", ps);
  const std::string p = ps[rng() % ps.size()];
  json c = base;
  json& node = c[json::json_pointer(p)];
  const int op = static_cast<int>(rng() % 7);
  mpq_class q;
  switch (op) {
    case 0:  // perturb a number (exact string or JSON integer)
      if (node.is_string() && rational(node.get<std::string>(), q)) {
        const mpq_class deltas[] = {mpq_class(1), mpq_class(-1), mpq_class(1, 3), mpq_class(1, 1 << 20), q, -2 * q};
        node = mpq_class(q + deltas[rng() % 6]).get_str();
      } else if (node.is_number_unsigned()) {
        node = node.get<std::uint64_t>() + 1 + rng() % 3;
      } else {
        node = "7/3";
      }
      break;
    case 1:  // swap two entries of the parent array (rows swapped)
    case 2: {  // drop an entry / remove a member
      const auto slash = p.rfind('/');
      json& parent = c[json::json_pointer(p.substr(0, slash))];
      const std::string key = p.substr(slash + 1);
      if (parent.is_array()) {
        const std::size_t i = std::stoul(key);
        if (op == 1 && parent.size() > 1) std::swap(parent[i], parent[(i + 1 + rng() % (parent.size() - 1)) % parent.size()]);
        else parent.erase(i);
      } else {
        parent.erase(key);
      }
      break;
    }
    case 3: {  // change the type
      const json alternatives[] = {json(1), json(1.5), json("1"), json(true), json(nullptr), json::array(), json::object()};
      node = alternatives[rng() % 7];
      break;
    }
    case 4:  // a number outside double range / an absurd size
      node = node.is_string() ? json("1e999") : json(std::uint64_t{1} << 62);
      break;
    case 5:  // zero
      node = node.is_string() ? json("0") : json(0);
      break;
    default: {  // a duplicated member (text level: the parser must refuse it)
      std::string t = base.dump();
      const auto at = t.find("\"claim\":");
      t.insert(at, "\"claim\":\"x\",");
      return {t, "", json()};
    }
  }
  return {c.dump(), p, c};
}

// True when the verdict is one of the four outcomes (never an internal error).
bool well_formed(const memcert_checker::Verdict& v) {
  if (v.valid) return !v.undecided && !v.malformed && v.reason.empty();
  return !v.reason.empty() && v.reason.find("unexpected error") == std::string::npos;
}

// Runs the campaign; `still_true(mutant)` is the independent method for accepted mutants.
template <class StillTrue>
void campaign(const json& honest, std::uint64_t seed, StillTrue still_true) {
  REQUIRE(memcert_checker::verify_certificate_text(honest.dump()).valid);
  std::mt19937_64 rng(seed);
  const json canon = canonical(honest);
  int accepted = 0;
  for (int i = 0; i < kMutations; ++i) {
    Mutant m = mutate(honest, rng);
    memcert_checker::Budget b;
    b.max_seconds = 30;
    const auto v = memcert_checker::verify_certificate_text(m.text, b);
    INFO("mutation " << i << " at " << m.where << ": " << v.reason);
    REQUIRE(well_formed(v));
    if (!v.valid) continue;
    ++accepted;
    const bool same = !m.where.empty() && canonical(m.value) == canon;
    INFO("accepted mutant at " << m.where);
    const bool shown_true = same || still_true(m);
    // Kept for reproduction: memcert verify <file> on a failure.
    if (!shown_true) {
      const std::string kept = kDir + "/unexplained_mutant_" + std::to_string(seed) + "_" + std::to_string(i) + ".json";
      std::ofstream(kept) << m.text;
      memcert_test::keep_scratch(kDir);
      UNSCOPED_INFO("kept for reproduction: " << kept);
    }
    CHECK(shown_true);
  }
  WARN(accepted << " of " << kMutations << " mutants verified (each shown true independently)");
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

using QV = std::vector<mpq_class>;

// The INTERFACE semantics of a ks layer list, evaluated exactly (independent of check_ks.cpp).
QV ks_net(const json& layers, QV h) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    QV o;
    for (std::size_t i = 0; i < layers[l]["W"].size(); ++i) {
      mpq_class v = exact(layers[l]["b"].at(i));
      for (std::size_t j = 0; j < h.size(); ++j) v += exact(layers[l]["W"][i].at(j)) * h[j];
      if (l + 1 < layers.size() && v < 0) v = 0;
      o.push_back(v);
    }
    h = o;
  }
  return h;
}

// A next-token ks certificate's claim, recomputed by brute force: distinct tokens, r2 and delta2 as
// stated, every prediction f2(f1(x_last) + WOV mean f1) equal to its label, contexts of different
// (last token, multiset) keys at least 1/n apart in some coordinate (not for deep sets), and for deep
// sets equal labels on equal multisets. Network numbers, complexity and checksum are not recomputed
// here, so a mutant there counts as true only if value-preserving.
bool ks_still_true(const Mutant& m) {
  if (starts(m.where, "/network") || starts(m.where, "/complexity") || starts(m.where, "/checksum")) return false;
  try {
    const json& c = m.value;
    const std::size_t n = c["n"];
    std::vector<QV> tok;
    for (const auto& t : c["tokens"]) {
      tok.emplace_back();
      for (const auto& x : t) tok.back().push_back(exact(x));
    }
    mpq_class r2 = 0, d2 = -1;
    for (std::size_t a = 0; a < tok.size(); ++a) {
      mpq_class s = 0;
      for (const auto& x : tok[a]) s += x * x;
      r2 = std::max(r2, s);
      for (std::size_t b = a + 1; b < tok.size(); ++b) {
        mpq_class t = 0;
        for (std::size_t j = 0; j < tok[a].size(); ++j) t += (tok[a][j] - tok[b][j]) * (tok[a][j] - tok[b][j]);
        if (t == 0) return false;
        if (d2 < 0 || t < d2) d2 = t;
      }
    }
    if (exact(c["separation"]["r2"]) != r2 || exact(c["separation"]["delta2"]) != d2) return false;
    const bool deep = c["claim"] == "ks25/theorem-D.1";
    std::vector<std::pair<std::pair<std::size_t, std::vector<std::size_t>>, QV>> keyed;
    std::map<std::vector<std::size_t>, std::size_t> label_of;
    for (std::size_t i = 0; i < c["sequences"].size(); ++i) {
      const json& sq = c["sequences"][i];
      if (sq.size() != n) return false;
      QV mean(3, 0), last;
      for (std::size_t k = 0; k < n; ++k) {
        QV f = ks_net(c["network"]["f1"], tok.at(sq[k].get<std::size_t>()));
        for (std::size_t j = 0; j < 3; ++j) mean[j] += f[j] / mpq_class(n);
        if (k + 1 == n) last = f;
      }
      for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t j = 0; j < 3; ++j) last[r] += exact(c["network"]["attention"]["WOV"][r][j]) * mean[j];
      const std::size_t y = c["labels"].at(i);
      if (ks_net(c["network"]["f2"], last).at(0) != mpq_class(y)) return false;
      std::vector<std::size_t> ms;
      for (const auto& t : sq) ms.push_back(t);
      std::sort(ms.begin(), ms.end());
      auto [it, fresh] = label_of.emplace(ms, y);
      if (deep && !fresh && it->second != y) return false;
      keyed.push_back({{sq[n - 1], ms}, last});
    }
    if (!deep)
      for (std::size_t a = 0; a < keyed.size(); ++a)
        for (std::size_t b = a + 1; b < keyed.size(); ++b) {
          if (keyed[a].first == keyed[b].first) continue;
          bool far = false;
          for (std::size_t j = 0; j < 3; ++j) far |= abs(keyed[a].second[j] - keyed[b].second[j]) >= mpq_class(1, n);
          if (!far) return false;
        }
    return true;
  } catch (...) {
    return false;
  }
}

// theorem1: a mutated W_O row whose stacked value o_h[c] is 0 for every input (column c of W_V^h all
// zero), or a W_D row whose o[i] is 0 for every input (column i of W_O zero, no skip), cannot change
// y_hat: the mutant is as true as the honest certificate.
bool theorem1_dead_weight(const Mutant& m) {
  const json& c = m.value;
  unsigned a = 0, b = 0;
  if (std::sscanf(m.where.c_str(), "/weights/WO/%u/%u", &a, &b) == 2) {
    // o[b] feeds y_hat only through row b of W_D: a zero row makes W_O's column b dead.
    bool wd_row_zero = true;
    for (const auto& x : c["weights"]["WD"][b]) wd_row_zero = wd_row_zero && exact(x) == 0;
    if (wd_row_zero) return true;
    const std::size_t dv = c["dv"], h = a / dv, col = a % dv;
    for (const auto& row : c["weights"]["heads"][h]["WV"])
      if (exact(row[col]) != 0) return false;
    return true;
  }
  if (std::sscanf(m.where.c_str(), "/trace/%u/", &a) == 1 && m.where.size() > 4 &&
      m.where.substr(m.where.size() - 4) == "/eps") {
    // eps is a free parameter of Lemma 4: any eps > 0 with c >= (spread + ln(2(n-1)/eps)) / gap serves
    // (Lemma 5's criterion then re-checked with it). Evaluated here in long double with a margin.
    const auto& t = c["trace"][a];
    const long double eps = exact(t["eps"]).get_d(), cc = exact(t["c"]).get_d(), gap = exact(t["gap"]).get_d(),
                      spread = exact(t["spread"]).get_d();
    const long double n = c["n"].get<double>();
    return eps > 0 && gap > 0 && cc * gap >= (spread + std::log(2 * (n - 1) / eps)) * (1 + 1e-9L);
  }
  if (std::sscanf(m.where.c_str(), "/weights/WD/%u/%u", &a, &b) == 2) {
    if (c.value("skip", false)) return false;
    for (const auto& row : c["weights"]["WO"])
      if (exact(row[a]) != 0) return false;
    return true;
  }
  return false;
}

using LV = std::vector<long double>;
using LM = std::vector<LV>;

// An exact number as the nearest long double (through 40 significant decimal digits), whose range (to
// 1e4932) holds the mutator's 1e999 and its squares, unlike a double.
long double ld(const json& x) {
  const mpf_class f(exact(x), 160);
  mp_exp_t e = 0;
  const std::string digits = f.get_str(e, 10, 40);
  if (digits.empty()) return 0;
  const bool neg = digits[0] == '-';
  const std::string text = (neg ? "-0." : "0.") + digits.substr(neg ? 1 : 0) + "e" + std::to_string(e);
  return std::strtold(text.c_str(), nullptr);
}
LM ld_matrix(const json& a) {
  LM m;
  for (const auto& row : a) {
    m.emplace_back();
    for (const auto& x : row) m.back().push_back(ld(x));
  }
  return m;
}
// y = A x (A given row-major).
LV ld_mul(const LM& a, const LV& x) {
  LV y(a.size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < x.size(); ++j) y[i] += a[i].at(j) * x[j];
  return y;
}
// y = A^T x.
LV ld_mul_t(const LM& a, const LV& x) {
  LV y(a.empty() ? 0 : a[0].size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < y.size(); ++j) y[j] += a[i][j] * x.at(i);
  return y;
}
LV ld_softmax(const LV& a) {
  long double mx = a[0];
  for (long double v : a) mx = std::max(mx, v);
  LV e(a.size());
  long double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += e[i] = std::exp(a[i] - mx);
  for (auto& v : e) v /= s;
  return e;
}
// The rows of M have full rank, shown by a Cholesky factorization of M M^T in long double whose pivots all
// exceed 1e-12 times the largest diagonal entry (far above the rounding error of this size of problem).
bool ld_full_row_rank(const LM& m) {
  const std::size_t r = m.size();
  LM g(r, LV(r, 0));
  long double top = 0;
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < r; ++j) {
      for (std::size_t k = 0; k < m[i].size(); ++k) g[i][j] += m[i][k] * m[j][k];
      if (i == j) top = std::max(top, g[i][i]);
    }
  for (std::size_t j = 0; j < r; ++j) {
    for (std::size_t k = 0; k < j; ++k) g[j][j] -= g[j][k] * g[j][k];
    if (!(g[j][j] > 1e-12L * top)) return false;
    g[j][j] = std::sqrt(g[j][j]);
    for (std::size_t i = j + 1; i < r; ++i) {
      for (std::size_t k = 0; k < j; ++k) g[i][j] -= g[i][k] * g[j][k];
      g[i][j] /= g[j][j];
    }
  }
  return true;
}

// theorem1's claim for the (mutated) data, recomputed independently of check_theorem1.cpp in long double:
// y_hat = W_D^T (W_O^T [W_V^hT E^T softmax(E W_K^h W_Q^hT e)]_h (+ e with skip)) within (1 - 1e-6) times the
// checker's rule 2^-20 max(1, |y|) for every output (long double rounding is ~1e-10 of that rule here; a
// mutant 0.95 of the way to the rule occurs and is true), and rank(Z) = T with Z's
// row t = [p_1; ...; p_H], p_h = E^T alpha_h, by ld_full_row_rank.
bool theorem1_forward_still_true(const json& c) {
  try {
    const std::size_t T = c.at("T"), H = c.at("H");
    const bool skip = c.value("skip", false);
    const json& w = c.at("weights");
    const LM WO = ld_matrix(w.at("WO")), WD = ld_matrix(w.at("WD")), Q = ld_matrix(c.at("data").at("queries"));
    const LM Y = ld_matrix(c.at("data").at("labels"));
    std::vector<LM> WK, WQ, WV;
    for (const auto& h : w.at("heads")) {
      WK.push_back(ld_matrix(h.at("WK")));
      WQ.push_back(ld_matrix(h.at("WQ")));
      WV.push_back(ld_matrix(h.at("WV")));
    }
    if (WK.size() != H || Q.size() != T || Y.size() != T || c.at("data").at("contexts").size() != T) return false;
    LM Z;
    for (std::size_t t = 0; t < T; ++t) {
      const LM E = ld_matrix(c["data"]["contexts"][t]);
      const LV& e = Q[t];
      LV stacked, zrow;
      for (std::size_t h = 0; h < H; ++h) {
        const LV alpha = ld_softmax(ld_mul(E, ld_mul(WK[h], ld_mul_t(WQ[h], e))));
        const LV p = ld_mul_t(E, alpha);
        zrow.insert(zrow.end(), p.begin(), p.end());
        const LV o = ld_mul_t(WV[h], p);
        stacked.insert(stacked.end(), o.begin(), o.end());
      }
      LV o = ld_mul_t(WO, stacked);
      if (skip)
        for (std::size_t j = 0; j < o.size(); ++j) o[j] += e.at(j);
      const LV y = ld_mul_t(WD, o);
      if (y.size() != Y[t].size()) return false;
      for (std::size_t k = 0; k < y.size(); ++k)
        if (!(std::fabs(y[k] - Y[t][k]) <= (1 - 1e-6L) * std::ldexp(1.0L, -20) * std::max(1.0L, std::fabs(Y[t][k])))) return false;
      Z.push_back(zrow);
    }
    return ld_full_row_rank(Z);
  } catch (...) {
    return false;
  }
}

// Sequences pairwise distinct, tokens (and next tokens) in [0, N).
bool dana24_sequences_ok(const json& c) {
  const std::size_t N = c.at("N");
  std::set<std::vector<std::size_t>> seen;
  for (const auto& s : c.at("sequences")) {
    std::vector<std::size_t> v;
    for (const auto& x : s) {
      if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<std::size_t>() >= N) return false;
      v.push_back(x);
    }
    if (!seen.insert(v).second) return false;
  }
  for (const auto& x : c.value("next", json::array()))
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<std::size_t>() >= N) return false;
  return true;
}

// dana24's claim recomputed in long double (independent of check_dana24.cpp): x(t,s) = e(t_s) + pos_s,
// A^h = sum_s softmax_s((W_Q^h x_S).(W_K^h x_s)) x_s, T(t) = W_U (x_S + sum_h W_O^h W_V^h A^h); the next
// token's logit beats every other by at least min_margin (plus a margin for long double rounding); the
// counts and sizes as the format states them.
bool dana24_still_true(const Mutant& m) {
  try {
    const json& c = m.value;
    const std::size_t N = c.at("N"), S = c.at("S"), d = c.at("d"), dh = c.at("dh"), H = c.at("H"), T = c.at("T");
    if (c.at("claim") == "dana24/corollary-1" && (d != 2 || dh > 2)) return false;
    if (H > 0 && (dh < 1 || dh > d)) return false;
    if (c.at("sequences").size() != T || c.at("next").size() != T || !dana24_sequences_ok(c)) return false;
    if (c.at("memorized_count") != T || c.at("parameters") != d * (S + 2 * N + 4 * dh * H)) return false;
    const json& w = c.at("weights");
    if (c.contains("parameters_remark2")) {
      if (c["parameters_remark2"] != d * (S + 2 * N + 2 * (dh + 1) * H)) return false;
      for (const char* k : {"WQ", "WK"})
        for (const auto& head : w.at(k))
          for (std::size_t r = 1; r < head.size(); ++r)
            for (const auto& x : head[r])
              if (exact(x) != 0) return false;
    }
    const LM e = ld_matrix(w.at("e")), pos = ld_matrix(w.at("pos")), WU = ld_matrix(w.at("WU"));
    const long double min_margin = ld(c.at("min_margin"));
    if (!(min_margin > 0)) return false;
    for (std::size_t t = 0; t < T; ++t) {
      LM x(S, LV(d));
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t j = 0; j < d; ++j) x[s][j] = e.at(c["sequences"][t][s].get<std::size_t>()).at(j) + pos.at(s).at(j);
      LV total = x[S - 1];
      for (std::size_t h = 0; h < H; ++h) {
        const LM WQ = ld_matrix(w["WQ"].at(h)), WK = ld_matrix(w["WK"].at(h)), WV = ld_matrix(w["WV"].at(h)),
                 WO = ld_matrix(w["WO"].at(h));
        const LV q = ld_mul(WQ, x[S - 1]);
        LV score(S);
        for (std::size_t s = 0; s < S; ++s) {
          const LV k = ld_mul(WK, x[s]);
          score[s] = 0;
          for (std::size_t j = 0; j < dh; ++j) score[s] += q.at(j) * k.at(j);
        }
        const LV alpha = ld_softmax(score);
        LV A(d, 0);
        for (std::size_t s = 0; s < S; ++s)
          for (std::size_t j = 0; j < d; ++j) A[j] += alpha[s] * x[s][j];
        const LV out = ld_mul(WO, ld_mul(WV, A));
        for (std::size_t j = 0; j < d; ++j) total[j] += out.at(j);
      }
      const LV logits = ld_mul(WU, total);
      const std::size_t y = c["next"][t];
      long double scale = 1;
      for (long double v : logits) scale = std::max(scale, std::fabs(v));
      for (std::size_t j = 0; j < N; ++j)
        if (j != y && !(logits.at(y) - logits.at(j) >= min_margin + 1e-12L * scale)) return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

// dana24/proposition-2 recomputed exactly by brute force: d < N - 1, one logit row of N numbers per
// context, and rank(P Z*) >= d + 1 (P = I - 11^T/N, column c of Z* = logits of context c).
bool dana24_proposition2_still_true(const Mutant& m) {
  try {
    const json& c = m.value;
    if (c.at("claim") != "dana24/proposition-2" || c.at("verdict") != "confirmed") return false;
    const std::size_t N = c.at("N"), d = c.at("d"), C = c.at("contexts");
    if (!(d + 1 < N) || c.at("logits").size() != C) return false;
    brute_q::QMat pz(N, std::vector<mpq_class>(C, 0));
    for (std::size_t k = 0; k < C; ++k) {
      if (c["logits"][k].size() != N) return false;
      mpq_class mean = 0;
      for (std::size_t i = 0; i < N; ++i) mean += exact(c["logits"][k][i]);
      mean /= N;
      for (std::size_t i = 0; i < N; ++i) pz[i][k] = exact(c["logits"][k][i]) - mean;
    }
    return brute_q::rank(pz) >= d + 1;
  } catch (...) {
    return false;
  }
}

// dana24/lemma-2 recomputed in long double: A's column t = [A^1(t); ...; A^H(t)] with
// A^h(t) = sum_s softmax_s((q_h.x_S)(k_h.x_s)) x_s; rank A = min(T, H d) by ld_full_row_rank of A or A^T.
bool dana24_lemma2_still_true(const Mutant& m) {
  try {
    const json& c = m.value;
    if (c.at("claim") != "dana24/lemma-2" || c.at("verdict") != "confirmed" || !dana24_sequences_ok(c)) return false;
    const std::size_t S = c.at("S"), d = c.at("d"), H = c.at("H");
    const LM e = ld_matrix(c.at("e")), pos = ld_matrix(c.at("pos")), q = ld_matrix(c.at("q")), k = ld_matrix(c.at("k"));
    if (q.size() != H || k.size() != H || pos.size() != S) return false;
    const std::size_t T = c.at("sequences").size();
    LM cols;  // T columns of length H d
    for (std::size_t t = 0; t < T; ++t) {
      if (c["sequences"][t].size() != S) return false;
      LM x(S, LV(d));
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t j = 0; j < d; ++j) x[s][j] = e.at(c["sequences"][t][s].get<std::size_t>()).at(j) + pos[s].at(j);
      LV col;
      for (std::size_t h = 0; h < H; ++h) {
        long double qs = 0;
        for (std::size_t j = 0; j < d; ++j) qs += q[h].at(j) * x[S - 1][j];
        LV score(S);
        for (std::size_t s = 0; s < S; ++s) {
          long double ks = 0;
          for (std::size_t j = 0; j < d; ++j) ks += k[h].at(j) * x[s][j];
          score[s] = qs * ks;
        }
        const LV alpha = ld_softmax(score);
        for (std::size_t j = 0; j < d; ++j) {
          long double a = 0;
          for (std::size_t s = 0; s < S; ++s) a += alpha[s] * x[s][j];
          col.push_back(a);
        }
      }
      cols.push_back(col);
    }
    if (T <= H * d) return ld_full_row_rank(cols);  // rows of A^T
    LM rows(H * d, LV(T));
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t r = 0; r < H * d; ++r) rows[r][t] = cols[t][r];
    return ld_full_row_rank(rows);
  } catch (...) {
    return false;
  }
}

}  // namespace

TEST_CASE("mutation campaign: rank (brute-force rank)", "[checker][mutation]") {
  const json honest = json::parse(
      R"({"kind":"rank","claim":"rank","matrix":{"rows":3,"cols":3,"data":[["1","2","3"],["2","4","6"],["1","0","1"]]},)"
      R"("rank_lower":2,"rank_upper":2,"rank":2,"lower":{"method":"minor-mod-p","prime":"1000000007","rows":[0,2],"cols":[0,1]},)"
      R"("upper":{"method":"kernel","kernel":[["-1","-1","1"]],"free_rows":[2]}})");
  campaign(honest, 1, [](const Mutant& m) {
    const json& c = m.value;
    brute_q::QMat a;
    for (const auto& row : c["matrix"]["data"]) {
      a.emplace_back();
      for (const auto& x : row) a.back().push_back(exact(x));
    }
    const std::size_t r = brute_q::rank(a);
    return c["rank_lower"].get<std::size_t>() <= r && r <= c["rank_upper"].get<std::size_t>();
  });
}

TEST_CASE("mutation campaign: kruskal (brute-force Kruskal rank)", "[checker][mutation]") {
  const json honest = json::parse(
      R"({"kind":"kruskal","claim":"kruskal-rank","vectors":{"rows":4,"cols":2,"data":[["1","0"],["0","1"],["1","1"],["2","2"]]},)"
      R"("kruskal_lower":1,"lower":{"method":"exhaustive-mod-p","prime":"1000000007"},"kruskal_upper":1,)"
      R"("upper":{"method":"dependent-subset","subset":[2,3],"coefficients":["2","-1"]},"kruskal_rank":1})");
  campaign(honest, 2, [](const Mutant& m) {
    const json& c = m.value;
    brute_q::QMat v;
    for (const auto& row : c["vectors"]["data"]) {
      v.emplace_back();
      for (const auto& x : row) v.back().push_back(exact(x));
    }
    // krank: the largest k with every k-subset independent (T <= 4: all subsets by bit mask).
    std::size_t krank = v.size();
    for (unsigned mask = 1; mask < (1u << v.size()); ++mask) {
      brute_q::QMat s;
      for (std::size_t i = 0; i < v.size(); ++i)
        if (mask >> i & 1) s.push_back(v[i]);
      if (brute_q::rank(s) < s.size()) krank = std::min(krank, s.size() - 1);
    }
    return c["kruskal_lower"].get<std::size_t>() <= krank && krank <= c["kruskal_upper"].get<std::size_t>();
  });
}

TEST_CASE("mutation campaign: theorem1, ks, claim, dana24, dana24-claim (accepted only if shown true)",
          "[checker][mutation]") {
  if (!std::getenv("MEMCERT_BIN")) { WARN("MEMCERT_BIN not set (run through ctest): skipped"); return; }
  std::system(("mkdir -p " + kDir + "/pe").c_str());
  REQUIRE(run("generate theorem1 --T 9 --n 3 --d 5 --seed 2 --out " + kDir + "/t1.json"));
  REQUIRE(run("construct theorem1 " + kDir + "/t1.json --heads 4 --dh 3 --out " + kDir + "/t1c.json"));
  REQUIRE(run("generate ks --N 8 --n 3 --d 2 --V 20 --C 3 --seed 1 --out " + kDir + "/ks.json"));
  REQUIRE(run("construct ks " + kDir + "/ks.json --out " + kDir + "/ksc.json"));
  REQUIRE(run("construct ks " + kDir + "/ks.json --deep-sets --out " + kDir + "/ksd.json"));
  run("claims run vaswani17/sinusoidal-rank-margin --instances 1 --cert-dir " + kDir + "/pe");
  REQUIRE(run("generate dana24 --N 5 --S 2 --T 12 --seed 7 --out " + kDir + "/da.json"));
  REQUIRE(run("construct dana24 " + kDir + "/da.json --heads 4 --dh 2 --d 4 --out " + kDir + "/dac.json"));
  std::system(("mkdir -p " + kDir + "/pd").c_str());
  REQUIRE(run("claims run dana24/proposition-2 --instances 1 --cert-dir " + kDir + "/pd"));
  REQUIRE(run("claims run dana24/lemma-2 --instances 1 --cert-dir " + kDir + "/pd"));
  // Fields the checker reports as not checked (or ignores by the format's rules).
  auto unchecked = [](const Mutant& m) {
    const std::string& w = m.where;
    for (const char* p : {"/tolerance", "/hypotheses", "/examples", "/labels_generated", "/notes", "/r"})
      if (starts(w, p)) return true;
    if (starts(w, "/trace/"))
      for (const char* k : {"/c_minimal", "/step_sigma_lower", "/eps_b2_estimate", "/lemma3_attempts", "/target_attempts",
                            "/sigma_lower", "/eps_direct", "/head", "/c_proof", "/c_weyl",
                            "/sigma_reference_heads"})  // a hint: which Gram matrix the checker factors first
        if (w.find(k) != std::string::npos) return true;
    return false;
  };
  SECTION("theorem1") {
    // Head 0 has no saturator: only its group, target logits and c = 0 enter the verdict (verify lists
    // the rest as not checked).
    campaign(json::parse(slurp(kDir + "/t1c.json")), 3, [&](const Mutant& m) {
      const bool head0_rest = starts(m.where, "/trace/0/") && !starts(m.where, "/trace/0/group") &&
                              !starts(m.where, "/trace/0/target_logits") && m.where != "/trace/0/c";
      // A data entry moved so little that every label still meets the checker's rule is a true certificate
      // for the moved data: shown by the independent long double forward pass.
      if (starts(m.where, "/data/")) return theorem1_forward_still_true(m.value);
      // The read-out weights enter only y_hat: a change small enough that every label still meets the rule
      // (W_V by 2^-20, say) leaves a true certificate, shown by the same independent forward pass.
      if (starts(m.where, "/weights/WO/") || starts(m.where, "/weights/WD/") ||
          (starts(m.where, "/weights/heads/") && m.where.find("/WV/") != std::string::npos))
        if (theorem1_forward_still_true(m.value)) return true;
      return unchecked(m) || head0_rest || (m.where == "/skip" && !m.value.contains("skip")) || theorem1_dead_weight(m);  // absent skip = false
    });
  }
  SECTION("ks theorem-4.1") { campaign(json::parse(slurp(kDir + "/ksc.json")), 4, ks_still_true); }
  SECTION("ks theorem-D.1") { campaign(json::parse(slurp(kDir + "/ksd.json")), 5, ks_still_true); }
  SECTION("dana24 theorem-1-assoc") { campaign(json::parse(slurp(kDir + "/dac.json")), 7, dana24_still_true); }
  SECTION("dana24-claim proposition-2") {
    campaign(json::parse(slurp(kDir + "/pd/dana24_proposition-2-0.json")), 8, dana24_proposition2_still_true);
  }
  SECTION("dana24-claim lemma-2") {
    campaign(json::parse(slurp(kDir + "/pd/dana24_lemma-2-0.json")), 9, dana24_lemma2_still_true);
  }
  SECTION("claim sinusoidal-rank-margin") {
    campaign(json::parse(slurp(kDir + "/pe/vaswani17_sinusoidal-rank-margin-0.json")), 6, unchecked);
  }
}

// Kind "model": mutants of an honest certificate about a small mahdavi24-baseline model (the tensors
// supplied unchanged). An accepted mutant must state true verdicts by the independent 300-bit forward pass
// (model_fixture.hpp): every example it claims correct has margin > 0 and >= min_margin, every example it
// claims wrong margin <= 0; or touch only the file names or float32_disagreements (not checked).
TEST_CASE("mutation campaign: model (accepted only if the reference forward pass shows it true)", "[checker][mutation]") {
  using namespace model_fixture;
  const Instance in = mahdavi(61);
  const json honest = certificate(in);
  REQUIRE(verify(in, honest).valid);
  auto still_true = [&](const Mutant& m) {
    if (starts(m.where, "/model/file") || starts(m.where, "/data/file") || starts(m.where, "/float32_disagreements"))
      return true;
    const json& c = m.value;
    if (!c.contains("wrong") || !c.contains("undecided") || c["T"] != in.T()) return false;
    std::vector<int> claim(in.T(), 1);
    for (const auto& t : c["wrong"]) claim.at(t.get<std::size_t>()) = -1;
    for (const auto& t : c["undecided"]) claim.at(t.get<std::size_t>()) = 0;
    mpq_class mm;
    const bool have = c.contains("min_margin") && rational(c["min_margin"].get<std::string>(), mm);
    for (std::size_t t = 0; t < in.T(); ++t) {
      if (claim[t] == -1 && in.margin[t].sign() > 0) return false;
      if (claim[t] == 1) {
        if (!have || in.margin[t].sign() <= 0) return false;
        R q;
        mpfr_set_q(q.v, mm.get_mpq_t(), MPFR_RNDU);
        if (in.margin[t] < q) return false;
      }
    }
    return true;
  };
  std::mt19937_64 rng(62);
  int accepted = 0;
  for (int i = 0; i < 300; ++i) {
    const Mutant m = mutate(honest, rng);
    const auto ts = tensors_of(in);
    const auto as = arrays_of(in);
    const auto v = memcert_checker::verify_certificate_text(m.text, {}, ts, &as);
    INFO("mutation " << i << " at " << m.where << ": " << v.reason);
    REQUIRE(well_formed(v));
    if (!v.valid) continue;
    ++accepted;
    const bool same = !m.where.empty() && canonical(m.value) == canonical(honest);
    CHECK((same || still_true(m)));
  }
  WARN(accepted << " of 300 model mutants verified (each shown true independently)");
}

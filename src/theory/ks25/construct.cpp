// ks25 Theorem 4.1 / Corollary 4.1 / Theorem D.1: assembly, exact verification, certificate.
#include "memcert/theory/ks25/construct.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "memcert/data/matrix_io.hpp"
#include "memcert/util/error.hpp"

namespace memcert::ks25 {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// MEMCERT_KS_PROFILE set (non-empty): one line per stage on stderr, wall and process CPU seconds since
// the previous mark. Timing only; nothing else changes.
struct StageClock {
  bool on = false;
  Clock::time_point wall;
  std::clock_t cpu = 0;
  StageClock() {
    const char* e = std::getenv("MEMCERT_KS_PROFILE");
    on = e && *e;
    wall = Clock::now();
    cpu = std::clock();
  }
  void mark(const char* stage) {
    if (!on) return;
    const std::clock_t c = std::clock();
    std::fprintf(stderr, "ks profile: %-28s %9.2f s wall %9.2f s CPU\n", stage, since(wall),
                 double(c - cpu) / CLOCKS_PER_SEC);
    wall = Clock::now();
    cpu = std::clock();
  }
};

std::string at(const std::string& w, std::size_t i) { return w + "[" + std::to_string(i) + "]"; }

nlohmann::json net_json(const ReluNet& net) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& L : net.layers) a.push_back({{"W", qmat_to_json(L.W)}, {"b", qvec_to_json(L.b)}});
  return a;
}

nlohmann::json complexity_json(const NetComplexity& c) {
  return {{"parameters", c.parameters},
          {"nonzero_parameters", c.nonzero_parameters},
          {"depth", c.depth},
          {"width", c.width},
          {"bit_complexity", c.bit_complexity}};
}

NetComplexity wov_complexity(const QMatrix& wov) {
  ReluNet one;
  one.in_dim = 3;
  one.layers.push_back({wov, QVector(3, Rational(0))});
  NetComplexity c = relunet_complexity(one);
  c.parameters = 9;  // W_O W_V as one 3 x 3 product, no bias
  return c;
}

}  // namespace

// ---- checks before building -----------------------------------------------------------------------------
namespace {

// True when every entry of the integer token matrix Z fits in 62 bits and every squared distance
// sum_j (Z_aj - Z_bj)^2 is below 2^126: |Z_aj - Z_bj| < 2^(bits + 1), so the sum is below
// d 2^(2 bits + 2) <= 2^126. Then separation_pairs_int128 computes the separation exactly.
bool separation_fits_int128(const std::vector<std::vector<Integer>>& Z, std::size_t d) {
  std::size_t bits = 0;
  for (const auto& row : Z)
    for (const Integer& z : row) {
      if (!z.fits_slong_p()) return false;
      bits = std::max<std::size_t>(bits, mpz_sizeinbase(z.get_mpz_t(), 2));
    }
  return bits <= 61 && 2 * bits + 2 + std::bit_width(d) <= 126;
}

// The smallest squared distance between distinct rows of Z and the first pair attaining it, in the
// order (and with the early exit) of ks_prepare's Integer loop, so the same pair: on 128-bit integers
// (GCC/Clang extension) instead of GMP numbers, exact under separation_fits_int128.
void separation_pairs_int128(const std::vector<std::vector<Integer>>& Z, std::size_t d, Integer& best_d,
                             std::pair<std::size_t, std::size_t>& pair) {
  __extension__ typedef __int128 i128;
  __extension__ typedef unsigned __int128 u128;
  std::vector<long> z(Z.size() * d);
  for (std::size_t t = 0; t < Z.size(); ++t)
    for (std::size_t j = 0; j < d; ++j) z[t * d + j] = Z[t][j].get_si();
  i128 best = -1;
  for (std::size_t a = 0; a < Z.size(); ++a)
    for (std::size_t b = a + 1; b < Z.size(); ++b) {
      i128 acc = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const i128 diff = static_cast<i128>(z[a * d + j]) - z[b * d + j];
        acc += diff * diff;
        if (best >= 0 && acc >= best) break;
      }
      if (best < 0 || acc < best) {
        best = acc;
        pair = {a, b};
      }
    }
  if (best < 0) { best_d = -1; return; }
  // best < 2^126: two 63-bit halves.
  const auto hi = static_cast<unsigned long>(static_cast<u128>(best) >> 63);
  const auto lo = static_cast<unsigned long>(static_cast<u128>(best) & ((static_cast<u128>(1) << 63) - 1));
  best_d = hi;
  mpz_mul_2exp(best_d.get_mpz_t(), best_d.get_mpz_t(), 63);
  best_d += lo;
}

}  // namespace

KsPrepared ks_prepare(const SequenceDataset& ds, std::optional<long> C, const std::string& file) {
  return ks_prepare(sequence_dataset_tokens(SequenceDataset(ds), file), C, file);
}

KsPrepared ks_prepare(TokenSequenceDataset&& ds, std::optional<long> C, const std::string& file) {
  StageClock prof;
  KsPrepared P;
  P.N = ds.N;
  if (P.N == 0) throw input_error(file, "sequences", "expected at least one sequence, got none");
  P.n = ds.n;
  P.d = ds.d;
  if (P.n == 0) throw input_error(file, "sequences[0]", "expected at least one token, got none");
  if (P.d == 0) throw input_error(file, "sequences[0][0]", "expected at least one coordinate, got none");
  P.seq2seq = !ds.token_labels.empty();
  std::vector<std::pair<long, std::string>> all;  // (label, position)
  if (P.seq2seq) {
    if (ds.token_labels.size() != P.N)
      throw input_error(file, "labels",
                        "expected " + std::to_string(P.N) + " label lists (one per sequence), got " +
                            std::to_string(ds.token_labels.size()));
    for (std::size_t i = 0; i < P.N; ++i) {
      if (ds.token_labels[i].size() != P.n)
        throw input_error(file, at("labels", i),
                          "expected " + std::to_string(P.n) + " labels (n = " + std::to_string(P.n) + "), got " +
                              std::to_string(ds.token_labels[i].size()));
      for (std::size_t k = 0; k < P.n; ++k) all.emplace_back(ds.token_labels[i][k], at(at("labels", i), k));
    }
    P.token_labels = std::move(ds.token_labels);
  } else {
    if (ds.labels.size() != P.N)
      throw input_error(file, "labels",
                        "expected " + std::to_string(P.N) + " labels (one per sequence), got " +
                            std::to_string(ds.labels.size()));
    for (std::size_t i = 0; i < P.N; ++i) all.emplace_back(ds.labels[i], at("labels", i));
    P.labels = std::move(ds.labels);
  }
  long maxl = 0;
  for (const auto& [v, where] : all) {
    if (v < 0 || (C && v >= *C))
      throw input_error(file, where,
                        "expected a label in [0, C) (C = " + (C ? std::to_string(*C) : std::string("max + 1")) +
                            "), got " + std::to_string(v));
    maxl = std::max(maxl, v);
  }
  if (C && *C < 1) throw input_error(file, "--C", "expected C >= 1, got " + std::to_string(*C));
  P.C = C ? *C : maxl + 1;

  // Distinct tokens (first-occurrence order, as ds holds them) and their first occurrence.
  P.tokens = std::move(ds.tokens);
  std::vector<std::pair<std::size_t, std::size_t>> first(P.tokens.size(), {P.N, 0});
  P.seq_ids.assign(P.N, std::vector<TokenId>(P.n));
  for (std::size_t i = 0; i < P.N; ++i)
    for (std::size_t k = 0; k < P.n; ++k) {
      const TokenId t = ds.ids[i * P.n + k];
      if (first[t].first == P.N) first[t] = {i, k};
      P.seq_ids[i][k] = t;
    }
  ds.ids = {};
  // Multisets.
  std::map<Multiset, std::size_t> msid;
  P.ms_index.resize(P.N);
  for (std::size_t i = 0; i < P.N; ++i) {
    std::vector<TokenId> s = P.seq_ids[i];
    std::sort(s.begin(), s.end());
    Multiset m;
    for (TokenId t : s) {
      if (!m.empty() && m.back().first == t) ++m.back().second;
      else m.emplace_back(t, 1);
    }
    auto [it, fresh] = msid.emplace(std::move(m), P.distinct_multisets.size());
    if (fresh) P.distinct_multisets.push_back(it->first);
    P.ms_index[i] = it->second;
  }
  // Separation, exactly: scale all coordinates by the lcm D of their denominators.
  Integer D = 1;
  for (const auto& t : P.tokens) D = lcm(D, rational_denominator_lcm(t.begin(), t.end()));
  std::vector<std::vector<Integer>> Z(P.tokens.size(), std::vector<Integer>(P.d));
  for (std::size_t t = 0; t < P.tokens.size(); ++t)
    for (std::size_t j = 0; j < P.d; ++j) {
      Rational s = P.tokens[t][j] * D;
      Z[t][j] = s.get_num();
    }
  Integer best_r = 0, best_d = -1, acc, diff;
  const double V = double(Z.size());
  P.delta2_exact = V * V * double(P.d) <= kExactSeparationBudget;
  const bool machine = P.delta2_exact && separation_fits_int128(Z, P.d);
  if (machine) separation_pairs_int128(Z, P.d, best_d, P.delta_pair);
  for (std::size_t a = 0; a < Z.size(); ++a) {
    acc = 0;
    for (const auto& z : Z[a]) acc += z * z;
    if (acc > best_r) best_r = acc;
    if (!P.delta2_exact || machine) continue;
    for (std::size_t b = a + 1; b < Z.size(); ++b) {
      acc = 0;
      for (std::size_t j = 0; j < P.d; ++j) {
        diff = Z[a][j] - Z[b][j];
        acc += diff * diff;
        if (sgn(best_d) >= 0 && acc >= best_d) break;
      }
      if (sgn(best_d) < 0 || acc < best_d) {
        best_d = acc;
        P.delta_pair = {a, b};
      }
    }
  }
  if (!P.delta2_exact) {
    // Certified lower bound through a random integer direction u: |x - x'|^2 >= (u^T(x - x'))^2 / |u|^2.
    std::mt19937_64 rng(0x5e9a7a7e);
    std::uniform_int_distribution<long> dist(-(1L << 20), 1L << 20);
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::vector<Integer> u(P.d);
      Integer u2 = 0;
      for (auto& x : u) {
        x = dist(rng);
        u2 += x * x;
      }
      if (sgn(u2) == 0) continue;
      std::vector<Integer> p(Z.size());
      for (std::size_t t = 0; t < Z.size(); ++t)
        for (std::size_t j = 0; j < P.d; ++j) p[t] += u[j] * Z[t][j];
      std::vector<std::size_t> ord(Z.size());
      for (std::size_t t = 0; t < ord.size(); ++t) ord[t] = t;
      std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
      Integer g = -1;
      for (std::size_t t = 1; t < ord.size(); ++t) {
        Integer gt = p[ord[t]] - p[ord[t - 1]];
        if (sgn(g) < 0 || gt < g) {
          g = gt;
          P.delta_pair = {ord[t - 1], ord[t]};
        }
      }
      if (sgn(g) <= 0) continue;
      best_d = g * g;
      P.delta_direction.clear();
      for (const auto& x : u) P.delta_direction.push_back(Rational(x));
      // delta2 = (g / D)^2 / |u|^2 (g is a gap of the projections of the SCALED tokens).
      P.delta2 = Rational(g * g, D * D * u2);
      P.delta2.canonicalize();
      break;
    }
    if (P.delta_direction.empty()) throw std::runtime_error("ks_prepare: no separating projection found");
  }
  const Integer D2 = D * D;
  P.r2 = Rational(best_r, D2);
  P.r2.canonicalize();
  if (sgn(best_d) > 0) {
    if (P.delta2_exact) {
      P.delta2 = Rational(best_d, D2);
      P.delta2.canonicalize();
    }
    P.delta_pair_seq = first[P.delta_pair.first];
    P.delta_pair_seq2 = first[P.delta_pair.second];
  }
  // Consistency.
  std::map<std::pair<TokenId, std::size_t>, std::pair<std::size_t, long>> seen;
  for (std::size_t i = 0; i < P.N && P.consistent; ++i) {
    const std::size_t k0 = P.seq2seq ? 0 : P.n - 1;
    for (std::size_t k = k0; k < P.n; ++k) {
      const long y = P.seq2seq ? P.token_labels[i][k] : P.labels[i];
      auto key = std::make_pair(P.seq_ids[i][k], P.ms_index[i]);
      auto [it, fresh] = seen.emplace(key, std::make_pair(i, y));
      if (!fresh && it->second.second != y) {
        P.consistent = false;
        P.inconsistent_pair = {it->second.first, i};
        P.inconsistent_position = k;
        break;
      }
    }
  }
  prof.mark("separation and labels");
  return P;
}

// ---- network pieces -------------------------------------------------------------------------------------
QMatrix ks_uniform_attention_wov() {
  QMatrix w(3, 3, Rational(0));
  w(2, 0) = 1;
  return w;
}

QVector ks_context(const std::vector<QVector>& f1_tokens, const QMatrix& wov, std::size_t pos) {
  const std::size_t m = f1_tokens.at(pos).size();
  QVector mean(m, Rational(0));
  for (const auto& v : f1_tokens)
    for (std::size_t j = 0; j < m; ++j) mean[j] += v[j];
  for (auto& x : mean) x /= Rational(static_cast<long>(f1_tokens.size()));
  QVector s = f1_tokens[pos];
  QVector a = mat_vec(wov, mean);
  for (std::size_t j = 0; j < m; ++j) s[j] += a[j];
  return s;
}

// ---- the construction ---------------------------------------------------------------------------------------
KsResult ks_construct(const KsPrepared& prep, const KsOptions& opt) {
  KsResult r;
  r.prep = prep;
  if (!prep.consistent) return r;
  StageClock prof;
  const auto t0 = Clock::now();
  const std::size_t N = prep.N, n = prep.n, d = prep.d;

  // F1: f1(x) = (phi~(x), F(x), 0) -- the stage-I projection of Lemma C.1 applied to all tokens IS the
  // F of Lemma C.2 (gaps >= 2), and it is carried through phi~'s layers anyway, so f1 has phi~'s width.
  {
    NetBuilder nb(d);
    if (!opt.ablation_linear_phi) {
      C1Out o = lemmaB3_phi_tilde(nb, nb.inputs(), prep.tokens, prep.distinct_multisets, opt.seed, r.phi);
      r.net.f1 = nb.finish({o.out, o.x, Lin::constant(0)});
    } else {
      // Ablation: phi~ replaced by the linear projection F itself: f1(x) = (F(x), F(x), 0).
      r.linear_F = lemmaC2_token_projection(prep.tokens, opt.seed);
      Lin pre = Lin::constant(r.linear_F.beta);
      auto in = nb.inputs();
      for (std::size_t j = 0; j < d; ++j)
        if (sgn(r.linear_F.u[j]) != 0) pre += Rational(r.linear_F.alpha * r.linear_F.u[j]) * in[j];
      Lin x = nb.relu({pre})[0];
      r.net.f1 = nb.finish({x, x, Lin::constant(0)});
    }
  }
  r.net.WOV = ks_uniform_attention_wov();
  r.build_seconds = since(t0);
  prof.mark("f1 build (phi~)");

  // Evaluate f1 once per distinct token (exact), then the contexts.
  const auto t1 = Clock::now();
  ReluNetSparse f1s(r.net.f1);
  r.f1_out = f1s.eval_all_shared(prep.tokens, opt.threads);
  const std::size_t per = prep.seq2seq ? n : 1;
  r.contexts.resize(N * per);
  for (std::size_t i = 0; i < N; ++i) {
    std::vector<QVector> toks;
    for (TokenId t : prep.seq_ids[i]) toks.push_back(r.f1_out[t]);
    QVector mean(3, Rational(0));
    for (const auto& v : toks)
      for (std::size_t j = 0; j < 3; ++j) mean[j] += v[j];
    for (auto& x : mean) x /= Rational(static_cast<long>(n));
    const QVector a = mat_vec(r.net.WOV, mean);
    for (std::size_t q = 0; q < per; ++q) {
      const std::size_t pos = prep.seq2seq ? q : n - 1;
      QVector s = toks[pos];
      for (std::size_t j = 0; j < 3; ++j) s[j] += a[j];
      r.contexts[i * per + q] = std::move(s);
    }
  }
  auto label_of = [&](std::size_t c) -> long {
    return prep.seq2seq ? prep.token_labels[c / n][c % n] : prep.labels[c];
  };
  auto token_of = [&](std::size_t c) -> TokenId {
    return prep.seq2seq ? prep.seq_ids[c / n][c % n] : prep.seq_ids[c][n - 1];
  };

  prof.mark("f1 evaluation");
  // Distinct contexts (by value) -> F2 training points; equal contexts with different labels = collision.
  std::map<QVector, std::size_t> sid;
  std::vector<QVector> points;
  std::vector<Integer> plabels;
  std::vector<std::size_t> point_of(r.contexts.size()), first_ctx;
  for (std::size_t c = 0; c < r.contexts.size(); ++c) {
    auto [it, fresh] = sid.emplace(r.contexts[c], points.size());
    if (fresh) {
      points.push_back(r.contexts[c]);
      plabels.push_back(Integer(label_of(c)));
      first_ctx.push_back(c);
    } else if (plabels[it->second] != label_of(c) && !r.collision) {
      r.collision = std::make_pair(first_ctx[it->second] / per, c / per);
      r.collision_positions = {prep.seq2seq ? first_ctx[it->second] % n : n - 1, prep.seq2seq ? c % n : n - 1};
      const std::size_t a = first_ctx[it->second];
      // Do the two sequences collide for EVERY linear phi? (same token at the position, equal token sums)
      QVector sa(d, Rational(0)), sb(d, Rational(0));
      for (TokenId t : prep.seq_ids[a / per])
        for (std::size_t j = 0; j < d; ++j) sa[j] += prep.tokens[t][j];
      for (TokenId t : prep.seq_ids[c / per])
        for (std::size_t j = 0; j < d; ++j) sb[j] += prep.tokens[t][j];
      r.collision_token_sums_equal = sa == sb && token_of(a) == token_of(c);
    }
    point_of[c] = it->second;
  }

  prof.mark("contexts and distinct");
  // eq. (55) over distinct (token, multiset) keys: sort by (s1, s2, s0); pairs in different s1 groups are
  // >= the min adjacent s1 gap apart, pairs in one s1 group but different s2 groups >= the min adjacent s2
  // gap; pairs with equal (s1, s2) are compared directly. So min over all pairs with different keys is
  // certified without O(K^2) work.
  {
    std::map<std::pair<TokenId, std::size_t>, std::size_t> keys;
    std::vector<std::size_t> kc;  // a context per key
    for (std::size_t c = 0; c < r.contexts.size(); ++c)
      if (keys.emplace(std::make_pair(token_of(c), prep.ms_index[c / per]), c).second) kc.push_back(c);
    std::sort(kc.begin(), kc.end(), [&](std::size_t a, std::size_t b) {
      const QVector &x = r.contexts[a], &y = r.contexts[b];
      if (x[1] != y[1]) return x[1] < y[1];
      if (x[2] != y[2]) return x[2] < y[2];
      return x[0] < y[0];
    });
    bool have = false;
    Rational best = 0;
    auto consider = [&](const Rational& v) {
      if (!have || v < best) best = v;
      have = true;
    };
    std::size_t g = 0;
    while (g < kc.size()) {
      std::size_t h = g;
      while (h < kc.size() && r.contexts[kc[h]][1] == r.contexts[kc[g]][1]) ++h;
      if (h < kc.size()) {
        Rational gap = r.contexts[kc[h]][1] - r.contexts[kc[g]][1];
        consider(gap * gap);
      }
      std::size_t a = g;
      while (a < h) {
        std::size_t b = a;
        while (b < h && r.contexts[kc[b]][2] == r.contexts[kc[a]][2]) ++b;
        if (b < h) {
          Rational gap = r.contexts[kc[b]][2] - r.contexts[kc[a]][2];
          consider(gap * gap);
        }
        for (std::size_t p = a; p < b; ++p)
          for (std::size_t q = p + 1; q < b; ++q) {
            Rational s = 0;
            for (std::size_t j = 0; j < 3; ++j) {
              Rational t = r.contexts[kc[p]][j] - r.contexts[kc[q]][j];
              s += t * t;
            }
            consider(s);
          }
        a = b;
      }
      g = h;
    }
    r.eq55_min_dist2 = have ? best : Rational(0);
    const Rational bound = Rational(1, static_cast<unsigned long>(n * n));
    r.eq55_holds = !have || r.eq55_min_dist2 >= bound;
  }

  if (!r.collision) {
    // F2: Lemma C.1 on the distinct contexts. Stage-I direction: memcert's certified choice u = (0, M, n)
    // with M = floor(S/2) + 1, S = the largest phi~ sum: contexts with different tokens differ by >= 2 in
    // F, so M F + n * mean separates them (2M > S); equal tokens but different multisets differ in the
    // integer sum by >= 1. Lemma C.2 checks the gaps exactly (and falls back to a random direction).
    QVector dir;
    const QVector* dirp = nullptr;
    if (!opt.ablation_linear_phi) {
      Integer S = r.phi.weights.max_sum;
      Integer M = S / 2 + 1;
      dir = {Rational(0), Rational(M), Rational(static_cast<long>(n))};
      dirp = &dir;
    }
    const auto tb = Clock::now();
    prof.mark("eq. (55)");
    r.net.f2 = lemmaC1_network(points, plabels, opt.seed * 31 + 7, &r.f2info, dirp);
    prof.mark("f2 build (Lemma C.1)");
    r.f2_built = true;
    r.build_seconds += since(tb);
    ReluNetSparse f2s(r.net.f2);
    prof.mark("f2 sparse form");
    ReluNetSparse::SharedStats st;
    std::vector<QVector> outs = f2s.eval_all_shared(points, opt.threads, prof.on ? &st : nullptr);
    prof.mark("f2 evaluation (shared)");
    if (prof.on)
      std::fprintf(stderr, "ks profile: f2 %zu points, %zu layers, %zu classes, %zu class rows, %zu point rows, %zu GMP point rows\n",
                   points.size(), r.net.f2.layers.size(), st.classes, st.class_rows, st.point_rows, st.exact_rows);
    r.predictions.resize(r.contexts.size());
    for (std::size_t c = 0; c < r.contexts.size(); ++c) {
      r.predictions[c] = outs[point_of[c]][0];
      if (r.predictions[c] != Rational(label_of(c))) {
        ++r.mismatches;
        if (!r.first_mismatch) r.first_mismatch = std::make_pair(c / per, prep.seq2seq ? c % n : n - 1);
      }
    }
    r.memorized = r.mismatches == 0;
  }
  r.verify_seconds = since(t1);

  prof.mark("verify (labels compared)");
  // Complexity.
  r.f1c = relunet_complexity(r.net.f1);
  r.f2c = relunet_complexity(r.net.f2);
  r.total = complexity_sequential(complexity_sequential(r.f1c, wov_complexity(r.net.WOV)), r.f2c);
  r.total.width = std::max({r.f1c.width, r.f2c.width, std::size_t{3}});
  // Theorem B.1's expressions.
  r.bounds = ks_theorem_bounds(N, n, d, prep.C, prep.r2, prep.delta2, prep.seq2seq, false);
  prof.mark("complexity");
  return r;
}

KsBounds ks_theorem_bounds(std::size_t N, std::size_t n, std::size_t d, long C, const Rational& r2,
                           const Rational& delta2, bool seq2seq, bool deep_set) {
  KsBounds b;
  const double Nd = double(N), lg = std::max(1.0, std::log2(Nd));
  const double rr = std::max(1.0, std::sqrt(rational_to_double(r2)));
  const double dl = delta2 > 0 ? std::min(1.0, std::sqrt(rational_to_double(delta2))) : 1.0;
  if (deep_set) {  // Theorem D.1: R = 80 M^2 N^5 r delta^-1 pi sqrt(d), M = n
    b.log2_R = std::log2(80.0 * M_PI) + 2 * std::log2(double(n)) + 5 * std::log2(Nd) + std::log2(rr) -
               std::log2(dl) + 0.5 * std::log2(double(d));
  } else {  // Theorem B.1: R = 400 sqrt(3) d n^3 r N^5 delta^-1 pi
    b.log2_R = std::log2(400.0 * std::sqrt(3.0) * M_PI) + std::log2(double(d)) + 3 * std::log2(double(n)) +
               std::log2(rr) + 5 * std::log2(Nd) - std::log2(dl);
  }
  const double mx = std::max(b.log2_R, std::log2(std::max<double>(2, double(C))));
  b.depth_expr = std::sqrt(Nd * lg) + std::sqrt(Nd / lg) * mx;
  b.bit_expr = std::log2(double(d)) + std::sqrt(Nd / lg) * mx;
  b.parameters_expr = double(d) + b.depth_expr;
  if (seq2seq && !deep_set) {
    const double Mn = Nd * double(n), lm = std::max(1.0, std::log2(Mn));
    b.depth_expr = std::sqrt(Mn * lm) + std::sqrt(Mn / lm) * mx;
    b.parameters_expr = double(d) + b.depth_expr;
  }
  if (deep_set) b.width_bound = 12;
  return b;
}

// ---- certificate ------------------------------------------------------------------------------------------
nlohmann::json ks_certificate_json(const KsResult& r) {
  StageClock prof;
  const KsPrepared& P = r.prep;
  nlohmann::json c;
  c["kind"] = "ks";
  if (r.collision) c["claim"] = "ks25/ablation-linear-phi";
  else if (r.deep_set) c["claim"] = "ks25/theorem-D.1";
  else c["claim"] = P.seq2seq ? "ks25/corollary-4.1" : "ks25/theorem-4.1";
  c["setting"] = P.seq2seq ? "seq-to-seq" : "next-token";
  c["N"] = P.N;
  c["n"] = P.n;
  c["d"] = P.d;
  c["C"] = P.C;
  nlohmann::json toks = nlohmann::json::array();
  for (const auto& t : P.tokens) toks.push_back(qvec_to_json(t));
  c["tokens"] = std::move(toks);
  c["sequences"] = P.seq_ids;
  if (P.seq2seq) c["labels"] = P.token_labels;
  else c["labels"] = P.labels;
  c["separation"] = {{"r2", rational_to_string(P.r2)}, {"delta2", rational_to_string(P.delta2)},
                     {"method", P.delta2_exact ? "exact" : "projection"}};
  if (!P.delta2_exact) c["separation"]["direction"] = qvec_to_json(P.delta_direction);
  nlohmann::json net;
  net["f1"] = net_json(r.net.f1);
  net["attention"] = {{"WOV", qmat_to_json(r.net.WOV)}};
  net["f2"] = net_json(r.net.f2);
  c["network"] = std::move(net);
  if (r.collision) {
    c["collision"] = {r.collision->first, r.collision->second};
    if (P.seq2seq) c["positions"] = {r.collision_positions.first, r.collision_positions.second};
    c["token_sums_equal"] = r.collision_token_sums_equal;
  } else {
    c["complexity"] = complexity_json(r.total);
  }
  // Position-weighted checksum: sum over all network numbers (f1 layers W row-major then b, WOV, f2
  // layers) of (position + 1) * value. Any single altered number changes it.
  Rational sum = 0;
  std::size_t pos = 0;
  auto add = [&](const Rational& v) {
    ++pos;
    if (sgn(v) != 0) sum += v * Rational(static_cast<unsigned long>(pos));
  };
  auto addnet = [&](const ReluNet& n) {
    for (const auto& L : n.layers) {
      for (const auto& w : L.W.data()) add(w);
      for (const auto& b : L.b) add(b);
    }
  };
  addnet(r.net.f1);
  for (const auto& w : r.net.WOV.data()) add(w);
  addnet(r.net.f2);
  c["checksum"] = rational_to_string(sum);
  prof.mark("certificate JSON (tree)");
  return c;
}

nlohmann::json ks_summary_json(const KsResult& r) {
  const KsPrepared& P = r.prep;
  nlohmann::json j;
  j["claim"] = r.deep_set ? "ks25/theorem-D.1" : P.seq2seq ? "ks25/corollary-4.1" : "ks25/theorem-4.1";
  j["setting"] = P.seq2seq ? "seq-to-seq" : "next-token";
  j["N"] = P.N;
  j["n"] = P.n;
  j["d"] = P.d;
  j["C"] = P.C;
  j["distinct_tokens"] = P.tokens.size();
  j["distinct_multisets"] = P.distinct_multisets.size();
  j["separation"] = {{"r2", rational_to_string(P.r2)},
                     {"delta2", rational_to_string(P.delta2)},
                     {"delta2_exact", P.delta2_exact},
                     {"delta_tokens", {{"first", {P.delta_pair_seq.first, P.delta_pair_seq.second}},
                                       {"second", {P.delta_pair_seq2.first, P.delta_pair_seq2.second}}}}};
  j["consistent"] = P.consistent;
  if (!P.consistent) {
    j["inconsistent_pair"] = {P.inconsistent_pair.first, P.inconsistent_pair.second};
    if (P.seq2seq) j["inconsistent_position"] = P.inconsistent_position;
    j["memorized"] = false;
    return j;
  }
  j["parameters"] = r.total.parameters;
  j["nonzero_parameters"] = r.total.nonzero_parameters;
  j["depth"] = r.total.depth;
  j["width"] = r.total.width;
  j["bit_complexity"] = r.total.bit_complexity;
  j["memorized"] = r.memorized;
  j["mismatches"] = r.mismatches;
  if (r.collision) {
    j["collision"] = {r.collision->first, r.collision->second};
    j["collision_for_every_linear_phi"] = r.collision_token_sums_equal;
  }
  j["eq55"] = {{"holds", r.eq55_holds}, {"min_dist2", rational_to_string(r.eq55_min_dist2)},
               {"bound2", rational_to_string(Rational(1, static_cast<unsigned long>(P.n * P.n)))}};
  nlohmann::json f1 = complexity_json(r.f1c);
  f1["phi"] = r.linear_F.values.empty() ? "phi~" : "linear (ablation)";
  f1["A"] = r.phi.weights.A.size();
  f1["weight_max"] = r.phi.weights.f.empty() ? std::string("0")
                                              : (*std::max_element(r.phi.weights.f.begin(), r.phi.weights.f.end())).get_str();
  if (r.phi.weights.g1.ratio_certified && r.phi.weights.A.size() > 0)
    f1["g1_min_ratio2"] = rational_to_double(r.phi.weights.g1.min_ratio2);
  f1["g1_park_bound2"] = r.phi.weights.g1.park_bound2;
  f1["k"] = r.phi.c1.k;
  f1["m"] = r.phi.c1.m;
  f1["B"] = r.phi.c1.B;
  j["f1"] = f1;
  nlohmann::json f2 = complexity_json(r.f2c);
  f2["points"] = r.f2info.stage1.values.size();
  f2["k"] = r.f2info.k;
  f2["m"] = r.f2info.m;
  f2["B"] = r.f2info.B;
  f2["structured_direction"] = r.f2info.stage1.used_given_direction;
  j["f2"] = f2;
  j["bounds"] = {{"log2_R", r.bounds.log2_R},
                 {"depth_expr", r.bounds.depth_expr},
                 {"bit_expr", r.bounds.bit_expr},
                 {"parameters_expr", r.bounds.parameters_expr},
                 {"width", r.bounds.width_bound}};
  j["build_seconds"] = r.build_seconds;
  j["verify_seconds"] = r.verify_seconds;
  return j;
}

// ---- Theorem D.1 --------------------------------------------------------------------------------------------
DeepSet theoremD1_deep_set(const std::vector<std::vector<QVector>>& sets, const std::vector<long>& labels,
                           std::uint64_t seed) {
  if (sets.size() != labels.size()) throw std::invalid_argument("theoremD1: one label per multiset expected");
  DeepSet ds;
  std::map<QVector, TokenId> ids;
  std::vector<QVector> tokens;
  std::vector<Multiset> ms(sets.size());
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (sets[i].empty()) throw std::invalid_argument("theoremD1: empty multiset");
    std::vector<TokenId> s;
    for (const auto& x : sets[i]) {
      auto [it, fresh] = ids.emplace(x, tokens.size());
      if (fresh) tokens.push_back(x);
      s.push_back(it->second);
    }
    std::sort(s.begin(), s.end());
    for (TokenId t : s) {
      if (!ms[i].empty() && ms[i].back().first == t) ++ms[i].back().second;
      else ms[i].emplace_back(t, 1);
    }
  }
  std::map<Multiset, std::size_t> uniq;
  std::vector<Multiset> distinct;
  std::vector<long> dl;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (labels[i] < 0) throw std::invalid_argument("theoremD1: negative label");
    auto [it, fresh] = uniq.emplace(ms[i], distinct.size());
    if (fresh) {
      distinct.push_back(ms[i]);
      dl.push_back(labels[i]);
    } else if (dl[it->second] != labels[i]) {
      throw std::invalid_argument("theoremD1: equal multisets " + std::to_string(it->second) + " and " +
                                  std::to_string(i) + " with different labels");
    }
  }
  const std::size_t d = tokens[0].size();
  NetBuilder nb(d);
  C1Out o = lemmaB3_phi_tilde(nb, nb.inputs(), tokens, distinct, seed, ds.phi_info);
  ds.phi = nb.finish({o.out});
  // rho: Lemma C.1 on the (distinct, integer) sums.
  std::vector<QVector> pts;
  std::vector<Integer> lab;
  for (std::size_t i = 0; i < distinct.size(); ++i) {
    pts.push_back({Rational(ds.phi_info.weights.sums[i])});
    lab.push_back(Integer(dl[i]));
  }
  ds.rho = lemmaC1_network(pts, lab, seed * 131 + 3, &ds.rho_info);
  // Verify exactly on every input multiset.
  ReluNetSparse ps(ds.phi), rs(ds.rho);
  std::vector<Rational> phi_tok(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) phi_tok[t] = ps.eval(tokens[t])[0];
  ds.memorized = true;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    Rational s = 0;
    for (const auto& [t, cnt] : ms[i]) s += phi_tok[t] * Rational(cnt);
    if (rs.eval({s})[0] != Rational(labels[i])) ds.memorized = false;
  }
  ds.complexity = complexity_sequential(relunet_complexity(ds.phi), relunet_complexity(ds.rho));
  return ds;
}

KsResult ks_construct_deep_set(const KsPrepared& prep0, const KsOptions& opt) {
  KsResult r;
  r.prep = prep0;
  r.deep_set = true;
  KsPrepared& P = r.prep;
  if (P.seq2seq) throw InputError("construct ks --deep-sets: expected one label per sequence, got per-token labels");
  // Deep-set consistency: equal multisets => equal labels.
  P.consistent = true;
  std::map<std::size_t, std::size_t> first;  // multiset -> sequence
  for (std::size_t i = 0; i < P.N; ++i) {
    auto [it, fresh] = first.emplace(P.ms_index[i], i);
    if (!fresh && P.labels[it->second] != P.labels[i]) {
      P.consistent = false;
      P.inconsistent_pair = {it->second, i};
      return r;
    }
  }
  const auto t0 = Clock::now();
  std::vector<std::vector<QVector>> sets(P.N);
  for (std::size_t i = 0; i < P.N; ++i)
    for (TokenId t : P.seq_ids[i]) sets[i].push_back(P.tokens[t]);
  DeepSet ds = theoremD1_deep_set(sets, P.labels, opt.seed);
  r.phi = ds.phi_info;
  r.f2info = ds.rho_info;
  // f1 = (phi~, 0, 0): phi's output layer padded with two zero rows.
  r.net.f1 = ds.phi;
  {
    ReluLayer& L = r.net.f1.layers.back();
    QMatrix W(3, L.W.cols(), Rational(0));
    for (std::size_t j = 0; j < L.W.cols(); ++j) W(0, j) = L.W(0, j);
    QVector b{L.b[0], Rational(0), Rational(0)};
    L.W = std::move(W);
    L.b = std::move(b);
  }
  r.net.WOV = ks_uniform_attention_wov();
  // f2 = rho~ reading n * s_3 (= the sum of phi~ over the sequence).
  r.net.f2 = ds.rho;
  {
    ReluLayer& L = r.net.f2.layers.front();
    QMatrix W(L.W.rows(), 3, Rational(0));
    for (std::size_t i = 0; i < L.W.rows(); ++i) W(i, 2) = L.W(i, 0) * Rational(static_cast<long>(P.n));
    L.W = std::move(W);
    r.net.f2.in_dim = 3;
  }
  r.f2_built = true;
  r.build_seconds = since(t0);
  const auto t1 = Clock::now();
  ReluNetSparse f1s(r.net.f1), f2s(r.net.f2);
  r.f1_out = f1s.eval_all_shared(P.tokens, opt.threads);
  r.contexts.resize(P.N);
  r.predictions.resize(P.N);
  for (std::size_t i = 0; i < P.N; ++i) {
    std::vector<QVector> toks;
    for (TokenId t : P.seq_ids[i]) toks.push_back(r.f1_out[t]);
    r.contexts[i] = ks_context(toks, r.net.WOV, P.n - 1);
  }
  std::map<QVector, Rational> memo;
  for (std::size_t i = 0; i < P.N; ++i) {
    auto it = memo.find(r.contexts[i]);
    if (it == memo.end()) it = memo.emplace(r.contexts[i], f2s.eval(r.contexts[i])[0]).first;
    r.predictions[i] = it->second;
    if (r.predictions[i] != Rational(P.labels[i])) {
      ++r.mismatches;
      if (!r.first_mismatch) r.first_mismatch = std::make_pair(i, P.n - 1);
    }
  }
  r.memorized = r.mismatches == 0;
  r.eq55_holds = true;  // not part of Theorem D.1 (the last token is ignored)
  r.verify_seconds = since(t1);
  r.f1c = relunet_complexity(r.net.f1);
  r.f2c = relunet_complexity(r.net.f2);
  r.total = complexity_sequential(complexity_sequential(r.f1c, wov_complexity(r.net.WOV)), r.f2c);
  r.total.width = std::max({r.f1c.width, r.f2c.width, std::size_t{3}});
  r.bounds = ks_theorem_bounds(P.N, P.n, P.d, P.C, P.r2, P.delta2, false, true);
  return r;
}

// ---- data sets and the sweep -------------------------------------------------------------------------------
TokenSequenceDataset ks_generate_tokens(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C,
                                        std::uint64_t seed, bool float64, bool seq2seq) {
  if (N == 0 || n == 0 || d == 0 || V == 0 || C < 1) throw InputError("generate ks: N, n, d, V, C must be >= 1");
  std::mt19937_64 rng(seed);
  std::set<QVector> seen;
  TokenSequenceDataset ds;
  ds.N = N, ds.n = n, ds.d = d;
  std::vector<QVector> vocab;
  std::uniform_int_distribution<int> coord(-8, 8);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  const double possible = std::pow(17.0, double(d));
  if (!float64 && possible < double(V))
    throw InputError("generate ks: --V " + std::to_string(V) + " exceeds the " + std::to_string((long)possible) +
                     " distinct rational tokens available in dimension " + std::to_string(d));
  while (vocab.size() < V) {
    QVector x(d);
    for (auto& v : x) v = float64 ? rational_from_double(unif(rng)) : Rational(coord(rng), 2);
    if (seen.insert(x).second) vocab.push_back(std::move(x));
  }
  seen.clear();
  std::uniform_int_distribution<std::size_t> pick(0, V - 1);
  std::uniform_int_distribution<long> lab(0, C - 1);
  std::map<std::pair<std::size_t, std::vector<std::size_t>>, long> key_label;
  std::vector<std::size_t> drawn(N * n);  // vocabulary indices
  ds.labels.reserve(N);
  for (std::size_t i = 0; i < N; ++i) {
    std::vector<std::size_t> ids(n);
    for (std::size_t k = 0; k < n; ++k) ids[k] = drawn[i * n + k] = pick(rng);
    const std::size_t last = ids[n - 1];
    std::sort(ids.begin(), ids.end());
    long y = lab(rng);
    auto [it, fresh] = key_label.emplace(std::make_pair(last, std::move(ids)), y);
    ds.labels.push_back(it->second);
  }
  key_label.clear();
  if (seq2seq) {
    // Per-token labels, consistent per (token, multiset) (vocabulary tokens are distinct: equal indices
    // <=> equal vectors).
    std::mt19937_64 rng2(seed ^ 0x5e525e9ULL);
    std::map<std::pair<std::size_t, std::vector<std::size_t>>, long> tl;
    ds.token_labels.assign(N, std::vector<long>(n, 0));
    for (std::size_t i = 0; i < N; ++i) {
      std::vector<std::size_t> ms(drawn.begin() + i * n, drawn.begin() + (i + 1) * n);
      std::sort(ms.begin(), ms.end());
      for (std::size_t k = 0; k < n; ++k) {
        auto [it, fresh] = tl.emplace(std::make_pair(drawn[i * n + k], ms), lab(rng2));
        ds.token_labels[i][k] = it->second;
      }
    }
    ds.labels.clear();
  }
  // Vocabulary indices -> token ids in first-occurrence order.
  std::vector<std::uint32_t> id_of(V, UINT32_MAX);
  ds.ids.resize(N * n);
  for (std::size_t r = 0; r < N * n; ++r) {
    std::uint32_t& id = id_of[drawn[r]];
    if (id == UINT32_MAX) {
      id = static_cast<std::uint32_t>(ds.tokens.size());
      ds.tokens.push_back(std::move(vocab[drawn[r]]));
    }
    ds.ids[r] = id;
  }
  return ds;
}

SequenceDataset ks_generate(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C, std::uint64_t seed,
                            bool float64) {
  return sequence_dataset_expand(ks_generate_tokens(N, n, d, V, C, seed, float64, false));
}

SequenceDataset ks_generate_seq2seq(std::size_t N, std::size_t n, std::size_t d, std::size_t V, long C,
                                    std::uint64_t seed, bool float64) {
  return sequence_dataset_expand(ks_generate_tokens(N, n, d, V, C, seed, float64, true));
}

KsSweep ks25_parameter_sweep(const std::vector<std::size_t>& Ns, std::size_t n, std::size_t d, std::size_t V,
                             long C, std::uint64_t seed, bool keep_certificates) {
  KsSweep s;
  s.n = n;
  s.d = d;
  s.V = V;
  s.C = C;
  for (std::size_t N : Ns) {
    const auto t0 = Clock::now();
    KsPrepared P = ks_prepare(ks_generate_tokens(N, n, d, V, C, seed + N, false, false), C, "sweep");
    KsOptions o;
    o.seed = seed;
    KsResult r = ks_construct(P, o);
    KsSweepRow row;
    row.N = N;
    row.parameters = r.total.parameters;
    row.nonzero_parameters = r.total.nonzero_parameters;
    row.depth = r.total.depth;
    row.width = r.total.width;
    row.bit_complexity = r.total.bit_complexity;
    row.memorized = r.memorized;
    row.eq55 = r.eq55_holds;
    row.seconds = since(t0);
    if (keep_certificates) row.certificate = ks_certificate_json(r);
    s.rows.push_back(std::move(row));
    if (!s.first_below_N && row.parameters < N) s.first_below_N = N;
  }
  // Least squares on (ln N, ln parameters).
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = double(s.rows.size());
  for (const auto& row : s.rows) {
    double x = std::log(double(row.N)), y = std::log(double(row.parameters));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  if (s.rows.size() >= 2) {
    s.exponent = (k * sxy - sx * sy) / (k * sxx - sx * sx);
    s.coefficient = std::exp((sy - s.exponent * sx) / k);
    s.crossover_estimate = s.exponent < 1 ? std::pow(s.coefficient, 1.0 / (1.0 - s.exponent)) : INFINITY;
  }
  return s;
}

nlohmann::json ks_sweep_json(const KsSweep& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.rows)
    rows.push_back({{"N", r.N},
                    {"parameters", r.parameters},
                    {"nonzero_parameters", r.nonzero_parameters},
                    {"depth", r.depth},
                    {"width", r.width},
                    {"bit_complexity", r.bit_complexity},
                    {"memorized", r.memorized},
                    {"eq55", r.eq55},
                    {"seconds", r.seconds}});
  nlohmann::json j{{"rows", rows},           {"exponent", s.exponent},
                   {"coefficient", s.coefficient}, {"n", s.n},
                   {"d", s.d},               {"V", s.V},
                   {"C", s.C}};
  j["first_N_below_trivial"] = s.first_below_N ? nlohmann::json(*s.first_below_N) : nlohmann::json(nullptr);
  j["crossover_estimate"] = std::isfinite(s.crossover_estimate) ? nlohmann::json(s.crossover_estimate)
                                                                 : nlohmann::json(nullptr);
  return j;
}

}  // namespace memcert::ks25

// ks25 Lemmas B.1-B.3, C.1, C.2, G.1-G.6 (see include/memcert/theory/ks25/lemmas.hpp).
#include "memcert/theory/ks25/lemmas.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

namespace memcert::ks25 {

namespace {

// 128-bit integers: a GCC/clang extension, named once so -Wpedantic stays quiet.
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

Rational pow2(long e) {
  Rational r = 1;
  if (e >= 0) mpz_mul_2exp(r.get_num_mpz_t(), r.get_num_mpz_t(), static_cast<mp_bitcnt_t>(e));
  else mpz_mul_2exp(r.get_den_mpz_t(), r.get_den_mpz_t(), static_cast<mp_bitcnt_t>(-e));
  return r;
}
Integer rat_floor(const Rational& q) {
  Integer f;
  mpz_fdiv_q(f.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  return f;
}
Integer rat_ceil(const Rational& q) {
  Integer f;
  mpz_cdiv_q(f.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
  return f;
}
std::size_t bitlen(const Integer& v) { return sgn(v) == 0 ? 0 : mpz_sizeinbase(v.get_mpz_t(), 2); }

std::vector<Lin*> with(std::vector<Lin*> base, std::initializer_list<Lin*> more) {
  for (Lin* l : more) base.push_back(l);
  return base;
}

}  // namespace

// ---- Lemma B.1 ---------------------------------------------------------------------------------------
Multiset multiset_restrict(const Multiset& m, const std::vector<TokenId>& A) {
  Multiset r;
  for (const auto& e : m)
    if (std::binary_search(A.begin(), A.end(), e.first)) r.push_back(e);
  return r;
}

std::vector<TokenId> lemmaB1_distinguishing_tokens(const std::vector<Multiset>& ms) {
  // Induction of the paper's proof: keep A such that m(1..k)|A are distinct; when m(k+1)|A collides with
  // m(i)|A, add a token where m(i) and m(k+1) differ (it lies outside A since the restrictions agree).
  std::vector<TokenId> A;
  std::map<Multiset, std::size_t> seen;     // restriction -> index
  std::vector<Multiset> restricted(ms.size());
  std::map<TokenId, std::vector<std::size_t>> containing;  // token -> multisets (processed) holding it
  for (std::size_t k = 0; k < ms.size(); ++k) {
    for (const auto& e : ms[k]) containing[e.first].push_back(k);
    Multiset r = multiset_restrict(ms[k], A);
    auto it = seen.find(r);
    if (it != seen.end()) {
      const std::size_t i = it->second;
      if (ms[i] == ms[k])
        throw std::invalid_argument("lemmaB1: multisets " + std::to_string(i) + " and " + std::to_string(k) +
                                    " are equal");
      // First token where the counts differ.
      std::map<TokenId, long> diff;
      for (const auto& e : ms[i]) diff[e.first] += e.second;
      for (const auto& e : ms[k]) diff[e.first] -= e.second;
      TokenId x = 0;
      bool found = false;
      for (const auto& [tok, dv] : diff)
        if (dv != 0) {
          x = tok;
          found = true;
          break;
        }
      if (!found || std::binary_search(A.begin(), A.end(), x))
        throw std::logic_error("lemmaB1: no distinguishing token outside A");
      A.insert(std::upper_bound(A.begin(), A.end(), x), x);
      // Only restrictions of multisets containing x change; they stay pairwise distinct.
      for (std::size_t j : containing[x]) {
        if (j == k) continue;
        seen.erase(restricted[j]);
      }
      for (std::size_t j : containing[x]) {
        if (j == k) continue;
        restricted[j] = multiset_restrict(ms[j], A);
        if (!seen.emplace(restricted[j], j).second) throw std::logic_error("lemmaB1: restriction collision");
      }
      r = multiset_restrict(ms[k], A);
      if (seen.count(r)) throw std::logic_error("lemmaB1: collision persists after adding a token");
    }
    restricted[k] = r;
    seen.emplace(r, k);
  }
  return A;
}

// ---- Lemma G.1 ---------------------------------------------------------------------------------------
ProjectionDirection lemmaG1_projection_direction(const std::vector<CountVec>& pts, std::size_t dim,
                                                 std::uint64_t seed, std::size_t max_pairs_points) {
  ProjectionDirection r;
  const std::size_t N = pts.size();
  // K ~ N^2: a uniform v in [1, K]^dim makes a fixed non-zero difference vanish with probability <= 1/K,
  // so all N(N-1)/2 differences survive with probability >= 1 - N^2 / (2K) (and we retry otherwise).
  long long K = std::max<long long>(4, static_cast<long long>(N) * static_cast<long long>(N));
  K = std::min<long long>(K, 1LL << 40);
  r.K = K;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::uniform_int_distribution<long long> dist(1, K);
  std::vector<i128> p(N);
  for (unsigned attempt = 1; attempt <= 64; ++attempt) {
    r.attempts = attempt;
    r.v.assign(dim, 0);
    for (auto& x : r.v) x = dist(rng);
    for (std::size_t i = 0; i < N; ++i) {
      i128 s = 0;
      for (const auto& [c, val] : pts[i]) s += static_cast<i128>(r.v.at(c)) * val;
      p[i] = s;
    }
    std::vector<std::size_t> ord(N);
    std::iota(ord.begin(), ord.end(), 0);
    std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    bool inj = true;
    for (std::size_t i = 1; i < N; ++i)
      if (p[ord[i]] == p[ord[i - 1]]) inj = false;
    if (!inj) continue;
    r.injective = true;
    break;
  }
  r.park_bound2 = N < 2 || dim == 0 ? 0.0 : 8.0 / (M_PI * double(dim) * std::pow(double(N), 4));
  if (!r.injective || N < 2 || N > max_pairs_points) {
    r.ratio_certified = r.injective && N < 2;
    return r;
  }
  // Exact min over all pairs of (v^T d)^2 / |d|^2 (a double pre-filter, exact comparison near the min).
  auto to_mpz = [](i128 x) {
    bool neg = x < 0;
    u128 u = neg ? static_cast<u128>(-x) : static_cast<u128>(x);
    Integer z = static_cast<unsigned long>(static_cast<std::uint64_t>(u >> 64));
    z <<= 64;
    z += static_cast<unsigned long>(static_cast<std::uint64_t>(u));
    return neg ? Integer(-z) : z;
  };
  bool have = false;
  Integer best_num, best_den;
  double best_d = 0;
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j) {
      long long dd = 0;  // |x_i - x_j|^2
      std::size_t a = 0, b = 0;
      const auto &X = pts[i], &Y = pts[j];
      while (a < X.size() || b < Y.size()) {
        long long diff;
        if (b == Y.size() || (a < X.size() && X[a].first < Y[b].first)) diff = X[a++].second;
        else if (a == X.size() || Y[b].first < X[a].first) diff = -Y[b++].second;
        else diff = X[a++].second - Y[b++].second;
        dd += diff * diff;
      }
      const i128 pd = p[i] - p[j];
      const double ratio = double(pd) * double(pd) / double(dd);
      if (have && ratio > best_d * (1 + 1e-9)) continue;
      Integer num = to_mpz(pd);
      num *= num;
      Integer den = static_cast<long>(dd);
      if (!have || num * best_den < best_num * den) {
        best_num = num;
        best_den = den;
        best_d = ratio;
        r.argmin = {i, j};
        have = true;
      }
    }
  Integer v2 = 0;
  for (long long x : r.v) v2 += Integer(static_cast<long>(x)) * Integer(static_cast<long>(x));
  r.min_ratio2 = Rational(best_num, best_den * v2);
  r.min_ratio2.canonicalize();
  r.ratio_certified = true;
  return r;
}

// ---- Lemma B.2 ---------------------------------------------------------------------------------------
TokenWeights lemmaB2_token_weights(const std::vector<Multiset>& ms, const std::vector<TokenId>& A,
                                   std::uint64_t seed) {
  TokenWeights w;
  w.A = A;
  std::vector<CountVec> pts;
  for (const auto& m : ms) {
    CountVec cv;
    for (const auto& [tok, cnt] : m) {
      auto it = std::lower_bound(A.begin(), A.end(), tok);
      if (it != A.end() && *it == tok) cv.emplace_back(static_cast<std::size_t>(it - A.begin()), cnt);
    }
    pts.push_back(std::move(cv));
  }
  w.g1 = lemmaG1_projection_direction(pts, A.size(), seed);
  if (!w.g1.injective)
    throw std::runtime_error("lemmaB2: no injective integer direction found (are the restrictions distinct?)");
  for (long long v : w.g1.v) w.f.push_back(Integer(static_cast<long>(v)));
  // The certified property: the integer sums are pairwise distinct (checked here, exactly).
  for (const auto& cv : pts) {
    Integer s = 0;
    for (const auto& [c, cnt] : cv) s += w.f[c] * cnt;
    w.sums.push_back(s);
  }
  std::vector<Integer> sorted = w.sums;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    Integer g = sorted[i] - sorted[i - 1];
    if (sgn(g) == 0) throw std::logic_error("lemmaB2: two multisets have equal weight sums");
    if (i == 1 || g < w.min_gap) w.min_gap = g;
  }
  w.max_sum = sorted.empty() ? Integer(0) : sorted.back();
  return w;
}

// ---- Lemma C.2 ---------------------------------------------------------------------------------------
TokenProjection lemmaC2_token_projection(const std::vector<QVector>& pts, std::uint64_t seed,
                                         const QVector* direction) {
  TokenProjection r;
  const std::size_t V = pts.size();
  const std::size_t d = V ? pts[0].size() : (direction ? direction->size() : 0);
  std::mt19937_64 rng(seed ^ 0xc2b2ae3d27d4eb4fULL);
  // K ~ 4 V^2: a random direction separates a fixed pair except with probability <= 1/(2K+1).
  long long K = std::max<long long>(256, 4LL * static_cast<long long>(V) * static_cast<long long>(V));
  K = std::min<long long>(K, 1LL << 40);
  std::uniform_int_distribution<long long> dist(-K, K);
  std::vector<Rational> p(V);
  std::vector<std::size_t> ord(V);
  for (unsigned attempt = 0; attempt <= 64; ++attempt) {
    r.attempts = attempt + 1;
    if (attempt == 0) {
      if (!direction) continue;
      r.u = *direction;
      r.used_given_direction = true;
    } else {
      r.used_given_direction = false;
      r.u.assign(d, Rational(0));
      for (auto& x : r.u) x = Rational(static_cast<long>(dist(rng)));
    }
    for (std::size_t i = 0; i < V; ++i) {
      Rational s = 0;
      for (std::size_t j = 0; j < d; ++j)
        if (sgn(r.u[j]) != 0) s += r.u[j] * pts[i][j];
      p[i] = s;
    }
    std::iota(ord.begin(), ord.end(), 0);
    std::sort(ord.begin(), ord.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    bool inj = true;
    Rational g = 0;
    for (std::size_t i = 1; i < V; ++i) {
      Rational gi = p[ord[i]] - p[ord[i - 1]];
      if (sgn(gi) == 0) {
        inj = false;
        break;
      }
      if (i == 1 || gi < g) g = gi;
    }
    if (!inj) continue;
    // alpha = the power of two with 2 <= alpha g < 4 (alpha = 1 when there is no gap).
    r.alpha = 1;
    if (V >= 2) {
      while (r.alpha * g < 2) r.alpha *= 2;
      while (r.alpha * g >= 4) r.alpha /= 2;
    }
    const Rational pmin = V ? p[ord[0]] : Rational(0);
    r.beta = Rational(rat_ceil(Rational(2) - r.alpha * pmin));
    r.values.resize(V);
    for (std::size_t i = 0; i < V; ++i) r.values[i] = r.alpha * p[i] + r.beta;
    r.min_gap = V >= 2 ? Rational(r.alpha * g) : Rational(0);
    r.max_value = V ? r.values[ord[V - 1]] : Rational(0);
    // Certified: min value >= 2 and adjacent (hence all) gaps >= 2.
    if (V && r.values[ord[0]] < 2) throw std::logic_error("lemmaC2: value below 2");
    if (V >= 2 && r.min_gap < 2) throw std::logic_error("lemmaC2: gap below 2");
    return r;
  }
  throw std::invalid_argument("lemmaC2: points are not distinct (no injective direction found)");
}

// ---- Lemma G.2 ---------------------------------------------------------------------------------------
std::pair<Lin, Lin> trapezoid_hidden(const Lin& x, const Rational& a, const Rational& b) {
  Lin h1 = Rational(-2) * x + Rational(2 * a);
  Lin h2 = Rational(2) * x - Rational(2 * b);
  return {h1, h2};
}
Lin trapezoid_out(const Lin& h1, const Lin& h2) { return Lin::constant(1) - h1 - h2; }

Lin lemmaG2_trapezoid(NetBuilder& nb, Lin& x, const Rational& a, const Rational& b, const std::vector<Lin*>& carry) {
  auto [h1, h2] = trapezoid_hidden(x, a, b);
  auto H = nb.relu({h1, h2}, with(carry, {&x}));
  auto T = nb.relu({trapezoid_out(H[0], H[1])}, with(carry, {&x}));
  return T[0];
}

// ---- Lemma G.3 ---------------------------------------------------------------------------------------
std::vector<Lin> lemmaG3_selection_network(NetBuilder& nb, Lin& x, const std::vector<Rational>& xs, std::size_t k,
                                           const std::vector<std::vector<Integer>>& vals,
                                           const std::vector<Lin*>& carry) {
  const std::size_t N = xs.size();
  if (k == 0 || N == 0) throw std::invalid_argument("lemmaG3: empty");
  const std::size_t m = (N + k - 1) / k;
  for (const auto& v : vals)
    if (v.size() != m) throw std::invalid_argument("lemmaG3: one value per group expected");
  std::vector<Lin> acc(vals.size(), Lin::constant(0));
  std::vector<Lin*> cl = with(carry, {&x});
  for (auto& a : acc) cl.push_back(&a);
  Lin H1, H2;
  for (std::size_t j = 0; j <= m; ++j) {
    std::vector<Lin> pre;
    if (j < m) {
      const Rational a(rat_floor(xs[j * k]));
      const Rational b(rat_floor(xs[std::min(N, j * k + k) - 1] + 1));
      auto [h1, h2] = trapezoid_hidden(x, a, b);
      pre = {h1, h2};
    }
    if (j > 0) pre.push_back(trapezoid_out(H1, H2));
    auto out = nb.relu(pre, cl);
    if (j > 0) {
      const Lin& t = out[j < m ? 2 : 0];
      for (std::size_t o = 0; o < vals.size(); ++o)
        if (sgn(vals[o][j - 1]) != 0) acc[o] += Rational(vals[o][j - 1]) * t;
    }
    if (j < m) {
      H1 = out[0];
      H2 = out[1];
    }
  }
  return acc;
}

// ---- Lemma G.4 ---------------------------------------------------------------------------------------
Rational telgarsky_psi(const Rational& z) {
  Rational a = 2 * z, b = 4 * z - 2;
  if (sgn(a) < 0) a = 0;
  if (sgn(b) < 0) b = 0;
  Rational r = a - b;
  if (sgn(r) < 0) r = 0;
  return r;
}

BitStream bitstream_init(const Lin& value, std::size_t L) {
  BitStream s;
  s.L = L;
  Lin scaled = pow2(-static_cast<long>(L)) * value;
  s.z1 = scaled + pow2(-static_cast<long>(L) - 1);
  s.z2 = scaled + pow2(-static_cast<long>(L) - 2);
  return s;
}

std::vector<Lin> lemmaG4_bit_extraction(NetBuilder& nb, const std::vector<BitStream*>& streams, std::size_t nbits,
                                        const std::vector<Lin*>& carry) {
  std::vector<Lin> acc(streams.size(), Lin::constant(0));
  std::vector<Lin*> cl = carry;
  for (auto& a : acc) cl.push_back(&a);
  for (std::size_t step = 0; step < nbits; ++step) {
    // Layer A: ReLU(2z), ReLU(4z - 2) for both copies of every stream.
    std::vector<Lin> pre;
    for (BitStream* s : streams) {
      pre.push_back(Rational(2) * s->z1);
      pre.push_back(Rational(4) * s->z1 - Rational(2));
      pre.push_back(Rational(2) * s->z2);
      pre.push_back(Rational(4) * s->z2 - Rational(2));
    }
    auto A = nb.relu(pre, cl);
    // Layer B: psi(z1), psi(z2) and the bit ReLU(psi(z2) - psi(z1)) of the new iterate.
    pre.clear();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      Lin t1 = A[4 * i] - A[4 * i + 1], t2 = A[4 * i + 2] - A[4 * i + 3];
      pre.push_back(t1);
      pre.push_back(t2);
      pre.push_back(t2 - t1);
    }
    auto Bo = nb.relu(pre, cl);
    for (std::size_t i = 0; i < streams.size(); ++i) {
      BitStream* s = streams[i];
      s->z1 = Bo[3 * i];
      s->z2 = Bo[3 * i + 1];
      s->t += 1;
      if (s->t > s->L) throw std::logic_error("lemmaG4: more bits extracted than the stream holds");
      acc[i] = Rational(2) * acc[i] +
               pow2(static_cast<long>(s->L) + 2 - static_cast<long>(s->t)) * Bo[3 * i + 2];
    }
  }
  return acc;
}

// ---- Lemma G.5 ---------------------------------------------------------------------------------------
Lin lemmaG5_window(NetBuilder& nb, Lin& x, const Lin& y, const std::vector<Lin*>& carry) {
  Lin h1 = Rational(2) * (y - x);
  Lin h2 = Rational(2) * (x - y) - Rational(2);
  auto H = nb.relu({h1, h2}, with(carry, {&x}));
  auto T = nb.relu({Lin::constant(1) - H[0] - H[1]}, with(carry, {&x}));
  return T[0];
}

// ---- Lemma G.6 ---------------------------------------------------------------------------------------
Lin lemmaG6_packed_lookup(NetBuilder& nb, Lin& x, const Lin& w, const Lin& u, std::size_t fields, std::size_t B,
                          const std::vector<Lin*>& carry) {
  BitStream su = bitstream_init(u, fields * B), sw = bitstream_init(w, fields * B);
  Lin out = Lin::constant(0);
  const Rational top = pow2(static_cast<long>(B) + 1);
  for (std::size_t i = 0; i < fields; ++i) {
    auto bins = lemmaG4_bit_extraction(nb, {&su, &sw}, B, with(carry, {&x, &out}));
    const bool more = i + 1 < fields;
    std::vector<Lin*> cl = with(carry, {&out, &bins[1]});
    if (more) cl = with(cl, {&su.z1, &su.z2, &sw.z1, &sw.z2});
    Lin ind = lemmaG5_window(nb, x, bins[0], cl);
    // Emit the label field when the window matched: ReLU(2^(B+1) ind - 2^(B+1) + w_i).
    std::vector<Lin*> cl2 = with(carry, {&x, &out});
    if (more) cl2 = with(cl2, {&su.z1, &su.z2, &sw.z1, &sw.z2});
    auto C = nb.relu({top * ind - top + bins[1]}, cl2);
    out += C[0];
  }
  return out;
}

// ---- Lemma C.1 ---------------------------------------------------------------------------------------
C1Out lemmaC1_vardi_memorizer(NetBuilder& nb, const std::vector<Lin>& in, const std::vector<QVector>& points,
                              const std::vector<Integer>& labels, std::uint64_t seed,
                              const QVector* stage1_direction) {
  if (points.size() != labels.size()) throw std::invalid_argument("lemmaC1: one label per point expected");
  C1Out r;
  C1Info& info = r.info;
  const std::size_t before = nb.layers();
  // Stage I: project onto a line, values in [2, R] with gaps >= 2.
  info.stage1 = lemmaC2_token_projection(points, seed, stage1_direction);
  const TokenProjection& P = info.stage1;
  Lin pre = Lin::constant(P.beta);
  for (std::size_t j = 0; j < in.size(); ++j)
    if (sgn(P.u[j]) != 0) pre += Rational(P.alpha * P.u[j]) * in[j];
  r.x = nb.relu({pre})[0];
  // Labeled points (label != 0), sorted by projection.
  std::vector<std::size_t> lab;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (sgn(labels[i]) < 0) throw std::invalid_argument("lemmaC1: negative label");
    if (sgn(labels[i]) != 0) lab.push_back(i);
  }
  std::sort(lab.begin(), lab.end(), [&](std::size_t a, std::size_t b) { return P.values[a] < P.values[b]; });
  info.labeled = lab.size();
  if (lab.empty()) {
    r.out = Lin::constant(0);
    info.depth = nb.layers() - before;
    return r;
  }
  Integer maxfloor = 0, maxlabel = 0;
  for (std::size_t i : lab) {
    maxfloor = std::max(maxfloor, rat_floor(P.values[i]));
    maxlabel = std::max(maxlabel, labels[i]);
  }
  info.rho = bitlen(maxfloor);
  info.c = bitlen(maxlabel);
  info.B = std::max<std::size_t>({info.rho, info.c, 1});
  const std::size_t N = lab.size(), B = info.B;
  // k minimizing the appended depth (m + 1) + k (2B + 3), m = ceil(N / k).
  std::size_t bestk = 1, bestdepth = SIZE_MAX;
  for (std::size_t k = 1; k <= N; ++k) {
    std::size_t m = (N + k - 1) / k;
    std::size_t dep = m + 1 + k * (2 * B + 3);
    if (dep < bestdepth) {
      bestdepth = dep;
      bestk = k;
    }
    if (k * (2 * B + 3) > bestdepth) break;
  }
  info.k = bestk;
  info.m = (N + bestk - 1) / bestk;
  // Stage II: the crafted integers (field q of group j, most significant first).
  std::vector<Integer> wv(info.m, 0), uv(info.m, 0);
  std::vector<Rational> xs;
  for (std::size_t j = 0; j < info.m; ++j) {
    for (std::size_t q = 0; q < info.k; ++q) {
      wv[j] <<= B;
      uv[j] <<= B;
      const std::size_t i = j * info.k + q;
      if (i < N) {
        wv[j] += labels[lab[i]];
        uv[j] += rat_floor(P.values[lab[i]]);
      }
    }
  }
  for (std::size_t i : lab) xs.push_back(P.values[i]);
  auto ys = lemmaG3_selection_network(nb, r.x, xs, info.k, {wv, uv});
  // Stage III: bit extraction and window test.
  r.out = lemmaG6_packed_lookup(nb, r.x, ys[0], ys[1], info.k, B);
  info.depth = nb.layers() - before;
  return r;
}

ReluNet lemmaC1_network(const std::vector<QVector>& points, const std::vector<Integer>& labels, std::uint64_t seed,
                        C1Info* info, const QVector* stage1_direction) {
  const std::size_t d = points.empty() ? (stage1_direction ? stage1_direction->size() : 0) : points[0].size();
  NetBuilder nb(d);
  C1Out r = lemmaC1_vardi_memorizer(nb, nb.inputs(), points, labels, seed, stage1_direction);
  if (info) *info = r.info;
  return nb.finish({r.out});
}

// ---- Lemma B.3 ---------------------------------------------------------------------------------------
C1Out lemmaB3_phi_tilde(NetBuilder& nb, const std::vector<Lin>& in, const std::vector<QVector>& tokens,
                        const std::vector<Multiset>& ms, std::uint64_t seed, PhiTilde& info) {
  std::vector<TokenId> A = lemmaB1_distinguishing_tokens(ms);
  info.weights = lemmaB2_token_weights(ms, A, seed);
  info.phi.assign(tokens.size(), Integer(0));
  for (std::size_t i = 0; i < A.size(); ++i) info.phi.at(A[i]) = info.weights.f[i];
  C1Out r = lemmaC1_vardi_memorizer(nb, in, tokens, info.phi, seed * 0x100000001b3ULL + 17);
  info.c1 = r.info;
  return r;
}

}  // namespace memcert::ks25

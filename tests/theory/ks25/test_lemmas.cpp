// ks25 lemmas, each against an independent second computation (brute force / GMP bit operations /
// the dense evaluator), on random and adversarial inputs. Fixed seeds.
#include "catch.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "memcert/theory/ks25/lemmas.hpp"

using namespace memcert;
using namespace memcert::ks25;

namespace {

Multiset ms_of(std::vector<TokenId> ids) {
  std::sort(ids.begin(), ids.end());
  Multiset m;
  for (auto t : ids) {
    if (!m.empty() && m.back().first == t) ++m.back().second;
    else m.emplace_back(t, 1);
  }
  return m;
}

std::vector<Multiset> random_distinct_multisets(std::size_t N, std::size_t n, std::size_t V, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, V - 1);
  std::set<Multiset> seen;
  std::vector<Multiset> out;
  while (out.size() < N) {
    std::vector<TokenId> ids(n);
    for (auto& t : ids) t = pick(rng);
    Multiset m = ms_of(ids);
    if (seen.insert(m).second) out.push_back(m);
  }
  return out;
}

std::vector<QVector> random_points(std::size_t V, std::size_t d, std::uint64_t seed, int range = 5) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> c(-range, range);
  std::set<QVector> seen;
  std::vector<QVector> out;
  while (out.size() < V) {
    QVector x(d);
    for (auto& v : x) v = Rational(c(rng), 3);
    if (seen.insert(x).second) out.push_back(x);
  }
  return out;
}

}  // namespace

TEST_CASE("Lemma B.1: restrictions to A stay distinct, |A| <= N", "[ks25][B1]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    for (std::size_t N : {1, 2, 9, 10, 40}) {
      auto ms = random_distinct_multisets(N, 4, 6, seed * 100 + N);
      auto A = lemmaB1_distinguishing_tokens(ms);
      CHECK(A.size() <= N);
      CHECK(std::is_sorted(A.begin(), A.end()));
      std::set<Multiset> r;
      for (const auto& m : ms) r.insert(multiset_restrict(m, A));
      CHECK(r.size() == N);  // brute force: all restrictions distinct
    }
  }
  SECTION("N = 1 needs no token") { CHECK(lemmaB1_distinguishing_tokens({ms_of({0, 1, 1})}).empty()); }
  SECTION("equal multisets are rejected") {
    CHECK_THROWS_AS(lemmaB1_distinguishing_tokens({ms_of({0, 1}), ms_of({1, 0})}), std::invalid_argument);
  }
  SECTION("adversarial: multisets differing only in one count of a common token") {
    std::vector<Multiset> ms;
    for (long c = 1; c <= 6; ++c) ms.push_back({{0, c}, {1, 7 - c}});
    auto A = lemmaB1_distinguishing_tokens(ms);
    std::set<Multiset> r;
    for (const auto& m : ms) r.insert(multiset_restrict(m, A));
    CHECK(r.size() == ms.size());
    CHECK(A.size() == 1);
  }
}

TEST_CASE("Lemma G.1: certified injective direction and exact Park ratio", "[ks25][G1]") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<long> cnt(0, 4);
  std::vector<CountVec> pts;
  std::set<CountVec> seen;
  while (pts.size() < 30) {
    CountVec v;
    for (std::size_t c = 0; c < 5; ++c) {
      long x = cnt(rng);
      if (x) v.emplace_back(c, x);
    }
    if (seen.insert(v).second) pts.push_back(v);
  }
  auto g = lemmaG1_projection_direction(pts, 5, 11);
  REQUIRE(g.injective);
  REQUIRE(g.ratio_certified);
  // Brute force with rationals: the min over all pairs.
  Rational v2 = 0;
  for (long long x : g.v) v2 += Rational(static_cast<long>(x)) * static_cast<long>(x);
  Rational best = -1;
  auto dense = [&](const CountVec& c) {
    std::vector<long> d(5, 0);
    for (auto [i, x] : c) d[i] = x;
    return d;
  };
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = i + 1; j < pts.size(); ++j) {
      auto a = dense(pts[i]), b = dense(pts[j]);
      Rational dot = 0, nn = 0;
      for (int c = 0; c < 5; ++c) {
        dot += Rational(static_cast<long>(g.v[c])) * (a[c] - b[c]);
        nn += Rational((a[c] - b[c]) * (a[c] - b[c]));
      }
      CHECK(dot != 0);
      Rational r = dot * dot / (nn * v2);
      if (best < 0 || r < best) best = r;
    }
  CHECK(best == g.min_ratio2);
  CHECK(g.min_ratio2 > 0);
}

TEST_CASE("Lemma B.2: integer weights with pairwise distinct sums", "[ks25][B2]") {
  for (std::size_t N : {1, 16, 17, 50}) {
    auto ms = random_distinct_multisets(N, 5, 8, 77 + N);
    auto A = lemmaB1_distinguishing_tokens(ms);
    auto w = lemmaB2_token_weights(ms, A, 3);
    REQUIRE(w.f.size() == A.size());
    std::set<Integer> sums;
    for (const auto& m : ms) {  // recompute the sums independently
      Integer s = 0;
      for (auto [t, c] : m) {
        auto it = std::find(A.begin(), A.end(), t);
        if (it != A.end()) s += w.f[it - A.begin()] * c;
      }
      sums.insert(s);
    }
    CHECK(sums.size() == N);
    for (const auto& f : w.f) CHECK(f >= 1);
    if (N > 1) CHECK(w.min_gap >= 1);
  }
  SECTION("all sequences permutations of one another: one multiset") {
    std::vector<Multiset> ms{ms_of({3, 1, 2, 1})};
    auto w = lemmaB2_token_weights(ms, lemmaB1_distinguishing_tokens(ms), 1);
    CHECK(w.sums.size() == 1);
  }
}

TEST_CASE("Lemma C.2: token projection with gaps >= 2", "[ks25][C2]") {
  auto check = [](const std::vector<QVector>& pts, std::uint64_t seed) {
    auto P = lemmaC2_token_projection(pts, seed);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      Rational v = P.beta;  // independent recomputation
      for (std::size_t j = 0; j < pts[i].size(); ++j) v += P.alpha * P.u[j] * pts[i][j];
      CHECK(v == P.values[i]);
      CHECK(v >= 2);
      CHECK(v <= P.max_value);
      for (std::size_t k = 0; k < i; ++k) CHECK(abs(P.values[i] - P.values[k]) >= 2);
    }
  };
  check(random_points(40, 3, 1), 1);
  check(random_points(1, 4, 2), 2);
  SECTION("near-equal tokens (difference 10^-40)") {
    Rational eps(Integer(1), Integer("10000000000000000000000000000000000000000"));
    check({{Rational(1), Rational(2)}, {Rational(1) + eps, Rational(2)}, {Rational(1), Rational(2) - eps}}, 3);
  }
  SECTION("huge coordinates (10^40)") {
    Rational big(Integer("10000000000000000000000000000000000000000"));
    check({{big, -big}, {-big, big}, {big, big + 1}, {Rational(0), Rational(0)}}, 4);
  }
  SECTION("equal points are rejected") {
    CHECK_THROWS_AS(lemmaC2_token_projection({{Rational(1)}, {Rational(1)}}, 1), std::invalid_argument);
  }
}

TEST_CASE("Lemma G.2: trapezoid indicator", "[ks25][G2]") {
  NetBuilder nb(1);
  Lin x = nb.input(0);
  Lin t = lemmaG2_trapezoid(nb, x, Rational(3), Rational(7));
  ReluNet net = nb.finish({t});
  CHECK(net.depth() == 3);
  for (int k = 0; k <= 40; ++k) {
    Rational z(k, 4);
    Rational got = relunet_eval(net, {z})[0];
    if (z >= 3 && z <= 7) CHECK(got == 1);
    if (z < Rational(5, 2) || z > Rational(15, 2)) CHECK(got == 0);
    CHECK(got >= 0);
    CHECK(got <= 1);
  }
}

TEST_CASE("Lemma G.4: Telgarsky bit extraction equals the binary digits", "[ks25][G4]") {
  CHECK(telgarsky_psi(Rational(1, 4)) == Rational(1, 2));
  CHECK(telgarsky_psi(Rational(3, 4)) == Rational(1, 2));
  CHECK(telgarsky_psi(Rational(2)) == 0);
  const std::size_t L = 12;
  NetBuilder nb(1);
  BitStream s = bitstream_init(nb.input(0), L);
  auto f1 = lemmaG4_bit_extraction(nb, {&s}, 5);  // bits 1..5
  std::vector<Lin*> carry{&f1[0]};
  auto f2 = lemmaG4_bit_extraction(nb, {&s}, 7, carry);  // bits 6..12
  ReluNet net = nb.finish({f1[0], f2[0]});
  ReluNetSparse sp(net);
  std::mt19937_64 rng(9);
  std::vector<long> vals{0, 1, 4095, 2048, 2047, 1365, 2730};
  for (int i = 0; i < 30; ++i) vals.push_back(static_cast<long>(rng() % 4096));
  for (long v : vals) {
    auto out = relunet_eval(net, {Rational(v)});
    CHECK(out[0] == Rational(v >> 7));           // BIN_{1:5}
    CHECK(out[1] == Rational(v & 127));          // BIN_{6:12}
    CHECK(sp.eval({Rational(v)}) == out);        // sparse evaluator agrees
  }
}

TEST_CASE("Lemma G.5: window test", "[ks25][G5]") {
  NetBuilder nb(2);
  Lin x = nb.input(0);
  Lin w = lemmaG5_window(nb, x, nb.input(1));
  ReluNet net = nb.finish({w});
  for (int y = 0; y < 6; ++y)
    for (int k = 0; k <= 40; ++k) {
      Rational xv(k, 4);
      Rational got = relunet_eval(net, {xv, Rational(y)})[0];
      if (xv >= y && xv <= y + 1) CHECK(got == 1);
      if (xv > Rational(2 * y + 3, 2) || xv < Rational(2 * y - 1, 2)) CHECK(got == 0);
    }
}

TEST_CASE("Lemmas G.3 + G.6 + C.1: labels on N points, 0 on the other V - N", "[ks25][C1][G3][G6]") {
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    std::mt19937_64 rng(seed);
    const std::size_t V = 5 + seed * 7, d = 2 + seed % 2;
    auto pts = random_points(V, d, seed + 10);
    std::vector<Integer> lab(V);
    for (auto& l : lab) l = (rng() % 3 == 0) ? Integer(0) : Integer(static_cast<unsigned long>(rng() % 1000));
    C1Info info;
    ReluNet net = lemmaC1_network(pts, lab, seed, &info);
    ReluNetSparse sp(net);
    for (std::size_t i = 0; i < V; ++i) {
      CHECK(relunet_eval(net, pts[i])[0] == Rational(lab[i]));
      CHECK(sp.eval(pts[i])[0] == Rational(lab[i]));
    }
    CHECK(relunet_complexity(net).width <= 12);
  }
  SECTION("all labels zero (C = 1)") {
    auto pts = random_points(6, 2, 5);
    ReluNet net = lemmaC1_network(pts, std::vector<Integer>(6, 0), 1);
    for (const auto& p : pts) CHECK(relunet_eval(net, p)[0] == 0);
  }
  SECTION("one point") {
    ReluNet net = lemmaC1_network({{Rational(3), Rational(-1)}}, {Integer(5)}, 1);
    CHECK(relunet_eval(net, {Rational(3), Rational(-1)})[0] == 5);
  }
  SECTION("perfect square and not: N = 16, 17 labeled points") {
    for (std::size_t N : {16, 17}) {
      auto pts = random_points(N + 4, 2, N);
      std::vector<Integer> lab(N + 4, 0);
      for (std::size_t i = 0; i < N; ++i) lab[i] = Integer(static_cast<unsigned long>(i + 1));
      C1Info info;
      ReluNet net = lemmaC1_network(pts, lab, 7, &info);
      CHECK(info.labeled == N);
      CHECK(info.k * info.m >= N);
      for (std::size_t i = 0; i < pts.size(); ++i) CHECK(relunet_eval(net, pts[i])[0] == Rational(lab[i]));
    }
  }
}

TEST_CASE("Lemma B.3: phi~ sums separate distinct multisets by >= 1", "[ks25][B3]") {
  auto pts = random_points(8, 2, 21);
  auto ms = random_distinct_multisets(25, 5, 8, 22);
  NetBuilder nb(2);
  PhiTilde info;
  C1Out o = lemmaB3_phi_tilde(nb, nb.inputs(), pts, ms, 3, info);
  ReluNet phi = nb.finish({o.out});
  std::vector<Rational> val(pts.size());
  for (std::size_t t = 0; t < pts.size(); ++t) {
    val[t] = relunet_eval(phi, pts[t])[0];
    CHECK(val[t] == Rational(info.phi[t]));
  }
  std::vector<Rational> sums;
  for (const auto& m : ms) {
    Rational s = 0;
    for (auto [t, c] : m) s += val[t] * c;
    sums.push_back(s);
  }
  std::sort(sums.begin(), sums.end());
  for (std::size_t i = 1; i < sums.size(); ++i) CHECK(sums[i] - sums[i - 1] >= 1);
  CHECK(relunet_complexity(phi).width <= 12);
}

TEST_CASE("Lemma G.3 directly: group values on the points, 0 or a group value elsewhere", "[ks25][G3]") {
  // Points >= 2 with gaps >= 2 (some non-integer), groups of k = 3.
  std::vector<Rational> xs{Rational(5, 2), Rational(5), Rational(15, 2), Rational(10), Rational(13),
                           Rational(31, 2), Rational(20), Rational(45, 2)};
  const std::size_t k = 3, m = 3;
  std::vector<Integer> w{Integer(11), Integer(22), Integer(33)}, u{Integer(7), Integer(0), Integer(9)};
  NetBuilder nb(1);
  Lin x = nb.input(0);
  auto ys = lemmaG3_selection_network(nb, x, xs, k, {w, u});
  ReluNet net = nb.finish({ys[0], ys[1]});
  CHECK(net.depth() == m + 2);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto out = relunet_eval(net, {xs[i]});
    CHECK(out[0] == Rational(w[i / k]));
    CHECK(out[1] == Rational(u[i / k]));
  }
  // Points at distance >= 2 from every x_i: 0 or some group's values.
  for (int q = 0; q <= 120; ++q) {
    Rational z(q, 4);
    bool far = true;
    for (const auto& p : xs) far = far && abs(z - p) >= 2;
    if (!far) continue;
    auto out = relunet_eval(net, {z});
    bool ok = out[0] == 0 && out[1] == 0;
    for (std::size_t j = 0; j < m; ++j) ok = ok || (out[0] == Rational(w[j]) && out[1] == Rational(u[j]));
    CHECK(ok);
  }
}

TEST_CASE("Lemma G.6 directly: packed lookup with the window test", "[ks25][G6]") {
  // u packs floors {3, 7, 12} (B = 4 bits each), w packs labels {5, 0, 9}.
  const std::size_t B = 4, fields = 3;
  std::vector<long> fl{3, 7, 12}, lab{5, 0, 9};
  Integer u = 0, w = 0;
  for (std::size_t i = 0; i < fields; ++i) {
    u = u * 16 + fl[i];
    w = w * 16 + lab[i];
  }
  NetBuilder nb(3);
  Lin x = nb.input(0);
  Lin out = lemmaG6_packed_lookup(nb, x, nb.input(1), nb.input(2), fields, B);
  ReluNet net = nb.finish({out});
  CHECK(relunet_complexity(net).width <= 12);
  for (int q = 8; q <= 64; ++q) {  // x in [2, 16]
    Rational xv(q, 4);
    Rational got = relunet_eval(net, {xv, Rational(w), Rational(u)})[0];
    bool matched = false;
    for (std::size_t i = 0; i < fields; ++i)
      if (xv >= fl[i] && xv < fl[i] + 1) {
        CHECK(got == lab[i]);
        matched = true;
      }
    bool outside = true;
    for (std::size_t i = 0; i < fields; ++i) outside = outside && abs(xv - Rational(1, 2) - fl[i]) > 1;
    if (outside) CHECK(got == 0);
    (void)matched;
  }
}

namespace {
// Numbers at the edges of the machine route: 0, +-1, near and at 2^62, 2^63 - 1, -2^63, just past 64 bits
// (GMP), tiny and large dyadic exponents, and (optionally) non-dyadic ones (the rational route).
Rational edge_number(std::mt19937_64& rng, bool non_dyadic) {
  static const char* const ints[] = {"0", "1", "-1", "2", "-3", "4611686018427387904", "-4611686018427387904",
                                     "4611686018427387903", "9223372036854775807", "-9223372036854775807",
                                     "-9223372036854775808", "9223372036854775808", "18446744073709551617",
                                     "-170141183460469231731687303715884105727", "3037000499", "-3037000500"};
  Rational q{Integer{ints[rng() % (sizeof ints / sizeof *ints)]}};
  switch (rng() % 6) {
    case 0: break;
    case 1: mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(rng() % 70)); break;
    case 2: mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(rng() % 64)); break;
    case 3: q = Rational(static_cast<long>(rng() % 2001) - 1000, 1L << (rng() % 20)); break;
    case 4: q = Rational(static_cast<long>(rng() % 3) - 1); break;
    default:
      if (non_dyadic) q = Rational(static_cast<long>(rng() % 21) - 10, 3 + 2 * static_cast<long>(rng() % 4));
  }
  q.canonicalize();
  return q;
}
}  // namespace

TEST_CASE("ReluNetSparse: the machine-integer dyadic route equals GMP rationals (random and near-overflow)",
          "[ks25][dyadic]") {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 400; ++trial) {
    const bool non_dyadic = trial % 4 == 3;
    const bool small = trial % 2 == 0;  // random small dyadics (machine route throughout) vs edge numbers
    ReluNet net;
    net.in_dim = 1 + rng() % 4;
    std::size_t cur = net.in_dim;
    const std::size_t depth = 1 + rng() % 7;
    auto draw = [&]() -> Rational {
      if (!small) return edge_number(rng, non_dyadic);
      if (rng() % 3 == 0) return Rational(0);
      Rational q(static_cast<long>(rng() % 65) - 32, 1L << (rng() % 6));
      q.canonicalize();
      return q;
    };
    for (std::size_t l = 0; l < depth; ++l) {
      const std::size_t out = 1 + rng() % 5;
      ReluLayer L{QMatrix(out, cur, Rational(0)), QVector(out, Rational(0))};
      for (std::size_t i = 0; i < out; ++i) {
        for (std::size_t j = 0; j < cur; ++j) L.W(i, j) = draw();
        L.b[i] = draw();
      }
      net.layers.push_back(std::move(L));
      cur = out;
    }
    ReluNetSparse sp(net);
    for (int p = 0; p < 5; ++p) {
      QVector x(net.in_dim);
      for (auto& v : x) v = small ? Rational(static_cast<long>(rng() % 101) - 50, 1L << (rng() % 4)) : edge_number(rng, non_dyadic);
      for (auto& v : x) v.canonicalize();
      const QVector want = relunet_eval(net, x);
      REQUIRE(sp.eval(x) == want);
      REQUIRE(sp.eval_rational(x) == want);
    }
  }
  // A sum that overflows 128 bits only at its last term, and a shift that would: both exact.
  ReluNet net;
  net.in_dim = 3;
  const Rational big(Integer("9223372036854775807"));
  net.layers.push_back({QMatrix(1, 3, big), QVector{Rational(Integer("-9223372036854775808"))}});
  ReluNetSparse sp(net);
  const QVector x{big, big, Rational(1, 1L << 40)};
  CHECK(sp.eval(x) == relunet_eval(net, x));
}

// kind "ks": the checker's exact evaluation of a layer list in machine integers (dyadic values, checked
// 128-bit sums, GMP where a check fails) against its plain GMP-rational evaluation, on random small
// dyadic weights, on weights and inputs at the edges of 64 and 128 bits, and with non-dyadic numbers.
#include "catch.hpp"

#include <random>

#include "kinds/ks25/ks_network.hpp"

using namespace memcert_checker;

namespace {
mpq_class edge(std::mt19937_64& rng, bool non_dyadic) {
  static const char* const ints[] = {"0", "1", "-1", "2", "-3", "4611686018427387904", "-4611686018427387904",
                                     "4611686018427387903", "9223372036854775807", "-9223372036854775807",
                                     "-9223372036854775808", "9223372036854775808", "18446744073709551617",
                                     "-170141183460469231731687303715884105727", "3037000499", "-3037000500"};
  mpq_class q{mpz_class{ints[rng() % (sizeof ints / sizeof *ints)]}};
  switch (rng() % 6) {
    case 0: break;
    case 1: mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(rng() % 70)); break;
    case 2: mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(rng() % 64)); break;
    case 3: q = mpq_class(static_cast<long>(rng() % 2001) - 1000, 1L << (rng() % 20)); break;
    case 4: q = static_cast<long>(rng() % 3) - 1; break;
    default:
      if (non_dyadic) q = mpq_class(static_cast<long>(rng() % 21) - 10, 3 + 2 * static_cast<long>(rng() % 4));
  }
  q.canonicalize();
  return q;
}

KsLayer layer(const std::vector<QRow>& W, const QRow& b) {
  KsLayer L;
  L.out = W.size();
  L.in = W.empty() ? 0 : W[0].size();
  L.rows.resize(L.out);
  L.bias = b;
  L.dbias.resize(L.out);
  for (std::size_t i = 0; i < L.out; ++i) {
    if (!ks_dyadic(b[i], L.dbias[i])) L.dyadic = false;
    for (std::size_t j = 0; j < L.in; ++j)
      if (sgn(W[i][j]) != 0) {
        KsTerm t{j, W[i][j], {}};
        if (!ks_dyadic(W[i][j], t.dw)) L.dyadic = false;
        L.rows[i].push_back(std::move(t));
      }
  }
  return L;
}
}  // namespace

TEST_CASE("ks: machine-integer evaluation equals the GMP evaluation (random, near-overflow, non-dyadic)",
          "[checker][ks]") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 400; ++trial) {
    const bool non_dyadic = trial % 4 == 3, small = trial % 2 == 0;
    auto draw = [&]() -> mpq_class {
      if (!small) return edge(rng, non_dyadic);
      if (rng() % 3 == 0) return 0;
      mpq_class q(static_cast<long>(rng() % 65) - 32, 1L << (rng() % 6));
      q.canonicalize();
      return q;
    };
    KsNet net;
    const std::size_t in = 1 + rng() % 4;
    std::size_t cur = in;
    for (std::size_t l = 0, depth = 1 + rng() % 7; l < depth; ++l) {
      const std::size_t out = 1 + rng() % 5;
      std::vector<QRow> W(out, QRow(cur));
      QRow b(out);
      for (std::size_t i = 0; i < out; ++i) {
        for (auto& w : W[i]) w = draw();
        b[i] = draw();
      }
      net.layers.push_back(layer(W, b));
      cur = out;
    }
    for (int p = 0; p < 5; ++p) {
      QRow x(in);
      for (auto& v : x) {
        v = small ? mpq_class(static_cast<long>(rng() % 101) - 50, 1L << (rng() % 4)) : edge(rng, non_dyadic);
        v.canonicalize();
      }
      REQUIRE(ks_eval(net, x) == ks_eval_rational(net, x));
    }
  }
  // 2^63-1 times itself three times plus -2^63: past 128 bits at the last term; a 2^-40 input shifts all.
  KsNet net;
  const mpq_class big(mpz_class("9223372036854775807"));
  net.layers.push_back(layer({QRow(3, big)}, {mpq_class(mpz_class("-9223372036854775808"))}));
  const QRow x{big, big, mpq_class(1, 1L << 40)};
  CHECK(ks_eval(net, x) == ks_eval_rational(net, x));
  CHECK(ks_eval(net, x)[0] == big * big * 2 + big / mpq_class(1L << 40) - mpq_class(mpz_class("9223372036854775808")));
}

// ---- Shared evaluation (ks_eval_shared) against plain evaluation of every point -------------------------

namespace {
// Every point's ks_eval_shared value equals its ks_eval_rational value (GMP rationals, layer by layer)
// and its ks_eval_block value (the reference route); returns the route's statistics.
KsSharedStats agree(const KsNet& net, const std::vector<QRow>& xs, unsigned threads = 2) {
  std::vector<const QRow*> ptr;
  for (const auto& x : xs) ptr.push_back(&x);
  KsSharedStats st;
  const std::vector<QRow> got = ks_eval_shared(net, ptr, threads, &st);
  std::vector<QRow> ref;
  ks_eval_many(net, ptr, ref, 0, 1);
  REQUIRE(got.size() == xs.size());
  for (std::size_t p = 0; p < xs.size(); ++p) {
    const QRow want = ks_eval_rational(net, xs[p]);
    INFO("point " << p);
    REQUIRE(got[p] == want);
    REQUIRE(ref[p] == want);
  }
  return st;
}

// A network of one input t (the first layer's rows multiples of the vector g).
KsLayer first_layer(const QRow& g, const QRow& lambda, const QRow& b) {
  std::vector<QRow> W;
  for (const auto& l : lambda) {
    QRow r(g.size());
    for (std::size_t j = 0; j < g.size(); ++j) r[j] = l * g[j];
    W.push_back(r);
  }
  return layer(W, b);
}

// A bump on the single value c of t = x_0: relu(1 - relu(2 (t - c)) - relu(2 (c - t))) (1 at t = c, 0 at
// every t at least 1/2 away), carried with t itself.
void add_bump(KsNet& net, const mpq_class& c) {
  // in: (t, acc) -> (relu(2t - 2c), relu(2c - 2t), t, acc) -> (bump, t, acc + 0) -> ...
  const mpq_class two_c = 2 * c;
  net.layers.push_back(layer({{2, 0}, {-2, 0}, {1, 0}, {0, 1}}, {-two_c, two_c, 0, 0}));
  net.layers.push_back(layer({{-1, -1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}, {1, 0, 0}));
  // acc += 7 * bump (a value that differs for the one point at c).
  net.layers.push_back(layer({{0, 1, 0}, {7, 0, 1}}, {0, 0}));
}
}  // namespace

TEST_CASE("ks: shared evaluation equals plain evaluation on random networks of one direction", "[checker][ks]") {
  std::mt19937_64 rng(2024);
  std::size_t shared_runs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const bool edges = trial % 5 == 4, non_dyadic = trial % 11 == 10;
    auto draw = [&]() -> mpq_class {
      if (edges) return edge(rng, non_dyadic);
      if (rng() % 3 == 0) return 0;
      mpq_class q(static_cast<long>(rng() % 17) - 8, 1L << (rng() % 4));
      q.canonicalize();
      return q;
    };
    const std::size_t in = 1 + rng() % 3;
    QRow g(in);
    for (auto& v : g) v = mpq_class(static_cast<long>(rng() % 7) - 3, 1L << (rng() % 3));
    if (sgn(g[0]) == 0) g[0] = 1;
    for (auto& v : g) v.canonicalize();
    KsNet net;
    std::size_t cur = 1 + rng() % 4;
    {
      QRow lam(cur), b(cur);
      for (std::size_t i = 0; i < cur; ++i) {
        lam[i] = rng() % 4 == 0 ? mpq_class(0) : draw();
        b[i] = draw();
      }
      net.layers.push_back(first_layer(g, lam, b));
    }
    for (std::size_t l = 0, depth = rng() % 8; l < depth; ++l) {
      const std::size_t out = 1 + rng() % 4;
      std::vector<QRow> W(out, QRow(cur));
      QRow b(out);
      for (std::size_t i = 0; i < out; ++i) {
        for (auto& w : W[i]) w = rng() % 2 ? mpq_class(0) : draw();
        if (rng() % 4 == 0) { std::fill(W[i].begin(), W[i].end(), mpq_class(0)); W[i][rng() % cur] = 1; }
        b[i] = rng() % 3 ? mpq_class(0) : draw();
      }
      net.layers.push_back(layer(W, b));
      cur = out;
    }
    // Points: small dyadics with repeats, and points on the first layer's kinks (g . x = -b_i / lambda_i).
    std::vector<QRow> xs;
    for (std::size_t p = 0, count = 1 + rng() % 40; p < count; ++p) {
      QRow x(in);
      for (auto& v : x) {
        v = mpq_class(static_cast<long>(rng() % 41) - 20, 1L << (rng() % 3));
        v.canonicalize();
      }
      xs.push_back(x);
      if (rng() % 4 == 0) xs.push_back(xs[rng() % xs.size()]);
    }
    for (std::size_t i = 0; i < net.layers[0].out; ++i) {
      const auto& row = net.layers[0].rows[i];
      if (row.empty()) continue;
      const mpq_class lam = row[0].w / g[row[0].col];
      QRow x(in, mpq_class(0));
      x[0] = -net.layers[0].bias[i] / lam / g[0];  // g . x = -b_i / lambda_i: exactly on the kink
      xs.push_back(x);
    }
    const KsSharedStats st = agree(net, xs, 1 + trial % 2);
    if (st.shared) ++shared_runs;
    if (!non_dyadic && !edges) CHECK(st.shared);
  }
  CHECK(shared_runs > 200);
}

TEST_CASE("ks: shared evaluation on adversarial networks (one point differs, kinks, huge numbers, fragmenting)",
          "[checker][ks]") {
  // Points t = 0, 1, ..., 99 (as x_0) and t = 1/2: a bump at every third point, each changing the output
  // for that point only; the sharing must keep every point's own value.
  std::vector<QRow> xs;
  for (long t = 0; t < 100; ++t) xs.push_back({mpq_class(t)});
  xs.push_back({mpq_class(1, 2)});
  KsNet bumps;
  bumps.layers.push_back(layer({{1}, {0}}, {0, 0}));  // (t, acc = 0)
  for (long c = 0; c < 100; c += 3) add_bump(bumps, c);
  bumps.layers.push_back(layer({{0, 1}}, {0}));  // the output: acc
  KsSharedStats st = agree(bumps, xs);
  CHECK(st.shared);
  CHECK(st.pointwise_from == bumps.layers.size());
  {
    std::vector<const QRow*> ptr;
    for (const auto& x : xs) ptr.push_back(&x);
    const auto got = ks_eval_shared(bumps, ptr, 1);
    CHECK(got[3][0] == 7);   // t = 3: its own bump
    CHECK(got[4][0] == 0);   // t = 4: none
    CHECK(got[100][0] == 0); // t = 1/2: relu(1 - 1 - 0) = 0, on the kink of both neighbours' bumps
  }

  // A neuron that differs for one point only, by 2^-300, behind a huge weight: GMP values throughout.
  KsNet huge;
  const mpq_class tiny(mpz_class(1), mpz_class(1) << 300), bigw(mpz_class(1) << 200);
  huge.layers.push_back(layer({{1}, {1}}, {0, -mpq_class(57)}));   // (t, t - 57)
  huge.layers.push_back(layer({{bigw, 0}, {0, tiny}, {1, -1}}, {tiny, 0, 0}));
  huge.layers.push_back(layer({{1, bigw, 1}}, {-bigw}));
  st = agree(huge, xs);
  CHECK(st.shared);

  // Fragmenting: Telgarsky's sawtooth doubles the pieces every two layers on t in [0, 1] at 257 points;
  // the route must hand over to point-by-point evaluation and still agree.
  std::vector<QRow> unit;
  for (long i = 0; i <= 256; ++i) unit.push_back({mpq_class(i, 256)});
  KsNet saw;
  saw.layers.push_back(layer({{1}}, {0}));
  for (int k = 0; k < 10; ++k) {  // three copies of the tent map's two halves, one copy read on
    saw.layers.push_back(layer({{2}, {4}, {2}, {4}, {2}, {4}}, {0, -2, 0, -2, 0, -2}));
    saw.layers.push_back(layer({{1, -1, 0, 0, 0, 0}}, {0}));
  }
  saw.layers.push_back(layer({{1}}, {0}));
  st = agree(saw, unit);
  CHECK(st.shared);
  CHECK(st.pointwise_from < saw.layers.size());

  // A non-dyadic layer in the middle: shared before it, point by point from it on.
  KsNet thirds = bumps;  // layers 4-6: the bump at t = 3, made to read t / 3
  thirds.layers.insert(thirds.layers.begin() + 4, layer({{mpq_class(1, 3), 0}, {0, 1}}, {0, 0}));
  thirds.layers[5] = layer({{6, 0}, {-6, 0}, {3, 0}, {0, 1}}, {-6, 6, 0, 0});
  st = agree(thirds, xs);
  CHECK(st.shared);
  CHECK(st.pointwise_from == 4);

  // A first layer of two directions: not shared, and equal.
  KsNet two;
  two.layers.push_back(layer({{1, 0}, {0, 1}}, {0, 0}));
  two.layers.push_back(layer({{1, -1}}, {0}));
  std::vector<QRow> pts{{1, 2}, {2, 1}, {3, 3}, {0, 5}};
  st = agree(two, pts);
  CHECK(!st.shared);
  CHECK(st.pointwise_from == 0);

  // Two points with equal t but different x share everything: the network cannot tell them apart.
  KsNet proj;
  proj.layers.push_back(first_layer({1, 2}, {1, -1}, {0, 3}));
  proj.layers.push_back(layer({{1, 1}}, {-1}));
  std::vector<QRow> same_t{{2, 0}, {0, 1}, {4, -1}, {1, 1}};
  st = agree(proj, same_t);
  CHECK(st.shared);
  CHECK(st.points == 2);
}

TEST_CASE("ks: shared evaluation cut into ranges of points equals plain evaluation, at the cuts too", "[checker][ks]") {
  // Points t = 0 .. 299 and t = c + 1/2 for a few c; a bump at every third integer (its own value 7 at t = c,
  // 0 elsewhere). With 2 threads and ranges of at least 75 points the 309 sorted points are cut into 4
  // ranges; cuts at other places for other thread counts and range sizes. Every point's value must be
  // its plain value, in particular on both sides of every cut (a cut through a bump's support or on its kink).
  std::vector<QRow> xs;
  for (long t = 0; t < 300; ++t) xs.push_back({mpq_class(t)});
  for (long c : {0L, 74L, 75L, 76L, 149L, 150L, 224L, 225L, 299L}) xs.push_back({mpq_class(2 * c + 1, 2)});
  KsNet bumps;
  bumps.layers.push_back(layer({{1}, {0}}, {0, 0}));
  for (long c = 0; c < 300; c += 3) add_bump(bumps, c);
  bumps.layers.push_back(layer({{0, 1}}, {0}));
  std::vector<const QRow*> ptr;
  for (const auto& x : xs) ptr.push_back(&x);
  std::vector<QRow> want;
  for (const auto& x : xs) want.push_back(ks_eval_rational(bumps, x));
  for (long c = 0; c < 300; ++c) REQUIRE(want[c][0] == (c % 3 == 0 ? 7 : 0));
  const std::pair<unsigned, std::size_t> splits[] = {{1, 1}, {2, 75}, {2, 1}, {3, 50}, {5, 1}, {8, 13}};
  for (const auto& [threads, min_range] : splits) {
    INFO("threads " << threads << ", ranges of at least " << min_range);
    KsSharedStats st;
    const std::vector<QRow> got = ks_eval_shared(bumps, ptr, threads, &st, min_range);
    CHECK(st.shared);
    CHECK(st.points == xs.size());
    CHECK(st.pointwise_from == bumps.layers.size());
    REQUIRE(got.size() == xs.size());
    for (std::size_t p = 0; p < xs.size(); ++p) {
      INFO("point " << p);
      REQUIRE(got[p] == want[p]);
    }
  }
  // The 4 ranges of 2 threads at 75 points: the 309 sorted points are cut before sorted points 77, 154 and
  // 231, which are t = 75, 150 and 225, bump centres: each the first point of a range, with its own value,
  // and its neighbours (t - 1/2, t + 1/2 on the kinks) theirs.
  const std::vector<QRow> got = ks_eval_shared(bumps, ptr, 2, nullptr, 75);
  for (std::size_t c : {75u, 150u, 225u}) {
    CHECK(got[c][0] == 7);
    CHECK(got[c - 1][0] == 0);
    CHECK(got[c + 1][0] == 0);
  }

  // Fragmenting in some ranges only: Telgarsky's sawtooth on [0, 1] at 257 points next to 400 far points
  // where it is flat; the ranges that fragment go point by point, the others stay shared, all agree.
  std::vector<QRow> mixed;
  for (long i = 0; i <= 256; ++i) mixed.push_back({mpq_class(i, 256)});
  for (long i = 0; i < 400; ++i) mixed.push_back({mpq_class(-10 - i)});
  KsNet saw;
  saw.layers.push_back(layer({{1}}, {0}));
  for (int k = 0; k < 10; ++k) {
    saw.layers.push_back(layer({{2}, {4}, {2}, {4}, {2}, {4}}, {0, -2, 0, -2, 0, -2}));
    saw.layers.push_back(layer({{1, -1, 0, 0, 0, 0}}, {0}));
  }
  saw.layers.push_back(layer({{1}}, {0}));
  std::vector<const QRow*> mp;
  for (const auto& x : mixed) mp.push_back(&x);
  KsSharedStats st;
  const std::vector<QRow> g2 = ks_eval_shared(saw, mp, 2, &st, 100);
  CHECK(st.pointwise_from < saw.layers.size());
  for (std::size_t p = 0; p < mixed.size(); ++p) REQUIRE(g2[p] == ks_eval_rational(saw, mixed[p]));
}

TEST_CASE("ks: shared evaluation with values past 64 bits equals plain evaluation (every sign, size and shift)",
          "[checker][ks]") {
  // Networks of one direction whose weights, biases and slopes are drawn from the 64/128-bit edges (all
  // dyadic, so the pieces route runs throughout): every product of a GMP value by a machine weight of
  // either sign (-2^63 included), with and without a shift to the common exponent, GMP by GMP, machine by
  // machine next to a GMP bias; and layers whose inputs are constant on some pieces and not on others.
  std::mt19937_64 rng(4099);
  auto dyadic_edge = [&]() { return edge(rng, false); };  // dyadic: no odd denominator drawn
  for (int trial = 0; trial < 250; ++trial) {
    KsNet net;
    std::size_t cur = 2 + rng() % 3;
    {
      QRow lam(cur), b(cur);
      for (std::size_t i = 0; i < cur; ++i) {
        lam[i] = rng() % 3 == 0 ? mpq_class(0) : rng() % 2 ? dyadic_edge() : mpq_class(static_cast<long>(rng() % 5) - 2);
        b[i] = dyadic_edge();
      }
      net.layers.push_back(first_layer({1}, lam, b));
    }
    for (std::size_t l = 0, depth = 1 + rng() % 5; l < depth; ++l) {
      const std::size_t out = 1 + rng() % 4;
      std::vector<QRow> W(out, QRow(cur));
      QRow b(out);
      for (std::size_t i = 0; i < out; ++i) {
        for (auto& w : W[i]) w = rng() % 3 == 0 ? mpq_class(0) : dyadic_edge();
        b[i] = rng() % 2 ? mpq_class(0) : dyadic_edge();
      }
      net.layers.push_back(layer(W, b));
      cur = out;
    }
    std::vector<QRow> xs;
    for (long p = 0, count = 2 + static_cast<long>(rng() % 30); p < count; ++p) {
      mpq_class t(static_cast<long>(rng() % 201) - 100, 1L << (rng() % 5));
      t.canonicalize();
      xs.push_back({t});
    }
    const KsSharedStats st = agree(net, xs, 1 + trial % 2);
    CHECK(st.shared);
    CHECK(st.pointwise_from == net.layers.size());  // pieces all the way
  }
}

// ---- delta2 (ks_min_sq_distance) against every pair in GMP rationals -----------------------------------

namespace {
mpq_class brute_min_sq(const std::vector<QRow>& rows) {
  mpq_class m = -1;
  for (std::size_t a = 0; a < rows.size(); ++a)
    for (std::size_t b = a + 1; b < rows.size(); ++b) {
      mpq_class s = 0;
      for (std::size_t j = 0; j < rows[a].size(); ++j) s += (rows[a][j] - rows[b][j]) * (rows[a][j] - rows[b][j]);
      if (m < 0 || s < m) m = s;
    }
  return m;
}
}  // namespace

TEST_CASE("ks: delta2 in machine integers equals every pair in rationals (random, mixed denominators, overflow)",
          "[checker][ks]") {
  std::mt19937_64 rng(20261128);
  const mpz_class two62 = mpz_class(1) << 62;
  for (int round = 0; round < 300; ++round) {
    const std::size_t V = 2 + rng() % 12, d = 1 + rng() % 6;
    const int mode = round % 6;
    std::vector<QRow> rows(V, QRow(d));
    for (auto& r : rows)
      for (auto& x : r) {
        switch (mode) {
          case 0: x = mpq_class(static_cast<long>(rng() % 9) - 4, 2); break;  // halves, repeats likely
          case 1: x = mpq_class(static_cast<long>(rng() % 2001) - 1000, std::vector<long>{1, 3, 7, 1L << 40}[rng() % 4]); break;
          case 2: x = mpq_class(two62 - 1 - mpz_class(static_cast<unsigned long>(rng() % 3))) * (rng() % 2 ? 1 : -1); break;
          case 3: x = mpq_class(two62 - 2 + mpz_class(static_cast<unsigned long>(rng() % 4))); break;  // 2^62 - 2 .. 2^62 + 1
          case 4: x = mpq_class(static_cast<long>(rng() % 5), 1L + static_cast<long>(rng() % 1000003)); break;
          default: x = edge(rng, true);
        }
        x.canonicalize();
      }
    if (mode == 0 && rng() % 3 == 0) rows.back() = rows.front();  // a repeated row: delta2 = 0
    const mpq_class want = brute_min_sq(rows);
    bool past62 = false;  // an integer entry of magnitude >= 2^62
    for (const auto& r : rows)
      for (const auto& x : r) past62 = past62 || abs(x) >= mpq_class(two62);
    for (unsigned threads : {1u, 3u}) {
      CAPTURE(round, mode, V, d, threads);
      bool integers = false;
      REQUIRE(ks_min_sq_distance(rows, d, threads, &integers) == want);
      REQUIRE(ks_min_sq_distance_rational(rows, d, threads) == want);
      if (mode == 0 || mode == 1) REQUIRE(integers);  // small numbers, small denominators: machine integers
      if (mode == 3 && past62) REQUIRE_FALSE(integers);  // some |X| >= 2^62: rationals
    }
  }
  // The 128-bit sums at their bound: differences 2^63 - 2 squared are just below 2^126; four of them sum
  // to (2^64 - 4)^2, just below 2^128 (integers), five pass it (rationals); both give the exact minimum.
  const mpq_class top(mpz_class(1) << 62);
  for (std::size_t d : {2u, 4u, 5u}) {
    std::vector<QRow> rows{QRow(d, top - 1), QRow(d, 1 - top), QRow(d, top - 2)};
    bool integers = true;
    REQUIRE(ks_min_sq_distance(rows, d, 2, &integers) == brute_min_sq(rows));
    CHECK(integers == (d <= 4));
    rows.pop_back();  // only the far pair: every sum is the largest one
    REQUIRE(ks_min_sq_distance(rows, d, 1, &integers) == brute_min_sq(rows));
    CHECK(integers == (d <= 4));
  }
  // Common denominator past 4096 bits (distinct primes): the rational route, the same number.
  std::vector<QRow> big;
  mpz_class p = 1000003;
  for (int i = 0; i < 300; ++i) {
    mpz_nextprime(p.get_mpz_t(), p.get_mpz_t());
    big.push_back(QRow{mpq_class(mpz_class(i % 7), p), mpq_class(i % 5)});
    big.back()[0].canonicalize();
  }
  CHECK(ks_min_sq_distance(big, 2, 2) == brute_min_sq(big));
}

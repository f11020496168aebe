// ReluNetSparse::eval_all_shared (work shared between points) against plain layer-by-layer evaluation:
// relunet_eval (dense GMP rationals) and eval_all (the point-by-point route), on random networks with
// repeated points, points on ReLU kinks and numbers past the machine route, and on Lemma C.1 networks
// with points exactly on the trapezoid and window edges and labels of hundreds of bits. Fixed seeds.
#include "catch.hpp"

#include <algorithm>
#include <random>

#include "memcert/theory/ks25/lemmas.hpp"

using namespace memcert;
using namespace memcert::ks25;

namespace {

Rational pow2q(long e) {
  Rational r = 1;
  if (e >= 0) mpz_mul_2exp(r.get_num_mpz_t(), r.get_num_mpz_t(), static_cast<mp_bitcnt_t>(e));
  else mpz_mul_2exp(r.get_den_mpz_t(), r.get_den_mpz_t(), static_cast<mp_bitcnt_t>(-e));
  return r;
}

// Small dyadics most of the time; now and then a number past 64 bits, a tiny exponent or (non_dyadic)
// a third.
Rational draw(std::mt19937_64& rng, int wild, bool non_dyadic) {
  const unsigned r = static_cast<unsigned>(rng() % 100);
  if (r < 30) return Rational(0);
  if (r < 80 || wild == 0) {
    Rational q(static_cast<long>(rng() % 17) - 8, 1L << (rng() % 3));
    q.canonicalize();
    return q;
  }
  if (r < 88) return Rational(static_cast<long>(rng() % 5) - 2) * pow2q(static_cast<long>(rng() % 140));
  if (r < 94) return Rational(static_cast<long>(rng() % 7) - 3) * pow2q(-static_cast<long>(rng() % 90));
  if (r < 97 && non_dyadic) return Rational(static_cast<long>(rng() % 9) - 4, 3);
  return Rational(Integer("9223372036854775807")) * (rng() % 2 ? 1 : -1);
}

void compare_all(const ReluNet& net, const std::vector<QVector>& xs, ReluNetSparse::SharedStats* st = nullptr) {
  ReluNetSparse sp(net);
  const std::vector<QVector> one = sp.eval_all_shared(xs, 1, st);
  const std::vector<QVector> two = sp.eval_all_shared(xs, 2);
  const std::vector<QVector> ref = sp.eval_all(xs, 1);
  REQUIRE(one.size() == xs.size());
  for (std::size_t p = 0; p < xs.size(); ++p) {
    INFO("point " << p);
    REQUIRE(one[p] == ref[p]);
    REQUIRE(two[p] == ref[p]);
    if (p % 7 == 0) REQUIRE(ref[p] == relunet_eval(net, xs[p]));
  }
}

}  // namespace

TEST_CASE("eval_all_shared equals layer-by-layer evaluation on random networks (repeats, kinks, big numbers)",
          "[ks25][shared]") {
  std::mt19937_64 rng(20261127);
  for (int trial = 0; trial < 300; ++trial) {
    const int wild = trial % 3;  // 0: small dyadics only; 1, 2: with numbers past the machine route
    const bool non_dyadic = trial % 10 == 9;
    ReluNet net;
    net.in_dim = 1 + rng() % 3;
    std::size_t cur = net.in_dim;
    const std::size_t depth = 1 + rng() % 9;
    // Inputs: a few distinct points, each repeated, so classes hold several points.
    std::vector<QVector> base;
    const std::size_t distinct = 1 + rng() % 12;
    for (std::size_t i = 0; i < distinct; ++i) {
      QVector x(net.in_dim);
      for (auto& v : x) v = draw(rng, wild, non_dyadic && rng() % 4 == 0);
      base.push_back(x);
    }
    for (std::size_t l = 0; l < depth; ++l) {
      const std::size_t out = 1 + rng() % 5;
      ReluLayer L{QMatrix(out, cur, Rational(0)), QVector(out, Rational(0))};
      for (std::size_t i = 0; i < out; ++i) {
        for (std::size_t j = 0; j < cur; ++j) L.W(i, j) = draw(rng, wild, non_dyadic && rng() % 8 == 0);
        L.b[i] = draw(rng, wild, false);
      }
      if (l == 0)  // rows whose pre-activation is exactly 0 at a chosen input (a ReLU kink)
        for (std::size_t i = 0; i < out; i += 2) {
          const QVector& x0 = base[rng() % base.size()];
          Rational s = 0;
          for (std::size_t j = 0; j < cur; ++j) s += L.W(i, j) * x0[j];
          L.b[i] = -s;
        }
      net.layers.push_back(std::move(L));
      cur = out;
    }
    std::vector<QVector> xs;
    const std::size_t N = 1 + rng() % 40;
    for (std::size_t p = 0; p < N; ++p) xs.push_back(base[rng() % base.size()]);
    compare_all(net, xs);
  }
}

TEST_CASE("eval_all_shared: a per-point sum past 2^125 and values that need GMP only on some points",
          "[ks25][shared]") {
  // h = ReLU(x0 * 2^62 + x1 * 2^62 + ...) with x near 2^63: the unchecked bound fails, the checked route
  // and GMP take over for the points that overflow; the others stay machine integers.
  ReluNet net;
  net.in_dim = 3;
  const Rational big = pow2q(62);
  net.layers.push_back({QMatrix(2, 3, big), QVector{Rational(0), Rational(-1)}});
  net.layers.push_back({QMatrix(2, 2, Rational(1)), QVector{Rational(1), pow2q(-70)}});
  net.layers.push_back({QMatrix(1, 2, Rational(-1, 2)), QVector{Rational(3)}});
  std::vector<QVector> xs;
  const Rational m63(Integer("9223372036854775807"));
  for (int i = 0; i < 40; ++i) {
    const long s = i % 5 - 2;
    xs.push_back({i % 3 == 0 ? m63 : Rational(s), Rational(s, 4), i % 4 == 0 ? -m63 : Rational(i % 2)});
  }
  compare_all(net, xs);
}

TEST_CASE("eval_all_shared equals eval_all on Lemma C.1 networks with points on every edge", "[ks25][shared]") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 6; ++trial) {
    // 1-d labeled points with gaps >= 2 (stage-I direction 1), labels of up to 300 bits in some trials.
    const std::size_t N = 20 + rng() % 60;
    std::vector<QVector> pts;
    std::vector<Integer> labels;
    long at = static_cast<long>(rng() % 5);
    for (std::size_t i = 0; i < N; ++i) {
      at += 2 + static_cast<long>(rng() % 4);
      pts.push_back({Rational(at)});
      Integer lab = static_cast<long>(rng() % 10);
      if (trial % 2 == 1 && rng() % 3 == 0) lab += Integer(1) << static_cast<mp_bitcnt_t>(100 + rng() % 200);
      labels.push_back(lab);
    }
    const QVector dir{Rational(1)};
    C1Info info;
    ReluNet net = lemmaC1_network(pts, labels, 5 + trial, &info, &dir);
    const TokenProjection& P = info.stage1;
    // Stage-I values of the labeled points, sorted; the groups of k; edges of trapezoids and windows.
    std::vector<Rational> xl;
    for (std::size_t i = 0; i < N; ++i)
      if (sgn(labels[i]) != 0) xl.push_back(P.values[i]);
    std::sort(xl.begin(), xl.end());
    std::vector<Rational> probes;  // stage-I values x to probe
    auto floor_q = [](const Rational& q) {
      Integer f;
      mpz_fdiv_q(f.get_mpz_t(), q.get_num_mpz_t(), q.get_den_mpz_t());
      return Rational(f);
    };
    for (std::size_t j = 0; j * info.k < xl.size(); ++j) {
      const Rational a = floor_q(xl[j * info.k]);
      const Rational b = floor_q(xl[std::min(xl.size(), j * info.k + info.k) - 1] + 1);
      for (const Rational& e : std::vector<Rational>{a - Rational(1, 2), a - Rational(1, 4), a, b, b + Rational(1, 4),
                                                    b + Rational(1, 2)})
        probes.push_back(e);
    }
    for (const Rational& x : xl) {
      const Rational y = floor_q(x);
      for (const Rational& e : std::vector<Rational>{y - Rational(1, 2), y - Rational(1, 8), y, y + Rational(1, 2),
                                                    Rational(y + 1), y + Rational(9, 8), y + Rational(3, 2),
                                                    y + Rational(2)})
        probes.push_back(e);
    }
    // Inputs: every training point (twice), and every probe mapped back through x = alpha p + beta.
    std::vector<QVector> xs = pts;
    xs.insert(xs.end(), pts.begin(), pts.end());
    for (const Rational& x : probes) xs.push_back({(x - P.beta) / (P.alpha * P.u[0])});
    std::shuffle(xs.begin(), xs.end(), rng);
    ReluNetSparse::SharedStats st;
    compare_all(net, xs, &st);
    // The labels are memorized (an independent fact of the construction, checked on the shared route).
    ReluNetSparse sp(net);
    const auto got = sp.eval_all_shared(pts, 2);
    for (std::size_t i = 0; i < N; ++i) CHECK(got[i][0] == Rational(labels[i]));
    // Sharing happened: fewer per-point row evaluations than points times rows.
    std::size_t rows = 0;
    for (const auto& L : net.layers) rows += L.W.rows();
    CHECK(st.point_rows < xs.size() * rows);
  }
}

TEST_CASE("eval_all_shared: a packed lookup over many points sharing few (u, w) values", "[ks25][shared]") {
  // Inputs (x, w, u) of Lemma G.6 with 1,000-bit u and w: every point of a group reads the same u and w,
  // so the bit streams are evaluated once per group, not once per point.
  const std::size_t B = 100, fields = 10;
  std::mt19937_64 rng(9);
  NetBuilder nb(3);
  Lin x = nb.input(0);
  Lin out = lemmaG6_packed_lookup(nb, x, nb.input(1), nb.input(2), fields, B);
  ReluNet net = nb.finish({out});
  std::vector<QVector> xs;
  for (int g = 0; g < 4; ++g) {
    Integer u = 0, w = 0;
    std::vector<Integer> fl;
    for (std::size_t i = 0; i < fields; ++i) {
      Integer f = Integer(static_cast<unsigned long>(rng() % 1000 + 3)) << 80;
      f += static_cast<unsigned long>(rng() % 1000);
      u = (u << B) + f;
      w = (w << B) + Integer(static_cast<unsigned long>(rng()));
      fl.push_back(f);
    }
    for (const Integer& f : fl)
      for (const Rational& dx : std::vector<Rational>{Rational(-1, 2), Rational(0), Rational(1, 3), Rational(1), Rational(3, 2)})
        xs.push_back({Rational(f) + dx, Rational(w), Rational(u)});
  }
  ReluNetSparse::SharedStats st;
  compare_all(net, xs, &st);
  CHECK(st.class_rows < xs.size() * net.layers.size());
}

TEST_CASE("eval_all_shared: per-point values of 63 to 125 bits stay in one class, exactly", "[ks25][shared]") {
  // x with 16 fractional bits and up to 63 bits of mantissa (the stage-I projection at N ~ 200,000), then
  // 2 (a - x), 2 (x - b) - 2, sums that grow to ~125 bits and products past 2^127 (the checked route and
  // GMP take those points), and a common value of 100 bits added to per-point ones. Every value must
  // equal the dense rational evaluation; values that fit 125 bits must not split the class.
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 40; ++trial) {
    const long frac = 16 + static_cast<long>(rng() % 4);
    const int top = 58 + static_cast<int>(rng() % 6);  // bits of the largest mantissa
    std::vector<QVector> xs;
    const std::size_t N = 50 + rng() % 200;
    for (std::size_t p = 0; p < N; ++p) {
      Integer m = Integer(static_cast<unsigned long>(rng() >> (64 - top + 1))) + (Integer(1) << static_cast<mp_bitcnt_t>(top - 1));
      Rational x = Rational(m) * pow2q(-frac);
      xs.push_back({x, Rational(static_cast<long>(p % 3))});
    }
    ReluNet net;
    net.in_dim = 2;
    const Rational a = Rational(Integer(1) << static_cast<mp_bitcnt_t>(top - frac - 1)), b = a * 2;
    // L0: h1 = ReLU(2a - 2x), h2 = ReLU(2x - 2b), x carried, x * 2^40 (~105 bits), x * 2^60 * (1 + y)
    ReluLayer L0{QMatrix(5, 2, Rational(0)), QVector(5, Rational(0))};
    L0.W(0, 0) = -2, L0.b[0] = 2 * a;
    L0.W(1, 0) = 2, L0.b[1] = -2 * b;
    L0.W(2, 0) = 1;
    L0.W(3, 0) = pow2q(40);
    L0.W(4, 0) = pow2q(60), L0.W(4, 1) = pow2q(70);
    // L1: 1 - h1 - h2 (the trapezoid), x 2^40 + 2^100 (a common 101-bit part), x 2^60 - x 2^40 2^30
    // (products past 2^125 on some points), and x * 3 + h1 * 2^66.
    ReluLayer L1{QMatrix(4, 5, Rational(0)), QVector(4, Rational(0))};
    L1.W(0, 0) = -1, L1.W(0, 1) = -1, L1.b[0] = 1;
    L1.W(1, 3) = 1, L1.b[1] = pow2q(100) + 3;
    L1.W(2, 4) = pow2q(1), L1.W(2, 3) = -pow2q(30);
    L1.W(3, 2) = 3, L1.W(3, 0) = pow2q(66);
    // L2 (affine): a mix that cancels the large parts again.
    ReluLayer L2{QMatrix(2, 4, Rational(0)), QVector(2, Rational(0))};
    L2.W(0, 0) = 7, L2.W(0, 1) = 1, L2.W(0, 3) = -1, L2.b[0] = -pow2q(100);
    L2.W(1, 2) = Rational(1, 4), L2.W(1, 1) = -pow2q(60);
    net.layers = {L0, L1, L2};
    ReluNetSparse::SharedStats st;
    compare_all(net, xs, &st);
    for (std::size_t p = 0; p < xs.size(); p += 5) REQUIRE(ReluNetSparse(net).eval_rational(xs[p]) == relunet_eval(net, xs[p]));
    // The same inputs through the part whose every value fits 125 bits (x, the trapezoid, x 2^40 +
    // 2^100, 3 x + 2^50 h1): one class throughout, no point on GMP.
    ReluNet fit;
    fit.in_dim = 2;
    ReluLayer F0{QMatrix(4, 2, Rational(0)), QVector(4, Rational(0))};
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 2; ++j) F0.W(i, j) = L0.W(i, j);
      F0.b[i] = L0.b[i];
    }
    ReluLayer F1{QMatrix(3, 4, Rational(0)), QVector(3, Rational(0))};
    F1.W(0, 0) = -1, F1.W(0, 1) = -1, F1.b[0] = 1;
    F1.W(1, 3) = 1, F1.b[1] = pow2q(100) + 3;
    F1.W(2, 2) = 3, F1.W(2, 0) = pow2q(50);
    ReluLayer F2{QMatrix(1, 3, Rational(0)), QVector(1, Rational(0))};
    F2.W(0, 0) = 5, F2.W(0, 1) = -1, F2.W(0, 2) = pow2q(-3);
    fit.layers = {F0, F1, F2};
    ReluNetSparse::SharedStats sf;
    compare_all(fit, xs, &sf);
    CHECK(sf.classes == 1);
    CHECK(sf.exact_rows == 0);
  }
}

TEST_CASE("eval_all_shared: thousands of classes in batches across threads", "[ks25][shared]") {
  // A selection layer with a 200-bit weight per group splits 30,000 points into ~1,000 classes (more
  // than a batch holds, more points than a batch takes), then more layers; every value checked against
  // the point-by-point route, on 1 and 2 threads.
  ReluNet net;
  net.in_dim = 1;
  const std::size_t groups = 1000, per = 30;
  std::vector<QVector> xs;
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t q = 0; q < per; ++q) xs.push_back({Rational(static_cast<long>(4 * g + (q % 3)))});
  std::mt19937_64 rng(5);
  std::shuffle(xs.begin(), xs.end(), rng);
  // L0: ReLU(x - 4g) for g = 0, 8, 16, ... (kinks) and x.
  const std::size_t kinks = groups / 8;
  ReluLayer L0{QMatrix(kinks + 1, 1, Rational(0)), QVector(kinks + 1, Rational(0))};
  for (std::size_t i = 0; i < kinks; ++i) L0.W(i, 0) = 1, L0.b[i] = -Rational(static_cast<long>(32 * i));
  L0.W(kinks, 0) = 1;
  // L1: one 200-bit weighted sum of the kinks (a per-point value past the machine route: one class per
  // distinct value), x carried.
  ReluLayer L1{QMatrix(2, kinks + 1, Rational(0)), QVector(2, Rational(0))};
  for (std::size_t i = 0; i < kinks; ++i) L1.W(0, i) = pow2q(200) + Rational(static_cast<long>(i));
  L1.W(1, kinks) = 1;
  // L2..L5: mixes of the big common value and x.
  net.layers = {L0, L1};
  for (int l = 0; l < 4; ++l) {
    ReluLayer L{QMatrix(2, 2, Rational(0)), QVector(2, Rational(0))};
    L.W(0, 0) = Rational(1, 2), L.W(0, 1) = 3, L.b[0] = -pow2q(190);
    L.W(1, 1) = 2, L.W(1, 0) = pow2q(-200), L.b[1] = Rational(-static_cast<long>(l));
    net.layers.push_back(L);
  }
  ReluLayer Lout{QMatrix(1, 2, Rational(1)), QVector(1, Rational(0))};
  net.layers.push_back(Lout);
  ReluNetSparse::SharedStats st;
  compare_all(net, xs, &st);
  CHECK(st.classes > 2 * 64);
}

namespace {

// A random layer made of the rows the shared route treats specially: copies (bias 0, one weight 1,
// sometimes with terms that read columns that are 0 on a class), the same column copied by two rows,
// rows that a ReLU makes 0 on some or all points (a negative bias against the per-point values: the
// bounds decide some, others straddle 0 exactly at a point), and rows mixing 100-bit values with weights
// +-2^k, -2^63, odd weights and shifts (the GMP route).
ReluLayer special_layer(std::mt19937_64& rng, std::size_t in, std::size_t out, const std::vector<Rational>& reach) {
  ReluLayer L{QMatrix(out, in, Rational(0)), QVector(out, Rational(0))};
  for (std::size_t i = 0; i < out; ++i) {
    const std::size_t j = rng() % in;
    switch (rng() % 7) {
      case 0:  // a copy
        L.W(i, j) = 1;
        break;
      case 1:  // the same column as the row before (two copies of one column)
        L.W(i, i > 0 ? [&] {
          for (std::size_t c = 0; c < in; ++c)
            if (sgn(L.W(i - 1, c)) != 0) return c;
          return j;
        }() : j) = 1;
        break;
      case 2:  // a copy plus terms that are often 0 (ReLU outputs)
        L.W(i, j) = 1;
        L.W(i, (j + 1) % in) = Rational(static_cast<long>(rng() % 5) - 2);
        break;
      case 3: {  // c - x with c at, below or above the largest value this column reaches
        L.W(i, j) = rng() % 2 ? Rational(-1) : Rational(-3, 2);
        const Rational c = reach[j] * (rng() % 3 == 0 ? Rational(1) : Rational(static_cast<long>(rng() % 5), 4));
        L.b[i] = (rng() % 2 ? c : -c) + Rational(static_cast<long>(rng() % 3) - 1, 1L << (rng() % 4));
        break;
      }
      case 4: {  // x - c
        L.W(i, j) = Rational(static_cast<long>(rng() % 3) + 1, 1L << (rng() % 3));
        L.W(i, (j + 2) % in) = rng() % 2 ? Rational(0) : Rational(-1);
        L.b[i] = -reach[j] * Rational(static_cast<long>(rng() % 5), 4);
        break;
      }
      case 5: {  // GMP: 100-bit values, weights +-2^k, -2^63, odd
        L.W(i, j) = rng() % 3 == 0 ? -pow2q(63) : rng() % 2 ? pow2q(static_cast<long>(rng() % 9) - 4) : Rational(static_cast<long>(rng() % 9) - 4);
        L.W(i, (j + 1) % in) = rng() % 2 ? Rational(-1) : pow2q(-static_cast<long>(rng() % 70));
        L.b[i] = rng() % 2 ? Rational(0) : pow2q(100) * (rng() % 2 ? 1 : -1) + Rational(static_cast<long>(rng() % 7), 4);
        break;
      }
      default:  // dense small
        for (std::size_t c = 0; c < in; ++c) L.W(i, c) = Rational(static_cast<long>(rng() % 7) - 3, 1L << (rng() % 2));
        L.b[i] = Rational(static_cast<long>(rng() % 9) - 2);
    }
  }
  return L;
}

}  // namespace

TEST_CASE("eval_all_shared on networks of copies, ReLUs decided by bounds and GMP rows equals plain evaluation",
          "[ks25][shared][carry]") {
  // Every value compared with eval_all (point by point) and relunet_eval (dense rationals). The largest
  // trials have more points than one chunk holds (several chunks, ordered by the first layer's values).
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 160; ++trial) {
    ReluNet net;
    net.in_dim = 1 + rng() % 3;
    std::size_t cur = net.in_dim;
    std::vector<QVector> base;
    const std::size_t distinct = 1 + rng() % (trial % 8 == 7 ? 3000 : 30);
    for (std::size_t i = 0; i < distinct; ++i) {
      QVector x(net.in_dim);
      for (auto& v : x) {
        v = Rational(static_cast<long>(rng() % 41) - 10, 1L << (rng() % 3));
        if (rng() % 10 == 0) v += pow2q(static_cast<long>(60 + rng() % 70));
      }
      base.push_back(x);
    }
    std::vector<QVector> xs;
    const std::size_t N = trial % 8 == 7 ? 5000 + rng() % 4000 : 1 + rng() % 60;
    for (std::size_t p = 0; p < N; ++p) xs.push_back(base[rng() % base.size()]);
    const std::size_t depth = 2 + rng() % 8;
    std::vector<QVector> h = xs;
    for (std::size_t l = 0; l < depth; ++l) {
      std::vector<Rational> reach(cur, Rational(1));
      for (const auto& v : h)
        for (std::size_t j = 0; j < cur; ++j) reach[j] = std::max(reach[j], Rational(abs(v[j])));
      const std::size_t out = 1 + rng() % 6;
      ReluLayer L = special_layer(rng, cur, out, reach);
      net.layers.push_back(L);
      cur = out;
      // values after this layer (ReLU on all; the last layer's ReLU is dropped by the network anyway)
      for (auto& v : h) {
        QVector o(out);
        for (std::size_t i = 0; i < out; ++i) {
          Rational s = L.b[i];
          for (std::size_t j = 0; j < L.W.cols(); ++j) s += L.W(i, j) * v[j];
          o[i] = sgn(s) < 0 ? Rational(0) : s;
        }
        v = std::move(o);
      }
    }
    INFO("trial " << trial);
    ReluNetSparse::SharedStats st;
    compare_all(net, xs, &st);
  }
}

TEST_CASE("eval_all_shared: a ReLU whose bound is exactly 0, and bounds that are not tight", "[ks25][shared][bounds]") {
  // x takes the values 1..40 / 4 on one class. ReLU(c - x) is 0 everywhere exactly when c <= 1/4 (the
  // bound c - 1/4 <= 0); c = 1/4 + 2^-60 leaves one point at 2^-60. ReLU(x - y - c) with y = x (two
  // columns carrying the same values): the sum of the upper bounds (max x - min y) is not the maximum
  // (0), so the row goes point by point and must still give ReLU(-c) = 0 or -c exactly.
  for (const Rational& c : std::vector<Rational>{Rational(1, 4), Rational(1, 4) + pow2q(-60), Rational(0),
                                                 Rational(-1, 8), Rational(10)}) {
    ReluNet net;
    net.in_dim = 1;
    ReluLayer L0{QMatrix(2, 1, Rational(1)), QVector(2, Rational(0))};  // x, y = x (copies)
    ReluLayer L1{QMatrix(3, 2, Rational(0)), QVector(3, Rational(0))};
    L1.W(0, 0) = -1, L1.b[0] = c;                   // ReLU(c - x)
    L1.W(1, 0) = 1, L1.W(1, 1) = -1, L1.b[1] = -c;  // ReLU(x - y - c)
    L1.W(2, 1) = 1;                                 // y
    ReluLayer L2{QMatrix(1, 3, Rational(1)), QVector(1, Rational(0))};
    L2.W(0, 0) = pow2q(70);
    net.layers = {L0, L1, L2};
    std::vector<QVector> xs;
    for (long i = 40; i >= 1; --i) xs.push_back({Rational(i, 4)});
    xs.push_back({Rational(1, 4)});
    compare_all(net, xs);
  }
}

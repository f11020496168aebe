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

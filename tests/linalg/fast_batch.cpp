// Batched kernels: certified batch ranks against the exact rank, the sampled Kruskal test against the
// exact path, the bounded exp against MPFR, and the double Z enclosure against an MPFR/rational forward pass.
#include "catch.hpp"

#include <random>

#include "memcert/linalg/fast/batch.hpp"
#include "memcert/linalg/fast/dmod.hpp"
#include "memcert/linalg/qmat.hpp"
#include "memcert/numeric/interval.hpp"

using namespace memcert;

namespace {
QMatrix to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}
}  // namespace

TEST_CASE("dmat_batch_rank: certified ranks equal the exact ranks, deficient ones escalate", "[linalg][fast]") {
  std::mt19937_64 g(81);
  std::normal_distribution<double> nd;
  std::vector<DMatrix> mats;
  for (int i = 0; i < 12; ++i) {
    DMatrix m(6, 9);
    for (auto& x : m.data()) x = nd(g);
    if (i % 3 == 0)
      for (std::size_t j = 0; j < 9; ++j) m(5, j) = 2.0 * m(1, j);  // exactly dependent
    mats.push_back(m);
  }
  mats.emplace_back(0, 4);
  mats.push_back(DMatrix(3, 3, 0.0));
  auto r = dmat_batch_rank(mats);
  for (std::size_t i = 0; i < mats.size(); ++i) REQUIRE(r.rank[i] == qmat_rank(to_q(mats[i])));
  REQUIRE(r.escalated >= 4);
  fast_set_threads(1);
  auto r1 = dmat_batch_rank(mats);
  fast_set_threads(2);
  REQUIRE(r1.rank == r.rank);
}

TEST_CASE("dmat_kruskal_sample_fast: independent trials certified, dependent ones with exact coefficients",
          "[linalg][fast]") {
  std::mt19937_64 g(82);
  std::normal_distribution<double> nd;
  DMatrix v(40, 6);
  for (auto& x : v.data()) x = nd(g);
  for (std::size_t j = 0; j < 6; ++j) v(7, j) = v(3, j) * 0.5;  // a dependent pair
  auto s = dmat_kruskal_sample_fast(v, 2, 3000, 5);
  REQUIRE(s.trials == 3000);
  REQUIRE(s.independent + s.dependent == 3000);
  REQUIRE(s.dependent >= 1);
  QMatrix q = to_q(v);
  QVector comb(6, Rational(0));
  for (std::size_t i = 0; i < s.first_dependent_subset.size(); ++i)
    for (std::size_t j = 0; j < 6; ++j) comb[j] += s.first_dependent_coefficients[i] * q(s.first_dependent_subset[i], j);
  for (auto& c : comb) REQUIRE(c == 0);
  auto s2 = dmat_kruskal_sample_fast(v, 6, 200, 9);
  REQUIRE(s2.independent + s2.dependent == 200);
}

TEST_CASE("exp_nonpositive_bounded stays within its stated error (MPFR reference)", "[linalg][fast]") {
  std::mt19937_64 g(83);
  Interval::set_default_precision(200);
  for (int it = 0; it < 3000; ++it) {
    double x = -std::ldexp(static_cast<double>(g() % 1000000) / 1000000.0, static_cast<int>(g() % 14) - 4);
    if (it % 10 == 0) x = -static_cast<double>(g() % 740);
    if (it == 0) x = 0;
    const double y = exp_nonpositive_bounded(x);
    Interval ex = interval_exp(Interval(rational_from_double(x)));
    Rational err = rational_from_double(y) - ex.midpoint();
    if (err < 0) err = -err;
    Rational allowed = ex.upper() * rational_from_double(kExpRelErr) + rational_from_double(kExpAbsErr);
    REQUIRE(err + ex.radius() <= allowed);
  }
  REQUIRE(exp_nonpositive_bounded(0.0) == 1.0);
  Interval::set_default_precision(128);
}

TEST_CASE("mha_z_enclosure_double encloses the exact representation rows", "[linalg][fast]") {
  std::mt19937_64 g(84);
  std::normal_distribution<double> nd;
  const std::size_t T = 5, n = 4, d = 6, dh = 3, H = 2;
  std::vector<DMatrix> ctx(T, DMatrix(n, d));
  DMatrix q(T, d);
  for (auto& E : ctx)
    for (auto& x : E.data()) x = nd(g);
  for (auto& x : q.data()) x = nd(g);
  std::vector<DMatrix> wk(H, DMatrix(d, dh)), wq(H, DMatrix(d, dh));
  for (std::size_t h = 0; h < H; ++h) {
    for (auto& x : wk[h].data()) x = nd(g) * (h + 1);
    for (auto& x : wq[h].data()) x = nd(g);
  }
  auto z = mha_z_enclosure_double(ctx, q, wk, wq);
  Interval::set_default_precision(160);
  for (std::size_t t = 0; t < T; ++t) {
    QMatrix E = to_q(ctx[t]);
    QVector e(d);
    for (std::size_t l = 0; l < d; ++l) e[l] = rational_from_double(q(t, l));
    for (std::size_t h = 0; h < H; ++h) {
      QMatrix W = mat_mul(to_q(wk[h]), mat_transpose(to_q(wq[h])));
      QVector a = mat_vec(E, mat_vec(W, e));  // exact logits
      std::vector<Interval> ex(n);
      Interval sum;
      for (std::size_t j = 0; j < n; ++j) sum += ex[j] = interval_exp(Interval(a[j]));
      for (std::size_t i = 0; i < d; ++i) {
        Interval p;
        for (std::size_t j = 0; j < n; ++j) p += Interval(E(j, i)) * (ex[j] / sum);
        const Rational c = rational_from_double(z.centre(t, h * d + i)), r = rational_from_double(z.radius(t, h * d + i));
        REQUIRE(p.lower() >= c - r);
        REQUIRE(p.upper() <= c + r);
        REQUIRE(z.radius(t, h * d + i) < 1e-9);  // and tight
      }
    }
  }
  Interval::set_default_precision(128);
}

#include "../../src/linalg/fast/dmod_internal.hpp"
TEST_CASE("next_up / next_down match std::nextafter", "[linalg][fast]") {
  std::mt19937_64 g(85);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 1.0, -1.0, 0x1p-1022, -0x1p-1022,
                            std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), inf, -inf};
  for (int i = 0; i < 2000; ++i) xs.push_back(std::ldexp(static_cast<double>(g() % 1000003) - 500000.0, static_cast<int>(g() % 2000) - 1000));
  for (double x : xs) {
    REQUIRE(fast_detail::next_up(x) == std::nextafter(x, inf));
    REQUIRE(fast_detail::next_down(x) == std::nextafter(x, -inf));
  }
}

// Batched kernels of the attention models: certified batch ranks (Assumption 2) against the exact rank,
// and the double Z enclosure against an MPFR/rational forward pass.
#include "catch.hpp"

#include <random>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/model/mha_enclosure.hpp"
#include "memcert/numeric/interval.hpp"
#include "memcert/theory/mahdavi24/assumption2_batch.hpp"
#include "memcert/util/threads.hpp"

using namespace memcert;

namespace {
QMatrix to_q(const DMatrix& d) {
  return mat_map<Rational>(d, [](double x) { return rational_from_double(x); });
}
}  // namespace

TEST_CASE("dmat_batch_rank: certified ranks equal the exact ranks, deficient ones escalate", "[mahdavi24]") {
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

TEST_CASE("mha_z_enclosure_double encloses the exact representation rows", "[mahdavi24]") {
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

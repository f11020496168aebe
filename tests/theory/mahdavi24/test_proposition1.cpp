// Proposition 1's induction (proposition1_induction) called directly: the groups partition the examples
// as docs/THEORY.md section 4 says, each head reproduces its group's targets exactly, the returned Z blocks
// enclose an independent double forward pass, and each step's Z_c has exact rank k_h.
#include "catch.hpp"

#include <cmath>
#include <random>

#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/theory/mahdavi24/proposition1.hpp"

using namespace memcert;
using namespace memcert::mahdavi24;

namespace {

// The first T examples of ds (proposition1_induction expects the chosen examples only).
AttentionDataset first_examples(const AttentionDataset& ds, std::size_t T) {
  AttentionDataset out;
  for (std::size_t t = 0; t < T; ++t) out.contexts.push_back(ds.contexts[t]);
  out.queries = QMatrix(T, ds.d());
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < ds.d(); ++c) out.queries(t, c) = ds.queries(t, c);
  return out;
}

// Head h's exact logits E^(t) W_K W_Q^T e^(t), from the returned weights alone.
QVector exact_logits(const AttentionDataset& ds, const MhaHead& head, std::size_t t) {
  const std::size_t d = ds.d(), dh = head.WK.cols();
  QVector q(dh, Rational(0));  // W_Q^T e
  for (std::size_t j = 0; j < dh; ++j)
    for (std::size_t c = 0; c < d; ++c) q[j] += head.WQ(c, j) * ds.queries(t, c);
  QVector k(d, Rational(0));  // W_K q
  for (std::size_t c = 0; c < d; ++c)
    for (std::size_t j = 0; j < dh; ++j) k[c] += head.WK(c, j) * q[j];
  return mat_vec(ds.contexts[t], k);
}

void check_induction(const AttentionDataset& data, std::size_t H, std::size_t dh, std::uint64_t seed) {
  const std::size_t n = data.n(), d = data.d(), r = std::min(n, dh);
  const std::size_t T = std::min<std::size_t>(data.T(), H * (r - 1) + 1);
  const AttentionDataset ds = first_examples(data, T);
  const auto groups = theorem1_groups(T, H, r);
  Theorem1Options opt;
  opt.H = H;
  opt.dh = dh;
  std::mt19937_64 rng(seed);
  Proposition1Result p = proposition1_induction(ds, groups, opt, rng);
  INFO("H=" << H << " n=" << n << " d=" << d << " dh=" << dh << " T=" << T);
  REQUIRE(p.heads.size() == H);
  REQUIRE(p.trace.size() == H);
  REQUIRE(p.blockC.size() == H);
  CHECK(p.final.ok);
  CHECK(p.final.sigma_lower > 0);

  // The groups partition 0..T-1 in order: |R_1| = min(r, T), |R_h| <= r-1, k_h = |R_1 u ... u R_h|.
  std::vector<std::size_t> seen, rows;
  for (std::size_t h = 0; h < H; ++h) {
    const HeadTrace& tr = p.trace[h];
    CHECK(tr.head == h + 1);
    CHECK(tr.group == groups[h]);
    CHECK(tr.group.size() <= (h == 0 ? r : r - 1));
    CHECK(tr.old_examples == seen.size());
    seen.insert(seen.end(), tr.group.begin(), tr.group.end());
    CHECK(tr.rank_target == seen.size());
  }
  CHECK(seen.size() == T);
  for (std::size_t t = 0; t < T; ++t) CHECK(seen[t] == t);

  for (std::size_t h = 0; h < H; ++h) {
    const HeadTrace& tr = p.trace[h];
    const MhaHead& head = p.heads[h];
    CHECK(head.WK.cols() == dh);  // rank W^h <= d_h by construction of the factors
    // Second method for Claim 1/2: the exact logits of the returned weights equal the targets on R_h
    // (W' e = 0 there), whatever the saturation scale.
    REQUIRE(tr.targets.size() == tr.group.size());
    for (std::size_t i = 0; i < tr.group.size(); ++i) CHECK(exact_logits(ds, head, tr.group[i]) == tr.targets[i]);
    // Second method for the enclosure: a double softmax of the exact logits lies in the returned block.
    for (std::size_t t = 0; t < T; ++t) {
      QVector a = exact_logits(ds, head, t);
      std::vector<double> al(n);
      double mx = -INFINITY, s = 0;
      for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, rational_to_double(a[j]));
      for (std::size_t j = 0; j < n; ++j) { al[j] = std::exp(rational_to_double(a[j]) - mx); s += al[j]; }
      for (std::size_t k = 0; k < d; ++k) {
        double pk = 0;
        for (std::size_t j = 0; j < n; ++j) pk += al[j] / s * rational_to_double(ds.contexts[t](j, k));
        CHECK(std::fabs(pk - p.blockC[h](t, k)) <= p.blockR[h](t, k) + 1e-12);
      }
    }
    // Second method for each step's certificate: the centres of Z_c on rows R_1..R_h, heads 1..h,
    // read as exact rationals, have exact rank k_h.
    rows.insert(rows.end(), tr.group.begin(), tr.group.end());
    QMatrix Zs(rows.size(), (h + 1) * d);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t g = 0; g <= h; ++g)
        for (std::size_t k = 0; k < d; ++k) Zs(i, g * d + k) = rational_from_double(p.blockC[g](rows[i], k));
    CHECK(qmat_rank(Zs) == tr.rank_target);
  }
}

}  // namespace

TEST_CASE("Proposition 1: the induction's groups, exact fits, enclosures and step ranks", "[proposition1]") {
  // r = n = 4, T* = 10: three full heads.
  check_induction(generate_attention_dataset("theorem1", 12, 4, 7, std::nullopt, 41), 3, 4, 5);
  // d_h < n: r = 2, one new example per later head.
  check_induction(generate_attention_dataset("theorem1", 8, 4, 6, std::nullopt, 42), 4, 2, 6);
  // Fewer examples than H(r-1)+1: the last head gets none (W^h = 0).
  check_induction(generate_attention_dataset("theorem1", 6, 3, 5, std::nullopt, 43), 4, 3, 7);
}

TEST_CASE("Proposition 1: same seed, same weights (the draws are deterministic)", "[proposition1]") {
  auto data = first_examples(generate_attention_dataset("theorem1", 7, 3, 6, std::nullopt, 44), 7);
  Theorem1Options opt;
  opt.H = 3;
  opt.dh = 3;
  const auto groups = theorem1_groups(7, 3, 3);
  std::mt19937_64 r1(9), r2(9);
  auto a = proposition1_induction(data, groups, opt, r1);
  auto b = proposition1_induction(data, groups, opt, r2);
  for (std::size_t h = 0; h < 3; ++h) {
    CHECK(a.heads[h].WK == b.heads[h].WK);
    CHECK(a.heads[h].WQ == b.heads[h].WQ);
  }
  CHECK(r1() == r2());
}

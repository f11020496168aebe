// Boundary of dana24 Theorem 1's proof, A.2's step "W_V has full rank, so W_V A' keeps the rank of A'"
// (docs/papers/dana24.md V6, erratum "W_V full rank keeps rank"). With d_h < d a full-rank W_V^h has a kernel of
// dimension d - d_h; when it contains every token vector of two sequences t1, t2 that share their last
// token, W_V^h A^h(t) = 0 for both (A^h(t) is a convex combination of the x(t,s), whatever W_QK^h), so
// the features F(t1) = F(t2) coincide and no W_O, W_U separates two different next tokens. The kernel can
// hold them when d - d_h >= dim span{x(t1,s), x(t2,s)} (<= 2S - 1). Everything here is exact: e, pos are
// rational, W_V^h = R_h K^T with K an exact basis of the orthogonal complement of that span.
#include <random>

#include "dana24_instances.hpp"
#include "memcert/linalg/qmat/qmat.hpp"

namespace memcert::proofs {
namespace dana24_theorem_1_adversarial_wv {
using namespace dana24_detail;

// (N, S, d, d_h, H) with d - d_h >= 2S - 1.
const Shape kShapes[] = {{4, 2, 4, 1, 2}, {5, 2, 5, 2, 3}, {3, 3, 6, 1, 2}, {6, 2, 6, 3, 2}};

Instance generate(std::uint64_t seed, std::size_t index) {
  const Shape& s = kShapes[index % 4];
  // T = H d_h + d sequences as Theorem 1 asks; at least one pair sharing the last token with different
  // next tokens is forced (sequence 1 := sequence 0 with another first token and another label).
  Instance inst = assoc_instance(s, seed, 1);
  auto& a = std::any_cast<AssocInstance&>(inst.data).data;
  const std::uint32_t N = static_cast<std::uint32_t>(a.N);
  a.sequences[1] = a.sequences[0];
  a.sequences[1][0] = (a.sequences[0][0] + 1) % N;
  // Keep the sequences distinct: a repeat is advanced as a base-N counter (N^S > T, so this ends).
  std::set<std::vector<std::uint32_t>> used{a.sequences[0], a.sequences[1]};
  for (std::size_t t = 2; t < a.T(); ++t) {
    while (used.count(a.sequences[t]))
      for (std::size_t k = 0; k < a.S; ++k)
        if ((a.sequences[t][k] = (a.sequences[t][k] + 1) % N) != 0) break;
    used.insert(a.sequences[t]);
  }
  a.next[1] = (a.next[0] + 1) % N;
  return inst;
}

// A random dyadic in [-1, 1] with denominator 16.
Rational adversarial_wv_entry(std::mt19937_64& rng) {
  return Rational(static_cast<long>(rng() % 33) - 16) / 16;
}

// Step "W_V full rank keeps rank", refuted: W_V^h with every x(t1,s), x(t2,s) in its kernel.
InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const auto& a = in.data;
  const std::size_t d = in.shape.d, dh = in.shape.dh, H = in.shape.H, S = a.S;
  std::mt19937_64 rng(in.seed);
  dana24::BaseModel b;
  dana24::dana24_base_embeddings(a.N, S, d, rng, b);
  // The pair: the first two sequences sharing the last token with different next tokens.
  std::size_t i = 0, j = 0;
  for (std::size_t p = 0; p < a.T() && i == j; ++p)
    for (std::size_t q = p + 1; q < a.T(); ++q)
      if (a.sequences[p].back() == a.sequences[q].back() && a.next[p] != a.next[q]) {
        i = p, j = q;
        break;
      }
  InstanceResult out;
  if (i == j) {
    out.outcome = Outcome::undecided;
    out.summary = "no pair of sequences shares its last token with different next tokens";
    return out;
  }
  // B^T: one row per token vector x(t,s) of the pair; K = basis of ker B^T (d x (d - r)).
  QMatrix Bt(2 * S, d);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t c = 0; c < d; ++c) {
      Bt(s, c) = rational_from_double(b.e(a.sequences[i][s], c)) + rational_from_double(b.pos(s, c));
      Bt(S + s, c) = rational_from_double(b.e(a.sequences[j][s], c)) + rational_from_double(b.pos(s, c));
    }
  const QMatrix K = qmat_kernel(Bt);
  out.figures = {{"span_dim", d - K.cols()}, {"kernel_dim", K.cols()}, {"dh", dh}, {"pair", {i, j}}};
  if (K.cols() < dh) {
    out.outcome = Outcome::undecided;
    out.summary = "the pair's token vectors span more than d - d_h dimensions: no full-rank W_V kills them";
    return out;
  }
  nlohmann::json wv = nlohmann::json::array();
  for (std::size_t h = 0; h < H; ++h) {
    QMatrix W(dh, d);
    for (int attempt = 0; attempt < 16; ++attempt) {
      QMatrix R(dh, K.cols());
      for (std::size_t r = 0; r < dh; ++r)
        for (std::size_t c = 0; c < K.cols(); ++c) R(r, c) = adversarial_wv_entry(rng);
      for (std::size_t r = 0; r < dh; ++r)
        for (std::size_t c = 0; c < d; ++c) {
          Rational x = 0;
          for (std::size_t k = 0; k < K.cols(); ++k) x += R(r, k) * K(c, k);
          W(r, c) = x;
        }
      if (qmat_rank(W) == dh) break;
    }
    if (qmat_rank(W) != dh) {
      out.outcome = Outcome::undecided;
      out.summary = "no full-rank W_V drawn";
      return out;
    }
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t r = 0; r < dh; ++r) {
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t c = 0; c < d; ++c) row.push_back(rational_to_string(W(r, c)));
      rows.push_back(row);
    }
    wv.push_back(rows);
  }
  auto dmat = [](const DMatrix& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t r = 0; r < m.rows(); ++r) {
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t c = 0; c < m.cols(); ++c) row.push_back(rational_to_string(rational_from_double(m(r, c))));
      rows.push_back(row);
    }
    return rows;
  };
  nlohmann::json c = claim_base("dana24/theorem-1-adversarial-wv", "counterexample", a);
  c["d"] = d, c["dh"] = dh, c["H"] = H;
  c["e"] = dmat(b.e), c["pos"] = dmat(b.pos), c["WV"] = wv, c["pair"] = {i, j};
  out.certificate = c;
  out.witness = {{"pair", {i, j}}, {"last_token", a.sequences[i].back()}, {"next", {a.next[i], a.next[j]}}};
  out.outcome = Outcome::counterexample;
  out.note = "a failure of the proof step for this W_V, not of capacity: generic W_V (the construction's) keeps the rank";
  out.summary = "full-rank W_V^h (d_h = " + std::to_string(dh) + " < d = " + std::to_string(d) +
                ") vanishing on every token of sequences " + std::to_string(i) + ", " + std::to_string(j) +
                " (same last token, different next tokens): F(t1) = F(t2) for every W_QK, so rank W_V A' < T";
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/theorem-1-adversarial-wv",
    "Boundary of Theorem 1's proof (A.2): a full-rank W_V does not keep the rank of A' when d_h < d; a "
    "full-rank W_V^h vanishing on two sequences' tokens makes their features equal for every W_QK.",
    "exact: the checker verifies rank W_V^h = d_h, W_V^h x(t,s) = 0 on the pair, the shared last token and the "
    "different next tokens (kind \"dana24-claim\")",
    Expect::counterexample, "A.2: W_V full rank keeps rank", 4, generate, check}};

}  // namespace dana24_theorem_1_adversarial_wv
}  // namespace memcert::proofs

// Boundary of dana24 Lemma 2 (docs/papers/dana24.md V4): with S = 1 every head attends to the single token, so
// A^h(t) = x(t,1) for all h and rank A <= d < min(T_0, H d) whenever H >= 2 and T_0 > d, for EVERY choice
// of weights. The exact rank of A (all blocks equal) is computed as a second method.
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_lemma_2_s1 {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  static const Shape shapes[] = {{4, 1, 2, 1, 2}, {6, 1, 3, 1, 3}, {5, 1, 2, 1, 4}};
  const Shape& s = shapes[index % 3];
  Instance inst;
  AssocInstance in{s, dana24::assoc_data_generate(s.N, 1, 0, seed, true), seed};
  inst.params = {{"N", s.N}, {"S", 1}, {"d", s.d}, {"H", s.H}, {"T", in.data.T()}};
  inst.data = std::move(in);
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const std::size_t d = in.shape.d, H = in.shape.H, T = in.data.T();
  std::mt19937_64 rng(in.seed);
  dana24::BaseModel b;
  dana24::dana24_base_embeddings(in.data.N, 1, d, rng, b);
  // A (Hd x T): softmax over one position is exactly 1, so block h, column t = e(t_1) + pos_1.
  QMatrix A(H * d, T);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < d; ++i)
        A(h * d + i, t) = rational_from_double(b.e(in.data.sequences[t][0], i)) + rational_from_double(b.pos(0, i));
  const std::size_t rank = qmat_rank(A);
  InstanceResult out;
  out.figures = {{"rank_A", rank}, {"min_T_Hd", std::min(T, H * d)}, {"d", d}};
  if (rank >= std::min(T, H * d)) {
    out.outcome = Outcome::confirmed;
    out.summary = "rank A reached min(T, Hd): the naive statement held here";
    return out;
  }
  nlohmann::json j = claim_base("dana24/lemma-2-s1", "counterexample", in.data);
  j.erase("next");
  j["d"] = d;
  j["H"] = H;
  out.certificate = j;
  out.witness = {{"rank_A", rank}, {"bound", std::min(T, H * d)}};
  out.outcome = Outcome::counterexample;
  out.summary = "S = 1: rank A = " + std::to_string(rank) + " <= d < min(T, Hd) = " + std::to_string(std::min(T, H * d)) +
                " for every choice of weights";
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/lemma-2-s1",
    "Boundary of Lemma 2: with S = 1 (H >= 2, T_0 > d) the attention before output has rank <= d.",
    "structural (every head returns x(t,1)); exact rank of A as a second method; checker kind \"dana24-claim\"",
    Expect::counterexample, "dana24/lemma-2 at S = 1", 3, generate, check}};

}  // namespace
}  // namespace memcert::proofs

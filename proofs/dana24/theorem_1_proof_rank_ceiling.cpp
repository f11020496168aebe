// Boundary of the dana24 Theorem 1 proof (docs/papers/dana24.md 4.2(g), V2, V3): the skip block ("head 0") of the
// feature matrix depends on the last token only, so rank F <= H min(d_h, d) + min(d, n_last). With all
// sequences sharing the last token (V2) or N < d (V3) this is below T_0 = H d_h + d: the proof does not
// deliver H d_h + d there. A ceiling of the proof technique, not of capacity (open, see docs/papers/dana24.md).
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_theorem_1_proof_rank_ceiling {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  static const Shape shapes[] = {{4, 3, 3, 2, 3}, {2, 4, 3, 3, 4}, {3, 3, 4, 2, 6}};
  const Shape& s = shapes[index % 3];
  const std::size_t T = s.H * s.dh + s.d;
  dana24::AssocData a;
  if (index % 3 == 0) {  // V2: every sequence ends with the same token
    std::mt19937_64 rng(seed);
    a.N = s.N, a.S = s.S;
    std::set<std::vector<std::uint32_t>> seen;
    while (a.T() < T) {
      std::vector<std::uint32_t> q(s.S, 0);
      for (std::size_t k = 0; k + 1 < s.S; ++k) q[k] = static_cast<std::uint32_t>(rng() % s.N);
      if (seen.insert(q).second) a.sequences.push_back(q), a.next.push_back(static_cast<std::uint32_t>(rng() % s.N));
    }
  } else {
    a = dana24::assoc_data_generate(s.N, s.S, T, seed, false);
  }
  Instance inst;
  inst.params = {{"N", s.N}, {"S", s.S}, {"d", s.d}, {"dh", s.dh}, {"H", s.H}, {"T", T}};
  inst.data = AssocInstance{s, a, seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const Shape& s = in.shape;
  const std::size_t n_last = dana24::assoc_distinct_last_tokens(in.data);
  const std::size_t ceiling = dana24::dana24_feature_rank_ceiling(s.H, s.dh, s.d, n_last);
  InstanceResult out;
  out.note = "a ceiling of the proof's feature matrix, not of memorization capacity";
  out.figures = {{"n_last", n_last}, {"rank_ceiling", ceiling}, {"T0", s.H * s.dh + s.d}};
  if (ceiling >= in.data.T()) {
    out.outcome = Outcome::confirmed;
    out.summary = "the ceiling reaches T here";
    return out;
  }
  nlohmann::json c = claim_base("dana24/theorem-1-proof-rank-ceiling", "counterexample", in.data);
  c["d"] = s.d, c["H"] = s.H, c["dh"] = s.dh;
  out.certificate = c;
  out.witness = {{"n_last", n_last}, {"rank_ceiling", ceiling}};
  out.outcome = Outcome::counterexample;
  out.summary = "n_last = " + std::to_string(n_last) + ": rank F <= " + std::to_string(ceiling) + " < T_0 = " +
                std::to_string(in.data.T()) + " for every choice of heads";
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/theorem-1-proof-rank-ceiling",
    "Boundary of the Theorem 1 proof: with fewer than d distinct last tokens the feature matrix has rank "
    "<= H min(d_h,d) + n_last < H d_h + d.",
    "structural (the skip block has rank <= n_last); the checker recomputes n_last (kind \"dana24-claim\")",
    Expect::counterexample, "the proof's rank F = H d_h + d", 3, generate, check}};

}  // namespace
}  // namespace memcert::proofs

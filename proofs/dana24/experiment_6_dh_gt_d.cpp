// Boundary of dana24 Corollary 2 / Experiment 6 (docs/papers/dana24.md V5): with d_h > d each W_O^h W_V^h is
// d x d, so the feature rank is <= d + H d: the d_h = 5, d = 2 model is the d_h = 2 model, and
// H d_h + d associations are not what the construction reaches. A ceiling of the technique.
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_experiment_6_dh_gt_d {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  static const std::size_t Hs[] = {5, 10, 19};  // Appendix B: N = 10, S = 2, d = 2, d_h = 5 (T <= 100)
  const Shape s{10, 2, 2, 5, Hs[index % 3]};
  const std::size_t T = s.H * s.dh + s.d;
  Instance inst;
  inst.params = {{"N", 10}, {"S", 2}, {"d", 2}, {"dh", 5}, {"H", s.H}, {"T", T}};
  inst.data = AssocInstance{s, dana24::assoc_data_generate(10, 2, T, seed, false), seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const Shape& s = in.shape;
  const std::size_t ceiling = dana24::dana24_feature_rank_ceiling(s.H, s.dh, s.d, dana24::assoc_distinct_last_tokens(in.data));
  InstanceResult out;
  out.note = "Figure 4's plotted bound 1/10 + 0.9 (2H+2)/100 is the d_h = 2 one";
  out.figures = {{"rank_ceiling", ceiling}, {"H_dh_plus_d", in.data.T()}, {"fair_T0", s.H * s.d + s.d}};
  nlohmann::json c = claim_base("dana24/experiment-6-dh-gt-d", "counterexample", in.data);
  c["d"] = s.d, c["H"] = s.H, c["dh"] = s.dh;
  out.certificate = c;
  out.witness = {{"rank_ceiling", ceiling}};
  out.outcome = Outcome::counterexample;
  out.summary = "d_h = 5 > d = 2: rank <= " + std::to_string(ceiling) + " < H d_h + d = " + std::to_string(in.data.T());
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/experiment-6-dh-gt-d",
    "Boundary of footnote 1: with d_h > d the construction's rank is <= d + H d, below H d_h + d.",
    "structural (W_O^h W_V^h is d x d); the checker verifies d_h > d and the ceiling (kind \"dana24-claim\")",
    Expect::counterexample, "Corollary 2 applied with d_h = 5 > d = 2", 3, generate, check}};

}  // namespace
}  // namespace memcert::proofs

// Boundary of dana24 Proposition 3 (docs/papers/dana24.md V7): it needs d >= 2. With d = 1 the logits are
// E(t) w_j for scalars E(t), w_j; a strict arg-max of j -> E w_j is an arg-max (E > 0) or an arg-min
// (E < 0) of w, so at most two labels are reachable: any labeling with three distinct labels fails.
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_proposition_3_d1 {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  const std::size_t N = 3 + index % 3;
  dana24::AssocData a = dana24::assoc_data_generate(N, 2, 6, seed, false);
  for (std::uint32_t t = 0; t < 3; ++t) a.next[t] = t;  // the labeling the argument defeats: three labels
  Instance inst;
  inst.params = {{"N", N}, {"S", 2}, {"d", 1}, {"T", a.T()}};
  inst.data = AssocInstance{{N, 2, 1, 1, 1}, a, seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  std::set<std::uint32_t> labels(in.data.next.begin(), in.data.next.end());
  InstanceResult out;
  out.figures = {{"distinct_labels", labels.size()}};
  if (labels.size() < 3) {
    out.outcome = Outcome::undecided;
    out.summary = "fewer than three distinct labels drawn: no witness on this instance";
    return out;
  }
  nlohmann::json c = claim_base("dana24/proposition-3-d1", "counterexample", in.data);
  c["d"] = 1;
  out.certificate = c;
  out.witness = {{"distinct_labels", labels.size()}};
  out.outcome = Outcome::counterexample;
  out.summary = "d = 1 and " + std::to_string(labels.size()) + " distinct labels: at most 2 are reachable";
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/proposition-3-d1",
    "Boundary of Proposition 3 (d >= 2): with d = 1 no sequence encoder realizes three distinct labels.",
    "exact argument on scalar encoders; the checker verifies d = 1 and three labels (kind \"dana24-claim\")",
    Expect::counterexample, "dana24/proposition-3 with d = 1", 3, generate, check}};

}  // namespace
}  // namespace memcert::proofs

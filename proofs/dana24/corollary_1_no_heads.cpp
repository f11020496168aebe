// Boundary of dana24 Corollary 1 / the A.2 choice H = ceil((T_0 - d)/d_h) (docs/papers/dana24.md V1): with H = 0,
// T(t) = W_U (e(t_S) + pos_S) depends on the last token only, so two sequences with the same last token
// and different next tokens cannot both be memorized, although T_0 <= d.
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_corollary_1_no_heads {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  dana24::AssocData a;
  if (index == 0) {  // the section-7 instance: N = S = d = 2, {(1,1) -> 1, (2,1) -> 2} (0-based here)
    a.N = 2, a.S = 2, a.sequences = {{0, 0}, {1, 0}}, a.next = {0, 1};
  } else {  // T_0 = d random sequences over N = d + 1 tokens, two of them sharing the last token with
            // different next tokens (the labeling the proof's H = 0 cannot handle)
    const std::size_t d = 2 + index % 3;
    a = dana24::assoc_data_generate(d + 1, 2, d, seed, false);
    a.sequences[1] = {(a.sequences[0][0] + 1) % static_cast<std::uint32_t>(a.N), a.sequences[0][1]};
    for (std::size_t t = 2; t < a.T(); ++t)  // keep the sequences distinct
      while (a.sequences[t] == a.sequences[0] || a.sequences[t] == a.sequences[1])
        a.sequences[t][0] = (a.sequences[t][0] + 1) % static_cast<std::uint32_t>(a.N);
    a.next[1] = (a.next[0] + 1) % static_cast<std::uint32_t>(a.N);
  }
  Instance inst;
  const std::size_t d = std::max<std::size_t>(2, a.T());
  inst.params = {{"N", a.N}, {"S", a.S}, {"d", d}, {"H", 0}, {"T", a.T()}};
  inst.data = AssocInstance{{a.N, a.S, d, 1, 0}, a, seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const auto& a = in.data;
  InstanceResult out;
  for (std::size_t i = 0; i < a.T(); ++i)
    for (std::size_t j = i + 1; j < a.T(); ++j)
      if (a.sequences[i].back() == a.sequences[j].back() && a.next[i] != a.next[j]) {
        nlohmann::json c = claim_base("dana24/corollary-1-no-heads", "counterexample", a);
        c["H"] = 0;
        c["pair"] = {i, j};
        out.certificate = c;
        out.witness = {{"pair", {i, j}}, {"last_token", a.sequences[i].back()}};
        out.outcome = Outcome::counterexample;
        out.summary = "H = 0, T_0 = " + std::to_string(a.T()) + " <= d: sequences " + std::to_string(i) + " and " +
                      std::to_string(j) + " share the last token, so their logits are equal";
        return out;
      }
  // No such pair: H = 0 memorizes whenever the last token determines the label; certify it by building.
  dana24::Dana24Options o;
  o.H = 0, o.dh = 1, o.d = in.shape.d, o.seed = in.seed;
  dana24::Dana24Result r = dana24::dana24_construct(a, o);
  if (r.memorized) {
    out.certificate = dana24::dana24_certificate_json(a, r, "dana24/theorem-1-assoc");
    out.outcome = Outcome::confirmed;
    out.summary = "no shared last token with different labels: H = 0 memorized it (naive statement held)";
  } else {
    out.outcome = Outcome::undecided;
    out.summary = "no witness pair, and the construction did not certify";
  }
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/corollary-1-no-heads",
    "Boundary of the proof's H = ceil((T_0 - d)/d_h): with H = 0 (T_0 <= d) two sequences sharing the last "
    "token with different next tokens are not memorizable.",
    "exact: with no heads the input of W_U is e(t_S) + pos_S; the checker verifies the pair (kind \"dana24-claim\")",
    Expect::counterexample, "dana24/corollary-1 with H = 0", 4, generate, check}};

}  // namespace
}  // namespace memcert::proofs

// dana24 Corollary 1: with embedding dimension d = 2 and d_h <= 2, an attention-only Transformer with H
// heads memorizes T_0 = H d_h + 2 associations. memcert builds docs/papers/dana24.md section 5's construction on
// random association sets and certifies every arg-max (kind "dana24", re-verified by the checker).
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_corollary_1 {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  // The section-6 instances; the last is all 100 bigrams of N = 10 (H = 49, d_h = 2: 49*2 + 2 = 100).
  static const Shape shapes[] = {{3, 2, 2, 2, 3}, {2, 3, 2, 2, 3}, {3, 2, 2, 1, 6}, {10, 2, 2, 2, 49}};
  return assoc_instance(shapes[index % 4], seed, 2);
}

ClaimRegistrar reg{Claim{
    "dana24/corollary-1",
    "Under Assumption 1, an attention-only Transformer with d = 2, H heads and d_h <= 2 memorizes "
    "T_0 = H d_h + 2 associations.",
    "the section-5 construction (rank-one heads, exact read-out, map back to eq. (2)); every strict arg-max "
    "certified end to end by the independent checker (kind \"dana24\", MPFR)",
    Expect::holds, "", 4, generate, [](const Instance& i) { return construct_check(i, "dana24/corollary-1"); }}};

}  // namespace
}  // namespace memcert::proofs

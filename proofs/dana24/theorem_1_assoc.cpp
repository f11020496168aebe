// dana24 Theorem 1 (epsilon = 0) with Proposition 3, association form: embedding dimension d, H heads of
// dimension d_h memorize T_0 = H d_h + d associations when the sequences have n_last >= d distinct last
// tokens (the construction's precondition, docs/papers/dana24.md 4.2(g)). Certified end to end (kind "dana24").
#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_theorem_1_assoc {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  // Section 6: (3,2,3,3,2) is all of [3]^2 with S < d; (10,2,10,10,9) is all 100 bigrams of N = 10.
  static const Shape shapes[] = {{3, 2, 3, 3, 2}, {3, 2, 3, 1, 6}, {4, 2, 3, 3, 4}, {5, 2, 4, 2, 8}, {10, 2, 10, 10, 9}};
  const Shape& s = shapes[index % 5];
  return assoc_instance(s, seed, s.d);
}

ClaimRegistrar reg{Claim{
    "dana24/theorem-1-assoc",
    "An attention-only Transformer with embedding dimension d, H heads of dimension d_h <= d memorizes "
    "T_0 = H d_h + d associations (given at least d distinct last tokens).",
    "the section-5 construction; every strict arg-max certified end to end by the independent checker "
    "(kind \"dana24\", MPFR)",
    Expect::holds, "", 5, generate, [](const Instance& i) { return construct_check(i, "dana24/theorem-1-assoc"); }}};

}  // namespace
}  // namespace memcert::proofs

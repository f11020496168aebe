#pragma once
// Batched certified checks for the large-scale experiments (issue 6, deliverable 3). Independence mod p
// certifies full rank (rank mod p <= rank over Q); a dependence mod p is escalated to the exact path.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "memcert/linalg/fast/rump.hpp"
#include "memcert/linalg/kruskal.hpp"

namespace memcert {

// Assumption 2 over many contexts: certified rank of each matrix (exact values of the doubles).
// full_row_rank[t] is decided exactly: mod p full rank certifies it; otherwise the exact rank decides.
struct BatchRankResult {
  std::vector<std::size_t> rank;  // certified exact rank of each matrix
  std::size_t certified_mod_p = 0, escalated = 0;
  std::uint64_t prime = 0;
};
BatchRankResult dmat_batch_rank(const std::vector<DMatrix>& mats, int threads = 0);

// The paper's Table 1 protocol for the ROWS of `vectors`: `trials` random `size`-subsets (seeded),
// each certified independent mod p, or escalated: exact rank; a dependent subset gets exact coefficients.
KruskalSample dmat_kruskal_sample_fast(const DMatrix& vectors, std::size_t size, std::size_t trials,
                                       std::uint64_t seed, int threads = 0);

}  // namespace memcert

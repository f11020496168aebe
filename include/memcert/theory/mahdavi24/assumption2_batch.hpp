#pragma once
// Assumption 2 over many contexts at once: one double modular elimination per context (exact mod p), a
// context short of full rank mod p escalated to its exact rank.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert {

// Assumption 2 over many contexts: certified rank of each matrix (exact values of the doubles).
// full_row_rank[t] is decided exactly: mod p full rank certifies it; otherwise the exact rank decides.
struct BatchRankResult {
  std::vector<std::size_t> rank;  // certified exact rank of each matrix
  std::size_t certified_mod_p = 0, escalated = 0;
  std::uint64_t prime = 0;
};
BatchRankResult dmat_batch_rank(const std::vector<DMatrix>& mats, int threads = 0);

}  // namespace memcert

#pragma once
// Batched certified checks for the large-scale experiments. Independence mod p
// certifies full rank (rank mod p <= rank over Q); a dependence mod p is escalated to the exact path.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "memcert/linalg/fast/dmod.hpp"
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
// The same protocol (same subsets for the same seed) on the row-scaled residues `all` of the vectors
// modulo prime_fast(0) (dmod_from_double_rows, dmod_from_qmat, ...): each subset independent mod p is
// certified independent; the others are decided exactly on exact_rows(subset) (the subset's exact rows, in
// order), which is called only for them.
KruskalSample dmod_kruskal_sample(const DModMatrix& all, std::size_t size, std::size_t trials, std::uint64_t seed,
                                  const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows,
                                  int threads = 0);

}  // namespace memcert

namespace memcert {

// exp(x) for x <= 0 with a rigorous bound (own range reduction + Taylor polynomial, no libm):
// |result - exp(x)| <= kExpRelErr * exp(x) + kExpAbsErr. See mha_batch.cpp for the error analysis.
inline constexpr double kExpRelErr = 0x1p-44;
inline constexpr double kExpAbsErr = 0x1p-1020;
double exp_nonpositive_bounded(double x);

// The representation matrix Z of mahdavi24 eq. (7) for many examples at once, in double with a rigorous
// entrywise radius: every real Z_t,(h,:) = p_h^(t) = E^(t)T softmax(E^(t) W_K^h W_Q^hT e^(t)) lies in
// [centre - radius, centre + radius]. Inputs are doubles taken as exact values: contexts (n x d each),
// queries (T x d, row t = e^(t)), per head W_K^h, W_Q^h (d x d_h). Logit products run as blocked FMA
// matrix products over all examples (Q W_Q, then (Q W_Q) W_K^T), bounded by gamma_k |A||B| products;
// softmax uses exp_nonpositive_bounded. The result feeds enclosure_rank_lower_fast (Theorem 1's Z).
struct ZEnclosureDouble {
  DMatrix centre, radius;  // T x (H d)
};
ZEnclosureDouble mha_z_enclosure_double(const std::vector<DMatrix>& contexts, const DMatrix& queries,
                                        const std::vector<DMatrix>& WK, const std::vector<DMatrix>& WQ,
                                        int threads = 0);

}  // namespace memcert

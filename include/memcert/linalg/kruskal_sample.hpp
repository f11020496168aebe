#pragma once
// The paper's sampled Kruskal protocol on residues mod a word-size prime: every subset eliminated on its
// own (dmod_kruskal_sample), or with the work shared between trials (dmod_kruskal_sample_basis: the
// vectors are written once in coordinates of a fixed basis mod p, so that each trial only eliminates the
// part of its subset that the basis does not already contain).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "memcert/linalg/nmod/dmod.hpp"
#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert {

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

// The `trials` random `size`-subsets of {0..rows-1} that seed `seed` names (partial Fisher-Yates on one
// mt19937_64, each subset sorted): the draws of qmat_kruskal_sample and dmod_kruskal_sample.
std::vector<std::vector<std::size_t>> kruskal_sample_subsets(std::size_t rows, std::size_t size, std::size_t trials,
                                                             std::uint64_t seed);

// How the trials of dmod_kruskal_sample_basis were decided.
struct KruskalBasisStats {
  std::size_t basis_size = 0;  // k: the basis' size (0 when the shared route was not taken)
  bool projected = false;      // the vectors were projected to k = size coordinates first (size < cols)
  std::size_t by_basis = 0;    // certified independent by their residual minor mod p
  std::size_t by_subset = 0;   // residual minor zero: decided by eliminating the subset's own residues
  std::size_t exact = 0;       // dependent mod p: decided over Q (exact_rows)
};

// dmod_kruskal_sample(all, size, trials, seed, exact_rows, threads), same subsets and same result, computed
// as follows (0 < size <= all.cols; otherwise it simply calls dmod_kruskal_sample):
//  1. P = all (size < cols: times a seeded random cols x size matrix G mod p, so P is rows x size);
//  2. B = `size` rows of P independent mod p (a rank profile), C = P P_B^{-1} mod p, so C's row b_j is e_j;
//  3. trial S: det P_S = det C_S det P_B and C_S holds e_j for every b_j in S, so det P_S != 0 iff the
//     square residual minor C[S \ B, {j : b_j not in S}] is non-zero mod p (about (1 - size/rows) size on a
//     side instead of size).
// A non-zero residual minor proves rank P_S = size mod p, hence rank all_S = size mod p (P_S = all_S G),
// hence the exact rows are independent over Q (rank mod p <= rank over Q, row scalings are units). A zero
// one proves nothing: the subset's own residues are eliminated (dmod_kruskal_sample's test), and a subset
// dependent there is decided exactly on exact_rows(subset). When P has rank < size mod p no basis exists
// and every trial takes dmod_kruskal_sample's route. `stats` (optional) receives the counts.
KruskalSample dmod_kruskal_sample_basis(const DModMatrix& all, std::size_t size, std::size_t trials, std::uint64_t seed,
                                        const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows,
                                        int threads = 0, KruskalBasisStats* stats = nullptr);

}  // namespace memcert

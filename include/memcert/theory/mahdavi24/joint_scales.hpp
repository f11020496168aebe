#pragma once
// Per-head saturation scales do not compose: the "joint-scales" data family (docs/SATURATION.md).
//
// The Theorem 1 construction gives every head h >= 2 weights W^h = W_fit^h + c_h g_h w_h^T. Its final
// certificate, rank(Z) >= T*, holds at the proof's scales; it is tempting to tune each head's c_h on its
// own. On the family below (H = 3 heads, n = d_h = 2, T* = 4, one context shared by every example, queries
// in general position with e^(4) - e^(3) orthogonal to e^(1), e^(2); Assumptions 1-3 hold) there are
// per-head scales c_2, c_3 > 0 at which examples 3 and 4 get IDENTICAL attention outputs in every head:
// rank(Z) <= 3 < T* = 4, and no read-out separates two different labels. The identity is exact: with one
// shared context, equal logits up to an additive constant give equal softmax weights, and logits are
// rational.
//
// The same mechanism with H = 2 (T* = 3, e^(3) - e^(1) orthogonal to e^(1), e^(2)) has a single saturating
// head, so the scale is common to the network: at one c* > 0 — on every instance tried, far below the
// proof's c — examples 1 and 3 get identical rows of Z, while the proof's c certifies rank(Z) = T*.
// Acceptance of a common scale is therefore not monotone in c, and small scales can break the rank.
#include <cstdint>
#include <optional>
#include <vector>

#include "memcert/data/dataset.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

namespace memcert::mahdavi24 {

// H = 3: T = 4 examples, n = 2, embedding d >= 3: one shared context of rank 2, queries e^(1..3) drawn
// m/64 and e^(4) = e^(3) + kappa nu with nu orthogonal to e^(1), e^(2) (exact). H = 2: T = 3, e^(3) =
// e^(1) + kappa nu. Redrawn until the queries are in general position (Kruskal rank min(T, d)), Assumption
// 3 holds ({e^(t) + xbar} Kruskal rank >= 2) and the real labels (m/64) of the pair differ. Every property
// is checked exactly before returning. InputError when d < 3 or H is not 2 or 3.
AttentionDataset generate_joint_scales_dataset(std::size_t d, std::uint64_t seed, std::size_t H = 3);

// Per-head scales at which two examples' attention outputs coincide.
struct JointScales {
  std::size_t row_i = 0, row_j = 0;      // the two examples (indices into the data set)
  std::vector<Rational> scales;          // per head; 0 for head 1 (no saturating term)
  MhaWeights weights;                    // the construction's weights with head h's c_h replaced by scales[h]
};

// For a finished construction `res` on `ds` (n = 2, one shared context, H = 3 and T = T* = 4 with the pair
// R_2, R_3, or H = 2 and T = T* = 3 with the pair R_1's first example, R_2): solves, per saturating head,
// the one linear equation in c that makes the pair's logit differences equal (Lemma 3's term vanishes on
// the head's own group, so one side is fixed), and returns the scales when all are > 0 and every head
// then gives the two examples logits equal up to a constant (head 1 by the query difference being
// orthogonal to R_1's queries). nullopt otherwise (e.g. a negative root: the construction never uses
// c < 0). Exact.
std::optional<JointScales> joint_scales_identical_rows(const AttentionDataset& ds, const Theorem1Result& res);

}  // namespace memcert::mahdavi24

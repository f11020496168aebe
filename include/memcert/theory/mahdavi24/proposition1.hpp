#pragma once
// Proposition 1 of mahdavi24 (docs/THEORY.md sections 3-4): weights {W^h} with rank(Z) >= min(T, H(r-1)+1),
// by induction over heads. Head 1 is Claim 1; each later head is Claim 2 (with Lemmas 3, 4 and 5).
#include <cstddef>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "memcert/data/dataset.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

namespace memcert::mahdavi24 {

struct Proposition1Result {
  // Head h: W_K, W_Q exact (d x d_h) with W^h = W_K W_Q^T = W_fit + c_h g w^T; W_V is left empty
  // (Step 2 sets it).
  std::vector<MhaHead> heads;
  std::vector<HeadTrace> trace;                  // one entry per head, in order
  // Head h's block of Z (T x d): centre / radius, Z in C +- R. The radii (tiny, non-negative) are kept
  // rounded UP to floats, still an upper bound, in half the memory (0.5 GB at H = 128).
  std::vector<Eigen::MatrixXd> blockC;
  std::vector<Eigen::MatrixXf> blockR;
  GramRankResult final;                          // the conclusion: rank(Z) >= T certified (final.ok is true)
  std::vector<double> gram;                      // fl(C C^T) of the centres C of Z (T x T, row-major), as accumulated
  bool weyl_chain = false;                       // every head's c_weyl certified (trace[h].c_weyl set)
  std::optional<Rational> c_network;             // opt.saturation: smallest common c with final rank >= T
  double network_sigma_lower = 0;                // the final certificate's sigma at c_network
};

// Proposition 1's induction over heads (docs/THEORY.md section 4). Step h (1-based) chooses W^h and certifies
// rank Z_c >= k_h = |R_1 u ... u R_h| on the rows R_1..R_h and heads 1..h; then the conclusion certifies
// rank(Z) >= T for all heads and all examples.
//   ds:     the chosen examples (T = ds.T() <= H(r-1)+1), rationals canonical, n <= d; the hypotheses
//           (Assumption 2 and the grouping facts) are the caller's to certify first.
//   groups: theorem1_groups(T, opt.H, r), r = min(n, opt.dh) (they partition 0..T-1 in order).
//   opt:    uses H, dh, max_retries, saturation, scale, c_value, precision, narrate. The structure of the
//           weights (targets, W_fit, g, w) is chosen by the proof chain whatever the scale, so every
//           scale of one seed shares it and a reported c rebuilds the same weights; then the heads are
//           put at the chosen scale and the final certificate is taken there.
//   rng:    the construction's generator; per head, Lemma 3's draws (h >= 2) then the target draws.
// Throws std::runtime_error when a step cannot be certified (Lemma 3 finds no saturator, no target draw
// certifies Z_inf, no admissible eps, or a rank certificate fails, including the final one at the chosen
// scale; scale "weyl" without a certified Weyl chain; scale "network" when no grid value is accepted).
Proposition1Result proposition1_induction(const AttentionDataset& ds, const std::vector<std::vector<std::size_t>>& groups,
                                          const Theorem1Options& opt, std::mt19937_64& rng);

}  // namespace memcert::mahdavi24

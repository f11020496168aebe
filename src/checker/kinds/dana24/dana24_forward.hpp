#pragma once
// The forward pass of the dana24 model (eq. (1)-(2)) for checks other than kind "dana24" itself: the
// kind "dana24-claim" instances that evaluate a whole model (Theorem 1 with epsilon > 0) reuse the same
// MPFR evaluation (check_dana24.cpp), so there is one implementation of the model in the checker.
#include <gmpxx.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kernel/json.hpp"

namespace memcert_checker {

struct Dana24Shape {
  std::size_t N = 0, S = 0, d = 0, dh = 0, H = 0;
};

// Reads `weights` ({"e","pos","WU","WQ","WK","WV","WO"}, exact dyadic strings of <= 128 significant
// bits, shapes as for kind "dana24") and encloses the logits T(t) = W_U (x(t,S) + sum_h W_O^h W_V^h A^h(t))
// of every sequence with MPFR under directed rounding: lo[t][j] <= T(t)_j <= hi[t][j] (exact rationals).
// Tokens must already be < N. False with `why` on a malformed weight or a non-finite logit. With
// feat_lo/feat_hi, also the features F(t) = [x(t,S); W_V^1 A^1(t); ...; W_V^H A^H(t)] (d + H d_h entries
// per sequence), for which T(t) = W_U [I, W_O] F(t).
bool dana24_logit_enclosures(const json::Value& weights, const Dana24Shape& shape,
                             const std::vector<std::vector<std::size_t>>& seqs,
                             std::vector<std::vector<mpq_class>>& lo, std::vector<std::vector<mpq_class>>& hi,
                             std::string& why, std::vector<std::vector<mpq_class>>* feat_lo = nullptr,
                             std::vector<std::vector<mpq_class>>* feat_hi = nullptr);

// The exact part of kind "dana24"'s optional "readout" object (docs/CERTIFICATES.md): reads readout.M
// (d x d), readout.features_centre F~ (T x (d + H d_h)), weights.WO and weights.WU; requires det M != 0
// (exact, Bareiss) and, for every t, an exact margin min_{j != next[t]} (W_U E*(t))_next - (W_U E*(t))_j
// >= readout.targets_min_margin > 0 with E* = [M, W_O] F~ computed exactly. Returns E* (estar[t][i]) and
// the claimed readout.encoder_deviation (>= 0), which the caller checks against the forward pass.
bool dana24_readout_exact_check(const json::Value& readout, const json::Value& weights, const Dana24Shape& shape,
                                const std::vector<std::size_t>& next, std::vector<std::vector<mpq_class>>& estar,
                                mpq_class& deviation, std::string& why);

// For tests: the encoder input E(t) = x(t,S) + sum_h W_O^h W_V^h A^h(t) of one sequence enclosed,
// lo[i] <= E_i <= hi[i], by the checker's double filter (doubles: softmax in MPFR at `prec` bits, the
// mixing and projections in double midpoint-radius arithmetic) or by its MPFR route at `prec` bits.
// False when the enclosure is not finite (or a weight is malformed).
bool dana24_encoder_enclosures(const json::Value& weights, const Dana24Shape& shape, const std::vector<std::size_t>& seq,
                                bool doubles, long prec, std::vector<mpq_class>& lo, std::vector<mpq_class>& hi,
                                std::string& why);

}  // namespace memcert_checker


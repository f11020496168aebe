#pragma once
// The representation matrix Z of the multi-head attention layer (mahdavi24 eq. (7); dana24's Lemma 2 uses
// the same rows) for many examples at once, in double with a rigorous entrywise radius.
#include <vector>

#include "memcert/linalg/matrix.hpp"
#include "memcert/numeric/exp_bounded.hpp"

namespace memcert {

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

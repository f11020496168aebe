#pragma once
// Candidate nearest pairs of a point set by a blocked Gram matrix with a proved error bound per entry.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace memcert {

// Keeps only the candidate pairs whose certified lower bound cand_lo[r] does not exceed best_hi (the
// smallest certified upper bound seen): the others cannot be the nearest pair. Shared by the sweep and
// the blocked-Gram filters, which both collect candidates with their lower bounds.
void nearest_pair_candidates_prune(std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                                   std::vector<double>& cand_lo, double best_hi);

// The pairs (i, j), i < j, of the m points pts (d exact doubles each) that floating point cannot rule out
// as a nearest pair: every pair achieving min_{i<j} ||p_i - p_j||^2 is among them (it may hold others).
// Squared distances come from ||a||^2 + ||b||^2 - 2 a.b with the dot products of a block of rows against
// a block of columns in one floating-point matrix product (gemm_plain_sub), each enclosed with the
// entry-wise bound |fl(a.b) - a.b| <= gamma_{d+1} ||a|| ||b|| + d eta (any summation order, with or without
// FMA); pairs whose enclosure is not above the smallest upper end are refined by the direct enclosure of
// sum (a_c - b_c)^2 (relative error gamma_{d+2}, no cancellation) before they are kept. The points are
// first scaled by one power of two (exactly; the candidate set is scale-invariant) so that the largest
// magnitude is in [1, 2). nullopt when that scaling is not exact for every value or some value is not
// finite: the caller decides then by another method.
// When every scaled value is a float (float32 data), the products run in float with the float bound
// (gamma_d at u = 2^-24): twice the lanes per instruction; otherwise in double. `route`, when given, is
// set to "float" or "double".
// Memory: two blocks of `block` points and one block x block product (besides the result); time
// m^2 d flops in the matrix product on `threads` threads (<= 0: fast_threads()). Progress is reported
// as the stage "separation: blocked Gram".
std::optional<std::vector<std::pair<std::size_t, std::size_t>>> nearest_pair_candidates_gram(
    const std::vector<const double*>& pts, std::size_t d, int threads = 0, std::size_t block = 1024,
    const char** route = nullptr);

}  // namespace memcert

#pragma once
// The minimum pairwise squared distance of the tokens, decided exactly through a floating-point filter.
#include <cstddef>
#include <utility>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert::mahdavi24::detail {

// min over i < j of ||z_i - z_j||^2 for the integer vectors z (z_i = L * toks_i for one positive common
// scale L, so both have the same nearest pair), or -1 when there are fewer than two vectors. When every
// token value is exactly a double, each pair's squared distance is first enclosed in double with a
// rigorous bound (differences, squares and a recursive sum of d terms: relative error at most
// gamma_{d+2}, plus d half-units of underflow), and only the pairs whose lower end does not exceed the
// smallest upper end are computed exactly; otherwise every pair is computed exactly.
// The pairs (i, j), i < j, of the points pts (each d exact doubles) that floating point cannot rule out as
// a nearest pair: every pair achieving min ||p_i - p_j||^2 is among them. The blocked Gram filter
// (linalg/fmat/nearest_pair.hpp: m^2 d flops in matrix products, O(block^2) memory) decides; points it
// declines (no exact common power-of-two scaling, non-finite values) take a sweep along one coordinate
// (|x_c - y_c| <= ||x - y||) with the double enclosure above; O(m) memory besides the result.
// Duplicate points make their pair the (zero) minimum: remove them first when zero is not wanted.
std::vector<std::pair<std::size_t, std::size_t>> nearest_pair_candidates(const std::vector<const double*>& pts,
                                                                         std::size_t d);
Integer min_sq_distance_filtered(const std::vector<QVector>& toks, const std::vector<std::vector<Integer>>& z);

}  // namespace memcert::mahdavi24::detail

#pragma once
// mahdavi24's hypotheses (assumptions.hpp) decided on typed storage through the engine's kernels.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/data/typed_dataset.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"

namespace memcert::mahdavi24 {

// assumptions_report's report (same fields, same exact values) on typed storage: when every context and
// query value is exactly a double (float data, int64 up to 2^53), the Kruskal checks run through the
// engine's certified kernels (linalg/rank.hpp), Assumption 2 through rank_certified per context, and the
// token separation through a sweep with a proved double enclosure (exact rationals only for the pairs
// and norms it cannot decide), with no GMP rational per entry. Other data take assumptions_report.
// `threads` <= 0: fast_threads().
// With `numerical` (numpy's matrix_rank threshold: nullopt for its default), the report also holds
// "numerical": {"queries_rank", "contexts_rank_below_n": [t...]}, numpy's rank of the queries and the
// contexts whose numerical rank is below n (numerical_rank.hpp), next to the exact verdicts. The contexts
// are then read once for both: a context whose full numerical rank is proved (numerical_rank_full_proved:
// every singular value above a threshold >= 0, so also exactly of full rank) needs no exact elimination
// for Assumption 2.
struct NumericalRanksOption {
  std::optional<double> tol;
};
nlohmann::json assumptions_report_typed(const TypedAttentionDataset& ds, std::uint64_t budget, int threads = 0,
                                        SeparationMode separation = SeparationMode::on,
                                        const NumericalRanksOption* numerical = nullptr);
// The report on either storage of the one data set type: a typed storage (the whole of it) through
// assumptions_report_typed, rational storage through the rational route (assumptions.hpp) with the
// numerical ranks added as above. What `memcert assumptions` calls.
nlohmann::json assumptions_report(const AttentionDataset& ds, std::uint64_t budget, int threads,
                                  SeparationMode separation = SeparationMode::on,
                                  const NumericalRanksOption* numerical = nullptr);
// assumption2_check's contract for the first `count` contexts of a typed data set (examples 0 .. count-1),
// through the same filtered route as assumptions_report_typed (a minor mod p, then the whole context mod
// p, escalating to rank_certified); the witness comes from the exact rational route. assumption2_check
// takes this route for an AttentionDataset of typed storage.
Assumption2Result assumption2_check_typed(const TypedAttentionDataset& ds, std::size_t count, int threads = 0);
// kruskal_at_least's contract on typed storage (same enumeration / sampling protocol and seed).
KruskalCheck kruskal_at_least_typed(const TypedMatrix& vectors, std::size_t k, std::uint64_t budget, int threads = 0);
// The T rows n e_t + sum_j x_j^(t) (n (e_t + xbar_t): Assumption 3's vectors up to the factor n) of the
// contexts ctx (T n x d, row-major) and queries qry (T x d), every value a finite double, summed exactly
// (128-bit fixed point when the exponent range allows, else GMP): float64 storage when every sum is a
// double, else rational storage. Examples in parallel on `threads` (<= 0: fast_threads()); the result
// does not depend on it.
TypedMatrix assumption3_rows_typed(const double* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d,
                                   int threads = 0);
TypedMatrix assumption3_rows_typed(const Float32Le* ctx, const double* qry, std::size_t T, std::size_t n, std::size_t d,
                                   int threads = 0);
// token_separation over points given as exact doubles (d values each); repeated points are ignored.
// Without `min_distance` only r2 is computed (delta2 left 0).
Separation token_separation_doubles(const std::vector<const double*>& points, std::size_t d, bool min_distance = true);

}  // namespace memcert::mahdavi24

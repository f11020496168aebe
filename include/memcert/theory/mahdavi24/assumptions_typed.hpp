#pragma once
// mahdavi24's hypotheses (assumptions.hpp) decided on typed storage through the engine's kernels.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/data/typed_dataset.hpp"
#include "memcert/theory/mahdavi24/assumptions.hpp"

namespace memcert::mahdavi24 {

// assumptions_report's report (same fields, same exact values) on typed storage: when every context and
// query value is exactly a double (float data, int64 up to 2^53), the Kruskal checks run through the
// engine's certified kernels (dispatch.hpp), Assumption 2 through rank_certified per context, and the
// token separation through a sweep with a proved double enclosure (exact rationals only for the pairs
// and norms it cannot decide), with no GMP rational per entry. Other data take assumptions_report.
// `threads` <= 0: fast_threads().
nlohmann::json assumptions_report_typed(const TypedAttentionDataset& ds, std::uint64_t budget, int threads = 0);
// kruskal_at_least's contract on typed storage (same enumeration / sampling protocol and seed).
KruskalCheck kruskal_at_least_typed(const TypedMatrix& vectors, std::size_t k, std::uint64_t budget, int threads = 0);
// token_separation over points given as exact doubles (d values each); repeated points are ignored.
Separation token_separation_doubles(const std::vector<const double*>& points, std::size_t d);

}  // namespace memcert::mahdavi24

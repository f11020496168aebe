#pragma once
// The JSON of one Kruskal-rank decision in the assumptions report (shared by the rational and the typed
// routes so both print the same fields).
#include <cstddef>

#include <nlohmann/json.hpp>

#include "memcert/theory/mahdavi24/assumptions.hpp"

namespace memcert::mahdavi24::detail {

// {"holds": true|false|null, "kruskal_lower", "kruskal_upper", "method", "required",
//  "dependent_subset"?, "coefficients"?}
nlohmann::json kruskal_check_json(const KruskalCheck& k, std::size_t required);

}  // namespace memcert::mahdavi24::detail

#pragma once
// The exact tier that both sampled Kruskal routes (kruskal_sample.cpp, kruskal_basis.cpp) end with (not
// installed).
#include <cstddef>
#include <functional>
#include <vector>

#include "memcert/linalg/kruskal.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert {

// One trial's verdict, counted in `s`. `independent_mod_p` (the subset's rows found independent mod p)
// proves independence over Q; otherwise the subset is decided exactly on exact_rows(subset): a non-zero
// kernel of the transpose is a dependency (the first one found is recorded in `s` with its coefficients),
// none means an unlucky prime and the subset is independent after all.
void kruskal_subset_exact(const std::vector<std::size_t>& subset, bool independent_mod_p,
                          const std::function<QMatrix(const std::vector<std::size_t>&)>& exact_rows, KruskalSample& s);

}  // namespace memcert

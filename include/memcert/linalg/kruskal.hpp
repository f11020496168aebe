#pragma once
// Kruskal rank of a finite vector set (the ROWS of a matrix): the largest k such that every k-subset is
// linearly independent. NP-hard in general: exact by pruned enumeration when small enough, otherwise
// certified bounds. Subsets are tested modulo a prime (independent mod p => independent over Q) and
// every dependency is confirmed exactly with a kernel vector.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memcert/linalg/matrix.hpp"

namespace memcert {

struct KruskalResult {
  std::size_t count = 0, dim = 0;
  std::size_t lower = 0, upper = 0;  // certified: lower <= kruskal rank <= upper
  std::uint64_t prime = 0;           // prime used for the exhaustive independence checks
  // When upper < min(count, rank): a dependent subset of size upper+1 with exact coefficients
  // (non-zero, sum_i coeff_i * v_{subset_i} = 0).
  std::vector<std::size_t> dependent_subset;
  QVector dependent_coefficients;
  std::string method;                // "exhaustive", "bounded" (budget hit), "rank"
  bool exact() const { return lower == upper; }
};

struct KruskalOptions {
  std::optional<std::size_t> at_least;  // only decide kruskal >= K (cheaper)
  std::uint64_t max_subsets = 20'000'000;  // enumeration budget (subset-extension steps)
};

KruskalResult qmat_kruskal_rank(const QMatrix& vectors, const KruskalOptions& opt = {});

// qmat_kruskal_rank's algorithm on any storage of `count` vectors in dimension `dim`: residues(p)
// returns the rows scaled to integers (any scaling of a row by a unit mod p keeps the answer) reduced
// mod the 31-bit prime p, count x dim row-major in [0, p); dependency(subset) returns exact
// coefficients of a linear dependency among those rows, empty when they are independent over Q.
using KruskalResidues = std::function<std::vector<std::uint64_t>(std::uint64_t p)>;
using KruskalDependency = std::function<QVector(const std::vector<std::size_t>& subset)>;
KruskalResult kruskal_rank_by_residues(std::size_t count, std::size_t dim, const KruskalResidues& residues,
                                       const KruskalDependency& dependency, const KruskalOptions& opt = {});

// The paper's Table 1 protocol: `trials` random `size`-subsets, each certified independent (mod p) or
// dependent (exact kernel vector).
struct KruskalSample {
  std::size_t trials = 0, independent = 0, dependent = 0;
  std::vector<std::size_t> first_dependent_subset;  // certified, when one was found
  QVector first_dependent_coefficients;
};
KruskalSample qmat_kruskal_sample(const QMatrix& vectors, std::size_t size, std::size_t trials,
                                  std::uint64_t seed);

}  // namespace memcert

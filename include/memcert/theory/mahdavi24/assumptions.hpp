#pragma once
// The hypotheses of mahdavi24 (docs/THEORY.md section 2 and the end of section 4), decided exactly.
//  * Assumption 1: the queries have Kruskal rank >= n (>= T when T < n); Remark 1's bound
//    H(min(k, d_h) - 1) + 1 for the certified Kruskal rank k.
//  * Assumption 2: every context has rank n.
//  * Assumption 3: {e^(t) + xbar^(t)} has Kruskal rank >= n.
//  * General position of the queries: Kruskal rank = min(T, d).
//  * Token separation r^2 = max ||x||^2, delta^2 = min ||x - y||^2 over distinct tokens (exact).
//  * The weaker, grouping-dependent facts the construction actually uses (certified when full
//    Kruskal rank is too expensive): (a) rank n of the used contexts, (b) Q_{R_h} has full column rank
//    and [Q_{R_h}, e^(t)] has full column rank for every t in R_1 u ... u R_{h-1}.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memcert/data/dataset.hpp"
#include "memcert/linalg/matrix.hpp"

namespace memcert::mahdavi24 {

// True iff the rows of `a` are linearly independent (certified: mod-p first, exact fallback).
bool qmat_rows_independent(const QMatrix& a);

struct KruskalCheck {
  std::optional<bool> holds;  // nullopt: undecided within the budget
  std::size_t lower = 0, upper = 0;
  std::string method;
  std::vector<std::size_t> dependent_subset;  // when a dependent subset was certified
  QVector coefficients;
};
// Decides "Kruskal rank of the rows of `vectors` >= k" within `budget` subset extensions.
KruskalCheck kruskal_at_least(const QMatrix& vectors, std::size_t k, std::uint64_t budget);
// T x d queries (entries m/den, |m| <= den) with Kruskal rank EXACTLY k: one row is a combination of k
// others with non-zero coefficients (a dependent (k+1)-subset), and Kruskal rank >= k is certified
// exhaustively before returning (redrawn otherwise). InputError unless 1 <= k <= min(T-1, d).
QMatrix queries_with_kruskal_rank(std::size_t T, std::size_t d, std::size_t k, std::mt19937_64& rng, int den);
// Number of k-subsets of T (saturating at 2^62).
std::uint64_t binomial_saturating(std::size_t T, std::size_t k);

struct Assumption2Result {
  bool holds = true;
  std::vector<std::size_t> failing;  // example indices with rank(E^(t)) < n
  QVector witness;                   // for the first failing example: y != 0 with y^T E = 0
};
Assumption2Result assumption2_check(const AttentionDataset& ds, const std::vector<std::size_t>& which);

struct GroupingFacts {
  bool holds = true;
  std::string failure;    // human-readable
  nlohmann::json witness;  // {"fact": "...", "head": h, "examples": [...], "coefficients": [...]}
};
// (b) of the weaker facts, for the given groups (indices into ds).
GroupingFacts grouping_facts_check(const AttentionDataset& ds, const std::vector<std::vector<std::size_t>>& groups);

// The report of `memcert assumptions` (docs/CLI.md), with Kruskal budget per property.
nlohmann::json assumptions_report(const AttentionDataset& ds, std::uint64_t budget);

// Exact token separation over context tokens and queries.
struct Separation {
  Rational r2, delta2;  // delta2 = 0 when fewer than two distinct tokens
};
Separation token_separation(const AttentionDataset& ds);

}  // namespace memcert::mahdavi24

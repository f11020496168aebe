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

// The token separation (r, delta) (ks25's Assumption 4.1: any two tokens are equal or at distance >= delta)
// is not one of Assumptions 1-3, and its exact minimum runs over all pairs of the m = T n + T tokens:
// m^2 d / 2 operations, quadratic in T (10^14 at 2000 ViT-B examples). `automatic` computes it when
// that cost is within kSeparationAutoBudget, else reports it as not computed; `on` / `off` force it.
enum class SeparationMode { automatic, on, off };
// Pairs of tokens times coordinates above which `automatic` skips the minimum distance (about 10^11
// multiply-adds: a few seconds in the float Gram kernel on 2 cores).
inline constexpr double kSeparationAutoBudget = 1e11;
// Whether the minimum distance is computed for m tokens of dimension d under `mode` (decided before any
// work starts, from the count alone).
bool separation_decide(SeparationMode mode, std::size_t m, std::size_t d);
// "auto", "on", "off" (and back: false for any other text).
const char* separation_mode_name(SeparationMode mode);
bool separation_mode_parse(const std::string& text, SeparationMode& mode);

// The report of `memcert assumptions` (docs/CLI.md), with Kruskal budget per property. "separation" holds
// "r2" always (the largest squared norm: linear cost), "delta2" when the minimum distance was computed
// (else null), "computed", "pairs" (m (m - 1) / 2 before removing repeated tokens) and "mode".
nlohmann::json assumptions_report(const AttentionDataset& ds, std::uint64_t budget,
                                  SeparationMode separation = SeparationMode::on);

// Exact token separation over context tokens and queries.
struct Separation {
  Rational r2, delta2;  // delta2 = 0 when fewer than two distinct tokens
};
Separation token_separation(const AttentionDataset& ds);
// The largest squared norm r^2 of the tokens alone (exact; linear cost).
Rational token_max_sq_norm(const AttentionDataset& ds);
// The "separation" object of the report: r2, delta2 (exact string, or null when `s` holds no minimum
// distance), computed, pairs, mode.
nlohmann::json separation_json(const Rational& r2, const Rational* delta2, std::size_t m, SeparationMode mode);

}  // namespace memcert::mahdavi24

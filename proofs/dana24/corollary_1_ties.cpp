// Boundary of dana24's definition of memorization (docs/papers/dana24.md V9): "T(t)_{t_{S+1}} is the maximum
// logit" allows ties. With every row of W_U equal, T(t)_j = w . E(t) is the same for every j, whatever the
// embeddings and heads, so every label of every sequence "is the maximum logit": under the non-strict
// reading one model memorizes all N^S sequences with any labels, far beyond H d_h + d, and the capacity
// statements say nothing. memcert certifies a strict arg-max (kind "dana24": min_margin > 0) instead.
#include <random>

#include "dana24_instances.hpp"

namespace memcert::proofs {
namespace dana24_corollary_1_ties {
using namespace dana24_detail;

const Shape kTiesShapes[] = {{3, 2, 2, 1, 2}, {4, 2, 2, 2, 1}, {2, 3, 2, 1, 1}, {5, 2, 3, 1, 3}};

Instance generate(std::uint64_t seed, std::size_t index) {
  const Shape& s = kTiesShapes[index % 4];
  Instance inst;
  dana24::AssocData a = dana24::assoc_data_generate(s.N, s.S, 0, seed, true);  // all N^S, uniform labels
  inst.params = {{"N", s.N}, {"S", s.S}, {"d", s.d}, {"dh", s.dh}, {"H", s.H}, {"T", a.T()}};
  inst.data = AssocInstance{s, std::move(a), seed};
  return inst;
}

// The tie: one random dyadic row w repeated N times as W_U.
InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const auto& a = in.data;
  const std::size_t T0 = in.shape.H * in.shape.dh + in.shape.d;
  std::mt19937_64 rng(in.seed);
  nlohmann::json w = nlohmann::json::array();
  for (std::size_t i = 0; i < in.shape.d; ++i)
    w.push_back(rational_to_string(Rational(static_cast<long>(rng() % 31) + 1) / 8));
  InstanceResult out;
  out.figures = {{"T", a.T()}, {"H_dh_plus_d", T0}};
  if (a.T() <= T0) {
    out.outcome = Outcome::undecided;
    out.summary = "T <= H d_h + d: the tie shows nothing beyond the claimed capacity";
    return out;
  }
  nlohmann::json c = claim_base("dana24/corollary-1-ties", "counterexample", a);
  c["d"] = in.shape.d, c["dh"] = in.shape.dh, c["H"] = in.shape.H;
  c["WU"] = nlohmann::json::array();
  for (std::size_t j = 0; j < a.N; ++j) c["WU"].push_back(w);
  out.certificate = c;
  out.witness = {{"WU_row", w}, {"T", a.T()}};
  out.outcome = Outcome::counterexample;
  out.note = "refutes the non-strict definition, not the capacity claim: memcert requires a strict arg-max";
  out.summary = "W_U with equal rows ties every logit: all " + std::to_string(a.T()) +
                " sequences 'memorized' with any labels under 'is the maximum logit', > H d_h + d = " +
                std::to_string(T0);
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/corollary-1-ties",
    "Boundary of the memorization definition: with ties allowed ('is the maximum logit'), a W_U with equal "
    "rows memorizes all N^S sequences with any labels, so memcert requires a strict arg-max.",
    "exact: the checker verifies that every row of W_U is equal and T > H d_h + d (kind \"dana24-claim\")",
    Expect::counterexample, "memorization with ties allowed", 4, generate, check}};

}  // namespace dana24_corollary_1_ties
}  // namespace memcert::proofs

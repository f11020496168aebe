#pragma once
// Shared by the dana24 claim files: instance shapes (N, S, d, d_h, H), random association sets on them,
// and the whole construction run as a claim check (certificate kind "dana24").
#include <set>
#include <string>

#include "../common.hpp"
#include "memcert/theory/dana24/construct.hpp"

namespace memcert::proofs::dana24_detail {

struct Shape {
  std::size_t N, S, d, dh, H;
};

struct AssocInstance {
  Shape shape;
  dana24::AssocData data;
  std::uint64_t seed;
};

// T = min(H d_h + d, N^S) distinct random sequences (all of them when T = N^S) with uniform labels,
// redrawn (seed + 1, ...) until at least `min_last` distinct last tokens occur (the construction's
// precondition n_last >= d, docs/papers/dana24.md 4.2(g)).
inline Instance assoc_instance(const Shape& s, std::uint64_t seed, std::size_t min_last) {
  std::size_t NS = 1;
  for (std::size_t k = 0; k < s.S; ++k) NS *= s.N;
  const std::size_t T = std::min(s.H * s.dh + s.d, NS);
  dana24::AssocData a;
  for (std::uint64_t sd = seed;; ++sd) {
    a = dana24::assoc_data_generate(s.N, s.S, T, sd, T == NS);
    if (dana24::assoc_distinct_last_tokens(a) >= min_last) break;
  }
  Instance inst;
  inst.params = {{"N", s.N}, {"S", s.S}, {"d", s.d}, {"dh", s.dh}, {"H", s.H}, {"T", T}};
  inst.data = AssocInstance{s, std::move(a), seed};
  return inst;
}

// Runs the construction; confirmed with a kind "dana24" certificate when every arg-max is certified.
inline InstanceResult construct_check(const Instance& inst, const std::string& claim) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  dana24::Dana24Options o;
  o.H = in.shape.H, o.dh = in.shape.dh, o.d = in.shape.d, o.seed = in.seed;
  dana24::Dana24Result r = dana24::dana24_construct(in.data, o);
  InstanceResult out;
  out.figures = dana24::dana24_summary_json(in.data, r, claim);
  out.figures.erase("timings");
  if (!r.memorized) {
    out.outcome = Outcome::undecided;
    out.summary = "the construction did not certify every sequence (not a counterexample)";
    return out;
  }
  out.certificate = dana24::dana24_certificate_json(in.data, r, claim);
  out.outcome = Outcome::confirmed;
  out.summary = std::to_string(in.data.T()) + " associations memorized (H d_h + d = " +
                std::to_string(in.shape.H * in.shape.dh + in.shape.d) + "), smallest certified margin " +
                out.figures["min_margin"].get<std::string>() + ", " +
                std::to_string(out.figures["parameters_remark2"].get<std::size_t>()) + " parameters (Remark 2 count)";
  return out;
}

// The certificate fields every dana24-claim shares: sizes and the association set.
inline nlohmann::json claim_base(const std::string& claim, const std::string& verdict, const dana24::AssocData& a) {
  nlohmann::json c{{"kind", "dana24-claim"}, {"claim", claim}, {"verdict", verdict}, {"N", a.N}, {"S", a.S},
                   {"sequences", a.sequences}};
  if (!a.next.empty()) c["next"] = a.next;
  return c;
}

}  // namespace memcert::proofs::dana24_detail

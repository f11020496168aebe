// dana24 Lemma 2 (heads only): there are rank-one W_QK^h and embeddings with rank A >= min(T_0, H d), A the
// attention before output. memcert draws rational e, pos, q_h, k_h (docs/papers/dana24.md section 5, steps 1-2),
// encloses A rigorously and certifies the rank with the Lemma 5 / Weyl enclosure test; the checker
// (kind "dana24-claim") recomputes the enclosure from the weights with MPFR. Instances include S < d,
// where the paper's proof does not apply (4.1(a)) but the conclusion is certified.
#include "dana24_instances.hpp"
#include "memcert/model/mha_enclosure.hpp"

namespace memcert::proofs {
namespace dana24_lemma_2 {
using namespace dana24_detail;

Instance generate(std::uint64_t seed, std::size_t index) {
  // (N, S, d, -, H): all N^S sequences. S >= d: (3,3,2,.,3), (3,3,3,.,5); S < d: (4,2,3,.,3..5).
  static const Shape shapes[] = {{3, 3, 2, 1, 3}, {3, 3, 3, 1, 5}, {4, 2, 3, 1, 3}, {4, 2, 3, 1, 4}, {4, 2, 3, 1, 5}};
  const Shape& s = shapes[index % 5];
  Instance inst;
  AssocInstance in{s, dana24::assoc_data_generate(s.N, s.S, 0, seed, true), seed};
  inst.params = {{"N", s.N}, {"S", s.S}, {"d", s.d}, {"H", s.H}, {"T", in.data.T()}};
  inst.data = std::move(in);
  return inst;
}

nlohmann::json dmat_json(const DMatrix& m) {
  return qmat_to_json(mat_map<Rational>(m, [](double x) { return rational_from_double(x); }));
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const AssocInstance&>(inst.data);
  const dana24::AssocData& a = in.data;
  const std::size_t d = in.shape.d, H = in.shape.H, T = a.T(), S = a.S;
  std::mt19937_64 rng(in.seed);
  dana24::BaseModel b;
  dana24::dana24_base_embeddings(a.N, S, d, rng, b);
  dana24::dana24_rank_one_heads(H, d, 1, rng, b);
  std::vector<DMatrix> contexts(T, DMatrix(S, d));
  DMatrix queries(T, d);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t i = 0; i < d; ++i) {
        contexts[t](s, i) = b.e(a.sequences[t][s], i) + b.pos(s, i);
        if (s == S - 1) queries(t, i) = contexts[t](s, i);
      }
  std::vector<DMatrix> WK(H, DMatrix(d, 1)), WQ(H, DMatrix(d, 1));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < d; ++i) WK[h](i, 0) = b.k(h, i), WQ[h](i, 0) = b.q(h, i);
  ZEnclosureDouble z = mha_z_enclosure_double(contexts, queries, WK, WQ, 1);  // T x Hd, row t = A(t)^T
  const bool transpose = T <= H * d;  // certify the rows of A^T (T of them) or of A (Hd of them)
  DMatrix c = transpose ? z.centre : mat_transpose(z.centre);
  DMatrix r = transpose ? z.radius : mat_transpose(z.radius);
  std::vector<std::size_t> rows(c.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  auto cert = enclosure_rank_lower_fast(c, r, rows);
  InstanceResult out;
  const std::size_t target = std::min(T, H * d);
  out.figures = {{"T", T}, {"Hd", H * d}, {"rank_A_lower", cert ? target : 0}, {"S_below_d", S < d}};
  if (!cert) {
    out.outcome = Outcome::undecided;
    out.summary = "rank A >= min(T, Hd) not certified for this draw (not a counterexample)";
    return out;
  }
  nlohmann::json j = claim_base("dana24/lemma-2", "confirmed", a);
  j.erase("next");
  j["d"] = d;
  j["H"] = H;
  j["e"] = dmat_json(b.e);
  j["pos"] = dmat_json(b.pos);
  j["q"] = dmat_json(b.q);
  j["k"] = dmat_json(b.k);
  j["mu"] = rational_to_string(cert->mu / 2);  // slack for the checker's own (tighter) enclosure
  out.certificate = j;
  out.outcome = Outcome::confirmed;
  out.summary = "rank A >= " + std::to_string(target) + " = min(T, Hd) certified (" + cert->method + ")" +
                (S < d ? "; S < d, where the paper's proof does not apply" : "");
  return out;
}

ClaimRegistrar reg{Claim{
    "dana24/lemma-2",
    "There are rank-one W_QK^h, embeddings e and pos such that the attention before output of H heads "
    "has rank >= min(T_0, H d) on T_0 sequences.",
    "rational e, pos, q_h, k_h; A enclosed (MPFR in the checker); sigma_min > 0 certified by the Lemma 5 "
    "enclosure test; checker kind \"dana24-claim\"",
    Expect::holds, "", 5, generate, check}};

}  // namespace
}  // namespace memcert::proofs

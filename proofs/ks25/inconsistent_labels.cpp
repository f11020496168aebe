// Boundary variants of ks25 Theorem 4.1, Corollary 4.1 and Theorem D.1: consistent labelling is necessary.
// The architecture of eq. (4) has no positional encoding, so it is permutation-equivariant: two sequences
// that are permutations of each other give, at positions holding the same token, the same output (for
// deep sets: the same multiset gives the same output). Drop the consistency hypothesis and the data below —
// generated data plus a permuted copy of one sequence relabelled — is memorized by no such network. The
// checker (kind "claim", src/checker/check_claim_ks_consistency.cpp) re-derives the pair: equal multisets
// (exact, sorted), equal tokens at the read positions, different labels. Second method: ks_prepare finds
// the data inconsistent.
#include <algorithm>

#include "../common.hpp"
#include "memcert/theory/ks25/construct.hpp"

namespace memcert::proofs {
namespace ks25_inconsistent_labels {

enum class Setting { next_token, seq_to_seq, multiset };
struct PairInstance {
  SequenceDataset ds;
  long C;
  Setting setting;
  std::size_t i = 0, j = 0, pos_i = 0, pos_j = 0;  // the planted pair and the positions read
};

// Sequence 0 copied with its tokens reversed, except that next-token data keep the last token in place.
Instance generate_for(Setting setting, std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][4] = {{6, 3, 2, 4}, {8, 4, 2, 5}, {10, 3, 3, 5}};  // N, n, d, V
  const auto& s = sizes[index % 3];
  const long C = 2 + static_cast<long>(index % 2);
  {
    SequenceDataset ds = setting == Setting::seq_to_seq ? ks25::ks_generate_seq2seq(s[0], s[1], s[2], s[3], C, seed, false)
                                                       : ks25::ks_generate(s[0], s[1], s[2], s[3], C, seed, false);
    const std::size_t n = s[1], keep = setting == Setting::next_token ? 1 : 0;
    std::vector<std::size_t> perm(n);
    for (std::size_t k = 0; k < n; ++k) perm[k] = k;
    std::reverse(perm.begin(), perm.end() - keep);
    QMatrix copy = mat_select_rows(ds.sequences[0], perm);
    PairInstance in;
    in.C = C;
    in.setting = setting;
    in.i = 0;
    in.j = ds.N();
    ds.sequences.push_back(copy);
    if (setting == Setting::seq_to_seq) {
      // The token at position 0 of the copy came from position perm[0]; give it another label there.
      std::vector<long> lab(n);
      for (std::size_t k = 0; k < n; ++k) lab[k] = ds.token_labels[0][perm[k]];
      lab[0] = (lab[0] + 1) % C;
      ds.token_labels.push_back(lab);
      in.pos_i = perm[0];
      in.pos_j = 0;
    } else {
      ds.labels.push_back((ds.labels[0] + 1) % C);
      in.pos_i = in.pos_j = n - 1;
    }
    in.ds = std::move(ds);
    Instance inst;
    inst.params = {{"N", in.ds.N()}, {"n", n}, {"d", s[2]}, {"C", C}, {"pair", {in.i, in.j}}};
    inst.data = std::move(in);
    return inst;
  }
}

nlohmann::json rows_json(const QMatrix& m) { return qmat_to_json(m); }

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const PairInstance&>(inst.data);
  InstanceResult r;
  ks25::KsPrepared prep = ks25::ks_prepare(in.ds, in.C, "generated");
  if (in.setting == Setting::multiset) {  // Theorem D.1's rule: equal multisets, equal labels
    ks25::KsOptions opt;
    opt.C = in.C;
    opt.threads = 1;
    prep = ks25::ks_construct_deep_set(prep, opt).prep;
  }
  r.figures = {{"ks_prepare_consistent", prep.consistent}};
  const long yi = in.setting == Setting::seq_to_seq ? in.ds.token_labels[in.i][in.pos_i] : in.ds.labels[in.i];
  const long yj = in.setting == Setting::seq_to_seq ? in.ds.token_labels[in.j][in.pos_j] : in.ds.labels[in.j];
  if (prep.consistent || yi == yj) {
    r.outcome = Outcome::confirmed;
    r.summary = "the planted pair is not inconsistent (not demonstrated)";
    return r;
  }
  static const char* names[] = {"next-token", "seq-to-seq", "multiset"};
  static const char* ids[] = {"ks25/theorem-4.1-inconsistent-labels", "ks25/corollary-4.1-inconsistent-labels",
                              "ks25/theorem-D.1-inconsistent-labels"};
  const int k = static_cast<int>(in.setting);
  r.certificate = detail::claim_cert(ids[k]);
  r.certificate["verdict"] = "counterexample";
  r.certificate["setting"] = names[k];
  r.certificate["sequences"] = {rows_json(in.ds.sequences[in.i]), rows_json(in.ds.sequences[in.j])};
  r.certificate["positions"] = {in.pos_i, in.pos_j};
  r.certificate["labels"] = {yi, yj};
  r.outcome = Outcome::counterexample;
  r.witness = {{"sequences", {in.i, in.j}}, {"positions", {in.pos_i, in.pos_j}}, {"labels", {yi, yj}}};
  r.summary = "sequences " + std::to_string(in.i) + " and " + std::to_string(in.j) + " are permutations of each other" +
              (in.setting == Setting::multiset ? "" : " with the same token at the read positions") + " but labelled " +
              std::to_string(yi) + " and " + std::to_string(yj) + ": no permutation-equivariant network fits both";
  return r;
}

const char* kRefutes = "memorization without the consistent-labelling hypothesis";

ClaimRegistrar reg41{Claim{
    "ks25/theorem-4.1-inconsistent-labels",
    "Boundary of Theorem 4.1: two sequences with the same multiset and the same last token but different labels "
    "are memorized by no Transformer of eq. (4) (no positional encoding: permutation-equivariant).",
    "the pair re-derived by the checker: multisets equal (exact, sorted), last tokens equal, labels different",
    Expect::counterexample, kRefutes, 3, [](std::uint64_t s, std::size_t i) { return generate_for(Setting::next_token, s, i); }, check}};

ClaimRegistrar reg_c41{Claim{
    "ks25/corollary-4.1-inconsistent-labels",
    "Boundary of Corollary 4.1: the same token in two sequences with the same multiset, labelled differently, "
    "is memorized by no permutation-equivariant seq-to-seq Transformer.",
    "the pair re-derived by the checker: multisets equal, tokens at the two positions equal, labels different",
    Expect::counterexample, kRefutes, 3, [](std::uint64_t s, std::size_t i) { return generate_for(Setting::seq_to_seq, s, i); }, check}};

ClaimRegistrar reg_d1{Claim{
    "ks25/theorem-D.1-inconsistent-labels",
    "Boundary of Theorem D.1: two orderings of one multiset with different labels are memorized by no deep set "
    "rho(sum_k phi(x_k)).",
    "the pair re-derived by the checker: multisets equal (exact, sorted), labels different",
    Expect::counterexample, kRefutes, 3, [](std::uint64_t s, std::size_t i) { return generate_for(Setting::multiset, s, i); }, check}};

}  // namespace
}  // namespace memcert::proofs

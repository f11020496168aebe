// ks25 Theorem D.1 (deep sets): multisets with consistent labels (equal multisets, equal labels) are
// memorized by rho(sum_k phi(x_k)) with ReLU networks phi, rho built as in Theorem 4.1. memcert reads each
// sequence as a multiset (permuted copies included, so invariance is exercised), builds the network in the
// Transformer format (f1 = phi~, uniform attention, f2 = rho~) in exact arithmetic; the certificate (kind
// "ks", claim "ks25/theorem-D.1", setting "next-token") is re-verified by the independent checker.
#include <algorithm>
#include <map>

#include "../common.hpp"
#include "memcert/theory/ks25/construct.hpp"

namespace memcert::proofs {
namespace ks25_theorem_D_1 {

struct DeepSetInstance {
  SequenceDataset ds;
  long C;
  std::uint64_t seed;
};

// An instance from a data set: a reversed copy of every other sequence added (same multiset, other
// order), labels then made a function of the multiset alone (the first sequence with that multiset fixes it).
Instance from_data(SequenceDataset ds, long C, std::uint64_t seed, nlohmann::json params);

Instance generate(std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][4] = {{6, 3, 2, 4}, {8, 3, 3, 5}, {10, 4, 2, 4}};  // N, n, d, V
  const auto& s = sizes[index % 3];
  long C = 2 + static_cast<long>(index % 2);
  return from_data(ks25::ks_generate(s[0], s[1], s[2], s[3], C, seed, false), C, seed,
                   {{"N", s[0]}, {"n", s[1]}, {"d", s[2]}, {"V", s[3]}, {"C", C}});
}

// `claims search` families (index % 4): 0 equal token sums (each sequence paired with one of equal sum but
// another multiset: sums alone do not identify multisets); 1 a two-token vocabulary in d = 1; 2
// near-collision tokens (scaled by 1/64); 3 long sequences (n = 12) over three tokens.
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"equal-token-sums", "two-token-vocabulary", "near-collision", "long-sequences"};
  static const std::size_t sizes[][4] = {{5, 3, 2, 4}, {8, 5, 1, 2}, {8, 3, 2, 5}, {6, 12, 2, 3}};  // N, n, d, V
  const std::size_t fam = index % 4;
  const auto& s = sizes[fam];
  const long C = 2 + static_cast<long>(index % 3);
  detail::Rng rng(seed);
  SequenceDataset ds = ks25::ks_generate(s[0], s[1], s[2], s[3], C, seed, false);
  if (fam == 0) {
    const std::size_t N0 = ds.N();
    for (std::size_t i = 0; i < N0; ++i) {
      QMatrix b = ds.sequences[i];
      for (std::size_t j = 0; j < b.cols(); ++j) {
        const Rational delta(rng.integer(1, 3), 2);
        b(0, j) += delta;
        b(1, j) -= delta;
      }
      ds.sequences.push_back(b);
      ds.labels.push_back((ds.labels[i] + 1) % C);
    }
  }
  if (fam == 2)
    for (auto& q : ds.sequences)
      for (auto& x : q.data()) x /= 64;
  return from_data(std::move(ds), C, seed, {{"family", names[fam]}, {"n", s[1]}, {"d", s[2]}, {"V", s[3]}, {"C", C}});
}

Instance from_data(SequenceDataset ds, long C, std::uint64_t seed, nlohmann::json params) {
  const std::size_t N0 = ds.N();
  for (std::size_t i = 0; i < N0; i += 2) {
    QMatrix rev = ds.sequences[i];
    for (std::size_t k = 0; k < rev.rows(); ++k)
      for (std::size_t j = 0; j < rev.cols(); ++j) rev(k, j) = ds.sequences[i](rev.rows() - 1 - k, j);
    ds.sequences.push_back(rev);
    ds.labels.push_back(ds.labels[i]);
  }
  ks25::KsPrepared p = ks25::ks_prepare(ds, C, "generated");
  std::map<std::size_t, long> by_multiset;
  for (std::size_t i = 0; i < ds.N(); ++i) {
    auto it = by_multiset.emplace(p.ms_index[i], ds.labels[i]).first;
    ds.labels[i] = it->second;
  }
  Instance inst;
  params["N"] = ds.N();
  inst.params = std::move(params);
  inst.data = DeepSetInstance{std::move(ds), C, seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const DeepSetInstance&>(inst.data);
  InstanceResult r;
  ks25::KsPrepared prep = ks25::ks_prepare(in.ds, in.C, "generated");
  ks25::KsOptions opt;
  opt.seed = in.seed;
  opt.C = in.C;
  opt.threads = 1;
  ks25::KsResult res = ks25::ks_construct_deep_set(prep, opt);
  if (!res.prep.consistent) {
    r.summary = "equal multisets carry different labels: hypothesis fails";
    return r;
  }
  r.figures = ks25::ks_summary_json(res);
  if (!res.memorized) {
    r.summary = "the deep-set construction did not memorize this instance (not a counterexample)";
    return r;
  }
  // Second look at invariance: permuted copies (same multiset) got equal predictions.
  for (std::size_t i = 0; i < in.ds.N(); ++i)
    for (std::size_t j = i + 1; j < in.ds.N(); ++j)
      if (prep.ms_index[i] == prep.ms_index[j] && res.predictions[i] != res.predictions[j]) {
        r.summary = "two orderings of one multiset got different predictions";
        return r;
      }
  r.certificate = ks25::ks_certificate_json(res);
  r.outcome = Outcome::confirmed;
  r.summary = "N = " + std::to_string(in.ds.N()) + " multisets (with permuted copies) memorized exactly by rho(sum phi): " +
              std::to_string(res.total.parameters) + " parameters, depth " + std::to_string(res.total.depth) +
              " (checker kind ks, claim ks25/theorem-D.1)";
  return r;
}

ClaimRegistrar reg{Claim{
    "ks25/theorem-D.1",
    "Consistently labelled multisets (equal multisets, equal labels) are memorized by a deep-set network "
    "rho(sum_k phi(x_k)) with ReLU networks phi and rho.",
    "Lemma B.3's phi~ and Lemma C.1's rho~ in the Transformer format (f1 = phi~, uniform attention, "
    "f2 = rho~), evaluated in exact rationals on every sequence including permuted copies; certificate "
    "kind \"ks\", claim \"ks25/theorem-D.1\"",
    Expect::holds, "", 3, generate, check, search}};

}  // namespace
}  // namespace memcert::proofs

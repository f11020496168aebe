// ks25 Theorem 4.1: token-wise separated, consistently labelled next-token data of N sequences is
// memorized by a Transformer of width 14 with O~(d + sqrt N) parameters. memcert builds the construction
// (include/memcert/theory/ks25/construct.hpp) in exact arithmetic on generated data; the certificate (kind
// "ks") is re-verified by the independent checker.
#include <map>

#include "../common.hpp"
#include "memcert/theory/ks25/construct.hpp"

namespace memcert::proofs {
namespace ks25_theorem_4_1 {

struct KsInstance {
  SequenceDataset ds;
  long C;
  std::uint64_t seed;
};

Instance generate(std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][4] = {{8, 3, 2, 4}, {12, 3, 3, 5}, {16, 4, 2, 4}};  // N, n, d, V
  const auto& s = sizes[index % 3];
  long C = 2 + static_cast<long>(index % 2);
  KsInstance in{ks25::ks_generate(s[0], s[1], s[2], s[3], C, seed, false), C, seed};
  Instance inst;
  inst.params = {{"N", s[0]}, {"n", s[1]}, {"d", s[2]}, {"V", s[3]}, {"C", C}};
  inst.data = std::move(in);
  return inst;
}

// Labels made consistent: a repeated (last token, multiset) key reuses the first label seen.
void make_consistent(SequenceDataset& ds, long C) {
  ks25::KsPrepared p = ks25::ks_prepare(ds, C, "generated");
  std::map<std::pair<std::size_t, std::size_t>, long> first;
  for (std::size_t i = 0; i < ds.N(); ++i) {
    auto it = first.emplace(std::make_pair(static_cast<std::size_t>(p.seq_ids[i].back()), p.ms_index[i]), ds.labels[i]).first;
    ds.labels[i] = it->second;
  }
}

// `claims search` families (index % 5): 0 equal token sums (each sequence gets a partner with the same
// last token and token sum but another multiset and another label: the data the linear-phi ablation cannot
// memorize); 1 a two-token vocabulary in d = 1 (multisets differ only by counts); 2 near-collision tokens
// (every token scaled by 1/64: separation delta ~ 1/128); 3 long sequences (n = 12) over three tokens;
// 4 float64 tokens taken exactly.
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"equal-token-sums", "two-token-vocabulary", "near-collision", "long-sequences", "float64"};
  const std::size_t fam = index % 5;
  const long C = 2 + static_cast<long>(index % 3);
  detail::Rng rng(seed);
  SequenceDataset ds;
  if (fam == 0) {
    ds = ks25::ks_generate(6, 3, 2, 4, C, seed, false);
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
  } else if (fam == 1) {
    ds = ks25::ks_generate(10, 5, 1, 2, C, seed, false);
  } else if (fam == 2) {
    ds = ks25::ks_generate(10, 3, 2, 5, C, seed, false);
    for (auto& q : ds.sequences)
      for (auto& x : q.data()) x /= 64;
  } else if (fam == 3) {
    ds = ks25::ks_generate(8, 12, 2, 3, C, seed, false);
  } else {
    ds = ks25::ks_generate(10, 3, 3, 6, C, seed, true);
  }
  make_consistent(ds, C);
  Instance inst;
  inst.params = {{"family", names[fam]}, {"N", ds.N()}, {"n", ds.n()}, {"d", ds.d()}, {"C", C}};
  inst.data = KsInstance{std::move(ds), C, seed};
  return inst;
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const KsInstance&>(inst.data);
  InstanceResult r;
  ks25::KsPrepared prep = ks25::ks_prepare(in.ds, in.C, "generated");
  ks25::KsOptions opt;
  opt.seed = in.seed;
  opt.C = in.C;
  opt.threads = 1;
  ks25::KsResult res = ks25::ks_construct(prep, opt);
  r.figures = ks25::ks_summary_json(res);
  if (!res.memorized) {
    r.outcome = Outcome::undecided;
    r.summary = "the construction did not memorize this instance (not a counterexample)";
    return r;
  }
  r.certificate = ks25::ks_certificate_json(res);
  r.outcome = Outcome::confirmed;
  r.summary = "N = " + std::to_string(in.ds.N()) + " sequences memorized exactly: width " +
              std::to_string(res.total.width) + ", depth " + std::to_string(res.total.depth) + ", " +
              std::to_string(res.total.parameters) + " parameters (checker kind ks)";
  return r;
}

ClaimRegistrar reg{Claim{
    "ks25/theorem-4.1",
    "Token-wise separated, consistently labelled next-token data of N sequences is memorized by a "
    "Transformer of width 14 with O~(d + sqrt N) parameters.",
    "the construction (Lemmas B.1-B.3, C.1, C.2) built and evaluated in exact rationals on every sequence; "
    "certificate kind \"ks\"",
    Expect::holds, "", 3, generate, check, search}};

}  // namespace
}  // namespace memcert::proofs

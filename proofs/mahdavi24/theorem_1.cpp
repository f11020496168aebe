// mahdavi24 Theorem 1: H heads, context size n <= d, Assumptions 1 and 2, d_v >= d_out, d >= d_out:
// any T <= H(r-1)+1 labelled examples (r = min(n, d_h)) can be memorized. memcert runs the construction
// of include/memcert/theory/mahdavi24/theorem1.hpp (Proposition 1's induction over heads + Step 2) on
// generated instances; its certificate (kind "theorem1") is re-verified by the independent checker. A
// construction that fails is reported as undecided, never as a counterexample: only a certificate can
// decide, and the construction failing is not a proof that no memorizing weights exist.
#include <algorithm>

#include "../common.hpp"
#include "memcert/checker/checker.hpp"
#include "memcert/theory/mahdavi24/joint_scales.hpp"
#include "memcert/theory/mahdavi24/theorem1.hpp"

namespace memcert::proofs {
namespace mahdavi24_theorem_1 {

struct T1Instance {
  AttentionDataset ds;
  std::size_t H, dh;
  std::uint64_t seed;
  std::string scale = "proof";  // Theorem1Options::scale (search: also weyl and network)
};

// An instance of sizes {H, n, d, d_h} with T = H(r-1)+1 + extra generated examples.
// exact_n: queries of Kruskal rank EXACTLY n (Assumption 1 at its boundary: some n+1 queries are dependent).
Instance t1_instance(const std::size_t (&s)[4], std::size_t extra, std::uint64_t seed, bool with_r, bool exact_n = false) {
  std::size_t H = s[0], n = s[1], d = s[2], dh = s[3], r = std::min(n, dh), T = H * (r - 1) + 1 + extra;
  std::optional<std::size_t> K;
  if (exact_n && n + 1 <= T && n <= d) K = n;
  T1Instance in{mahdavi24::generate_attention_dataset("theorem1", T, n, d, std::nullopt, seed, K), H, dh, seed};
  Instance inst;
  inst.params = {{"H", H}, {"n", n}, {"d", d}, {"dh", dh}, {"T", T}};
  if (K) inst.params["kruskal_exactly"] = *K;
  if (with_r) inst.params["r"] = r;
  inst.data = std::move(in);
  return inst;
}

// The construction, its certificate accepted by the independent checker: at c_network a refused
// certificate is rebuilt at the next grid value (theorem1_construct_accepted), so what is claimed is what
// the checker re-derives. A certificate refused at another scale is returned as is (the claims run then
// counts the instance as undecided).
mahdavi24::Theorem1Result construct_checked(const AttentionDataset& ds, const mahdavi24::Theorem1Options& opt) {
  return mahdavi24::theorem1_construct_accepted(ds, opt, [](mahdavi24::Theorem1Result& r) {
    return memcert_checker::verify_certificate_text(r.certificate.dump()).valid;
  });
}

mahdavi24::Theorem1Options t1_options(const T1Instance& in) {
  mahdavi24::Theorem1Options opt;
  opt.H = in.H;
  opt.dh = in.dh;
  opt.seed = in.seed;
  opt.scale = in.scale;
  opt.saturation = in.scale != "proof";  // weyl / network need the scales
  return opt;
}

Instance generate(std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][4] = {{2, 2, 4, 2}, {3, 2, 4, 2}, {2, 3, 5, 3}, {3, 3, 6, 4}, {4, 2, 3, 2}};
  return t1_instance(sizes[index % 5], 0, seed, false, /*exact_n=*/index % 2 == 1);
}

InstanceResult check(const Instance& inst) {
  const auto& in = std::any_cast<const T1Instance&>(inst.data);
  InstanceResult r;
  const mahdavi24::Theorem1Options opt = t1_options(in);
  try {
    mahdavi24::Theorem1Result res = construct_checked(in.ds, opt);
    r.figures = {{"T_star", res.T_star}, {"r", res.r}, {"rank_Z_lower", res.rank_Z_lower},
                 {"max_label_error", res.max_label_error}, {"memorized", res.memorized}};
    r.certificate = res.certificate;
    if (res.memorized && res.rank_Z_lower == res.T_star) {
      r.outcome = Outcome::confirmed;
      r.summary = "T* = H(r-1)+1 = " + std::to_string(res.T_star) + " examples memorized: certified rank Z = " +
                  std::to_string(res.rank_Z_lower) + ", every label within the tolerance (checker kind theorem1)";
    } else {
      r.outcome = Outcome::undecided;
      r.summary = "the construction did not certify memorization on this instance (not a counterexample)";
    }
  } catch (const mahdavi24::HypothesisFailure& e) {
    r.outcome = Outcome::undecided;
    r.summary = std::string("hypothesis failed on the generated data: ") + e.what();
    r.figures = {{"hypothesis_failure", e.witness}};
  } catch (const std::runtime_error& e) {  // no certificate at the chosen scale: nothing decided
    r.outcome = Outcome::undecided;
    r.summary = std::string("not certified: ") + e.what();
  }
  return r;
}

// Proposition 1: weights with rank Z >= min(T, H(r-1)+1), here with MORE examples than H(r-1)+1 and with
// d_h > n (r = min(n, d_h) stays n).
Instance generate_prop1(std::uint64_t seed, std::size_t index) {
  static const std::size_t sizes[][4] = {{2, 2, 4, 3}, {3, 2, 4, 2}, {2, 3, 5, 5}};  // H n d dh
  return t1_instance(sizes[index % 3], 2, seed, true);
}

InstanceResult check_prop1(const Instance& inst) {
  const auto& in = std::any_cast<const T1Instance&>(inst.data);
  InstanceResult r;
  const mahdavi24::Theorem1Options opt = t1_options(in);
  std::size_t rr = std::min(in.ds.n(), in.dh), target = std::min(in.ds.T(), in.H * (rr - 1) + 1);
  try {
    auto res = construct_checked(in.ds, opt);
    r.figures = {{"rank_Z_lower", res.rank_Z_lower}, {"target", target}, {"T", in.ds.T()}};
    r.certificate = res.certificate;
    if (res.rank_Z_lower >= target) {
      r.outcome = Outcome::confirmed;
      r.summary = "certified rank Z >= " + std::to_string(res.rank_Z_lower) + " = min(T, H(r-1)+1) with r = min(n, d_h) = " +
                  std::to_string(rr);
    } else {
      r.outcome = Outcome::undecided;
      r.summary = "the construction certified only rank " + std::to_string(res.rank_Z_lower);
    }
  } catch (const mahdavi24::HypothesisFailure& e) {
    r.outcome = Outcome::undecided;
    r.summary = std::string("hypothesis failed on the generated data: ") + e.what();
  } catch (const std::runtime_error& e) {  // no certificate at the chosen scale: nothing decided
    r.outcome = Outcome::undecided;
    r.summary = std::string("not certified: ") + e.what();
  }
  return r;
}

// `claims search` families (index % 7): 0 queries of Kruskal rank exactly n; 1 an integer lattice (entries
// in {-1, 0, 1}); 2 repeated tokens (every context a row permutation of one token set); 3 near-singular
// contexts (two tokens 1/4096 apart); 4 tiny dimensions (H = 3, n = 2, d = 3, T* = 4) built at every
// head's c_weyl; 5 the same sizes as family 0 built at c_network (one common c); 6 the joint-scales data
// (joint_scales.hpp: one shared context, e^(4) - e^(3) orthogonal to R_1's queries, where per-head scales
// break the rank) built at c_network.
Instance search(std::uint64_t seed, std::size_t index) {
  static const char* names[] = {"kruskal-exactly-n", "lattice", "repeated-tokens", "near-singular", "tiny-weyl", "network",
                                "joint-scales"};
  static const std::size_t sizes[][4] = {{2, 2, 4, 2}, {3, 2, 4, 2}, {2, 3, 5, 3}, {3, 3, 6, 4}};
  const std::size_t fam = index % 7;
  if (fam == 6) {
    T1Instance in{mahdavi24::generate_joint_scales_dataset(3, seed), 3, 2, seed, "network"};
    Instance inst;
    inst.params = {{"family", names[fam]}, {"H", 3}, {"n", 2}, {"d", 3}, {"dh", 2}, {"T", 4}, {"scale", in.scale}};
    inst.data = std::move(in);
    return inst;
  }
  detail::Rng rng(seed);
  std::size_t s4[4] = {3, 2, 3, 2};
  if (fam != 4)
    for (int i = 0; i < 4; ++i) s4[i] = sizes[rng.index(4)][i];
  const std::size_t H = s4[0], n = s4[1], d = s4[2], dh = s4[3], T = H * (std::min(n, dh) - 1) + 1;
  // Kruskal rank exactly n where the sizes allow it (n <= T-1, n <= d), else the largest such K.
  const std::size_t K = std::min({n, T - 1, d});
  T1Instance in{mahdavi24::generate_attention_dataset("theorem1", T, n, d, std::nullopt, seed,
                                                      (fam == 0 || fam == 5) && K >= 1 ? std::optional<std::size_t>(K) : std::nullopt),
                H, dh, seed};
  if (fam == 1 || fam == 2 || fam == 3) {
    QMatrix base;
    do base = rng.int_matrix(n, d, fam == 1 ? 1 : 5); while (qmat_rank(base) < n);
    for (std::size_t t = 0; t < T; ++t) {
      QMatrix& E = in.ds.contexts[t];
      if (fam == 2) {
        std::vector<std::size_t> perm(n);
        for (std::size_t i = 0; i < n; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng.g);
        E = mat_select_rows(base, perm);
      } else {
        do {
          E = rng.int_matrix(n, d, fam == 1 ? 1 : 5);
          if (fam == 3)
            for (std::size_t j = 0; j < d; ++j) E(1, j) = E(0, j) + Rational(rng.integer(-1, 1), 4096);
        } while (qmat_rank(E) < n);
      }
    }
    if (fam == 1) in.ds.queries = rng.int_matrix(T, d, 1);
  }
  if (fam == 4) in.scale = "weyl";
  if (fam == 5) in.scale = "network";
  Instance inst;
  inst.params = {{"family", names[fam]}, {"H", H}, {"n", n}, {"d", d}, {"dh", dh}, {"T", T}, {"scale", in.scale}};
  inst.data = std::move(in);
  return inst;
}

ClaimRegistrar reg_prop1{Claim{
    "mahdavi24/proposition-1",
    "Under the conditions of Theorem 1 there are attention weights with rank Z >= min(T, H(r-1)+1), "
    "r = min(n, d_h) (instances include T > H(r-1)+1 and d_h > n).",
    "the construction's certified rank of Z on the chosen H(r-1)+1 examples (a submatrix of Z); certificate kind "
    "\"theorem1\"",
    Expect::holds, "", 3, generate_prop1, check_prop1, search}};

ClaimRegistrar reg{Claim{
    "mahdavi24/theorem-1",
    "With n <= d, Assumptions 1 and 2, d_v >= d_out and d >= d_out, an H-head attention layer memorizes any "
    "T <= H(r-1)+1 labelled examples, r = min(n, d_h).",
    "the step-by-step construction (Claim 1, Lemma 3, quantitative Lemma 4, Weyl/Lemma 5 with certified "
    "Gram ranks, Step 2 read-out with interval-enclosed predictions); certificate kind \"theorem1\"",
    Expect::holds, "", 3, generate, check, search}};

}  // namespace
}  // namespace memcert::proofs

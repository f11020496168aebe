// Walkthrough of the ks25 Theorem 4.1 construction on a small data set: every stage of docs/THEORY.md
// section 5, printed, then the exact end-to-end verification and the independent checker.
//   example_ks_walkthrough [N n d V C seed]
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "memcert/checker/checker.hpp"
#include "memcert/theory/ks25/construct.hpp"

using namespace memcert;
using namespace memcert::ks25;

int main(int argc, char** argv) {
  auto arg = [&](int i, long def) { return argc > i ? std::atol(argv[i]) : def; };
  const std::size_t N = arg(1, 30), n = arg(2, 4), d = arg(3, 3), V = arg(4, 12);
  const long C = arg(5, 3);
  const std::uint64_t seed = arg(6, 1);

  SequenceDataset ds = ks_generate(N, n, d, V, C, seed, false);
  KsPrepared P = ks_prepare(ds, C, "walkthrough");
  std::cout << "Data: N=" << N << " sequences of n=" << n << " tokens in R^" << d << ", C=" << C << "\n";
  std::cout << "0. checks: r^2 = " << rational_to_string(P.r2) << ", delta^2 = " << rational_to_string(P.delta2)
            << " (exact); consistently labeled: " << (P.consistent ? "yes" : "NO") << "\n";
  std::cout << "1. multisets: " << P.distinct_multisets.size() << " distinct, " << P.tokens.size()
            << " distinct tokens\n";

  auto A = lemmaB1_distinguishing_tokens(P.distinct_multisets);
  std::cout << "2. Lemma B.1: |A| = " << A.size() << " distinguishing tokens (<= N = " << P.distinct_multisets.size()
            << ")\n";
  auto W = lemmaB2_token_weights(P.distinct_multisets, A, seed);
  std::cout << "3. Lemma G.1/B.2: integer direction with K = " << W.g1.K << " (attempts " << W.g1.attempts
            << "), certified Park ratio min (v.d)^2/(|v|^2|d|^2) = "
            << (W.g1.ratio_certified ? rational_to_string(W.g1.min_ratio2) : std::string("n/a"))
            << " vs paper's 8/(pi d N^4) = " << W.g1.park_bound2 << "; weight sums distinct, min gap "
            << W.min_gap.get_str() << "\n";
  KsOptions o;
  o.seed = seed;
  KsResult r = ks_construct(P, o);
  const TokenProjection& F = r.phi.c1.stage1;  // the F inside f1 (stage I of phi~)
  std::cout << "4. Lemma C.2: F(x) = ReLU(" << rational_to_string(F.alpha) << " u.x + " << rational_to_string(F.beta)
            << "), values in [2, " << rational_to_string(F.max_value) << "], min gap " << rational_to_string(F.min_gap)
            << "\n";

  std::cout << "5-6. Lemma C.1 / B.3 (phi~): " << r.phi.c1.labeled << " labeled tokens in " << r.phi.c1.m
            << " groups of k=" << r.phi.c1.k << ", fields of B=" << r.phi.c1.B << " bits; f1 depth "
            << r.f1c.depth << ", width " << r.f1c.width << "\n";
  std::cout << "7. attention W_O W_V = [[0,0,0],[0,0,0],[1,0,0]]; context of sequence 0: (";
  for (std::size_t j = 0; j < 3; ++j) std::cout << (j ? ", " : "") << rational_to_string(r.contexts[0][j]);
  std::cout << "); eq. (55) min ||s - s'||^2 = " << rational_to_string(r.eq55_min_dist2) << " >= 1/n^2: "
            << (r.eq55_holds ? "yes" : "NO") << "\n";
  std::cout << "8. F2 (Lemma C.1 on " << r.f2info.stage1.values.size() << " contexts): depth " << r.f2c.depth
            << ", k=" << r.f2info.k << ", m=" << r.f2info.m << ", B=" << r.f2info.B << "\n";
  std::cout << "9. exact evaluation: memorized = " << (r.memorized ? "yes" : "NO") << "; parameters "
            << r.total.parameters << " (non-zero " << r.total.nonzero_parameters << "), depth " << r.total.depth
            << ", width " << r.total.width << ", bit complexity " << r.total.bit_complexity << "\n";
  auto v = memcert_checker::verify_certificate_text(ks_certificate_json(r).dump());
  std::cout << "   independent checker: " << (v.valid ? "valid" : "REJECTED: " + v.reason) << "\n";
  return r.memorized && v.valid ? 0 : 1;
}

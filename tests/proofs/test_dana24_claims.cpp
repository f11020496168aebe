// dana24 claim certificates (kind "dana24-claim"): every registered instance re-verifies (the generic
// claims test), and here each kind of evidence, altered, is rejected by the checker.
#include "catch.hpp"

#include <gmpxx.h>

#include "memcert/checker/checker.hpp"
#include "memcert/proofs/registry.hpp"

using namespace memcert::proofs;

namespace {
nlohmann::json first_certificate(const std::string& id) {
  const Claim* c = claim_find(id);
  REQUIRE(c);
  ClaimRun run = claim_run(*c, 1, 3);
  REQUIRE(run.records.size() == 1);
  REQUIRE(run.records[0].certificate_verified);
  return run.records[0].result.certificate;
}
bool valid(const nlohmann::json& j) { return memcert_checker::verify_certificate_text(j.dump()).valid; }
}  // namespace

TEST_CASE("dana24-claim certificates: altered evidence is rejected", "[proofs][dana]") {
  for (const char* id : {"dana24/lemma-2", "dana24/lemma-2-s1", "dana24/corollary-1-no-heads",
                         "dana24/theorem-1-proof-rank-ceiling", "dana24/experiment-6-dh-gt-d",
                         "dana24/proposition-3-d1", "dana24/proposition-2", "dana24/proposition-3"}) {
    INFO(id);
    const nlohmann::json good = first_certificate(id);
    CHECK(valid(good));
    nlohmann::json flipped = good;
    flipped["verdict"] = good["verdict"] == "confirmed" ? "counterexample" : "confirmed";
    CHECK_FALSE(valid(flipped));
    nlohmann::json other = good;
    other["claim"] = std::string(id) == "dana24/lemma-2" ? "dana24/proposition-2" : "dana24/lemma-2";
    CHECK_FALSE(valid(other));
  }
  // Lemma 2: mu above sigma_min^2 of the recomputed A; a head that no longer matches the enclosure's mu.
  nlohmann::json l2 = first_certificate("dana24/lemma-2");
  nlohmann::json big = l2;
  big["mu"] = "1000000";
  CHECK_FALSE(valid(big));
  nlohmann::json dup = l2;  // a repeated sequence
  dup["sequences"][1] = dup["sequences"][0];
  CHECK_FALSE(valid(dup));
  // No heads: a pair whose next tokens agree is no witness.
  nlohmann::json v1 = first_certificate("dana24/corollary-1-no-heads");
  nlohmann::json same = v1;
  same["next"][same["pair"][1].get<std::size_t>()] = same["next"][same["pair"][0].get<std::size_t>()];
  CHECK_FALSE(valid(same));
  nlohmann::json heads = v1;
  heads["H"] = 1;
  CHECK_FALSE(valid(heads));
  // Rank ceiling: one more distinct last token lifts the ceiling to T (V2 instance: all share token 0).
  nlohmann::json v2 = first_certificate("dana24/theorem-1-proof-rank-ceiling");
  nlohmann::json lifted = v2;
  for (std::size_t t = 0; t < 3; ++t) lifted["sequences"][t][lifted["S"].get<std::size_t>() - 1] = t + 1;
  CHECK_FALSE(valid(lifted));
  // d = 1: two labels only is no witness.
  nlohmann::json v7 = first_certificate("dana24/proposition-3-d1");
  nlohmann::json two = v7;
  for (auto& x : two["next"]) x = 0;
  two["next"][0] = 1;
  CHECK_FALSE(valid(two));
  // Proposition 3: two equal circle points (delta = 0), or lambda = 0.
  nlohmann::json p3 = first_certificate("dana24/proposition-3");
  nlohmann::json twin = p3;
  twin["s"][1] = twin["s"][0];
  CHECK_FALSE(valid(twin));
  nlohmann::json flat = p3;
  flat["lambda"] = "0";
  CHECK_FALSE(valid(flat));
  // Proposition 2: malformed logits; a context replaced by another (the chosen minor then has
  // two equal columns).
  nlohmann::json p2 = first_certificate("dana24/proposition-2");
  nlohmann::json shifted = p2;
  for (auto& row : shifted["logits"])
    for (auto& x : row) x = "1/0";  // not a number: rejected as malformed
  CHECK_FALSE(valid(shifted));
  nlohmann::json copied = p2;
  const std::size_t c0 = p2["minor_cols"][0], c1 = p2["minor_cols"][1];
  copied["logits"][c0] = copied["logits"][c1];
  CHECK_FALSE(valid(copied));
}

TEST_CASE("dana24/theorem-2: the bracket, the distribution and C are re-derived", "[proofs][dana]") {
  const nlohmann::json good = first_certificate("dana24/theorem-2");
  CHECK(valid(good));
  // A lambda below the root is not an upper end of the bracket: 0 has phi(0) = log N > -H.
  nlohmann::json bad = good;
  bad["conditionals"][0]["lambda_hi"] = "0";
  CHECK(!valid(bad));
  // A lambda far above the root brackets it, but lambda_hi * D then exceeds the bound.
  bad = good;
  bad["conditionals"][0]["lambda_hi"] = "1000000";
  CHECK(!valid(bad));
  // Not a distribution: first entry doubled.
  bad = good;
  mpq_class p(bad["conditionals"][0]["pi"][0].get<std::string>());
  p *= 2;
  bad["conditionals"][0]["pi"][0] = p.get_str();
  CHECK(!valid(bad));
  // C must bound |W W^T - I| and stay below 1/2.
  bad = good;
  bad["C"] = "1/2";
  CHECK(!valid(bad));
  bad = good;
  bad["C"] = "1/100";
  CHECK(!valid(bad));
  // Second method: on W = I (C = 0) the bound is attained with equality, lambda = log((N-1)/(e^{-H} - 1))
  // and d_KL = (1 - pi_g) lambda, so a certificate there cannot certify "<=" with any lambda_hi above the root.
  bad = good;
  bad["B"] = {{"1", "0", "0", "0"}, {"0", "1", "0", "0"}, {"0", "0", "1", "0"}, {"0", "0", "0", "1"}};
  bad["scale"] = "1";
  bad["C"] = "0";
  bad["conditionals"] = {{{"pi", {"1/2", "1/4", "1/8", "1/8"}}, {"g", 0}, {"lambda_hi", "23844/100000"}}};  // root 0.2384325...
  CHECK(!valid(bad));
}

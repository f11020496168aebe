// The joint-scales family (per-head saturation scales do not compose) and the ks25 consistency boundaries:
// properties of the generated data by brute force, the identical rows by a second method (the model's
// double forward pass: equal outputs at the per-head scales, different at the proof's), and the checker
// rejecting altered certificates.
#include "catch.hpp"

#include <cmath>

#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/linalg/qmat/qmat.hpp"
#include "memcert/model/mha.hpp"
#include "memcert/proofs/registry.hpp"
#include "memcert/theory/mahdavi24/joint_scales.hpp"

using namespace memcert;
using namespace memcert::proofs;

namespace {
bool valid(const nlohmann::json& cert) { return memcert_checker::verify_certificate_text(cert.dump()).valid; }
QVector row(const QMatrix& m, std::size_t t) { return QVector(m.row(t), m.row(t) + m.cols()); }
double max_abs_diff(const MhaDoublePass& a, const MhaDoublePass& b) {
  double m = 0;
  for (std::size_t h = 0; h < a.p.size(); ++h)
    for (std::size_t k = 0; k < a.p[h].size(); ++k) m = std::max(m, std::abs(a.p[h][k] - b.p[h][k]));
  return m;
}
}  // namespace

TEST_CASE("joint-scales data: shared context, orthogonal query difference, general position (brute force)", "[proofs][scales]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    for (std::size_t d : {3u, 4u}) {
      AttentionDataset ds = mahdavi24::generate_joint_scales_dataset(d, seed);
      REQUIRE(ds.T() == 4);
      CHECK(qmat_rank(ds.contexts[0]) == 2);
      for (std::size_t t = 1; t < 4; ++t) CHECK(ds.contexts[t] == ds.contexts[0]);
      for (std::size_t t : {0u, 1u}) {
        Rational dot = 0;
        for (std::size_t k = 0; k < d; ++k) dot += (ds.queries(3, k) - ds.queries(2, k)) * ds.queries(t, k);
        CHECK(dot == 0);
      }
      // Every min(4, d)-subset of the queries independent (general position).
      const std::size_t k = std::min<std::size_t>(4, d);
      for (unsigned mask = 0; mask < 16; ++mask)
        if (static_cast<std::size_t>(__builtin_popcount(mask)) == k) {
          std::vector<std::size_t> idx;
          for (std::size_t t = 0; t < 4; ++t)
            if (mask & (1u << t)) idx.push_back(t);
          CHECK(qmat_rank(mat_select_rows(ds.queries, idx)) == k);
        }
      CHECK((*ds.labels)(2, 0) != (*ds.labels)(3, 0));
    }
  }
  CHECK_THROWS(mahdavi24::generate_joint_scales_dataset(2, 1));
}

TEST_CASE("per-head scales: identical rows of Z by the model's forward pass, distinct at the proof's scales", "[proofs][scales]") {
  const Claim* c = claim_find("mahdavi24/theorem-1-per-head-scales");
  REQUIRE(c);
  REQUIRE(c->expect == Expect::counterexample);
  ClaimRun run = claim_run(*c, 3, 77);
  REQUIRE(run.records.size() == 3);
  CHECK(run.holds());
  for (const auto& rec : run.records) {
    REQUIRE(rec.result.outcome == Outcome::counterexample);
    CHECK(rec.certificate_verified);
    const nlohmann::json& cert = rec.result.certificate;
    // Rebuild the data and both weight settings from the certificate and run the model (double pass).
    AttentionDataset ds;
    for (const auto& E : cert["construction"]["data"]["contexts"]) ds.contexts.push_back(json_to_qmat(E, "cert", "m"));
    ds.queries = json_to_qmat(cert["construction"]["data"]["queries"], "cert", "m");
    MhaWeights proof_w, scaled_w;
    for (std::size_t h = 0; h < 3; ++h) {
      MhaHead ph, sh;
      ph.WK = json_to_qmat(cert["construction"]["weights"]["heads"][h]["WK"], "cert", "m");
      ph.WQ = json_to_qmat(cert["construction"]["weights"]["heads"][h]["WQ"], "cert", "m");
      ph.WV = json_to_qmat(cert["construction"]["weights"]["heads"][h]["WV"], "cert", "m");
      sh = ph;
      sh.WK = json_to_qmat(cert["heads"][h]["WK"], "cert", "m");
      sh.WQ = json_to_qmat(cert["heads"][h]["WQ"], "cert", "m");
      proof_w.heads.push_back(ph);
      scaled_w.heads.push_back(sh);
    }
    proof_w.WO = scaled_w.WO = json_to_qmat(cert["construction"]["weights"]["WO"], "cert", "m");
    proof_w.WD = scaled_w.WD = json_to_qmat(cert["construction"]["weights"]["WD"], "cert", "m");
    const std::size_t i = cert["rows"][0], j = cert["rows"][1];
    auto at = [&](const MhaWeights& w, std::size_t t) { return mha_forward_double(ds.contexts[t], row(ds.queries, t), w, false); };
    CHECK(max_abs_diff(at(scaled_w, i), at(scaled_w, j)) < 1e-12);
    CHECK(max_abs_diff(at(proof_w, i), at(proof_w, j)) > 1e-6);
    // Every rescaled saturating head is positive and differs from the proof's scale.
    for (std::size_t h = 1; h < 3; ++h) {
      mpq_class s(cert["scales"][h].get<std::string>()), cp(cert["construction"]["trace"][h]["c"].get<std::string>());
      CHECK(s > 0);
      CHECK(s != cp);
    }
    // Altered evidence is rejected.
    auto bad = cert;
    mpq_class s1(bad["scales"][1].get<std::string>());
    s1 += 1;
    bad["scales"][1] = s1.get_str();
    CHECK(!valid(bad));
    bad = cert;
    bad["rows"] = {0, 1};
    CHECK(!valid(bad));
    bad = cert;
    bad["heads"][2] = cert["construction"]["weights"]["heads"][2];  // head 3 back at the proof's scale
    CHECK(!valid(bad));
    bad = cert;
    bad["construction"]["data"]["queries"][3][0] = "7/3";
    CHECK(!valid(bad));
    bad = cert;
    bad["verdict"] = "confirmed";
    CHECK(!valid(bad));
    bad = cert;
    bad["scales"][0] = "1";  // head 1 has no saturating term
    CHECK(!valid(bad));
    bad = cert;
    bad["construction"]["skip"] = true;  // with the skip connection equal rows no longer mean equal outputs
    CHECK(!valid(bad));
  }
}

TEST_CASE("ks25 boundaries: inconsistent labels and the linear-phi ablation fail as stated", "[proofs][ks25]") {
  for (const char* id : {"ks25/theorem-4.1-inconsistent-labels", "ks25/corollary-4.1-inconsistent-labels",
                         "ks25/theorem-D.1-inconsistent-labels", "ks25/theorem-4.1-linear-phi"}) {
    const Claim* c = claim_find(id);
    REQUIRE(c);
    ClaimRun run = claim_run(*c, 3, 11);
    INFO(id << "\n" << claim_run_json(run).dump(1));
    CHECK(run.holds());
    for (const auto& rec : run.records) {
      CHECK(rec.result.outcome == Outcome::counterexample);
      CHECK(rec.certificate_verified);
    }
  }
  const Claim* c = claim_find("ks25/theorem-4.1-inconsistent-labels");
  auto cert = claim_run(*c, 1, 5).records.at(0).result.certificate;
  REQUIRE(valid(cert));
  auto bad = cert;
  bad["labels"][1] = bad["labels"][0];
  CHECK(!valid(bad));  // equal labels: no conflict
  bad = cert;
  bad["sequences"][1][0][0] = "1/7";
  CHECK(!valid(bad));  // no longer a permutation
  bad = cert;
  bad["positions"] = {0, 0};
  CHECK(!valid(bad));  // next-token reads the last token
  bad = cert;
  bad["claim"] = "ks25/theorem-D.1-inconsistent-labels";
  CHECK(!valid(bad));  // the setting names the claim
}

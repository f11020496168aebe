// dana24 claim certificates (kind "dana24-claim"): every registered instance re-verifies (the generic
// claims test), and here each kind of evidence, altered, is rejected by the checker.
#include "catch.hpp"

#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

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

namespace {
// Second method for Theorem 1 with epsilon > 0: eq. (2) in long double straight from the certificate's
// exact weights (parsed here, no engine or checker code), KL(softmax z || softmax y) by log-sum-exp, and
// ||W E||_2 by power iteration on (W E)^T (W E). Returns {d_KL(pi, T), eps ||W E||_2}.
using LD = long double;
LD ld(const nlohmann::json& s) { return static_cast<LD>(mpq_class(s.get<std::string>()).get_d()); }
LD ld_exact(const nlohmann::json& s) {  // the weights are dyadic: numerator / 2^k, exact in long double when short
  mpq_class q(s.get<std::string>());
  return static_cast<LD>(q.get_num().get_d()) / static_cast<LD>(q.get_den().get_d());
}
LD lse(const std::vector<LD>& y) {
  LD m = y[0];
  for (LD x : y) m = std::max(m, x);
  LD s = 0;
  for (LD x : y) s += std::exp(x - m);
  return m + std::log(s);
}
std::pair<LD, LD> theorem1_eps_second_method(const nlohmann::json& c) {
  const std::size_t N = c["N"], S = c["S"], d = c["d"], dh = c["dh"], H = c["H"], T = c["sequences"].size();
  const auto& w = c["weights"];
  auto W = [&](const char* k, std::size_t h, std::size_t r, std::size_t i) { return ld_exact(w[k][h][r][i]); };
  LD kl = 0;
  std::vector<std::vector<LD>> WE(T, std::vector<LD>(N, 0));
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<std::vector<LD>> x(S, std::vector<LD>(d));
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t i = 0; i < d; ++i)
        x[s][i] = ld_exact(w["e"][c["sequences"][t][s].get<std::size_t>()][i]) + ld_exact(w["pos"][s][i]);
    std::vector<LD> E = x[S - 1];
    for (std::size_t h = 0; h < H; ++h) {
      std::vector<LD> score(S, 0), A(d, 0);
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t r = 0; r < dh; ++r) {
          LD q = 0, k = 0;
          for (std::size_t i = 0; i < d; ++i) q += W("WQ", h, r, i) * x[S - 1][i], k += W("WK", h, r, i) * x[s][i];
          score[s] += q * k;
        }
      const LD l = lse(score);
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t i = 0; i < d; ++i) A[i] += std::exp(score[s] - l) * x[s][i];
      for (std::size_t r = 0; r < dh; ++r) {
        LD v = 0;
        for (std::size_t i = 0; i < d; ++i) v += W("WV", h, r, i) * A[i];
        for (std::size_t i = 0; i < d; ++i) E[i] += W("WO", h, i, r) * v;
      }
    }
    std::vector<LD> y(N, 0), z(N);
    for (std::size_t j = 0; j < N; ++j) {
      z[j] = ld(c["logits"][t][j]);
      for (std::size_t i = 0; i < d; ++i) {
        y[j] += ld_exact(w["WU"][j][i]) * E[i];
        WE[t][j] += ld_exact(w["WU"][j][i]) * ld(c["E"][t][i]);
      }
    }
    const LD lz = lse(z), ly = lse(y);
    LD klt = 0;
    for (std::size_t j = 0; j < N; ++j) klt += std::exp(z[j] - lz) * ((z[j] - lz) - (y[j] - ly));
    kl += ld(c["prior"][t]) * klt;
  }
  std::vector<LD> v(T, 1);
  LD norm = 0;
  for (int it = 0; it < 500; ++it) {
    std::vector<LD> u(N, 0), v2(T, 0);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < N; ++j) u[j] += WE[t][j] * v[t];
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < N; ++j) v2[t] += WE[t][j] * u[j];
    LD n = 0;
    for (LD x : v2) n += x * x;
    n = std::sqrt(n);
    LD vn = 0;
    for (LD x : v) vn += x * x;
    norm = std::sqrt(n / std::sqrt(vn));  // ||A^T A v|| / ||v|| -> sigma_max^2
    for (std::size_t t = 0; t < T; ++t) v[t] = v2[t] / n;
  }
  return {kl, ld(c["epsilon"]) * norm};
}
}  // namespace

TEST_CASE("dana24/theorem-1-eps: the checker's KL enclosure agrees with a long-double forward pass", "[proofs][dana]") {
  const Claim* claim = claim_find("dana24/theorem-1-eps");
  REQUIRE(claim);
  ClaimRun run = claim_run(*claim, 4, 7);
  int below = 0, above = 0;  // tampered variants on each side of the bound
  int c_informative = 0;     // instances whose certified lower bound of C is well above the trivial 1
  for (const auto& rec : run.records) {
    INFO(rec.result.summary);
    REQUIRE(rec.result.outcome == Outcome::confirmed);
    REQUIRE(rec.certificate_verified);
    const nlohmann::json good = rec.result.certificate;
    const auto [kl, eps_norm] = theorem1_eps_second_method(good);
    CHECK(std::abs(static_cast<double>(kl) - rec.result.figures["kl_T_estimate"].get<double>()) <= 1e-9 + 1e-6 * kl);
    CHECK(kl <= 2 * eps_norm);
    // The checker's certified C interval (features in the model's coordinates, perturbation bound around
    // the exact midpoint solve) contains the engine's double estimate (SVD of F_{S_1}^{-1} F_{S_2} in the
    // base coordinates, a block-diagonal change of basis away).
    const auto verdict = memcert_checker::verify_certificate_text(good.dump());
    double c_lo = 0, c_hi = 0;
    for (const auto& note : verdict.applied)
      if (auto p = note.find("C in ["); p != std::string::npos) std::sscanf(note.c_str() + p, "C in [%lf, %lf]", &c_lo, &c_hi);
    const double c_est = rec.result.figures["C_estimate"].get<double>();
    CHECK(c_lo >= 1);
    CHECK(c_lo <= c_est * (1 + 1e-6));
    CHECK(c_est <= c_hi * (1 + 1e-6));
    if (c_lo > 1.5) ++c_informative;
    // Scale every W_O by k (F, hence C, is unchanged): the checker's verdict must follow the second
    // method's comparison wherever the latter is clear (1% away from the boundary).
    for (const char* k : {"1", "257/256", "65/64", "17/16", "5/4", "2", "8", "1024"}) {
      nlohmann::json bad = good;
      for (auto& head : bad["weights"]["WO"])
        for (auto& row : head)
          for (auto& x : row) x = mpq_class(mpq_class(x.get<std::string>()) * mpq_class(k)).get_str();
      const auto [klk, en] = theorem1_eps_second_method(bad);
      // The checker's right-hand side lies between these two (its C between 1 and the estimated C).
      const LD rhs = (good["literal_4"].get<bool>() ? 1 : 2) * en, rhs_c = rhs * static_cast<LD>(c_est);
      INFO("W_O x " << k << ": d_KL " << static_cast<double>(klk) << " vs " << static_cast<double>(rhs) << " .. "
                    << static_cast<double>(rhs_c));
      if (klk < 0.99 * rhs) {
        CHECK(valid(bad));
        ++below;
      }
      if (klk > 1.01 * rhs_c) {
        CHECK_FALSE(valid(bad));
        ++above;
      }
    }
    // T_eps is re-derived from epsilon and the prior; the prior must be a distribution.
    nlohmann::json bad = good;
    bad["T_eps"] = good["T_eps"].get<std::size_t>() - 1;
    CHECK_FALSE(valid(bad));
    bad = good;
    bad["epsilon"] = "1/2";
    CHECK_FALSE(valid(bad));
    bad = good;
    bad["prior"][0] = mpq_class(mpq_class(good["prior"][0].get<std::string>()) * 2).get_str();
    CHECK_FALSE(valid(bad));
    // A witness cannot raise the norm bound above ||W E||_2 (a Rayleigh quotient): any vector is harmless.
    bad = good;
    for (auto& x : bad["rayleigh_witness"]) x = "1";
    CHECK(valid(bad) == valid(good));
    bad = good;
    bad["verdict"] = "counterexample";
    CHECK_FALSE(valid(bad));
  }
  INFO(below << " tampered variants below the bound, " << above << " above");
  CHECK(below >= 4);  // both sides are exercised
  CHECK(above >= 4);
  CHECK(c_informative >= 2);
}

TEST_CASE("dana24/theorem-1-eps-singular-f-s1: the shared last token and S_1 are re-derived", "[proofs][dana]") {
  const nlohmann::json good = first_certificate("dana24/theorem-1-eps-singular-f-s1");
  CHECK(valid(good));
  // Second method: S_1 by sorting the prior here; every S_1 sequence ends with the same token.
  const std::size_t T_eps = good["T_eps"];
  std::vector<std::pair<mpq_class, std::size_t>> w;
  for (std::size_t t = 0; t < good["prior"].size(); ++t) w.push_back({mpq_class(good["prior"][t].get<std::string>()), t});
  std::sort(w.begin(), w.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::set<std::size_t> last;
  for (std::size_t i = 0; i < T_eps; ++i) last.insert(good["sequences"][w[i].second].back().get<std::size_t>());
  CHECK(last.size() == 1);
  CHECK(1 + good["H"].get<std::size_t>() * std::min(good["dh"].get<std::size_t>(), good["d"].get<std::size_t>()) < T_eps);
  // Change the last token of one S_1 sequence to a token no other S_1 sequence ends with.
  nlohmann::json bad = good;
  auto& seq = bad["sequences"][w[1].second];
  const std::size_t S = good["S"], N = good["N"];
  seq[S - 1] = (seq[S - 1].get<std::size_t>() + 1) % N;
  // (it may now repeat another sequence: also rejected)
  CHECK_FALSE(valid(bad));
  bad = good;
  bad["verdict"] = "confirmed";
  CHECK_FALSE(valid(bad));
  bad = good;
  bad["H"] = good["H"].get<std::size_t>() + 1;  // T_eps != H d_h + d
  CHECK_FALSE(valid(bad));
}

TEST_CASE("dana24/theorem-2: the large-d JL instance (N = 1000, d = 900) and the theorem's own C", "[proofs][dana]") {
  const Claim* claim = claim_find("dana24/theorem-2");
  REQUIRE(claim);
  ClaimRun run = claim_run(*claim, 4, 5);
  REQUIRE(run.records.size() == 4);
  const auto& rec = run.records[3];
  INFO(rec.result.summary);
  REQUIRE(rec.result.outcome == Outcome::confirmed);
  REQUIRE(rec.certificate_verified);
  const nlohmann::json good = rec.result.certificate;
  REQUIRE(good["B"].size() == 1000);
  REQUIRE(good["B"][0].size() == 900);
  CHECK(good["C_at_most_theorem_C"] == true);
  // Second method: C_W = max_{i != j} |b_i . b_j| / 900 by plain int dot products over the certificate's
  // signs (the engine and checker use an int64 Gram matrix of their own).
  std::vector<std::vector<int>> b(1000, std::vector<int>(900));
  for (std::size_t i = 0; i < 1000; ++i)
    for (std::size_t k = 0; k < 900; ++k) b[i][k] = good["B"][i][k] == "1" ? 1 : -1;
  long worst = 0;
  for (std::size_t i = 0; i < 1000; ++i)
    for (std::size_t j = i + 1; j < 1000; ++j) {
      long acc = 0;
      for (std::size_t k = 0; k < 900; ++k) acc += b[i][k] * b[j][k];
      worst = std::max(worst, std::labs(acc));
    }
  mpq_class cw(worst, 900);
  cw.canonicalize();
  CHECK(mpq_class(rec.result.figures["C_W"].get<std::string>()) == cw);
  CHECK(cw < mpq_class(1, 4));  // JL: far below the theorem's 0.4956
  // C below C_W is rejected; C above the theorem's sqrt(32 ln 1001 / 900) = 0.49563... with the flag too.
  nlohmann::json bad = good;
  mpq_class below(worst - 1, 900);
  below.canonicalize();
  bad["C"] = below.get_str();
  CHECK_FALSE(valid(bad));
  bad = good;
  bad["C"] = "49564/100000";
  CHECK_FALSE(valid(bad));
  bad["C_at_most_theorem_C"] = false;  // then it is merely a larger C < 1/2: accepted
  CHECK(valid(bad));
}

namespace {
long double dana24_claims_ld(const nlohmann::json& x) {
  mpq_class q(x.get<std::string>());
  q.canonicalize();
  return static_cast<long double>(q.get_d());
}
}  // namespace

TEST_CASE("dana24/theorem-1-adversarial-wv: the witness W_V merges the pair's features; tampering is rejected",
          "[proofs][dana]") {
  const nlohmann::json c = first_certificate("dana24/theorem-1-adversarial-wv");
  REQUIRE(valid(c));
  // Second method: eq. (1) in long double with random rank-one W_QK (scores of order 1): the head outputs
  // W_V^h A^h(t) of the pair are zero (up to rounding), those of other sequences are not.
  const std::size_t d = c["d"], dh = c["dh"], H = c["H"], S = c["S"];
  const std::size_t i = c["pair"][0], j = c["pair"][1];
  std::srand(7);
  auto head_out_norm = [&](std::size_t t, std::size_t h, const std::vector<long double>& q, const std::vector<long double>& k) {
    std::vector<std::vector<long double>> x(S, std::vector<long double>(d));
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t r = 0; r < d; ++r)
        x[s][r] = dana24_claims_ld(c["e"][c["sequences"][t][s].get<std::size_t>()][r]) + dana24_claims_ld(c["pos"][s][r]);
    long double qs = 0, z = 0;
    for (std::size_t r = 0; r < d; ++r) qs += q[r] * x[S - 1][r];
    std::vector<long double> w(S), A(d, 0);
    for (std::size_t s = 0; s < S; ++s) {
      long double ks = 0;
      for (std::size_t r = 0; r < d; ++r) ks += k[r] * x[s][r];
      z += (w[s] = std::exp(qs * ks));
    }
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t r = 0; r < d; ++r) A[r] += w[s] / z * x[s][r];
    long double n = 0;
    for (std::size_t a = 0; a < dh; ++a) {
      long double v = 0;
      for (std::size_t r = 0; r < d; ++r) v += dana24_claims_ld(c["WV"][h][a][r]) * A[r];
      n = std::max(n, std::fabs(v));
    }
    return n;
  };
  std::size_t nonzero_elsewhere = 0;
  for (std::size_t h = 0; h < H; ++h) {
    std::vector<long double> q(d), k(d);
    for (std::size_t r = 0; r < d; ++r) q[r] = (std::rand() % 17 - 8) / 32.0L, k[r] = (std::rand() % 17 - 8) / 32.0L;
    CHECK(head_out_norm(i, h, q, k) < 1e-12L);
    CHECK(head_out_norm(j, h, q, k) < 1e-12L);
    for (std::size_t t = 0; t < c["sequences"].size(); ++t)
      if (t != i && t != j && head_out_norm(t, h, q, k) > 1e-6L) ++nonzero_elsewhere;
  }
  CHECK(nonzero_elsewhere > 0);
  // Tampering: a W_V entry moved (no longer in the kernel), a rank-deficient W_V (zero rows), a pair
  // whose labels agree, a pair with different last tokens, d_h = d.
  nlohmann::json moved = c;
  moved["WV"][0][0][0] = "1234567/1024";
  CHECK_FALSE(valid(moved));
  nlohmann::json zero = c;
  for (auto& row : zero["WV"][0])
    for (auto& x : row) x = "0";
  CHECK_FALSE(valid(zero));
  nlohmann::json same = c;
  same["next"][j] = same["next"][i];
  CHECK_FALSE(valid(same));
  nlohmann::json other = c;
  for (std::size_t t = 0; t < other["sequences"].size(); ++t)
    if (other["sequences"][t].back() != other["sequences"][i].back() && other["next"][t] != other["next"][i]) {
      other["pair"][1] = t;
      break;
    }
  CHECK_FALSE(valid(other));
  nlohmann::json full = c;
  full["dh"] = d;
  CHECK_FALSE(valid(full));
}

TEST_CASE("dana24/corollary-1-ties: equal rows of W_U re-checked; T above the capacity required", "[proofs][dana]") {
  const nlohmann::json c = first_certificate("dana24/corollary-1-ties");
  REQUIRE(valid(c));
  // Second method: with these rows every logit w . E is the same for any E, so every label is a maximum.
  const std::size_t N = c["N"], d = c["d"];
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<long double> E(d);
    for (auto& x : E) x = (std::rand() % 200 - 100) / 7.0L;
    long double first = 0;
    for (std::size_t jj = 0; jj < N; ++jj) {
      long double l = 0;
      for (std::size_t r = 0; r < d; ++r) l += dana24_claims_ld(c["WU"][jj][r]) * E[r];
      if (jj == 0) first = l;
      CHECK(l == first);
    }
  }
  nlohmann::json row = c;
  row["WU"][1][0] = "1000";
  CHECK_FALSE(valid(row));
  nlohmann::json cap = c;
  cap["H"] = 100;  // H d_h + d >= T: no longer beyond the capacity
  CHECK_FALSE(valid(cap));
}

TEST_CASE("dana24/corollary-2: predictions certified on all 100 bigrams; the expectation equals the bound",
          "[proofs][dana]") {
  const Claim* c = claim_find("dana24/corollary-2");
  REQUIRE(c);
  ClaimRun run = claim_run(*c, 3, 5);
  REQUIRE(run.records.size() == 3);
  for (const auto& rec : run.records) {
    REQUIRE(rec.result.outcome == Outcome::confirmed);
    REQUIRE(rec.certificate_verified);
    const auto& f = rec.result.figures;
    const double k = f["memorized"].get<double>(), H = f["H"].get<double>();
    CHECK(k == 2 * H + 2);
    // Second method: the expectation (k + (100 - k)/10)/100 and the paper's bound, recomputed here.
    CHECK(std::fabs(f["expected_accuracy"].get<double>() - (k + (100 - k) / 10) / 100) < 1e-12);
    CHECK(std::fabs(f["bound"].get<double>() - (0.1 + 0.9 * k / 100)) < 1e-12);
    // The realized accuracy counts at least the k memorized sequences.
    CHECK(f["certified_accuracy"].get<double>() >= k / 100 - 1e-12);
    // The certificate states the model's prediction on every sequence: another next token is refused.
    nlohmann::json cert = rec.result.certificate;
    REQUIRE(cert["T"] == 100);
    cert["next"][50] = (cert["next"][50].get<int>() + 1) % 10;
    CHECK_FALSE(valid(cert));
  }
}

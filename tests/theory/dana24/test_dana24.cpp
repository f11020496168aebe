// dana24 end to end on generated data (none of it in the repository): every construction is re-verified
// by the independent checker (MPFR, its own JSON reader) from the certificate text, and every predicted
// next token is recomputed by a second, plain long-double forward pass of eq. (2) written here from the
// paper's formula. Tampered certificates are rejected. Bad data are rejected with one line.
#include "catch.hpp"

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/dana24/construct.hpp"
#include "memcert/util/error.hpp"
#include "support/cli_run.hpp"

using namespace memcert;
using namespace memcert::dana24;
using nlohmann::json;

namespace {

// Second method: eq. (2) in long double, straight from the formula (no intervals, no shared code).
std::size_t predict_long_double(const Model& m, const std::vector<std::uint32_t>& seq) {
  const std::size_t S = m.S, d = m.d;
  std::vector<std::vector<long double>> x(S, std::vector<long double>(d));
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t i = 0; i < d; ++i) x[s][i] = static_cast<long double>(m.e(seq[s], i)) + m.pos(s, i);
  std::vector<long double> E = x[S - 1];
  for (std::size_t h = 0; h < m.H; ++h) {
    auto proj = [&](const DMatrix& W, const std::vector<long double>& v) {
      std::vector<long double> y(W.rows(), 0.0L);
      for (std::size_t r = 0; r < W.rows(); ++r)
        for (std::size_t i = 0; i < W.cols(); ++i) y[r] += W(r, i) * v[i];
      return y;
    };
    const auto q = proj(m.WQ[h], x[S - 1]);
    std::vector<long double> sc(S);
    long double mx = -INFINITY;
    for (std::size_t s = 0; s < S; ++s) {
      const auto k = proj(m.WK[h], x[s]);
      sc[s] = 0;
      for (std::size_t r = 0; r < q.size(); ++r) sc[s] += q[r] * k[r];
      mx = std::max(mx, sc[s]);
    }
    long double z = 0;
    for (auto& v : sc) z += (v = std::exp(v - mx));
    std::vector<long double> A(d, 0.0L);
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t i = 0; i < d; ++i) A[i] += sc[s] / z * x[s][i];
    const auto v = proj(m.WV[h], A);
    const auto o = proj(m.WO[h], v);
    for (std::size_t i = 0; i < d; ++i) E[i] += o[i];
  }
  std::size_t best = 0;
  long double bv = -INFINITY;
  for (std::size_t j = 0; j < m.N; ++j) {
    long double l = 0;
    for (std::size_t i = 0; i < d; ++i) l += m.WU(j, i) * E[i];
    if (l > bv) bv = l, best = j;
  }
  return best;
}

struct Built {
  Dana24Result r;
  std::string cert;
};

Built build(const AssocData& a, std::size_t H, std::size_t dh, std::size_t d, std::uint64_t seed = 1) {
  Dana24Options o;
  o.H = H, o.dh = dh, o.d = d, o.seed = seed;
  Built b{dana24_construct(a, o), ""};
  const std::string claim = d == 2 && dh <= 2 ? "dana24/corollary-1" : "dana24/theorem-1-assoc";
  b.cert = dana24_certificate_json(a, b.r, claim).dump();
  return b;
}

void require_memorized_and_verified(const AssocData& a, const Built& b) {
  REQUIRE(b.r.memorized);
  CHECK(b.r.argmax.certified == a.T());
  CHECK(b.r.argmax.min_margin > 0);
  for (std::size_t t = 0; t < a.T(); ++t) CHECK(predict_long_double(b.r.model, a.sequences[t]) == a.next[t]);
  auto v = memcert_checker::verify_certificate_text(b.cert);
  INFO(v.reason);
  CHECK(v.valid);
}

memcert_checker::Verdict verify_altered(const std::string& cert, const std::function<void(json&)>& f) {
  json j = json::parse(cert);
  f(j);
  return memcert_checker::verify_certificate_text(j.dump());
}

}  // namespace

TEST_CASE("dana24: the section-6 instances are memorized at T0 = H dh + d and verified", "[dana]") {
  // (N, S, d, d_h, H): corollary-1 (d = 2) and theorem-1-assoc instances; T = H d_h + d sequences
  // drawn at random (all of [N]^S when N^S = T).
  struct Inst {
    std::size_t N, S, d, dh, H;
  } insts[] = {{3, 2, 2, 2, 3}, {2, 3, 2, 2, 3}, {3, 2, 2, 1, 6}, {3, 2, 3, 3, 2},
               {3, 2, 3, 1, 6}, {4, 2, 3, 3, 4}, {5, 2, 4, 2, 8}};
  for (const auto& in : insts) {
    for (std::uint64_t seed : {11u, 12u}) {
      const std::size_t T = in.H * in.dh + in.d;
      AssocData a = assoc_data_generate(in.N, in.S, T, seed, false);
      if (assoc_distinct_last_tokens(a) < in.d) continue;  // 4.2(g): the construction needs n_last >= d
      INFO("N=" << in.N << " S=" << in.S << " d=" << in.d << " dh=" << in.dh << " H=" << in.H << " seed " << seed);
      require_memorized_and_verified(a, build(a, in.H, in.dh, in.d, seed));
    }
  }
}

TEST_CASE("dana24: fewer sequences than H dh + d (underdetermined solve) and the moment-curve targets", "[dana]") {
  AssocData a = assoc_data_generate(12, 3, 20, 7, false);
  require_memorized_and_verified(a, build(a, 4, 3, 10));
  // N = 10 > 2^2: d = 2 forces the moment curve.
  AssocData b = assoc_data_generate(10, 2, 30, 8, false);
  Built bb = build(b, 14, 2, 2);
  CHECK(bb.r.targets_kind == "moment");
  require_memorized_and_verified(b, bb);
}

TEST_CASE("dana24: Corollary 1 at H = 64, d_h = 2 (T0 = 130): decided through the MPFR escalation", "[dana]") {
  // d = 2 with 130 features: sigma_min(F) ~ 1e-26, output weights ~ 1e9-1e10. The double intervals of
  // step 8 lose the margin to cancellation; the MPFR re-evaluation (128-512 bits) certifies it, and the
  // checker (its own MPFR pass, escalating the same way) accepts. Second method: the long-double forward
  // pass predicts every next token.
  AssocData a = assoc_data_generate(12, 2, 130, 1, false);
  REQUIRE(assoc_distinct_last_tokens(a) >= 2);
  std::size_t escalated = 0;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    Built b = build(a, 64, 2, 2, seed);
    require_memorized_and_verified(a, b);
    escalated += b.r.argmax.escalated;
  }
  CHECK(escalated > 0);  // the double pass alone would have left some of these undecided
}

TEST_CASE("dana24: the 30-second target N=1000, S=8, d=64, H=16, dh=16 (T0 = 320)", "[dana][slow]") {
  const std::clock_t c0 = std::clock();
  AssocData a = assoc_data_generate(1000, 8, 320, 2026, false);
  Built b = build(a, 16, 16, 64);
  REQUIRE(b.r.memorized);
  auto v = memcert_checker::verify_certificate_text(b.cert);
  INFO(v.reason);
  CHECK(v.valid);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  INFO("CPU seconds " << cpu);
  CHECK(cpu < 30.0);
}

TEST_CASE("dana24: the checker rejects tampered certificates", "[dana]") {
  AssocData a = assoc_data_generate(4, 2, 15, 3, false);
  while (assoc_distinct_last_tokens(a) < 3) a = assoc_data_generate(4, 2, 15, a.next[0] + 100, false);
  Built b = build(a, 4, 3, 3);
  REQUIRE(b.r.memorized);
  REQUIRE(memcert_checker::verify_certificate_text(b.cert).valid);
  // A different next token for sequence 0 (the model still predicts the old one).
  CHECK_FALSE(verify_altered(b.cert, [&](json& j) { j["next"][0] = (a.next[0] + 1) % a.N; }).valid);
  // The unembedding rows of the label and a rival swapped.
  CHECK_FALSE(verify_altered(b.cert, [&](json& j) {
    const std::size_t g = a.next[0], o = (g + 1) % a.N;
    std::swap(j["weights"]["WU"][g], j["weights"]["WU"][o]);
  }).valid);
  // Every W_O zeroed: the heads no longer contribute, the skip alone cannot separate 15 sequences.
  CHECK_FALSE(verify_altered(b.cert, [](json& j) {
    for (auto& head : j["weights"]["WO"])
      for (auto& row : head)
        for (auto& x : row) x = "0";
  }).valid);
  // An inflated margin, a wrong parameter count, a wrong memorized count.
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["min_margin"] = "1000000"; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["parameters"] = j["parameters"].get<std::size_t>() + 1; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["memorized_count"] = 14; }).valid);
  // A repeated sequence, a token out of range, a weight that is not dyadic, a d_h > d shape, a claim
  // that does not match the shape, a missing weight.
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["sequences"][1] = j["sequences"][0]; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["sequences"][0][0] = 4; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["weights"]["e"][0][0] = "1/3"; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["claim"] = "dana24/corollary-1"; }).valid);
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["weights"].erase("WV"); }).valid);
  // Remark 2's count with a head that is not rank one.
  CHECK_FALSE(verify_altered(b.cert, [](json& j) { j["weights"]["WQ"][0][1][0] = "1"; }).valid);
  // Control: an untouched round trip through the JSON library is still accepted.
  CHECK(verify_altered(b.cert, [](json&) {}).valid);
}

TEST_CASE("dana24: step 6c, the exact targets E* = [M, W_O] F~ and their margin", "[dana]") {
  AssocData a = assoc_data_generate(4, 2, 15, 3, false);
  while (assoc_distinct_last_tokens(a) < 3) a = assoc_data_generate(4, 2, 15, a.next[0] + 100, false);
  Built b = build(a, 4, 3, 3);
  REQUIRE(b.r.memorized);
  const std::size_t d = 3, m = b.r.features_centre.cols();
  REQUIRE(m == 15);
  // Second method: E* and its margin with GMP rationals, straight from the definitions (no integer
  // scaling), on the weights as the certificate stores them (W_O from the mapped-back model).
  Rational best_margin;
  for (std::size_t t = 0; t < a.T(); ++t) {
    std::vector<Rational> E(d, Rational(0));
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t k = 0; k < m; ++k) {
        const double x = k < d ? b.r.M(i, k) : b.r.model.WO[(k - d) / 3](i, (k - d) % 3);
        E[i] += rational_from_double(x) * rational_from_double(b.r.features_centre(t, k));
      }
    Rational lg = 0, top;
    bool any = false;
    for (std::size_t j = 0; j < a.N; ++j) {
      Rational l = 0;
      for (std::size_t i = 0; i < d; ++i) l += rational_from_double(b.r.model.WU(j, i)) * E[i];
      if (j == a.next[t]) lg = l;
      else if (!any || l > top) top = l, any = true;
    }
    if (t == 0 || lg - top < best_margin) best_margin = lg - top;
  }
  CHECK(best_margin == b.r.targets_min_margin);
  CHECK(b.r.targets_min_margin > 0);
  // The exact targets are near the design targets (margin >= 3/2 by construction), not equal to them.
  CHECK(b.r.targets_min_margin > Rational(1));
  CHECK(b.r.encoder_deviation < 1e-3);
  const std::string cert = b.cert;
  REQUIRE(json::parse(cert).contains("readout"));
  // The checker recomputes everything: a claimed margin above the exact one, a perturbed centre entry
  // (E* moves, the claimed deviation no longer covers the model), a singular M, a deviation claim below
  // the model's, a negative deviation, a missing row.
  const Rational above = b.r.targets_min_margin + Rational(1, 1 << 30);
  CHECK_FALSE(verify_altered(cert, [&](json& j) { j["readout"]["targets_min_margin"] = rational_to_string(above); }).valid);
  CHECK(verify_altered(cert, [&](json& j) {
    j["readout"]["targets_min_margin"] = rational_to_string(b.r.targets_min_margin);
  }).valid);
  CHECK_FALSE(verify_altered(cert, [](json& j) { j["readout"]["features_centre"][2][7] = "1000"; }).valid);
  CHECK_FALSE(verify_altered(cert, [](json& j) {
    auto& M = j["readout"]["M"];
    M[1] = M[0];
  }).valid);
  CHECK_FALSE(verify_altered(cert, [](json& j) { j["readout"]["encoder_deviation"] = "1/1099511627776000"; }).valid);
  CHECK_FALSE(verify_altered(cert, [](json& j) { j["readout"]["encoder_deviation"] = "-1"; }).valid);
  CHECK_FALSE(verify_altered(cert, [](json& j) { j["readout"]["features_centre"].erase(0); }).valid);
  // Without the object the certificate makes the older, weaker claim (end-to-end arg-max only).
  CHECK(verify_altered(cert, [](json& j) { j.erase("readout"); }).valid);
}

TEST_CASE("dana24: the construction's rank ceiling H min(dh,d) + min(d, n_last) (4.2(g), V2, V3)", "[dana]") {
  // V2: all sequences share the last token: rank F <= 1 + H d_h < T = H d_h + d, so the construction
  // cannot certify (it reports, it does not guess).
  AssocData a;
  a.N = 4, a.S = 3;
  std::mt19937_64 rng(5);
  std::set<std::vector<std::uint32_t>> seen;
  while (a.sequences.size() < 9) {
    std::vector<std::uint32_t> s{static_cast<std::uint32_t>(rng() % 4), static_cast<std::uint32_t>(rng() % 4), 2};
    if (seen.insert(s).second) a.sequences.push_back(s), a.next.push_back(static_cast<std::uint32_t>(rng() % 4));
  }
  CHECK(dana24_feature_rank_ceiling(3, 2, 3, assoc_distinct_last_tokens(a)) == 7);
  Dana24Options o;
  o.H = 3, o.dh = 2, o.d = 3;
  Dana24Result r = dana24_construct(a, o);
  CHECK_FALSE(r.memorized);
  CHECK_FALSE(r.rank_certified);
  // V3: N = 2 < d = 3: n_last <= 2, ceiling 2 + H d_h < T.
  CHECK(dana24_feature_rank_ceiling(4, 3, 3, 2) == 14);
}

TEST_CASE("dana24: data sets: generation, JSON and .npz round trips, bad input", "[dana]") {
  AssocData a = assoc_data_generate(5, 3, 40, 9, false);
  std::set<std::vector<std::uint32_t>> distinct(a.sequences.begin(), a.sequences.end());
  CHECK(distinct.size() == 40);
  AssocData all = assoc_data_generate(3, 3, 0, 1, true);
  CHECK(all.T() == 27);
  CHECK_THROWS_AS(assoc_data_generate(2, 2, 5, 1, false), InputError);  // T > N^S
  // Scratch files go to the system's temporary directory, never into the source tree.
  const std::string dir = memcert_test::scratch_dir("dana24_test");
  std::filesystem::create_directories(dir);
  for (const std::string ext : {".json", ".npz"}) {
    assoc_data_write(dir + "/a" + ext, a);
    AssocData b = assoc_data_read(dir + "/a" + ext);
    CHECK(b.N == a.N);
    CHECK(b.S == a.S);
    CHECK(b.sequences == a.sequences);
    CHECK(b.next == a.next);
  }
  auto bad = [&](const std::string& text, const std::string& needle) {
    std::ofstream(dir + "/bad.json") << text;
    try {
      assoc_data_read(dir + "/bad.json");
      FAIL("accepted: " << text);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.find("expected") != std::string::npos);
      CHECK(msg.find(needle) != std::string::npos);
    }
  };
  bad(R"({"vocab":3,"sequences":[[0,1],[2,3]],"next":[0,1]})", "sequences[1][1]");
  bad(R"({"vocab":3,"sequences":[[0,1],[0,1]],"next":[0,2]})", "different next token");
  bad(R"({"vocab":3,"sequences":[[0,1],[0,1]],"next":[2,2]})", "repeat of sequences[0]");
  bad(R"({"vocab":3,"sequences":[[0,1],[0]],"next":[0,2]})", "sequences[1]");
  bad(R"({"vocab":3,"sequences":[[0,1]],"next":[3]})", "next[0]");
  bad(R"({"vocab":3,"sequences":[[0,1]],"next":[0,1]})", "next");
  bad(R"({"vocab":0,"sequences":[[0]],"next":[0]})", "vocab");
  bad(R"({"vocab":3,"sequences":[[0,-1]],"next":[0]})", "sequences[0][1]");
  bad(R"({"vocab":3,"sequences":[[0,0.5]],"next":[0]})", "sequences[0][1]");
  bad(R"({"vocab":3,"next":[0]})", "sequences");
  bad(R"([1,2])", "expected an object");
}

TEST_CASE("dana24: weights-out writes the documented float64 arrays", "[dana]") {
  AssocData a = assoc_data_generate(3, 2, 8, 4, false);
  while (assoc_distinct_last_tokens(a) < 2) a = assoc_data_generate(3, 2, 8, a.next[0] + 50, false);
  Built b = build(a, 3, 2, 2);
  REQUIRE(b.r.memorized);
  const std::string path = memcert_test::scratch_dir("dana24_weights") + "/w.npz";
  dana24_weights_write_npz(path, b.r.model);
  auto arrays = npz_read(path);
  CHECK(arrays.at("e").shape == std::vector<std::size_t>{3, 2});
  CHECK(arrays.at("W_Q").shape == std::vector<std::size_t>{3, 2, 2});
  CHECK(arrays.at("W_O").shape == std::vector<std::size_t>{3, 2, 2});
  CHECK(arrays.at("W_U").shape == std::vector<std::size_t>{3, 2});
  CHECK(arrays.at("e").data[1] == rational_from_double(b.r.model.e(0, 1)));
}

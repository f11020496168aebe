// ks25 Theorem 4.1 / Corollary 4.1 / Theorem D.1 end to end: every built network is re-evaluated by the
// independent checker (memcert_checker, GMP only, its own JSON reader) from the certificate text;
// tampered certificates are rejected; checks before building; the linear-phi ablation; the sweep.
#include "catch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <cstdlib>
#include <random>
#include <sys/wait.h>

#include "memcert/checker/checker.hpp"
#include "memcert/data/matrix_io.hpp"
#include "memcert/theory/ks25/construct.hpp"
#include "memcert/util/error.hpp"
#include "support/cli_run.hpp"

using namespace memcert;
using namespace memcert::ks25;

namespace {

SequenceDataset make(const std::vector<std::vector<std::vector<Rational>>>& seqs, const std::vector<long>& labels) {
  SequenceDataset ds;
  for (const auto& s : seqs) {
    QMatrix X(s.size(), s.empty() ? 0 : s[0].size());
    for (std::size_t k = 0; k < s.size(); ++k)
      for (std::size_t j = 0; j < s[k].size(); ++j) X(k, j) = s[k][j];
    ds.sequences.push_back(X);
  }
  ds.labels = labels;
  return ds;
}

// Builds, checks memorization and eq. (55), and re-verifies the certificate independently.
KsResult build_and_verify(const SequenceDataset& ds, std::optional<long> C = std::nullopt, std::uint64_t seed = 1) {
  KsPrepared P = ks_prepare(ds, C, "test");
  REQUIRE(P.consistent);
  KsOptions o;
  o.seed = seed;
  KsResult r = ks_construct(P, o);
  CHECK(r.memorized);
  CHECK(r.eq55_holds);
  CHECK(r.mismatches == 0);
  CHECK(r.total.width <= 14);
  auto v = memcert_checker::verify_certificate_text(ks_certificate_json(r).dump());
  INFO(v.reason);
  CHECK(v.valid);
  // The dense evaluator (a second route) agrees with the recorded predictions on every sequence.
  for (std::size_t i = 0; i < P.N && i < 20; ++i) {
    std::vector<QVector> toks;
    for (TokenId t : P.seq_ids[i]) toks.push_back(relunet_eval(r.net.f1, P.tokens[t]));
    const std::size_t per = P.seq2seq ? P.n : 1;
    for (std::size_t q = 0; q < per; ++q) {
      QVector s = ks_context(toks, r.net.WOV, P.seq2seq ? q : P.n - 1);
      long y = P.seq2seq ? P.token_labels[i][q] : P.labels[i];
      CHECK(relunet_eval(r.net.f2, s)[0] == Rational(y));
    }
  }
  return r;
}

}  // namespace

TEST_CASE("Theorem 4.1 on generated data (rational and float64), checker re-verifies", "[ks25][construct]") {
  for (std::uint64_t seed : {1, 2}) {
    build_and_verify(ks_generate(40, 5, 3, 15, 4, seed, false), 4, seed);
    build_and_verify(ks_generate(25, 3, 4, 10, 3, seed, true), 3, seed);
  }
}

TEST_CASE("edge cases: N = 1, C = 1, N perfect square and not", "[ks25][construct]") {
  SECTION("N = 1") {
    auto r = build_and_verify(make({{{Rational(1), Rational(2)}, {Rational(3), Rational(4)}}}, {0}));
    CHECK(r.prep.N == 1);
  }
  SECTION("N = 1 with a single token") { build_and_verify(make({{{Rational(7)}}}, {2})); }
  SECTION("C = 1") { build_and_verify(ks_generate(20, 4, 2, 8, 1, 3, false), 1); }
  SECTION("N = 16 and N = 17") {
    build_and_verify(ks_generate(16, 4, 2, 9, 3, 4, false), 3);
    build_and_verify(ks_generate(17, 4, 2, 9, 3, 4, false), 3);
  }
}

TEST_CASE("all sequences permutations of one another with equal labels", "[ks25][construct]") {
  std::vector<std::vector<Rational>> t{{Rational(0), Rational(1)}, {Rational(2), Rational(0)}, {Rational(1), Rational(1)}};
  // Permutations: the multiset is the same; labels depend only on the last token -> consistent.
  auto ds = make({{t[0], t[1], t[2]}, {t[1], t[0], t[2]}, {t[2], t[0], t[1]}, {t[0], t[2], t[1]}, {t[1], t[2], t[0]}},
                 {1, 1, 0, 0, 2});
  auto r = build_and_verify(ds);
  CHECK(r.prep.distinct_multisets.size() == 1);
}

TEST_CASE("near-equal tokens and huge coordinates", "[ks25][construct]") {
  Rational eps(Integer(1), Integer("1000000000000000000000000000000"));
  Rational big(Integer("1000000000000000000000000000000"));
  SECTION("near-equal") {
    std::vector<Rational> a{Rational(1), Rational(0)}, b{Rational(1) + eps, Rational(0)}, c{Rational(0), Rational(1)};
    auto r = build_and_verify(make({{a, b, c}, {b, a, a}, {c, c, b}, {a, a, c}}, {0, 1, 2, 1}));
    CHECK(r.prep.delta2 == eps * eps);
  }
  SECTION("huge") {
    std::vector<Rational> a{big, -big}, b{-big, big}, c{big, big};
    build_and_verify(make({{a, b, c}, {b, a, a}, {c, c, b}, {a, a, c}}, {0, 1, 2, 1}));
  }
}

TEST_CASE("Corollary 4.1 (seq-to-seq) verified per token", "[ks25][construct]") {
  auto r = build_and_verify(ks_generate_seq2seq(20, 4, 2, 7, 3, 5, false), 3);
  CHECK(r.prep.seq2seq);
  CHECK(r.contexts.size() == 80);
}

TEST_CASE("checks before building", "[ks25][construct]") {
  std::vector<Rational> a{Rational(1)}, b{Rational(2)}, c{Rational(3)};
  SECTION("inconsistent labeling reports the pair") {
    auto P = ks_prepare(make({{a, b, c}, {c, b, a}, {b, a, c}}, {0, 1, 1}), std::nullopt, "t");
    CHECK_FALSE(P.consistent);
    CHECK(P.inconsistent_pair == std::make_pair(std::size_t{0}, std::size_t{2}));
  }
  SECTION("unequal lengths") {
    CHECK_THROWS_AS(ks_prepare(make({{a, b}, {a}}, {0, 0}), std::nullopt, "t"), InputError);
  }
  SECTION("d mismatch") {
    std::vector<Rational> a2{Rational(1), Rational(2)}, b2{Rational(3), Rational(4)};
    CHECK_THROWS_AS(ks_prepare(make({{a, b}, {a2, b2}}, {0, 0}), std::nullopt, "t"), InputError);
  }
  SECTION("labels outside [0, C)") {
    CHECK_THROWS_AS(ks_prepare(make({{a, b}, {b, a}}, {0, 3}), 3, "t"), InputError);
    CHECK_THROWS_AS(ks_prepare(make({{a, b}, {b, a}}, {0, -1}), std::nullopt, "t"), InputError);
  }
  SECTION("missing labels") { CHECK_THROWS_AS(ks_prepare(make({{a, b}, {b, a}}, {0}), std::nullopt, "t"), InputError); }
  SECTION("separation computed exactly") {
    auto P = ks_prepare(make({{a, b}, {c, a}}, {0, 1}), std::nullopt, "t");
    CHECK(P.r2 == 9);
    CHECK(P.delta2 == 1);
  }
}

TEST_CASE("tampered certificates are rejected", "[ks25][construct][checker]") {
  KsPrepared P = ks_prepare(ks_generate(12, 3, 2, 6, 3, 8, false), 3, "t");
  KsResult r = ks_construct(P, KsOptions{});
  REQUIRE(r.memorized);
  const nlohmann::json cert = ks_certificate_json(r);
  REQUIRE(memcert_checker::verify_certificate_text(cert.dump()).valid);
  auto rejected = [](const nlohmann::json& c) { return !memcert_checker::verify_certificate_text(c.dump()).valid; };
  // Recompute the checksum of an altered network so that the EVALUATION must catch the alteration.
  auto reseal = [](nlohmann::json c) {
    Rational sum = 0;
    unsigned long pos = 0;
    auto add = [&](const nlohmann::json& s) {
      ++pos;
      sum += *rational_parse(s.get<std::string>()) * Rational(pos);
    };
    for (const char* part : {"f1", "f2"}) {
      if (std::string(part) == "f2")
        for (auto& row : c["network"]["attention"]["WOV"])
          for (auto& x : row) add(x);
      for (auto& L : c["network"][part]) {
        for (auto& row : L["W"])
          for (auto& x : row) add(x);
        for (auto& x : L["b"]) add(x);
      }
    }
    c["checksum"] = rational_to_string(sum);
    return c;
  };
  CHECK_FALSE(rejected(reseal(cert)));  // reseal itself is faithful
  {
    auto c = cert;  // last layer of f2: the output weight
    auto& L = c["network"]["f2"].back();
    L["b"][0] = "1";
    CHECK(rejected(c));          // checksum
    CHECK(rejected(reseal(c)));  // evaluation: every prediction shifts by 1
  }
  {
    auto c = cert;
    c["network"]["attention"]["WOV"][2][0] = "1/2";
    CHECK(rejected(c));
    CHECK(rejected(reseal(c)));
  }
  {
    auto c = cert;
    c["labels"][0] = (c["labels"][0].get<long>() + 1) % 3;
    CHECK(rejected(c));
  }
  {
    auto c = cert;
    c["tokens"][0][0] = "1000";
    CHECK(rejected(c));
  }
  {
    auto c = cert;
    c["complexity"]["parameters"] = c["complexity"]["parameters"].get<long>() + 1;
    CHECK(rejected(c));
  }
  {
    auto c = cert;
    c["separation"]["delta2"] = "1/1000";
    CHECK(rejected(c));
  }
  {
    auto c = cert;
    c["claim"] = "ks25/corollary-4.1";
    CHECK(rejected(c));
  }
}

TEST_CASE("a larger certificate: checker = construction, machine route = GMP route, mutants rejected",
          "[ks25][construct][checker][scale]") {
  const std::size_t N = 3000, n = 16;
  KsPrepared P = ks_prepare(ks_generate_tokens(N, n, 32, 512, 10, 5, false, false), 10, "t");
  KsResult r = ks_construct(P, KsOptions{});
  REQUIRE(r.memorized);
  REQUIRE(r.eq55_holds);
  // The construction's verdict came from the machine-integer route: the GMP-rational route agrees on a
  // sample of contexts, through f2's thousands of layers.
  ReluNetSparse f2(r.net.f2);
  for (std::size_t c = 0; c < N; c += 149) CHECK(f2.eval(r.contexts[c]) == f2.eval_rational(r.contexts[c]));
  const nlohmann::json cert = ks_certificate_json(r);
  REQUIRE(memcert_checker::verify_certificate_text(cert.dump()).valid);
  auto verdict = [](const nlohmann::json& c) { return memcert_checker::verify_certificate_text(c.dump()); };
  auto reseal = [](nlohmann::json c) {
    Rational sum = 0;
    unsigned long pos = 0;
    auto add = [&](const nlohmann::json& s) {
      ++pos;
      const Rational v = *rational_parse(s.get<std::string>());
      if (sgn(v) != 0) sum += v * Rational(pos);
    };
    for (const char* part : {"f1", "f2"}) {
      if (std::string(part) == "f2")
        for (auto& row : c["network"]["attention"]["WOV"])
          for (auto& x : row) add(x);
      for (auto& L : c["network"][part]) {
        for (auto& row : L["W"])
          for (auto& x : row) add(x);
        for (auto& x : L["b"]) add(x);
      }
    }
    c["checksum"] = rational_to_string(sum);
    return c;
  };
  {  // the last label
    auto c = cert;
    c["labels"][N - 1] = (c["labels"][N - 1].get<long>() + 1) % 10;
    CHECK_FALSE(verdict(c).valid);
  }
  {  // one token id of the last sequence
    auto c = cert;
    auto& t = c["sequences"][N - 1][n - 1];
    t = (t.get<long>() + 1) % static_cast<long>(P.tokens.size());
    CHECK_FALSE(verdict(c).valid);
  }
  // A mutated f2 with its complexity and checksum restated: the checker accepts exactly when the engine's
  // GMP-rational route (not the machine route) still finds every label on every sequence.
  auto agrees = [&](const ReluNet& f2m, bool expect_rejected) {
    auto c = cert;
    c["network"]["f2"] = nlohmann::json::array();
    for (const auto& L : f2m.layers) c["network"]["f2"].push_back({{"W", qmat_to_json(L.W)}, {"b", qvec_to_json(L.b)}});
    c["complexity"]["bit_complexity"] =
        std::max<std::size_t>({r.f1c.bit_complexity, relunet_complexity(f2m).bit_complexity, 1});
    ReluNetSparse sm(f2m);
    bool all = true;
    for (std::size_t q = 0; q < N && all; ++q) all = sm.eval_rational(r.contexts[q])[0] == Rational(P.labels[q]);
    if (expect_rejected) CHECK_FALSE(all);
    const auto v = verdict(reseal(c));
    INFO(v.reason);
    CHECK(v.valid == all);
  };
  {  // the largest weight of f2 (one only GMP holds) plus 1
    std::size_t best_l = 0, best_i = 0, best_j = 0, bits = 0;
    for (std::size_t l = 0; l < r.net.f2.layers.size(); ++l)
      for (std::size_t i = 0; i < r.net.f2.layers[l].W.rows(); ++i)
        for (std::size_t j = 0; j < r.net.f2.layers[l].W.cols(); ++j) {
          const std::size_t b = rational_bits(r.net.f2.layers[l].W(i, j));
          if (b > bits) bits = b, best_l = l, best_i = i, best_j = j;
        }
    REQUIRE(bits > 64);
    ReluNet f2m = r.net.f2;
    f2m.layers[best_l].W(best_i, best_j) += 1;
    agrees(f2m, false);
  }
  // A bias moved by 2^-80 (dyadic, beyond 64 bits: the checked route's GMP rows): in the last layer every
  // prediction moves; in the middle layer as it falls.
  for (const bool last : {true, false}) {
    const std::size_t l = last ? r.net.f2.layers.size() - 1 : r.net.f2.layers.size() / 2;
    Rational eps(1);
    mpq_div_2exp(eps.get_mpq_t(), eps.get_mpq_t(), 80);
    ReluNet f2m = r.net.f2;
    f2m.layers[l].b[0] += eps;
    agrees(f2m, last);
  }
}

TEST_CASE("token-table data: generated, written and read back equal the expanded data set", "[ks25][data]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("ks_tokens_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const bool f64 : {false, true})
    for (const bool s2s : {false, true}) {
      const TokenSequenceDataset t = ks_generate_tokens(40, 5, 3, 9, 4, 11, f64, s2s);
      const SequenceDataset e = s2s ? ks_generate_seq2seq(40, 5, 3, 9, 4, 11, f64) : ks_generate(40, 5, 3, 9, 4, 11, f64);
      for (const char* ext : {".npz", ".json"}) {
        const std::string a = dir + "/a" + ext, b = dir + "/b" + ext;
        sequence_dataset_write_tokens(a, t);
        sequence_dataset_write(b, e);
        std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
        const std::string ta((std::istreambuf_iterator<char>(fa)), {}), tb((std::istreambuf_iterator<char>(fb)), {});
        CHECK(ta == tb);  // the same file, byte for byte
        // Read back as a token table: the same preparation as from the expanded data set.
        const KsPrepared P1 = ks_prepare(sequence_dataset_read_tokens(a), std::nullopt, a);
        const KsPrepared P2 = ks_prepare(e, std::nullopt, "e");
        CHECK(P1.tokens == P2.tokens);
        CHECK(P1.seq_ids == P2.seq_ids);
        CHECK(P1.labels == P2.labels);
        CHECK(P1.token_labels == P2.token_labels);
        CHECK(P1.delta2 == P2.delta2);
      }
    }
  // -0.0 and 0.0 are one token in a .npz.
  std::filesystem::path z = std::filesystem::path(dir) / "z.npz";
  npz_write_float64(z.string(), {{"sequences", {{2, 1, 2}, {-0.0, 1.0, 0.0, 1.0}}}, {"labels", {{2}, {0.0, 0.0}}}});
  const TokenSequenceDataset r = sequence_dataset_read_tokens(z.string());
  CHECK(r.tokens.size() == 1);
  CHECK(r.ids == std::vector<std::uint32_t>{0, 0});
  std::filesystem::remove_all(dir);
}

TEST_CASE("ablation linear-phi: a certified collision", "[ks25][ablation]") {
  std::vector<Rational> z{Rational(0)}, o{Rational(1)}, t{Rational(2)};
  // {0,2,1} and {1,1,1}: same last token, equal token sums, different multisets and labels.
  auto ds = make({{z, t, o}, {o, o, o}, {t, z, o}}, {0, 1, 0});
  KsPrepared P = ks_prepare(ds, std::nullopt, "t");
  REQUIRE(P.consistent);
  KsOptions opt;
  SECTION("phi~ memorizes it") {
    KsResult r = ks_construct(P, opt);
    CHECK(r.memorized);
    CHECK(memcert_checker::verify_certificate_text(ks_certificate_json(r).dump()).valid);
  }
  SECTION("the linear F collides, for every linear phi") {
    opt.ablation_linear_phi = true;
    KsResult r = ks_construct(P, opt);
    REQUIRE(r.collision);
    CHECK(r.collision_token_sums_equal);
    CHECK_FALSE(r.memorized);
    auto cert = ks_certificate_json(r);
    CHECK(cert["claim"] == "ks25/ablation-linear-phi");
    CHECK(memcert_checker::verify_certificate_text(cert.dump()).valid);
    auto c = cert;
    c["labels"][1] = 0;  // equal labels: no counterexample
    CHECK_FALSE(memcert_checker::verify_certificate_text(c.dump()).valid);
  }
  SECTION("generic data: the ablation may work (no collision) and is then verified") {
    KsPrepared G = ks_prepare(ks_generate(15, 3, 3, 8, 3, 9, false), 3, "t");
    opt.ablation_linear_phi = true;
    KsResult r = ks_construct(G, opt);
    if (!r.collision) CHECK(r.memorized);
  }
}

TEST_CASE("Theorem D.1: deep sets memorize multisets", "[ks25][deepsets]") {
  std::mt19937_64 rng(4);
  std::vector<std::vector<QVector>> sets;
  std::vector<long> labels;
  for (int i = 0; i < 15; ++i) {
    std::vector<QVector> s;
    std::size_t card = 1 + rng() % 4;  // varying cardinalities
    for (std::size_t k = 0; k < card; ++k) s.push_back({Rational(static_cast<long>(rng() % 5)), Rational(1, 2)});
    sets.push_back(s);
    labels.push_back(static_cast<long>(rng() % 4));
  }
  // make labels consistent for repeated multisets
  for (std::size_t i = 0; i < sets.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      auto a = sets[i], b = sets[j];
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a == b) labels[i] = labels[j];
    }
  DeepSet ds = theoremD1_deep_set(sets, labels, 2);
  CHECK(ds.memorized);
  // Second route: dense evaluation.
  for (std::size_t i = 0; i < sets.size(); ++i) {
    Rational s = 0;
    for (const auto& x : sets[i]) s += relunet_eval(ds.phi, x)[0];
    CHECK(relunet_eval(ds.rho, {s})[0] == Rational(labels[i]));
  }
  CHECK(ds.complexity.width <= 12);
}

TEST_CASE("parameter sweep: sublinear growth", "[ks25][sweep]") {
  KsSweep s = ks25_parameter_sweep({50, 200}, 4, 3, 32, 4, 1, true);
  REQUIRE(s.rows.size() == 2);
  for (const auto& r : s.rows) {
    CHECK(r.memorized);
    CHECK(r.eq55);
    CHECK(memcert_checker::verify_certificate_text(r.certificate.dump()).valid);
    CHECK(r.parameters == r.certificate["complexity"]["parameters"].get<std::size_t>());
  }
  CHECK(s.exponent < 0.9);
  CHECK(s.exponent > 0.2);
}

TEST_CASE("Theorem D.1 in the Transformer format, re-verified by the checker", "[ks25][deepsets]") {
  KsPrepared P = ks_prepare(ks_generate(30, 4, 2, 8, 3, 12, false), 3, "t");
  KsResult r = ks_construct_deep_set(P, KsOptions{});
  REQUIRE(r.prep.consistent);
  CHECK(r.memorized);
  auto cert = ks_certificate_json(r);
  CHECK(cert["claim"] == "ks25/theorem-D.1");
  auto v = memcert_checker::verify_certificate_text(cert.dump());
  INFO(v.reason);
  CHECK(v.valid);
  SECTION("equal multisets with different labels are inconsistent for deep sets") {
    std::vector<Rational> a{Rational(1)}, b{Rational(2)};
    KsPrepared Q = ks_prepare(make({{a, b}, {b, a}}, {0, 1}), std::nullopt, "t");
    CHECK(Q.consistent);  // next-token: different last tokens, fine
    KsResult q = ks_construct_deep_set(Q, KsOptions{});
    CHECK_FALSE(q.prep.consistent);
  }
}

// The CLI contract (docs/CLI.md) for generate ks / construct ks / verify, when ctest provides the binary.
TEST_CASE("CLI: generate ks, construct ks, verify; exit codes", "[ks25][cli]") {
  const char* bin = std::getenv("MEMCERT_BIN");
  if (!bin) {
    WARN("MEMCERT_BIN not set (run through ctest): CLI test skipped");
    return;
  }
  const std::string B = bin, dir = memcert_test::scratch_dir("ks_cli_test");
  auto rc = [](const std::string& cmd) {
    int s = std::system((cmd + " >/dev/null 2>&1").c_str());
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  };
  CHECK(rc(B + " generate ks --N 20 --n 3 --d 2 --V 7 --C 3 --seed 4 --out " + dir + "/d.json") == 0);
  CHECK(rc(B + " construct ks " + dir + "/d.json --out " + dir + "/c.json --json") == 0);
  CHECK(rc(B + " verify " + dir + "/c.json") == 0);
  CHECK(rc(B + " construct ks " + dir + "/d.json --C 2 --out " + dir + "/x.json") == 2);  // labels outside [0, C)
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  write("ragged.json", R"({"sequences": [[["1"],["2"]], [["1"]]], "labels": [0, 1]})");
  CHECK(rc(B + " construct ks " + dir + "/ragged.json --out " + dir + "/x.json") == 2);
  write("dmis.json", R"({"sequences": [[["1"],["2"]], [["1","2"],["3","4"]]], "labels": [0, 1]})");
  CHECK(rc(B + " construct ks " + dir + "/dmis.json --out " + dir + "/x.json") == 2);
  write("incons.json", R"({"sequences": [[["1"],["2"]], [["1"],["2"]]], "labels": [0, 1]})");
  CHECK(rc(B + " construct ks " + dir + "/incons.json --out " + dir + "/x.json") == 1);
  write("coll.json", R"({"sequences": [[["0"],["2"],["1"]], [["1"],["1"],["1"]]], "labels": [0, 1]})");
  CHECK(rc(B + " construct ks " + dir + "/coll.json --out " + dir + "/x.json") == 0);
  CHECK(rc(B + " construct ks " + dir + "/coll.json --ablation linear-phi --out " + dir + "/a.json") == 1);
  CHECK(rc(B + " verify " + dir + "/a.json") == 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("large vocabularies: certified projection lower bound on delta", "[ks25][separation]") {
  KsPrepared P = ks_prepare(ks_generate(300, 8, 16, 1200, 3, 5, true), 3, "t");
  REQUIRE(double(P.tokens.size()) * double(P.tokens.size()) * 16 > kExactSeparationBudget);
  CHECK_FALSE(P.delta2_exact);
  CHECK(P.delta2 > 0);
  std::mt19937_64 rng(3);
  for (int s = 0; s < 300; ++s) {  // the bound holds on sampled pairs (exactly)
    std::size_t a = rng() % P.tokens.size(), b = rng() % P.tokens.size();
    if (a == b) continue;
    Rational dd = 0;
    for (std::size_t j = 0; j < P.d; ++j) dd += (P.tokens[a][j] - P.tokens[b][j]) * (P.tokens[a][j] - P.tokens[b][j]);
    CHECK(dd >= P.delta2);
  }
  KsResult r = ks_construct(P, KsOptions{});
  CHECK(r.memorized);
  auto v = memcert_checker::verify_certificate_text(ks_certificate_json(r).dump());
  INFO(v.reason);
  CHECK(v.valid);
}

// ks_prepare's separation (machine 128-bit route when the scaled tokens are small, GMP otherwise)
// against brute force over all pairs of distinct tokens in exact rationals: small integers (many ties,
// so the FIRST minimal pair matters), random rationals, entries near 2^61 after scaling (the machine
// route's limit) and entries beyond it (GMP route), each with the pair attaining the minimum.
TEST_CASE("ks_prepare separation equals brute force on both routes", "[ks25][construct]") {
  std::mt19937_64 g(913);
  for (int it = 0; it < 40; ++it) {
    const std::size_t N = 3 + g() % 6, n = 2 + g() % 3, d = 1 + g() % 4;
    SequenceDataset ds;
    for (std::size_t i = 0; i < N; ++i) {
      QMatrix x(n, d);
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < d; ++j) {
          const long v = static_cast<long>(g() % 7) - 3;
          switch (it % 4) {
            case 0: x(k, j) = Rational(v); break;
            case 1: x(k, j) = Rational(v, 1 + static_cast<long>(g() % 5)); break;
            case 2: x(k, j) = Rational(Integer(v) << 58) + Rational(static_cast<long>(g() % 3)); break;
            default: x(k, j) = Rational(Integer(v) << 70) + Rational(static_cast<long>(g() % 3), 7); break;
          }
          x(k, j).canonicalize();
        }
      ds.sequences.push_back(x);
      ds.labels.push_back(static_cast<long>(i));  // distinct labels: consistent whatever the tokens
    }
    const KsPrepared P = ks_prepare(ds, std::nullopt, "t");
    INFO("iteration " << it);
    if (P.tokens.size() < 2) continue;
    Rational best = -1;
    std::pair<std::size_t, std::size_t> pair{0, 0};
    for (std::size_t a = 0; a < P.tokens.size(); ++a)
      for (std::size_t b = a + 1; b < P.tokens.size(); ++b) {
        Rational s = 0;
        for (std::size_t j = 0; j < d; ++j) s += (P.tokens[a][j] - P.tokens[b][j]) * (P.tokens[a][j] - P.tokens[b][j]);
        if (best < 0 || s < best) {
          best = s;
          pair = {a, b};
        }
      }
    REQUIRE(P.delta2_exact);
    CHECK(P.delta2 == best);
    CHECK(P.delta_pair == pair);
  }
}

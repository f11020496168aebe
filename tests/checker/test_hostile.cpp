// Forged and hostile certificates, each a regression test for a way the checker once accepted a false
// claim or mishandled input: honest certificates written by the engine (the binary comes from ctest
// through MEMCERT_BIN) verify; each forgery, built from an honest one with a recomputed checksum where the
// certificate has one, is rejected (or malformed / undecided, as stated); the budget answers "undecided"
// before the work starts.
#include "catch.hpp"
#include <gmpxx.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "memcert/checker/checker.hpp"

#include "model_fixture.hpp"
#include "support/cli_run.hpp"
#include "support/cpu_time.hpp"

using nlohmann::json;
using memcert_checker::Budget;
using memcert_checker::Verdict;
using memcert_checker::verify_certificate_text;

namespace {

const std::string kDir = memcert_test::scratch_dir("checker_hostile");
// Arrays nested inside a certificate's top-level field as deep as the JSON reader accepts (depth 64: the
// certificate's object, 62 arrays, their leaf).
constexpr std::size_t kDeep = 62;

using memcert_test::run;
using memcert_test::slurp;

Verdict check(const json& j, const Budget& b = {}) { return verify_certificate_text(j.dump(), b); }

// The theorem1 certificate of a small generated data set (real labels), built once.
const json& theorem1_cert() {
  static const json c = [] {
    std::system(("mkdir -p " + kDir).c_str());
    REQUIRE(run("generate theorem1 --T 13 --n 4 --d 6 --seed 5 --out " + kDir + "/t1.data.json"));
    REQUIRE(run("construct theorem1 " + kDir + "/t1.data.json --heads 4 --dh 4 --out " + kDir + "/t1.cert.json"));
    return json::parse(slurp(kDir + "/t1.cert.json"));
  }();
  return c;
}

// A ks certificate: `flags` "" (Theorem 4.1), "--deep-sets" (Theorem D.1) or "--ablation linear-phi".
json ks_cert(const std::string& flags, const std::string& name) {
  std::system(("mkdir -p " + kDir).c_str());
  const std::string data = kDir + "/ks-v20-s1.data.json", cert = kDir + "/" + name + ".cert.json";
  if (!std::ifstream(data)) REQUIRE(run("generate ks --N 12 --n 3 --d 2 --V 20 --C 3 --seed 1 --out " + data));
  run("construct ks " + data + " " + flags + " --out " + cert);  // the ablation exits 1 (a collision) by design
  return json::parse(slurp(cert));
}

// The checksum of a ks certificate: sum over network numbers of (1-based position) * value (check_ks.cpp).
void ks_rechecksum(json& c) {
  mpq_class sum = 0;
  unsigned long pos = 0;
  auto add = [&](const json& s) {
    ++pos;
    mpq_class q(s.get<std::string>());
    if (s.get<std::string>().find('/') != std::string::npos) q.canonicalize();
    sum += q * pos;
  };
  auto net = [&](const json& layers) {
    for (const auto& L : layers) {
      for (const auto& row : L["W"])
        for (const auto& x : row) add(x);
      for (const auto& x : L["b"]) add(x);
    }
  };
  net(c["network"]["f1"]);
  for (const auto& row : c["network"]["attention"]["WOV"])
    for (const auto& x : row) add(x);
  net(c["network"]["f2"]);
  c["checksum"] = sum.get_str();
}

}  // namespace

TEST_CASE("hostile theorem1: unknown keys inside nested objects are reported by path, the verdict unchanged",
          "[checker][hostile]") {
  const json& honest = theorem1_cert();
  const Verdict h = check(honest);
  REQUIRE(h.valid);
  json c = honest;
  c["data"]["zz_extra"] = "x";
  c["weights"]["zz_extra"] = {{"nested", 1}};
  for (auto& head : c["weights"]["heads"]) head["zz_extra"] = 1;
  c["trace"][1]["zz_extra"] = true;
  const Verdict v = check(c);
  REQUIRE(v.valid);
  CHECK(v.applied == h.applied);
  auto listed = [&](const std::string& path) {
    return std::count(v.not_checked.begin(), v.not_checked.end(), path + " (not read by the checker)") == 1;
  };
  CHECK(listed("data.zz_extra"));
  CHECK(listed("weights.zz_extra"));           // whole: not walked into
  CHECK(listed("weights.heads[*].zz_extra"));  // every head: once, as [*]
  CHECK(listed("trace[1].zz_extra"));          // one head of several: by its index
  CHECK(v.not_checked.size() == h.not_checked.size() + 4);
  // A ks network layer and its attention block.
  json k = ks_cert("", "nested_keys");
  REQUIRE(check(k).valid);
  k["network"]["f1"][0]["zz_extra"] = 1;
  k["network"]["attention"]["zz_extra"] = 1;
  const Verdict kv = check(k);
  REQUIRE(kv.valid);
  for (const char* path : {"network.f1[0].zz_extra", "network.attention.zz_extra"})
    CHECK(std::count(kv.not_checked.begin(), kv.not_checked.end(), std::string(path) + " (not read by the checker)") == 1);
}

TEST_CASE("hostile theorem1: the certificate cannot choose its tolerance", "[checker][hostile]") {
  const json& honest = theorem1_cert();
  Verdict v = check(honest);
  REQUIRE(v.valid);
  // The applied rule is reported, and the ignored / descriptive fields are listed as not checked.
  bool rule = false, tol = false, hyp = false;
  for (const auto& r : v.applied) rule |= r.find("2^-20") != std::string::npos;
  for (const auto& r : v.not_checked) tol |= r.rfind("tolerance", 0) == 0, hyp |= r.rfind("hypotheses", 0) == 0;
  CHECK(rule);
  CHECK(tol);
  CHECK(hyp);

  for (const char* t : {"1000", "1e300", "0"}) {
    json c = honest;
    for (auto& h : c["weights"]["heads"])
      for (auto& row : h["WV"])
        for (auto& x : row) x = "0";
    c["tolerance"] = t;
    Verdict f = check(c);
    CHECK_FALSE(f.valid);
    CHECK(f.reason.find("labels") != std::string::npos);
  }
  json c = honest;
  for (auto& row : c["data"]["labels"])
    for (auto& x : row) x = "999";
  c["tolerance"] = "1e300";
  CHECK_FALSE(check(c).valid);
  // A tolerance that is not an exact number is malformed (typed JSON), not ignored.
  c = honest;
  c["tolerance"] = 1e300;
  Verdict m = check(c);
  CHECK_FALSE(m.valid);
  CHECK(m.malformed);
}

TEST_CASE("hostile theorem1: a label moved by more than the rule allows is rejected, less is accepted",
          "[checker][hostile]") {
  const json& honest = theorem1_cert();
  // y + 2^-10 max(1,|y|) is far outside 2^-20 max(1,|y|); y + 2^-30 is inside (the construction's error is ~1e-11).
  for (const auto& [shift, ok] : {std::pair{std::string("1/1024"), false}, std::pair{std::string("1/1073741824"), true}}) {
    json c = honest;
    mpq_class y(c["data"]["labels"][0][0].get<std::string>());
    y.canonicalize();
    mpq_class moved = y + mpq_class(shift) * (abs(y) > 1 ? mpq_class(abs(y)) : mpq_class(1));
    c["data"]["labels"][0][0] = moved.get_str();
    CHECK(check(c).valid == ok);
  }
}

TEST_CASE("hostile ks: deep sets must be permutation invariant and have the deep-set structure",
          "[checker][hostile]") {
  json honest = ks_cert("--deep-sets", "deep");
  REQUIRE(honest["claim"] == "ks25/theorem-D.1");
  REQUIRE(check(honest).valid);

  // Two orderings of the same multiset with different labels (the network's prediction is fixed, so one
  // of them must be a wrong prediction too, but the invariance is what the checker names).
  json c = honest;
  auto s = c["sequences"][0];
  std::swap(s[0], s[1]);
  c["sequences"].push_back(s);
  c["labels"].push_back((c["labels"][0].get<int>() + 1) % 3);
  c["N"] = c["sequences"].size();
  Verdict v = check(c);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("permutation invariant") != std::string::npos);

  // f2 reading the last token's phi~ (coordinate 0) instead of the pooled sum: not a deep set.
  c = honest;
  c["network"]["f2"][0]["W"][0][0] = "1";
  ks_rechecksum(c);
  v = check(c);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("network.f2") != std::string::npos);

  // f1 with a non-zero second output.
  c = honest;
  auto& last = c["network"]["f1"].back();
  last["b"][1] = "1";
  ks_rechecksum(c);
  CHECK_FALSE(check(c).valid);

  // The ablation's token_sums_equal must be a JSON boolean.
  json ab = ks_cert("--ablation linear-phi", "ablation");
  if (ab.contains("token_sums_equal")) {
    for (const json& bad : {json(1), json("true"), json(nullptr)}) {
      json d = ab;
      d["token_sums_equal"] = bad;
      Verdict f = check(d);
      CHECK_FALSE(f.valid);
      CHECK(f.malformed);
      CHECK(f.reason.find("token_sums_equal") != std::string::npos);
    }
  }
}

TEST_CASE("hostile ks: data by reference (digest, labels, tokens, indices, supplier)", "[checker][hostile]") {
  using memcert_checker::KsArrays;
  using memcert_checker::KsArraysSupplier;
  const json honest = ks_cert("", "ref");
  REQUIRE(honest["claim"] == "ks25/theorem-4.1");
  // The file's arrays: the certificate's own table, indices and labels.
  KsArrays file;
  file.N = honest["N"];
  file.n = honest["n"];
  file.d = honest["d"];
  for (const auto& t : honest["tokens"])
    for (const auto& x : t) file.tokens.push_back(x.get<std::string>());
  for (const auto& s : honest["sequences"])
    for (const auto& id : s) file.ids.push_back(id.get<std::uint32_t>());
  file.label_kind = KsArrays::Labels::sequence;
  for (const auto& l : honest["labels"]) file.labels.push_back(l.get<std::int64_t>());
  json ref = honest;
  ref.erase("sequences");
  ref.erase("labels");
  ref["data"] = {{"file", "seq.json"}, {"digest", memcert_checker::ks_arrays_digest(file)}};
  auto verify = [](const json& c, const KsArrays* a) {
    const KsArraysSupplier give = [a](const std::string& name, KsArrays& out, std::string& error) {
      if (!a) { error = name + ": cannot open"; return false; }
      out = *a;
      return true;
    };
    return memcert_checker::verify_certificate_text(c.dump(), Budget{}, nullptr, memcert_checker::ArraysSupplier{}, &give);
  };
  REQUIRE(verify(ref, &file).valid);
  // The digest is of the values: the table reversed, with a repeated and an unused row, gives the same.
  {
    KsArrays perm = file;
    const std::size_t V = file.tokens.size() / file.d;
    perm.tokens.clear();
    for (std::size_t t = V; t-- > 0;)
      for (std::size_t j = 0; j < file.d; ++j) perm.tokens.push_back(file.tokens[t * file.d + j]);
    for (std::size_t j = 0; j < file.d; ++j) perm.tokens.push_back(file.tokens[j]);  // row V: a copy of row 0
    for (std::size_t j = 0; j < file.d; ++j) perm.tokens.push_back("12345/7");       // row V + 1: unused
    for (std::size_t i = 0; i < perm.ids.size(); ++i)
      perm.ids[i] = file.ids[i] == 0 && i % 2 ? static_cast<std::uint32_t>(V) : static_cast<std::uint32_t>(V - 1 - file.ids[i]);
    CHECK(memcert_checker::ks_arrays_digest(perm) == memcert_checker::ks_arrays_digest(file));
    CHECK(verify(ref, &perm).valid);
  }
  // A forged digest.
  json c = ref;
  std::string dg = c["data"]["digest"];
  dg.back() = dg.back() == '0' ? '1' : '0';
  c["data"]["digest"] = dg;
  Verdict v = verify(c, &file);
  CHECK_FALSE(v.valid);
  CHECK_FALSE(v.malformed);
  CHECK(v.reason.find("data.digest") != std::string::npos);
  // An edited label: the digest differs; with the digest forged to match, the prediction is wrong.
  KsArrays lab = file;
  lab.labels[3] = (lab.labels[3] + 1) % 3;
  CHECK_FALSE(verify(ref, &lab).valid);
  c = ref;
  c["data"]["digest"] = memcert_checker::ks_arrays_digest(lab);
  v = verify(c, &lab);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("sequence 3") != std::string::npos);
  // An edited token (not among the certificate's tokens), digest forged to match.
  KsArrays tok = file;
  tok.tokens[file.ids[5] * file.d] = "999/7";
  c["data"]["digest"] = memcert_checker::ks_arrays_digest(tok);
  v = verify(c, &tok);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("not among the certificate's tokens") != std::string::npos);
  // A label out of [0, C) and a negative one, digests forged.
  for (std::int64_t bad : {std::int64_t(3), std::int64_t(-1)}) {
    KsArrays out = file;
    out.labels[0] = bad;
    c["data"]["digest"] = memcert_checker::ks_arrays_digest(out);
    v = verify(c, &out);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("data.file: label 0") != std::string::npos);
  }
  // Malformed arrays (an index past the table, a token that is not a number): bad input.
  KsArrays past = file;
  past.ids[0] = static_cast<std::uint32_t>(file.tokens.size());
  CHECK(memcert_checker::ks_arrays_digest(past).empty());
  v = verify(ref, &past);
  CHECK(v.malformed);
  KsArrays nan = file;
  nan.tokens[0] = "x";
  CHECK(verify(ref, &nan).malformed);
  // Another shape, no labels, a missing file, no supplier at all.
  KsArrays shorter = file;
  shorter.N -= 1;
  shorter.ids.resize(shorter.N * shorter.n);
  shorter.labels.resize(shorter.N);
  CHECK_FALSE(verify(ref, &shorter).valid);
  KsArrays none = file;
  none.label_kind = KsArrays::Labels::none;
  none.labels.clear();
  c["data"]["digest"] = memcert_checker::ks_arrays_digest(none);
  v = verify(c, &none);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("no labels") != std::string::npos);
  v = verify(ref, nullptr);
  CHECK(v.malformed);
  CHECK(v.reason.find("cannot open") != std::string::npos);
  v = check(ref);
  CHECK(v.malformed);
  CHECK(v.reason.find("must be supplied") != std::string::npos);
}

TEST_CASE("hostile claim: the sinusoidal encodings are recomputed", "[checker][hostile]") {
  std::system(("mkdir -p " + kDir + "/pe").c_str());
  run("claims run vaswani17/sinusoidal-rank-margin --instances 2 --cert-dir " + kDir + "/pe");
  const std::string path = kDir + "/pe/vaswani17_sinusoidal-rank-margin-0.json";
  std::ifstream probe(path);
  REQUIRE(probe);
  json honest = json::parse(slurp(path));
  REQUIRE(check(honest).valid);
  // A singular matrix (a zero row) with u = e_last and a zero margin: true of that matrix, false of the
  // encodings.
  json c = honest;
  const std::size_t n = c["matrix"].size();
  for (auto& x : c["matrix"][n - 1]) x = "0";
  for (std::size_t i = 0; i < n; ++i) c["u"][i] = i + 1 == n ? "1" : "0";
  c["delta2"] = "0";
  Verdict v = check(c);
  CHECK_FALSE(v.valid);
  CHECK(v.reason.find("sinusoidal") != std::string::npos);
  // One entry (sin 1, in [1/2, 1): ulp 2^-53) moved by 2^-52, two units in the last place: beyond the
  // checker's one-ulp rule for the C library's faithful rounding.
  c = honest;
  mpq_class x(c["matrix"][1][0].get<std::string>());
  x.canonicalize();
  c["matrix"][1][0] = mpq_class(x + mpq_class(1, 1) / mpq_class("4503599627370496")).get_str();
  CHECK_FALSE(check(c).valid);
}

TEST_CASE("hostile budget: over-budget certificates are undecided before the work", "[checker][hostile]") {
  // A Kruskal claim of 2^-ish size asking for C(60, 30) subsets.
  std::string rows;
  for (int i = 0; i < 60; ++i) {
    if (i) rows += ',';
    rows += "[";
    for (int j = 0; j < 30; ++j) rows += std::string(j ? "," : "") + "\"" + std::to_string((i + 1) * (j + 2) % 97) + "\"";
    rows += "]";
  }
  const std::string cert = R"({"kind":"kruskal","claim":"kruskal-rank","vectors":{"rows":60,"cols":30,"data":[)" + rows +
                           R"(]},"kruskal_lower":20,"lower":{"method":"exhaustive-mod-p","prime":"1000000007"},)"
                           R"("kruskal_upper":30,"upper":{"method":"trivial"}})";
  Budget b;
  b.max_seconds = 5;
  Verdict v = verify_certificate_text(cert, b);
  CHECK_FALSE(v.valid);
  CHECK(v.undecided);
  CHECK(v.reason.find("over budget") != std::string::npos);
  // Memory: a text larger than the memory budget admits is undecided without being parsed.
  b.max_bytes = 1000;
  v = verify_certificate_text(cert, b);
  CHECK(v.undecided);
  // A stream that cannot start a certificate is malformed at its first byte, not read to the budget; one
  // that could (whitespace) but is larger than the budget admits ends there, undecided.
  b = Budget{};
  b.max_bytes = 48.0 * 1024 * 1024;
  v = memcert_checker::verify_certificate_file("/dev/zero", b);
  CHECK_FALSE(v.valid);
  CHECK_FALSE(v.undecided);
  CHECK(v.malformed);
  const std::string blank =
      (std::filesystem::temp_directory_path() / ("memcert_blank_" + std::to_string(std::random_device{}()) + ".json")).string();
  {
    std::ofstream f(blank);
    f << std::string(3 << 20, ' ');
  }
  b.max_bytes = 4.0 * (1 << 20);
  v = memcert_checker::verify_certificate_file(blank, b);
  CHECK_FALSE(v.valid);
  CHECK(v.undecided);
  std::remove(blank.c_str());
}

TEST_CASE("hostile typed JSON: wrong types are malformed and name the field", "[checker][hostile]") {
  const std::string base = R"({"kind":"rank","claim":"rank","matrix":{"rows":1,"cols":1,"data":[["1"]]},)"
                           R"("rank_lower":1,"rank_upper":1,"lower":{"method":"minor-mod-p","prime":"7","rows":[0],"cols":[0]},)"
                           R"("upper":{"method":"trivial"}})";
  REQUIRE(verify_certificate_text(base).valid);
  json j = json::parse(base);
  struct Case { const char* path; json value; };
  for (const Case& k : {Case{"/rank_lower", json("1")}, Case{"/rank_lower", json(1.0)}, Case{"/rank_lower", json(-1)},
                        Case{"/matrix/data/0/0", json(1)}, Case{"/lower/rows", json(0)}, Case{"/matrix/rows", json(true)}}) {
    json c = j;
    c[json::json_pointer(k.path)] = k.value;
    Verdict v = check(c);
    INFO(k.path << " = " << k.value.dump());
    CHECK_FALSE(v.valid);
    CHECK(v.malformed);
  }
  // Numbers outside double range or with a million digits are read as text: malformed or rejected, never a crash.
  for (const std::string& num : {std::string("1e999"), std::string(1000000, '7')}) {
    Verdict v = verify_certificate_text(R"({"kind":"rank","claim":"rank","rank_lower":)" + num + "}");
    CHECK_FALSE(v.valid);
    CHECK(v.malformed);
  }
}

TEST_CASE("hostile packed arrays: sizes beyond the data, numbers cut short, deep nesting", "[checker][hostile]") {
  const std::string head = R"({"kind":"rank","claim":"rank","matrix":{"rows":2,"cols":2,"data":[["1","2"],["3","5"]]},)";
  const std::string tail = R"("rank_lower":2,"rank_upper":2,"lower":{"method":"minor-mod-p","prime":"7","rows":[0,1],)"
                           R"("cols":[0,1]},"upper":{"method":"trivial"}})";
  REQUIRE(verify_certificate_text(head + tail).valid);
  // A matrix claiming 2^31 rows or columns (or both) beside four entries: rejected at once, nothing sized by the claim.
  for (const char* dims : {R"("rows":2147483648,"cols":2)", R"("rows":2,"cols":2147483648)",
                           R"("rows":2147483648,"cols":2147483648)"}) {
    std::string c = head;
    c.replace(c.find(R"("rows":2,"cols":2)"), std::string(R"("rows":2,"cols":2)").size(), dims);
    INFO(c);
    const auto t0 = std::chrono::steady_clock::now();
    const Verdict v = verify_certificate_text(c + tail);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5);
    CHECK_FALSE(v.valid);
    CHECK_FALSE(v.undecided);
    CHECK(v.reason.find("2147483648") != std::string::npos);
  }
  // The text cut inside a packed array (inside a number, a string, between entries): malformed, and the
  // reason names the byte where the text ends.
  const std::string full = head + tail;
  for (const std::string& cut : {std::string(R"("data":[["1","2"],["3)"), std::string(R"("data":[["1","2"],)"),
                                 std::string(R"("rows":[0,)"), std::string(R"("rows":[0)")}) {
    const std::string text = full.substr(0, full.find(cut) + cut.size());
    INFO(text);
    const Verdict v = verify_certificate_text(text);
    CHECK(v.malformed);
    CHECK(v.reason.find("offset " + std::to_string(text.size())) != std::string::npos);
  }
  for (const std::string& bad : {std::string(R"("rows":[0,1.)"), std::string(R"("rows":[0,-)"), std::string(R"("rows":[0,1e+)")}) {
    std::string text = full;
    text.replace(text.find(R"("rows":[0,1])"), std::string(R"("rows":[0,1])").size(), bad + "]");
    INFO(text);
    const Verdict v = verify_certificate_text(text);
    CHECK(v.malformed);
    CHECK(v.reason.find("offset " + std::to_string(text.find(bad) + bad.size())) != std::string::npos);
  }
  // A numeric array nested to the depth limit in a field no check reads: valid, the field said unread; one
  // level deeper: malformed at the byte where the limit is passed.
  const std::string deep = std::string(kDeep, '[') + "1" + std::string(kDeep, ']');
  Verdict v = verify_certificate_text(head + R"("extra":)" + deep + "," + tail);
  CHECK(v.valid);
  CHECK(std::find(v.not_checked.begin(), v.not_checked.end(), "extra (not read by the checker)") != v.not_checked.end());
  const std::string text = head + R"("extra":[)" + deep + "]," + tail;
  v = verify_certificate_text(text);
  CHECK(v.malformed);
  CHECK(v.reason.find("offset " + std::to_string(head.size() + 9 + kDeep) + ": nesting deeper than 64") != std::string::npos);
}

TEST_CASE("hostile dana24-claim: a weight of 1e999 is decided quickly (exp underflow kept small)",
          "[checker][hostile]") {
  // dana24/lemma-2 with one position entry 1e999: the scores are ~1e1998, their exp underflows, and the
  // checker once turned the underflowed bound 2^-(2^30) into an exact rational (> 9 GB, no end). Whatever
  // the verdict, it must come within seconds; the mutation campaign shows such a mutant true when valid.
  std::system(("mkdir -p " + kDir + "/pd").c_str());
  REQUIRE(run("claims run dana24/lemma-2 --instances 1 --cert-dir " + kDir + "/pd"));
  json c = json::parse(slurp(kDir + "/pd/dana24_lemma-2-0.json"));
  c["pos"][1][1] = "1e999";
  Budget b;
  b.max_bytes = 512.0 * 1024 * 1024;
  const double t0 = memcert_test::cpu_seconds();  // CPU time: the guard must not fail on a loaded machine
  const Verdict v = check(c, b);
  const double secs = memcert_test::cpu_seconds() - t0;
  CHECK(secs < 10);
  CHECK((v.valid || !v.reason.empty()));
  CHECK(v.reason.find("unexpected error") == std::string::npos);
}

TEST_CASE("hostile dana24: a bad weight or a bad row is named by its exact place", "[checker][hostile]") {
  // The weights are read leaf by leaf; the name of the place is spelled out only for the reason, so it is
  // checked here against the place that was altered (every tensor, first, middle and last entries).
  std::system(("mkdir -p " + kDir).c_str());
  REQUIRE(run("generate dana24 --N 5 --S 2 --T 12 --seed 7 --out " + kDir + "/d.data.json"));
  REQUIRE(run("construct dana24 " + kDir + "/d.data.json --heads 4 --dh 2 --d 4 --out " + kDir + "/d.cert.json"));
  const json honest = json::parse(slurp(kDir + "/d.cert.json"));
  REQUIRE(check(honest).valid);
  const std::vector<std::pair<std::string, std::vector<std::size_t>>> places = {
      {"e", {0, 0}}, {"e", {4, 3}}, {"pos", {1, 2}}, {"WU", {3, 1}}, {"WQ", {0, 1, 3}},
      {"WK", {3, 0, 2}}, {"WV", {2, 1, 0}}, {"WO", {3, 3, 1}}, {"WO", {0, 0, 0}}};
  for (const auto& [name, idx] : places) {
    std::string where = "weights." + name;
    for (std::size_t i : idx) where.append(1, '[').append(std::to_string(i)).append(1, ']');
    INFO(where);
    json c = honest;
    json* leaf = &c["weights"][name];
    for (std::size_t i : idx) leaf = &(*leaf)[i];
    *leaf = "1/0";  // not a number: malformed, named
    Verdict v = check(c);
    CHECK_FALSE(v.valid);
    CHECK(v.malformed);
    CHECK(v.reason.rfind(where + ": ", 0) == 0);
    *leaf = 7;  // a bare JSON number where an exact string is expected
    v = check(c);
    CHECK(v.reason.rfind(where + ": expected an exact number as a string", 0) == 0);
    *leaf = "1/3";  // not dyadic: rejected, named
    v = check(c);
    CHECK_FALSE(v.valid);
    CHECK(v.reason == where + ": expected a dyadic rational with at most 128 significant bits");
    // The row holding the leaf, one entry short: named as a list of the wrong length.
    json r = honest;
    json* row = &r["weights"][name];
    std::string row_where = "weights." + name;
    for (std::size_t k = 0; k + 1 < idx.size(); ++k) {
      row = &(*row)[idx[k]];
      row_where.append(1, '[').append(std::to_string(idx[k])).append(1, ']');
    }
    const std::size_t len = row->size();
    row->erase(row->size() - 1);
    v = check(r);
    CHECK_FALSE(v.valid);
    CHECK(v.reason == row_where + ": expected a list of " + std::to_string(len) + " entries");
  }
}

// Kind "model": hostile suppliers and certificates. The suppliers stand for the files the certificate
// names; whatever they hand over, the checker answers with one of its four verdicts and a reason.
TEST_CASE("hostile model: tensors that are not what the certificate says", "[checker][hostile]") {
  using namespace model_fixture;
  const Instance in = mahdavi(71);
  const json cert = certificate(in);
  REQUIRE(verify(in, cert).valid);
  SECTION("a supplier that cannot read the file: malformed with its message") {
    memcert_checker::TensorsSupplier fail = [](const std::string&, const std::string&, const std::string&,
                                               std::vector<NamedArray>&, std::string& e) {
      e = "model.pt: cannot open";
      return false;
    };
    const Verdict v = verify_certificate_text(cert.dump(), {}, fail);
    CHECK(v.malformed);
    CHECK(v.reason == "model.pt: cannot open");
  }
  SECTION("a NaN weight (digest recomputed over it) is rejected") {
    Instance bad = in;
    bad.model[4].values[0] = std::nan("");
    json c = cert;
    const Verdict v = verify(bad, c);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("non-finite") != std::string::npos);
  }
  SECTION("a shape whose product overflows, values empty") {
    Instance bad = in;
    NamedArray& x = *find(bad.data, "X");
    x.shape = {std::size_t(1) << 33, std::size_t(1) << 31, 1};
    x.values_f32.clear();
    x.values.clear();
    const Verdict v = verify(bad, certificate(bad));
    CHECK_FALSE(v.valid);
    CHECK_FALSE(v.reason.empty());
  }
  SECTION("values that disagree with the shape") {
    Instance bad = in;
    find(bad.model, "decoder.bias")->values.push_back(1.0);
    const Verdict v = verify(bad, cert);
    CHECK_FALSE(v.valid);
  }
  SECTION("huge T with empty lists: rejected against the data, nothing allocated per example first") {
    json c = cert;
    c["T"] = std::uint64_t{1} << 31;
    const Verdict v = verify(in, c);
    CHECK_FALSE(v.valid);
  }
  SECTION("a class label out of range, a negative or fractional one") {
    for (double y : {3.0, -1.0, 0.5}) {
      Instance bad = in;
      find(bad.data, "y")->values[0] = y;
      const Verdict v = verify(bad, certificate(bad));
      CHECK(v.reason.find("y[0]") != std::string::npos);
    }
  }
  SECTION("weights so large the forward pass overflows: never accepted") {
    Instance bad = in;
    for (double& w : find(bad.model, "attention.Wo")->values) w *= 1e300;
    json c = certificate(bad);
    c["wrong"] = json::array();
    c["min_margin"] = "0";
    const Verdict v = verify(bad, c);
    CHECK_FALSE(v.valid);
    CHECK(v.reason.find("example") == 0);
  }
}

TEST_CASE("hostile ks: eq. (55) on a certificate computed by hand (equal and too-close contexts of different keys)",
          "[checker][hostile][ks]") {
  // d = 1, n = 2, tokens 0 and t; f1(x) = (x, 0, 0); WOV = 0, so a context is f1 of the last token; f2 = 0,
  // every label 0 (C = 1). Parameters 6 + 9 + 4 = 19, one non-zero, depth 3, width 3, 1 bit; checksum 1
  // (position 1 holds the only non-zero number, 1). The keys are (last token, multiset).
  auto cert = [](const std::string& t, const json& sequences) {
    json c = {{"kind", "ks"}, {"claim", "ks25/theorem-4.1"}, {"setting", "next-token"}, {"N", sequences.size()},
              {"n", 2}, {"d", 1}, {"C", 1}, {"tokens", {{"0"}, {t}}}, {"sequences", sequences},
              {"labels", json(std::vector<int>(sequences.size(), 0))}};
    mpq_class tq(t);
    c["separation"] = {{"r2", mpq_class(tq * tq).get_str()}, {"delta2", mpq_class(tq * tq).get_str()}};
    c["network"] = {{"f1", {{{"W", {{"1"}, {"0"}, {"0"}}}, {"b", {"0", "0", "0"}}}}},
                    {"attention", {{"WOV", {{"0", "0", "0"}, {"0", "0", "0"}, {"0", "0", "0"}}}}},
                    {"f2", {{{"W", {{"0", "0", "0"}}}, {"b", {"0"}}}}}};
    c["complexity"] = {{"parameters", 19}, {"nonzero_parameters", 1}, {"depth", 3}, {"width", 3}, {"bit_complexity", 1}};
    c["checksum"] = "1";
    return c;
  };
  // Contexts 0 and 1 (last tokens 0 and 1): 1 >= 1/n apart, valid.
  Verdict v = check(cert("1", {{0, 0}, {0, 1}}));
  CHECK(v.valid);
  // (1, 0) and (0, 0): last token 0 twice, multisets {0, 1} and {0, 0}, equal contexts (0, 0, 0).
  v = check(cert("1", {{0, 1}, {1, 0}, {0, 0}, {0, 1}}));
  CHECK_FALSE(v.valid);
  CHECK(v.reason == "eq. (55): sequences 1 and 2 have different keys but equal contexts");
  // The same key twice (the same sequence repeated) is no violation.
  v = check(cert("1", {{0, 1}, {0, 0}, {0, 1}}));
  CHECK(v.valid);
  // Last token 1 with multisets {0, 1} and {1, 1}: different keys, equal contexts (1, 0, 0).
  v = check(cert("1", {{0, 0}, {0, 1}, {1, 1}}));
  CHECK_FALSE(v.valid);
  CHECK(v.reason == "eq. (55): sequences 1 and 2 have different keys but equal contexts");
  // Tokens 1/8 apart: contexts 0 and 1/8 differ by less than 1/n = 1/2 in coordinate 0.
  v = check(cert("1/8", {{0, 0}, {0, 1}}));
  CHECK_FALSE(v.valid);
  CHECK(v.reason == "eq. (55): contexts of sequences 0 and 1 differ by less than 1/n in coordinate 0");
  // Exactly 1/n apart is enough (the bound is >=).
  v = check(cert("1/2", {{0, 0}, {0, 1}}));
  CHECK(v.valid);
}
